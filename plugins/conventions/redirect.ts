/**
 * Redirects (docs/conventions.md, Redirects: the 307 rows; RFC 9110 15.4.8): `reply.temporaryRedirect()`
 * answers 307 with a `Location` (RFC 9110 10.2.2), and the `rules` table redirects
 * requests in preParsing, before any byte of their body is read: the client repeats the
 * same method with the same body at the new URI, so this server never parses it here.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { compileRules, formatLocation, rulesForRoute, type RedirectRule, type Redirector } from '../../lib/redirect'
import { addUnroutedStep, contextHeaders, declareConvention, SENT, type RouteCompiler } from '../host/suite'
import { declaresBody } from '../services/shared'
import { MESSAGE, optionsChecker, routeConfigChecker, WHERE_KEY } from '../services/options'
import { markClosing } from '../edge/framing'
import { defineConvention } from '../host/suite'

export type { RedirectMatch, RedirectRule } from '../../lib/redirect'

/** Options of the Redirects plugin (307, RFC 9110 15.4.8): its rule table. */
export interface RedirectOptions {
  /** Applied in order; the first rule whose `from` and `methods` match answers 307. */
  rules?: RedirectRule[]
}

/** `config.redirect: false` exempts a route from the rule table. */
export type RedirectRouteConfig = false

declare module 'fastify' {
  interface FastifyReply {
    /**
     * RFC 9110 15.4.8: 307 Temporary Redirect to `location` (a path, a relative reference
     * or an absolute URI), with a short text/plain note. Characters not allowed in a URI
     * are percent-encoded; a value that still is no URI reference throws a TypeError.
     * The caller decides the target: a location built from request data must be checked.
     */
    temporaryRedirect: (location: string) => FastifyReply
  }
}

const PLUGIN = 'fastify-http-conventions-redirect'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'redirect',
  plugin: 'fastify-http-conventions-redirect',
  configKey: 'redirect',
  steps: [
    { name: 'redirect', phase: 'preParsing', after: ['resource-policy'] }, // RFC 9110 15.4.8: 307 before any body is read
    { name: 'redirect', phase: 'unrouted', after: ['resource-policy'] } // a rule's 307 for a URL no route serves, before the methods convention's 405
  ]
})

const WHERE = PLUGIN

/** The plugin's options as JSON Schema, checked at registration; each rule is checked as it compiles (lib/redirect.ts). */
export const redirectOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    rules: { type: 'array', [MESSAGE]: 'must be an array of { from, to, methods? }' }
  }
} as const

/** A route's `config.redirect` as JSON Schema, checked when the route is added. */
export const redirectRouteConfigSchema = { const: false, [MESSAGE]: 'can only be false (exempt from the rules)' } as const

const checkOptions = optionsChecker(WHERE, redirectOptionsSchema)
const checkRouteConfig = routeConfigChecker<RedirectRouteConfig>('redirect', redirectRouteConfigSchema)

function temporaryRedirect (this: FastifyReply, location: string): FastifyReply {
  const value = formatLocation(location)
  // RFC 9110 15.4: the content is a short hypertext note naming the new URI (ASCII: it is encoded).
  return this.code(307).header('location', value).header('content-type', 'text/plain; charset=utf-8').send(`Temporary Redirect\n${value}\n`)
}

// ---------------------------------------------------------------------------------------
// Plan: the rule table, compiled once per registration

interface Plan {
  /** The rules as given; none: the table is empty and no route gets a step. */
  readonly rules: RedirectRule[]
  /** The compiled table: the Location for a method and URL, or null. */
  readonly redirectFor: Redirector
}

function planRules (opts: RedirectOptions): Plan {
  checkOptions(opts)
  const redirectFor = compileRules(opts.rules ?? [], WHERE)
  return { rules: opts.rules ?? [], redirectFor }
}

// ---------------------------------------------------------------------------------------
// Steps

function makeSteps (plan: Plan) {
  const redirectFor = plan.redirectFor

  function applyRules (request: FastifyRequest, reply: FastifyReply): Error | typeof SENT | undefined {
    let location: string | null
    try {
      location = redirectFor(request.method, request.url)
    } catch (err) {
      return err as Error
    }
    if (location === null) return undefined
    // The headers every answer of the context carries (its resource policy), routed or not.
    if (request.is404) reply.headers(contextHeaders(request.server))
    // The body stays unread: the connection cannot carry another request after it.
    // RFC 9113 8.2.2: over HTTP/2 only the stream ends, and Connection is not sent.
    if (declaresBody(request.headers) && request.raw.httpVersionMajor < 2) {
      reply.header('connection', 'close')
      // Requests pipelined behind the unread body are refused in turn (RFC 9112 9.3.2).
      markClosing(request.raw, reply.raw)
    }
    reply.temporaryRedirect(location)
    return SENT
  }

  return { applyRules }
}

type Steps = ReturnType<typeof makeSteps>

/** Puts the rules' step on the route, and documents the 307 where a rule can match it. */
function compileRoute (c: RouteCompiler, plan: Plan, steps: Steps): void {
  const config = checkRouteConfig(c.where, c.config.redirect)
  if (config === false || plan.rules.length === 0) return
  if (c.methods.some((m) => rulesForRoute(plan.rules, m, c.route.url))) {
    c.respond(307, { description: 'Temporary Redirect: repeat the same method and body at Location', body: 'text', headers: ['Location'] })
    c.describe({ headerTexts: { Location: 'Where to repeat the request' } })
  }
  // Rules match request URLs: every request of the route is checked.
  c.check('preParsing', 'redirect', steps.applyRules)
}

function redirectPlugin (fastify: FastifyInstance, opts: RedirectOptions, done: (err?: Error) => void): void {
  let plan: Plan
  try {
    plan = planRules(opts)
  } catch (err) {
    return done(err as Error)
  }
  if (!fastify.hasReplyDecorator('temporaryRedirect')) fastify.decorateReply('temporaryRedirect', temporaryRedirect)
  const steps = makeSteps(plan)
  try {
    declareConvention(fastify, { key: 'redirect', plugin: PLUGIN, configKey: 'redirect', compile: (c) => compileRoute(c, plan, steps), refusesBodies: true })
  } catch (err) {
    return done(err as Error)
  }
  // Rules match URLs, routed or not: routes run them in their own step, and a URL no route
  // serves in the context's unrouted hook (Fastify's not-found handler runs the context's hooks).
  if (plan.rules.length > 0) addUnroutedStep(fastify, 'redirect', steps.applyRules)
  done()
}

/** 307 redirects: `reply.temporaryRedirect(location)` and an optional rule table applied before the body is read. */
export const httpConventionsRedirect = fp(redirectPlugin, { fastify: '^5.10.0', name: PLUGIN })
