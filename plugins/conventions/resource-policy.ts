/**
 * Cross-Origin-Resource-Policy (docs/conventions.md (Cross-Origin-Resource-Policy); Fetch standard, "Cross-Origin-Resource-Policy
 * header" and "cross-origin resource policy check"): every response of a covered route
 * carries the policy, errors included, because a browser applies the check to whatever
 * a no-cors request gets back (401, 404, 411, 412, 304, 226 alike).
 *
 * The header is set before the suite's first check: each route's compiled preParsing step
 * (its own policy or the default), the context's step for requests no route serves (the
 * not-found handler's answer, Fastify's default 404 included). Headers set in hooks stay on
 * every answer Fastify sends, its error handler's included. An answer given before
 * preParsing (another plugin's onRequest hook replies or throws: a rate limiter's 429) gets
 * the policy in onSend. Answers written where
 * no hook runs carry the default policy of the context too (the convention declares it as a
 * header of every answer): Fastify's framework errors (`serverOptions.frameworkErrors`) and
 * the 411 (or 400) that the content-length plugin writes on the raw socket to a request
 * Node's HTTP parser refused.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { addUnroutedStep, declareConvention, type RouteCompiler } from '../host/suite'
import { MESSAGE, optionsChecker, routeConfigChecker, WHERE_KEY } from '../services/options'
import { defineConvention } from '../host/suite'

/** Fetch standard: the values of Cross-Origin-Resource-Policy (case-sensitive tokens). */
export type ResourcePolicy = 'same-origin' | 'same-site' | 'cross-origin'

/** Options of the Cross-Origin-Resource-Policy plugin. */
export interface ResourcePolicyOptions {
  /** The policy of every route that does not set its own; false sends none by default. Default 'same-origin'. */
  policy?: ResourcePolicy | false
}

/** `config.resourcePolicy`: the route's own policy, or false for none. */
export type ResourcePolicyRouteConfig = ResourcePolicy | false

const PLUGIN = 'fastify-http-conventions-resource-policy'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'resource-policy',
  plugin: PLUGIN,
  configKey: 'resourcePolicy',
  steps: [
    { name: 'resource-policy', phase: 'preParsing', before: ['redirect'] }, // Fetch: the route's policy travels with every answer, errors included
    { name: 'resource-policy:missing', phase: 'onSend', before: ['errors:passed-on'] }, // an answer given before preParsing (a 429 in onRequest) gets the policy too
    { name: 'resource-policy', phase: 'unrouted', before: ['redirect'] } // the context's policy on the 405, the 307 and the not-found handler's answer alike
  ]
})

const WHERE = PLUGIN
const HEADER = 'cross-origin-resource-policy'
const POLICY = { enum: ['same-origin', 'same-site', 'cross-origin', false], [MESSAGE]: "must be 'same-origin', 'same-site', 'cross-origin' or false, got {value}" } as const

/** The plugin's options as JSON Schema, checked at registration. */
export const resourcePolicyOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    policy: POLICY
  }
} as const

/** A route's `config.resourcePolicy` as JSON Schema, checked when the route is added. */
export const resourcePolicyRouteConfigSchema = POLICY

const checkOptions = optionsChecker(WHERE, resourcePolicyOptionsSchema)
const checkRouteConfig = routeConfigChecker<ResourcePolicyRouteConfig>('resourcePolicy', resourcePolicyRouteConfigSchema)

function resourcePolicyPlugin (fastify: FastifyInstance, opts: ResourcePolicyOptions, done: (err?: Error) => void): void {
  let fallback: string | null
  try {
    checkOptions(opts)
    const policy = opts.policy ?? 'same-origin'
    fallback = policy === false ? null : policy
  } catch (err) {
    return done(err as Error)
  }

  // Set before the suite's first check, so every answer of the route carries it, errors
  // included (Fastify keeps headers set in hooks); a header the handler sets itself replaces it.
  function compile (c: RouteCompiler): void {
    const config = checkRouteConfig(c.where, c.config.resourcePolicy)
    const value = config === undefined ? fallback : config
    if (value === false || value === null) return
    // OpenAPI: a header of every answer of the route, its value fixed.
    c.describe({ answerHeaders: { 'Cross-Origin-Resource-Policy': { type: 'string', enum: [value], description: 'Who may embed the answer (Fetch standard): on every answer, errors included' } } })
    if (config !== undefined) {
      c.check('preParsing', 'resource-policy', function routeResourcePolicy (_request: FastifyRequest, reply: FastifyReply): undefined {
        reply.header(HEADER, value)
      })
      c.check('onSend', 'resource-policy:missing', function missingRoutePolicy (_request: FastifyRequest, reply: FastifyReply): undefined {
        if (!reply.hasHeader(HEADER)) reply.header(HEADER, value)
      })
      return
    }
    c.check('preParsing', 'resource-policy', defaultResourcePolicy)
    // An answer given before preParsing (another plugin's onRequest hook replies or throws: a
    // rate limiter's 429) has not had the step above: onSend gives it the policy. On a route
    // whose other conventions add no onSend step (config.contentType: false) this is the
    // route's one onSend hook.
    c.check('onSend', 'resource-policy:missing', defaultResourcePolicy)
  }

  // The default policy: one another plugin set earlier (e.g. @fastify/helmet's) is kept.
  function defaultResourcePolicy (_request: FastifyRequest, reply: FastifyReply): undefined {
    if (fallback !== null && !reply.hasHeader(HEADER)) reply.header(HEADER, fallback)
  }

  try {
    // Also on the answers written where no hook runs (framework errors, raw framing errors).
    const headers = fallback === null ? undefined : { [HEADER]: fallback }
    declareConvention(fastify, { key: 'resource-policy', plugin: PLUGIN, configKey: 'resourcePolicy', compile, headers })
    // Fastify's not-found handler (its default 404, or the app's) runs no route's hooks: the
    // context's step for requests no route serves gives its answer the policy.
    if (fallback !== null) addUnroutedStep(fastify, 'resource-policy', defaultResourcePolicy)
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** Cross-Origin-Resource-Policy on every response: a default policy, per-route overrides. */
export const httpConventionsResourcePolicy = fp(resourcePolicyPlugin, { fastify: '^5.10.0', name: PLUGIN })
