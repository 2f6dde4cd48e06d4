/**
 * Fail closed, judged when the app gets ready from each route's final config and the
 * conventions then in effect in its context: another plugin's `onRoute` hook that changed a
 * route's config after the suite compiled it, a convention (or a context-wide policy)
 * registered in a context after a route of it or of a descendant was declared, a config key
 * within a typo of a convention's, a route that cannot satisfy a policy. Each is a problem
 * that makes `ready()` reject, naming the route and the fix.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { invalidOption, misconfigured } from '../../lib/errors'
import { nearKey } from '../../lib/near-key'
import { asArray, methodsOf, routeWhere } from './routes'
import { configKeys, pluginOf, type ConventionKey, type RoutePhase } from './pipeline'
import { lookup, nodeOf, type Node } from './registry'
import { kApp, kRecord } from './symbols'
import type { Convention, KernelHost } from './types'
import type { RouteOptions } from 'fastify'

/** What the kernel compiled for one route. */
export interface RouteRecord {
  readonly where: string
  /** The route options object onRoute got: its `config` is the final config. */
  readonly route: RouteOptions
  readonly node: Node
  /** Each convention in effect when the route was compiled (undefined: none). */
  readonly entries: ReadonlyMap<ConventionKey, Convention | undefined>
  /** Each config key's value when the route was compiled (plain objects and arrays copied at every depth). */
  readonly snapshot: ReadonlyMap<string, unknown>
  readonly hooks: ReadonlyArray<readonly [RoutePhase, unknown]>
  /** The route's methods when it was compiled (`GET,HEAD`). */
  readonly methods: string
  /** The route's URL when it was compiled. */
  readonly url: string
  /** The route's constraints when it was compiled (as JSON; `{}` for none). */
  readonly constraints: string
}

/** A route's constraints as one comparable string (a custom strategy's value that JSON cannot hold reads as its type). */
export function constraintsOf (route: RouteOptions): string {
  const c = route.constraints as Record<string, unknown> | undefined
  if (c === undefined || c === null) return '{}'
  return JSON.stringify(Object.fromEntries(Object.keys(c).sort().map((k) => [k, c[k] instanceof RegExp ? String(c[k]) : c[k]])))
}

/** Per app (a decorator of its root): never shared between two apps of one process. */
export interface AppState {
  /** What the kernel was installed with (how it reads Fastify, its extensions). */
  readonly host: KernelHost
  /** The app's root context, where the kernel is installed. */
  readonly root: FastifyInstance
  records: RouteRecord[]
  problems: string[]
  /** The guard's verdict per route it never compiled (by the route's config object). */
  unseen: WeakMap<object, Unseen>
  /** Routes declared, after the suite, in a context made before it: no route compiler saw them. */
  uncompiled: Array<{ readonly route: RouteOptions, readonly context: FastifyInstance }>
  /** Routes declared before the suite, where Fastify lists them (`KernelHost.declaredRoutes`): no route compiler saw them. */
  declaredBefore: ReadonlyArray<{ readonly method: unknown, readonly url: string, readonly config?: unknown }>
}

/** A route the suite never compiled: why it is refused (or null: served), and the headers every answer of its context carries. */
export interface Unseen { readonly why: string | null, readonly headers: Readonly<Record<string, string>> }

export function appOf (instance: FastifyInstance): AppState {
  return (instance as unknown as Record<symbol, AppState>)[kApp]
}

/** The conventions a config asks for (a config key set to anything but false). */
export function asksFor (config: Record<string | symbol, unknown>): ConventionKey[] {
  return configKeys().filter((a) => config[a.configKey] !== undefined && config[a.configKey] !== false).map((a) => a.key)
}

export function fixFor (key: ConventionKey): string {
  return `register ${pluginOf(key)} (or the fastify-http-conventions umbrella) in this route's context or an ancestor, and declare the route after it (await fastify.register(...) before adding routes)`
}

export function snapshotOf (config: Record<string | symbol, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>()
  for (const { configKey } of configKeys()) out.set(configKey, copyDeep(config[configKey], new Map()))
  return out
}

/** A plain object or array (what JSON and object literals make); anything else is kept by identity. */
function isPlain (value: object): boolean {
  if (Array.isArray(value)) return true
  const tag = Object.prototype.toString.call(value)
  const ctor = (value as { constructor?: unknown }).constructor
  return tag === '[object Object]' && (ctor === Object || ctor === undefined)
}

/**
 * A copy of a config value, as deep as its plain objects and arrays go (a function, a class
 * instance, a RegExp is the same object): an edit in place at any depth after the route was
 * compiled differs from it. A value that refers to itself is copied once.
 */
function copyDeep (value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== 'object' || !isPlain(value)) return value
  const known = seen.get(value)
  if (known !== undefined) return known
  const out: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {}
  seen.set(value, out)
  for (const key of Object.keys(value)) (out as Record<string, unknown>)[key] = copyDeep((value as Record<string, unknown>)[key], seen)
  return out
}

/** Config keys within a typo of a convention's (`auht`, `conditonal`, `Auth`), each a problem with a "did you mean". */
export function typos (config: Record<string | symbol, unknown>, where: string): string[] {
  const out: string[] = []
  for (const key of Object.keys(config)) {
    const near = nearKey(key, configKeys().map((a) => a.configKey))
    if (near !== undefined) out.push(`${where} has config.${key}, which no convention reads: did you mean config.${near}?`)
  }
  return out
}

function describe (value: unknown): string {
  if (value === undefined) return 'unset'
  if (typeof value === 'function') return 'a function'
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return 'an object'
  }
}

/** The same config value: identical, or plain objects (arrays) whose members are the same, at every depth. */
function sameValue (kept: unknown, now: unknown, seen = new Set<unknown>()): boolean {
  if (kept === now) return true
  if (kept === null || now === null || typeof kept !== 'object' || typeof now !== 'object') return false
  if (!isPlain(kept) || !isPlain(now) || Array.isArray(kept) !== Array.isArray(now)) return false
  if (seen.has(kept)) return true
  seen.add(kept)
  const a = Object.keys(kept)
  const b = now as Record<string, unknown>
  return a.length === Object.keys(b).length && a.every((k) => Object.hasOwn(b, k) && sameValue((kept as Record<string, unknown>)[k], b[k], seen))
}

/**
 * The route's URL is the one compiled. Fastify itself moves a prefixed context's `/` route
 * from `/prefix` to `/prefix/` after the onRoute hooks ran (prefixTrailingSlash 'both': the
 * same route at both URLs), which the methods convention records as both.
 */
function sameUrl (record: RouteRecord): boolean {
  const now = record.route.url
  return now === record.url || (now === `${record.url}/` && (record.route as { routePath?: string }).routePath === '/')
}

/** Why a compiled route's final config or context differs from what it was compiled for (null: it does not). */
export function difference (record: RouteRecord): string | null {
  const config = (record.route.config ?? {}) as Record<string, unknown>
  for (const { key, configKey } of configKeys()) {
    if (!sameValue(record.snapshot.get(configKey), config[configKey])) {
      return `${record.where} asks for ${key} with config.${configKey} = ${describe(config[configKey])}, but the suite compiled it with ${describe(record.snapshot.get(configKey))}: an onRoute hook that runs after the suite changed the route's config; register that plugin before the suite, or set config.${configKey} where the route is declared`
    }
  }
  if (!sameUrl(record)) {
    return `${record.where} is now at ${String(record.route.url)}, but the suite compiled it for ${record.url}: an onRoute hook that runs after the suite changed the route's URL; register that plugin before the suite, or declare the route at its final URL`
  }
  if (constraintsOf(record.route) !== record.constraints) {
    return `${record.where} now has the constraints ${constraintsOf(record.route)}, but the suite compiled it with ${record.constraints}: an onRoute hook that runs after the suite changed the route's constraints; register that plugin before the suite, or declare the route with its final constraints`
  }
  const methods = methodsOf(record.route).join(',')
  if (methods !== record.methods) {
    return `${record.where} is now ${methods === '' ? 'without a method' : `a route of ${methods}`}, but the suite compiled it for ${record.methods}: an onRoute hook that runs after the suite changed the route's method; register that plugin before the suite, or declare the route with its final method`
  }
  for (const [key, compiled] of record.entries) {
    const now = lookup(record.node, key)
    if (now !== undefined && now !== compiled) {
      return `${record.where} was compiled with ${compiled === undefined ? 'no' : 'other'} ${key} options than its context has now: ${pluginOf(key)} was registered in its context or an ancestor after the route was declared (register(...) without await?); await fastify.register(...) before declaring routes`
    }
  }
  for (const [phase, hook] of record.hooks) {
    if (!asArray(record.route[phase]).includes(hook)) {
      return `${record.where} lost the suite's ${phase} hook: an onRoute hook that runs after the suite replaced the route's ${phase} hooks; add hooks to the array instead of replacing it`
    }
  }
  return null
}

/** The `onReady` hook of the root: every record against its route's final config; any problem rejects. */
export function checkRoutes (this: FastifyInstance, done: (err?: Error) => void): void {
  const app = appOf(this)
  for (const record of app.records.splice(0)) {
    app.problems.push(...typos((record.route.config ?? {}) as Record<string, unknown>, record.where).filter((p) => !app.problems.includes(p)))
    const problem = difference(record)
    if (problem !== null) app.problems.push(problem)
  }
  for (const { route, context } of app.uncompiled.splice(0)) {
    const why = refusal(context, route.config as Record<string | symbol, unknown> | undefined, route.method, route.url, 'was declared in a context made before fastify-http-conventions was registered (the suite compiles the routes of contexts made after it)')
    if (why !== null) app.problems.push(why)
  }
  app.problems.push(...askedBefore(app.declaredBefore))
  app.declaredBefore = []
  if (app.problems.length === 0) return done()
  const list = app.problems.splice(0)
  done(invalidOption('fastify-http-conventions', `${list.length} route(s) cannot be served as they ask:\n- ${list.join('\n- ')}`))
}

/**
 * Only in an app where routes or encapsulated contexts were made before the suite: a route
 * no onRoute hook of the suite saw is refused (500, its handler never runs) when it asks for a convention or a
 * context-wide policy covers it; one that asks for nothing is served.
 */
export function guardUnseen (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  const config = request.routeOptions.config as unknown as Record<string | symbol, unknown>
  if (request.is404 || config[kRecord] !== undefined) return done()
  const why = judged(request, config).why
  if (why === null) return done()
  request.log.error({ reason: why }, 'route asks for a convention it was not compiled with; refused')
  appOf(this).host.refuse(reply, misconfigured(why))
}

/**
 * The headers every answer of the route's context carries (Cross-Origin-Resource-Policy), but
 * those of a convention the route turns off: a route another plugin declared before the suite
 * (@fastify/http-proxy's) answers as the rest of the service does. One it sets itself wins.
 */
function answerHeaders (context: FastifyInstance, config: Record<string | symbol, unknown>): Readonly<Record<string, string>> {
  const node = nodeOf(context)
  const out: Record<string, string> = {}
  for (const a of configKeys()) if (config[a.configKey] !== false) Object.assign(out, lookup(node, a.key)?.headers)
  return out
}

/**
 * Beside the guard: every answer of a route the suite never compiled, served, refused, or
 * given by another plugin's earlier onRequest hook (@fastify/cors's preflight on its own
 * `OPTIONS *` route, declared before the suite), carries the headers of every answer of its
 * context (Cross-Origin-Resource-Policy). One the answer sets itself (an upstream's) wins.
 */
export function dressUnseen (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
  const config = request.routeOptions.config as unknown as Record<string | symbol, unknown>
  if (!request.is404 && config[kRecord] === undefined) dress(reply, judged(request, config))
  done(null, payload)
}

/** The guard's verdict on a route it never compiled, made once per route. */
function judged (request: FastifyRequest, config: Record<string | symbol, unknown>): Unseen {
  const unseen = appOf(request.server).unseen
  let seen = unseen.get(config)
  if (seen === undefined) unseen.set(config, seen = { why: verdict(request, config), headers: answerHeaders(request.server, config) })
  return seen
}

/** The headers every answer of the context carries; one the answer already has wins. */
function dress (reply: FastifyReply, seen: Unseen): void {
  for (const name in seen.headers) if (!reply.hasHeader(name)) reply.header(name, seen.headers[name])
}

/** Why a route no onRoute hook of the suite saw is refused (it asks for a convention, or a policy covers it), or null. */
function verdict (request: FastifyRequest, config: Record<string | symbol, unknown>): string | null {
  return refusal(request.server, config, config.method, String(config.url), 'was declared before fastify-http-conventions was registered')
}

/** Why a route the suite never compiled must not be served (it asks for a convention, or a policy covers it), or null. */
function refusal (context: FastifyInstance, config: Record<string | symbol, unknown> | undefined, method: unknown, url: string, because: string): string | null {
  const node = nodeOf(context)
  const methods = methodsOf({ method })
  const c = config ?? {}
  const covered = configKeys().filter((a) => c[a.configKey] !== false && lookup(node, a.key)?.policy?.(methods) === true).map((a) => a.key)
  const asked = [...new Set([...asksFor(c), ...covered])]
  if (asked.length === 0) return null
  return `${routeWhere({ method, url })} asks for ${asked.join(', ')}, but it ${because}; ${fixFor(asked[0])}`
}

/**
 * Routes declared before the suite that ask for a convention (a config key of one): each a
 * problem naming the route and the fix. One a context-wide policy covers, without asking, is
 * left to the guard: another plugin's route (@fastify/cors's preflight) is answered before
 * the guard runs, and serves today.
 */
function askedBefore (routes: AppState['declaredBefore']): string[] {
  const out: string[] = []
  for (const route of routes) {
    // The HEAD route Fastify adds beside a GET shares its config: the GET names both.
    if (route.method === 'HEAD' && routes.some((r) => r.url === route.url && r.config === route.config && methodsOf(r).includes('GET'))) continue
    const asked = asksFor((route.config ?? {}) as Record<string | symbol, unknown>)
    if (asked.length > 0) out.push(`${routeWhere(route)} asks for ${asked.join(', ')}, but it was declared before fastify-http-conventions was registered, and the suite never compiled it; ${fixFor(asked[0])}`)
  }
  return out
}

/** An `onRoute` hook the kernel adds to each context made before it: such a route is judged when the app gets ready. */
export function noteUncompiled (this: FastifyInstance, route: RouteOptions): void {
  appOf(this).uncompiled.push({ route, context: this })
}
