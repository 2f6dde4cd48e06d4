/**
 * Methods (RFC 9110 15.5.6, 9.3.7, 10.2.1): a request whose path a route of the suite serves,
 * with a method no route of that path serves, is answered 405 with `Allow`; OPTIONS there is
 * answered 204 with `Allow` (and `Accept-Patch` where the path takes the suite's PATCH). A
 * path no route matches stays the app's 404, answered by its own not-found handler.
 *
 * The route compiler records each route's method and pattern in a table of the app (nothing
 * is added to the route); for a request Fastify found no route for, a step of the context's
 * unrouted hook (plugins/kernel/unrouted.ts, shared with the redirect rules) asks the table
 * (find-my-way, as Fastify routes) which methods serve its path. docs/architecture.md, "Methods: 405 and
 * OPTIONS", says why the check sits there and not in routes of its own.
 */
import findMyWay from 'find-my-way'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { invalidOption, methodNotAllowed } from '../../lib/errors'
import { allowValue, MethodTable, type Constraints, type PathRouter, type Routed } from '../../lib/methods'
import { addUnroutedStep, contextHeaders, declareConvention, formatOf, nodeOf, SENT, type RouteCompiler } from '../host/suite'
import { logConventionError, sendConventionError } from '../services/errors'
import { declaresBody } from '../services/shared'
import { markClosing } from '../edge/framing'
import { MESSAGE, optionsChecker, routeConfigChecker, WHERE_KEY } from '../services/options'
import { isCorsPreflightRoute } from '../infrastructure/adapter'
import { defineConvention } from '../host/suite'
import { ACCEPT_PATCH } from '../services/capabilities'

const PLUGIN = 'fastify-http-conventions-methods'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts): no step on routes; it records each route's methods. */
defineConvention({
  key: 'methods',
  plugin: PLUGIN,
  configKey: 'methods',
  uses: [ACCEPT_PATCH.name],
  steps: [{ name: 'methods', phase: 'unrouted', after: ['resource-policy', 'redirect'] }] // RFC 9110 15.5.6 / 9.3.7: 405 with Allow, OPTIONS
})

/** The methods convention has no options yet; an object keeps room for them. */
export type MethodsOptions = Record<string, never>

/** `config.methods: false`: the route's path is left out (405 and OPTIONS), unless a covered route shares it. */
export type MethodsRouteConfig = false

/** The plugin's options as JSON Schema, checked at registration: none yet. */
export const methodsOptionsSchema = { [WHERE_KEY]: PLUGIN, type: 'object', additionalProperties: false } as const

/** A route's `config.methods` as JSON Schema, checked when the route is added. */
export const methodsRouteConfigSchema = { const: false, [MESSAGE]: 'can only be false (the path is left out of 405 and OPTIONS)' } as const

const checkOptions = optionsChecker(PLUGIN, methodsOptionsSchema)

/** OPTIONS on a path the suite serves, as a document describes it: 204 with Allow (RFC 9110 9.3.7, 15.5.6). */
const PATH_OPTIONS = {
  summary: 'The methods this resource serves (RFC 9110 9.3.7)',
  description: 'No Content: Allow lists the methods the resource serves; a method it does not serve is 405 with the same Allow (RFC 9110 15.5.6)',
  headers: { Allow: 'The methods the resource serves', 'Cross-Origin-Resource-Policy': 'The resource policy of the server\'s answers' }
}
const checkRouteConfig = routeConfigChecker<MethodsRouteConfig>('methods', methodsRouteConfigSchema)

/** The router options Fastify matches paths with (initialConfig: the top-level ones, then routerOptions). */
const ROUTER_KEYS = ['ignoreTrailingSlash', 'ignoreDuplicateSlashes', 'caseSensitive', 'maxParamLength', 'allowUnsafeRegex', 'useSemicolonDelimiter'] as const

/** A find-my-way router set up as the app's own (the router Fastify matches paths with; the same major version). */
function routerLike (fastify: FastifyInstance): PathRouter {
  const config = fastify.initialConfig as Record<string, unknown> & { routerOptions?: Record<string, unknown> }
  const options: Record<string, unknown> = {}
  for (const key of ROUTER_KEYS) if (config[key] !== undefined) options[key] = config[key]
  Object.assign(options, config.routerOptions)
  return findMyWay(options) as unknown as PathRouter
}

/** On the config of the OPTIONS routes the suite declares (beside @fastify/cors's preflight route). */
const kOwnOptions = Symbol('http-conventions.methods.options')

/**
 * @fastify/cors, on the suite's OPTIONS routes: it still judges a preflight (origin, allowed
 * methods and headers) and writes its headers, then lets the route answer (204 with Allow);
 * a plain OPTIONS (no Origin or no Access-Control-Request-Method) is not refused as a broken
 * preflight. Other plugins ignore the key.
 */
const CORS_ON_OWN_OPTIONS = { strictPreflight: false, preflightContinue: true }

/** What the plugin keeps for one app: the method table, and the OPTIONS routes it declared. */
interface MethodsState {
  readonly fastify: FastifyInstance
  readonly table: MethodTable
  /** The covered patterns, and the ones the suite declared an OPTIONS route for. */
  readonly patterns: Set<string>
  readonly ownOptions: Set<string>
  /** @fastify/cors's preflight route is declared. */
  catchAll: boolean
  /** A route with constraints was recorded: requests' constraints are derived for the lookups. */
  constrained: boolean
  /** The app's own routing decision (Fastify's `findRoute`), which every answer is held to. */
  readonly routed: Routed
}

/**
 * The constraints Fastify's router derives from a request for its built-in strategies (host:
 * the Host header, or HTTP/2's :authority; version: Accept-Version), so the table finds the
 * routes this request could reach and no other host's or version's. A route with a
 * constraint of a custom strategy is not in the table: the table cannot derive it, so it
 * never names that route (its path is left to the app's not-found handler).
 */
function derivedConstraints (request: FastifyRequest): Constraints {
  const out: Record<string, string> = {}
  const host = request.headers.host ?? request.headers[':authority']
  if (typeof host === 'string') out.host = host
  const version = request.headers['accept-version']
  if (typeof version === 'string') out.version = version
  return out
}

/** Fastify's own answer to "does a route of this method serve this path, for these constraints" (public API: findRoute). */
function routedBy (fastify: FastifyInstance): Routed {
  return (method, path, constraints) => fastify.findRoute({ method: method as HTTPMethods, url: path, constraints: constraints as Record<string, string> }) !== null
}

/** RFC 9110 9.3.7, where @fastify/cors's preflight route would take the path: the suite's own OPTIONS route for it. */
function optionsHandler (s: MethodsState) {
  return function answerOptions (request: FastifyRequest, reply: FastifyReply): void {
    const path = s.table.describe(request.url, s.constrained ? derivedConstraints(request) : undefined, s.routed)
    reply.code(204).header('allow', allowValue(path.served))
    if (path.acceptPatch !== undefined) reply.header('accept-patch', path.acceptPatch)
    reply.send()
  }
}

function declareOptions (s: MethodsState, pattern: string): void {
  if (s.ownOptions.has(pattern) || s.fastify.hasRoute({ method: 'OPTIONS', url: pattern })) return
  s.ownOptions.add(pattern)
  s.fastify.route({ method: 'OPTIONS', url: pattern, config: { cors: CORS_ON_OWN_OPTIONS, [kOwnOptions]: true } as never, schema: { hide: true } as never, handler: optionsHandler(s) })
}

/** Each route's methods and pattern go into the table; its path gets an OPTIONS route where @fastify/cors's would take it. */
function compileMethods (s: MethodsState, c: RouteCompiler): void {
  const config = checkRouteConfig(c.where, c.config.methods)
  const url = c.route.url
  const own = (c.config as Record<symbol, unknown>)[kOwnOptions] === true
  if (!own && c.methods.includes('OPTIONS') && s.ownOptions.has(url)) {
    throw invalidOption(c.where, `the suite already answers OPTIONS ${url} (beside @fastify/cors's preflight route): declare this OPTIONS route before the other routes of ${url}, or set config.methods: false on them`)
  }
  // The patch convention's media types for a PATCH route (a capability it provides: this convention reads no other's config).
  const types = c.use(ACCEPT_PATCH)
  const urls = [url]
  // Fastify also routes `/prefix/` to a route declared as '/' in a prefixed context (prefixTrailingSlash 'both').
  const r = c.route as typeof c.route & { routePath?: string }
  if (r.routePath === '' && r.prefixTrailingSlash !== 'no-slash' && url !== '') urls.push(url + '/')
  const constraints = c.route.constraints as Constraints | undefined
  if (constraints !== undefined && Object.keys(constraints).length > 0) s.constrained = true
  for (const u of urls) for (const method of c.methods) s.table.add(method, u, config !== false, method === 'PATCH' ? types : undefined, constraints)
  if (own || config === false) return
  // The OpenAPI document lists the OPTIONS the suite answers on this path.
  c.describe({ pathOptions: PATH_OPTIONS })
  if (c.methods.includes('OPTIONS') && isCorsPreflightRoute(s.fastify, url)) {
    // @fastify/cors registered after the suite: the paths seen so far get their OPTIONS route now.
    s.catchAll = true
    for (const p of s.patterns) declareOptions(s, p)
    return
  }
  s.patterns.add(url)
  if (s.catchAll && !c.methods.includes('OPTIONS')) declareOptions(s, url)
}

/**
 * The step for a request Fastify found no route for (the context's unrouted hook runs it after
 * every onRequest hook of the app's contexts, before any byte of its body is read; a plugin that
 * hooks each route, such as @fastify/rate-limit, never sees it).
 */
function unroutedStep (s: MethodsState) {
  return function methodsUnrouted (request: FastifyRequest, reply: FastifyReply): typeof SENT | undefined {
    const verdict = s.table.verdict(request.method, request.url, s.constrained ? derivedConstraints(request) : undefined, s.routed)
    if (verdict === null) return undefined
    // The headers every answer of the context carries (its resource policy).
    reply.headers(contextHeaders(request.server))
    // The body stays unread: the connection cannot carry another request after it (HTTP/1).
    if (declaresBody(request.headers) && request.raw.httpVersionMajor < 2) {
      reply.header('connection', 'close')
      markClosing(request.raw, reply.raw)
    }
    if (verdict.kind === 'options') {
      // RFC 9110 9.3.7: OPTIONS describes the communication options of the target resource.
      reply.code(204).header('allow', verdict.allow)
      // RFC 5789 3.1: the patch documents the resource accepts.
      if (verdict.acceptPatch !== undefined) reply.header('accept-patch', verdict.acceptPatch)
      reply.send()
      return SENT
    }
    const err = methodNotAllowed(request.method, verdict.allow)
    logConventionError(request, err)
    sendConventionError(reply, err, formatOf(nodeOf(request.server)))
    return SENT
  }
}

function methodsPlugin (fastify: FastifyInstance, opts: MethodsOptions, done: (err?: Error) => void): void {
  let s: MethodsState
  try {
    checkOptions(opts)
    // @fastify/cors registered before the suite: its OPTIONS route is there already.
    // (Fastify keeps `OPTIONS *` as `/*`.)
    const catchAll = fastify.hasRoute({ method: 'OPTIONS', url: '/*' }) && isCorsPreflightRoute(fastify, '/*')
    const state: MethodsState = { fastify, table: new MethodTable(routerLike(fastify)), patterns: new Set(), ownOptions: new Set(), catchAll, constrained: false, routed: routedBy(fastify) }
    s = state
    declareConvention(fastify, { key: 'methods', plugin: PLUGIN, configKey: 'methods', compile: (c: RouteCompiler) => { compileMethods(state, c) } })
  } catch (err) {
    return done(err as Error)
  }
  // Every context made after this one inherits it: so do the not-found handlers the app sets in them.
  addUnroutedStep(fastify, 'methods', unroutedStep(s))
  done()
}

/** 405 with Allow for a method a path does not serve, and OPTIONS answered with Allow. */
export const httpConventionsMethods = fp(methodsPlugin, { fastify: '^5.10.0', name: PLUGIN })
