/**
 * The kernel: how the conventions meet in Fastify's request lifecycle.
 *
 * - The manifest (manifest.ts) names every convention: its config key, its steps and their
 *   order in each phase. Everything below is derived from it.
 * - A convention plugin does not add hooks itself. It declares a `Convention` (what it
 *   compiles for a route, what it adds to answers no route compiled) to the registry of the
 *   context it is registered in. A child context that registers a convention again gets its
 *   own entry; its routes use it, its parent and siblings keep theirs (Fastify's
 *   encapsulation). The same convention twice in one context is a boot error.
 * - When a route is added (`onRoute`), the conventions in effect for its context compile it
 *   into at most one hook per phase, holding only what its config asks for. Compiling there
 *   is an optimisation, never the source of truth: the kernel keeps a record of what it
 *   compiled (each config key's value, each convention in effect).
 * - Fail closed, judged from the route's final config. Another plugin's `onRoute` hook may
 *   change the config after the suite compiled it, and a context may get its own convention
 *   (or a context-wide policy such as `auth.protect` or `requirePrecondition`) after its
 *   routes were declared. When the app gets ready, every record is checked against the
 *   route's final config and the conventions then in effect: a difference makes `ready()`
 *   reject, naming the route, what it asks for and the fix. What cannot be known at ready
 *   (routes no onRoute hook of the suite saw: declared before the suite was loaded) is judged
 *   at the route's first request by one guard for the whole app: a route that asks for a
 *   convention, by its config or by a context-wide policy, and was not compiled for it is
 *   answered 500 with the envelope (its handler never runs) and logged; a route that asks
 *   for nothing is served and logs one warning naming the conventions it does not get.
 * - The guard is one hook per phase (onRequest, onSend) in the app's root (Fastify adds a
 *   root's hook to every context, made before or after). For a compiled route it
 *   runs only the few checks that concern every request (repeated Host lines) and every
 *   answer (errors in Fastify's shape, a closing connection); for the rest, the context's
 *   steps (the not-found handler included).
 */
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { badFraming, headersTooLarge, invalidOption, misconfigured, requestTimeout } from '../lib/errors'
import { profileDefaults, type Profile } from '../lib/profile'
import { parseMediaType, type MediaType } from '../lib/headers/media-type'
import { asArray, methodsOf, routeWhere } from './shared'
import { recordResponse, type ConventionResponse } from './openapi'
import { addEnvelopeSchema, fromFastifyError, logConventionError, rawResponse, renderPassedOnError, routeErrorHandler, sendConventionError, type ErrorFormat, type ErrorPolicy } from './errors'
import { ASKS, COMPILE_ORDER, STEP_RANKS, contextRank, entryOf, type ContextKind, type ConventionKey, type RoutePhase, type StepName } from './manifest'
import { contextValue, ownContextValue, rootOf, setContextValue } from './adapter'
import { conditionalConvention } from './conditional'

export type { ConventionKey, StepName } from './manifest'
export type Next = (err?: Error) => void
export type PayloadNext = (err: Error | null, payload?: unknown) => void
/** A step of onRequest, preValidation or preHandler. */
export type HookStep = (request: FastifyRequest, reply: FastifyReply, next: Next) => void
/** A step of preSerialization or onSend. */
export type PayloadStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: PayloadNext) => void
/** A synchronous step of onRequest, preValidation or preHandler: an error refuses the request, SENT means it answered it. */
export type CheckStep = (request: FastifyRequest, reply: FastifyReply) => Error | typeof SENT | undefined
/** A synchronous step of preSerialization or onSend: it sets or removes headers, and may return a new payload. */
export type PayloadCheck = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown
export const SENT = 'sent'

/** A typed key for what one convention provides to later ones while compiling a route. */
export interface Provision<T> { readonly name: string, readonly type?: T }
function provision<T> (name: string): Provision<T> { return { name } }
/**
 * What conventions provide to each other while compiling a route. `validators`: a PATCH
 * route's loader doubles as its validators provider (one read per request). `auth`: the
 * route is protected (later conventions key per-user state by `request.principal`).
 */
export const PROVIDES = {
  validators: provision<(request: FastifyRequest) => unknown>('validators'),
  auth: provision<{ readonly scopes: readonly string[] }>('auth')
} as const

/** What a convention sees of a route while compiling it. */
export interface RouteCompiler {
  /** The route's options: `bodyLimit` may be set here; hooks are the compiler's. */
  readonly route: RouteOptions
  /** The route's config (the user's object, never written to). */
  readonly config: Record<string, unknown>
  /** Upper-case methods of the route. */
  readonly methods: readonly string[]
  /** `route GET /x`, for boot errors. */
  readonly where: string
  /** Adds a step; the phase and its position come from the manifest. */
  step: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadStep : HookStep) => void
  /** Adds a synchronous step (cheaper: no callback); the phase and its position come from the manifest. */
  check: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadCheck : CheckStep) => void
  /** A value an earlier convention provided for this route (see the manifest's order). */
  use: <T>(key: Provision<T>) => T | undefined
  provide: <T>(key: Provision<T>, value: T) => void
  /** Documents a response this route can give (OpenAPI). */
  respond: (status: number, response: ConventionResponse) => void
  /** Sets how the route's error handler renders framing and size errors. */
  errorPolicy: (policy: Partial<ErrorPolicy>) => void
  /** The route's error format; a convention that answers directly renders in it. */
  readonly errorFormat: ErrorFormat
}

export interface Convention {
  key: ConventionKey
  /** The plugin's name, for messages. */
  plugin: string
  /** The config key a route uses to ask for the convention; must be the manifest's (kept for readability at the call site). */
  configKey?: string
  /** Compiles the route; called for every route of the contexts where the convention is in effect. */
  compile?: (c: RouteCompiler) => void
  /** Steps of the context-level hooks, by kind (see the manifest). */
  context?: { everyRequest?: CheckStep, onRequest?: CheckStep, everyResponse?: PayloadCheck, onSend?: PayloadCheck }
  /**
   * A context-wide policy: true when the convention applies to a route of these methods even
   * though its config does not ask for it (`auth.protect`, `requirePrecondition`). A route
   * the suite did not compile is refused when a policy in effect in its context covers it.
   */
  policy?: (methods: readonly string[]) => boolean
  /** Conventions compiled with their defaults for a route when not registered in its context (patch needs conditional). */
  needs?: readonly ConventionKey[]
  /**
   * Headers every answer of the context carries, also those the suite writes where no route
   * and no hook runs: Fastify's framework errors, framing errors answered on the raw socket.
   */
  headers?: Readonly<Record<string, string>>
}

export type ErrorFallback = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

interface Registry {
  parent: Registry | null
  entries: Map<ConventionKey, Convention>
  /** Defaults of needed conventions made for this context's routes (see FALLBACKS). */
  fallbacks: Map<ConventionKey, Convention>
  /** Profile and fallback handler for errors, when this context's registrations set them. */
  profile: Profile | undefined
  fallback: ErrorFallback | undefined
  format: ErrorFormat | undefined
  /** Context steps resolved at the first request (registrations cannot change after ready). */
  resolved: ContextSteps | null
}

/** What the guard runs: for compiled routes, and for the rest. */
interface ContextSteps {
  compiled: { onRequest: CheckStep[], onSend: PayloadCheck[] }
  other: { onRequest: CheckStep[], onSend: PayloadCheck[] }
}

/** What the kernel compiled for one route: judged against the route's final config. */
interface RouteRecord {
  readonly url: string
  readonly methods: readonly string[]
  readonly where: string
  /** The route options object onRoute got: its `config` is the final config's source. */
  readonly route: RouteOptions
  readonly instance: FastifyInstance
  /** Each manifest convention in effect when the route was compiled (undefined: none). */
  readonly entries: ReadonlyMap<ConventionKey, Convention | undefined>
  /** Each config key's value when the route was compiled (objects copied one level deep). */
  readonly snapshot: ReadonlyMap<string, unknown>
  /** The hooks the kernel put on the route, by phase. */
  readonly hooks: ReadonlyArray<readonly [RoutePhase, unknown]>
}

/** How the guard treats one route, decided at its first request. */
interface Decision {
  refused: string | null
  onRequest: readonly CheckStep[]
  onSend: readonly PayloadCheck[]
}

/** Per app (keyed by its server): never shared between two apps of one process. */
interface AppState {
  records: RouteRecord[]
  problems: string[]
  /** Decisions by the route's final config object (one per route). */
  decisions: WeakMap<object, Decision>
  installed: boolean
}

/**
 * The conventions another may need (`needs`), with their defaults, for routes of contexts
 * where they are not registered: the kernel, not the plugin that needs one, knows them.
 */
const FALLBACKS: Partial<Record<ConventionKey, (profile: Profile | undefined) => Convention>> = {
  conditional: (profile) => conditionalConvention({ profile })
}

const kRegistry = Symbol('http-conventions.registry')
/** On a route's config: its record (Fastify copies the config, symbols included, into the route). */
const kRecord = Symbol('http-conventions.record')
const apps = new WeakMap<object, AppState>()
/** On a request (a decorator of the root): the guard's decision for its route. */
const kDecision = Symbol('http-conventions.decision')
type WithDecision = FastifyRequest & { [kDecision]?: Decision | null }
/** On a request (a decorator of the root): its Content-Type, parsed once (false: absent or not a media type). */
const kMediaType = Symbol('http-conventions.media-type')
type WithMediaType = FastifyRequest & { [kMediaType]?: MediaType | false | null }

/**
 * The request's Content-Type (RFC 9110 8.3), parsed once per request whichever convention
 * asks first (the Content-Type check, the PATCH media type, the body parsers); null when
 * it is absent or not a media type. The result is only read.
 */
export function requestMediaType (request: FastifyRequest): MediaType | null {
  const r = request as WithMediaType
  const known = r[kMediaType]
  if (known !== null && known !== undefined) return known === false ? null : known
  const value = request.headers['content-type']
  const parsed = value === undefined || value === '' ? null : parseMediaType(value)
  r[kMediaType] = parsed ?? false
  return parsed
}

function registryOf (instance: FastifyInstance): Registry | undefined {
  return contextValue<Registry>(instance, kRegistry)
}

function appState (instance: FastifyInstance): AppState {
  let state = apps.get(instance.server)
  if (state === undefined) {
    state = { records: [], problems: [], decisions: new WeakMap(), installed: false }
    apps.set(instance.server, state)
  }
  return state
}

/** The nearest value `pick` finds, from the registry up through its ancestors (encapsulation). */
function nearest<T> (registry: Registry | null | undefined, pick: (r: Registry) => T | undefined): T | undefined {
  for (let r = registry; r !== undefined && r !== null; r = r.parent) {
    const found = pick(r)
    if (found !== undefined) return found
  }
  return undefined
}

function lookup (registry: Registry | null | undefined, key: ConventionKey): Convention | undefined {
  return nearest(registry, (r) => r.entries.get(key))
}

/** A needed convention's default, made once per context (its steps hold no per-route state). */
function fallback (registry: Registry, key: ConventionKey, make: (profile: Profile | undefined) => Convention): Convention {
  let made = registry.fallbacks.get(key)
  if (made === undefined) {
    made = make(nearest(registry, (r) => r.profile))
    registry.fallbacks.set(key, made)
  }
  return made
}

function formatOf (registry: Registry | null | undefined): ErrorFormat {
  return nearest(registry, (r) => r.format) ?? 'envelope'
}

/** A compiled step: a callback step, or a synchronous check run in a loop (no closure per request). */
interface Compiled<S, C> { fn: S | C, sync: boolean }

/** Runs synchronous checks in order: the first error (or SENT) ends them; undefined when all passed. */
function runChecks (checks: readonly CheckStep[], request: FastifyRequest, reply: FastifyReply): Error | typeof SENT | undefined {
  for (let i = 0; i < checks.length; i++) {
    const out = checks[i](request, reply)
    if (out !== undefined) return out
  }
  return undefined
}

/** Runs synchronous payload steps in order; each may replace the payload. */
function runPayloadChecks (checks: readonly PayloadCheck[], request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  for (let i = 0; i < checks.length; i++) {
    const out = checks[i](request, reply, payload)
    if (out !== undefined) payload = out
  }
  return payload
}

/** Ends a hook after runChecks: an error refuses the request, SENT means a step answered it. */
function finish (out: Error | typeof SENT | undefined, done: Next): void {
  if (out === SENT) return
  if (out !== undefined) return done(out)
  done()
}

/** Joins the steps of one hook phase into one hook; synchronous checks run inline. */
function runHooks (steps: Array<Compiled<HookStep, CheckStep>>): HookStep {
  if (steps.every((s) => s.sync)) {
    const checks = steps.map((s) => s.fn as CheckStep)
    return function httpConventionsChecks (request, reply, done) {
      finish(runChecks(checks, request, reply), done)
    }
  }
  if (steps.length === 1) return steps[0].fn as HookStep
  return function httpConventionsSteps (request, reply, done) {
    let i = 0
    const next: Next = (err) => {
      if (err !== undefined && err !== null) return done(err)
      while (i < steps.length) {
        const step = steps[i++]
        if (!step.sync) return (step.fn as HookStep)(request, reply, next)
        const out = (step.fn as CheckStep)(request, reply)
        if (out === SENT) return
        if (out !== undefined) return done(out)
      }
      done()
    }
    next()
  }
}

/** Joins the steps of one payload phase into one hook; synchronous steps run inline. */
function runPayloadSteps (steps: Array<Compiled<PayloadStep, PayloadCheck>>): PayloadStep {
  if (steps.every((s) => s.sync)) {
    const checks = steps.map((s) => s.fn as PayloadCheck)
    return function httpConventionsPayloadChecks (request, reply, payload, done) {
      done(null, runPayloadChecks(checks, request, reply, payload))
    }
  }
  if (steps.length === 1) return steps[0].fn as PayloadStep
  return function httpConventionsPayloadSteps (request, reply, payload, done) {
    let i = 0
    const next: PayloadNext = (err, value) => {
      if (err !== null) return done(err)
      while (i < steps.length) {
        const step = steps[i++]
        if (!step.sync) return (step.fn as PayloadStep)(request, reply, value, next)
        const out = (step.fn as PayloadCheck)(request, reply, value)
        if (out !== undefined) value = out
      }
      done(null, value)
    }
    next(null, payload)
  }
}

function sortByRank<T> (rank: (name: string) => number, items: Array<{ name: string, fn: T }>): T[] {
  return items.sort((a, b) => rank(a.name) - rank(b.name)).map((s) => s.fn)
}

const KINDS: readonly ContextKind[] = ['everyRequest', 'onRequest', 'everyResponse', 'onSend']

/** Context steps of the conventions in effect for a registry, in the manifest's order. */
function resolveContext (registry: Registry): ContextSteps {
  if (registry.resolved !== null) return registry.resolved
  const kinds = { everyRequest: [], onRequest: [], everyResponse: [], onSend: [] } as Record<ContextKind, Array<{ name: string, fn: never }>>
  for (const key of COMPILE_ORDER) {
    const steps = lookup(registry, key)?.context
    if (steps === undefined) continue
    for (const kind of KINDS) {
      const fn = steps[kind]
      if (fn !== undefined) kinds[kind].push({ name: key, fn: fn as never })
    }
  }
  const sorted = <T>(kind: ContextKind): T[] => sortByRank((name) => contextRank(kind, name as ConventionKey) ?? 0, kinds[kind]) as T[]
  const everyRequest = sorted<CheckStep>('everyRequest')
  const everyResponse = sorted<PayloadCheck>('everyResponse')
  // Without the umbrella's errors step (appErrors: false, a plugin registered alone), a suite
  // error an app's handler passed on to Fastify's still gets the suite's answer.
  if (lookup(registry, 'errors') === undefined) everyResponse.unshift(renderPassedOnError)
  registry.resolved = {
    compiled: { onRequest: everyRequest, onSend: everyResponse },
    other: { onRequest: [...everyRequest, ...sorted<CheckStep>('onRequest')], onSend: [...everyResponse, ...sorted<PayloadCheck>('onSend')] }
  }
  return registry.resolved
}

/** The conventions a config asks for (a config key set to anything but false). */
function asksFor (config: Record<string | symbol, unknown> | undefined): ConventionKey[] {
  if (config === undefined || config === null) return []
  const out: ConventionKey[] = []
  for (const a of ASKS) {
    const v = config[a.configKey]
    if (v !== undefined && v !== false) out.push(a.key)
  }
  return out
}

/** The conventions whose context-wide policy covers a route the config does not turn them off for. */
function policiesFor (registry: Registry | undefined, config: Record<string | symbol, unknown> | undefined, methods: readonly string[]): ConventionKey[] {
  const out: ConventionKey[] = []
  if (registry === undefined) return out
  for (const key of COMPILE_ORDER) {
    const convention = lookup(registry, key)
    if (convention?.policy === undefined) continue
    const configKey = entryOf(key).configKey
    if (configKey !== undefined && config?.[configKey] === false) continue
    if (convention.policy(methods)) out.push(key)
  }
  return out
}

function fixFor (key: ConventionKey): string {
  return `register ${entryOf(key).plugin} (or the fastify-http-conventions umbrella) in this route's context or an ancestor, and declare the route after it (await fastify.register(...) before adding routes)`
}

/** A value as the kernel keeps it: objects and arrays copied one level deep. */
function snap (value: unknown): unknown {
  if (Array.isArray(value)) return value.slice()
  if (value !== null && typeof value === 'object') return { ...value }
  return value
}

/** The same config value: identical, or objects (arrays) with identical members. */
function sameValue (kept: unknown, now: unknown): boolean {
  if (kept === now) return true
  if (kept === null || now === null || typeof kept !== 'object' || typeof now !== 'object') return false
  if (Array.isArray(kept) !== Array.isArray(now)) return false
  const a = Object.keys(kept)
  const b = Object.keys(now)
  if (a.length !== b.length) return false
  return a.every((k) => (kept as Record<string, unknown>)[k] === (now as Record<string, unknown>)[k])
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

/**
 * Why a compiled route's final config or context differs from what it was compiled for
 * (null: it does not). `config` is the final config; `instance` the route's context.
 */
function difference (record: RouteRecord, config: Record<string | symbol, unknown>): string | null {
  const registry = registryOf(record.instance)
  for (const key of COMPILE_ORDER) {
    const configKey = entryOf(key).configKey
    if (configKey !== undefined && !sameValue(record.snapshot.get(configKey), config[configKey])) {
      return `${record.where} asks for ${key} with config.${configKey} = ${describe(config[configKey])}, but the suite compiled it with ${describe(record.snapshot.get(configKey))}: an onRoute hook that runs after the suite changed the route's config; register that plugin before the suite, or set config.${configKey} where the route is declared`
    }
    if (lookup(registry, key) !== record.entries.get(key)) {
      return `${record.where} was compiled with ${record.entries.get(key) === undefined ? 'no' : 'other'} ${key} options than its context has now: the ${key} convention was registered in its context after the route was declared (register(...) without await?); await fastify.register(...) before declaring routes`
    }
  }
  for (const [phase, hook] of record.hooks) {
    if (!asArray(record.route[phase]).includes(hook)) {
      return `${record.where} lost the suite's ${phase} hook: an onRoute hook that runs after the suite replaced the route's ${phase} hooks; add hooks to the array instead of replacing it`
    }
  }
  return null
}

function refuse (request: FastifyRequest, reply: FastifyReply, message: string): void {
  request.log.error({ reason: message }, 'route asks for a convention it was not compiled with; refused')
  // The route has no error handler of the suite: the answer is written here, in the envelope.
  sendConventionError(reply, misconfigured(message))
}

const NO_STEPS: ContextSteps = { compiled: { onRequest: [], onSend: [] }, other: { onRequest: [], onSend: [] } }

/** How the guard treats the request's route: decided at its first request, from its final config. */
function decide (instance: FastifyInstance, request: FastifyRequest, state: AppState): Decision {
  const config = request.routeOptions.config as unknown as Record<string | symbol, unknown>
  const known = state.decisions.get(config)
  if (known !== undefined) return known
  const registry = registryOf(instance)
  const steps = registry === undefined ? NO_STEPS : resolveContext(registry)
  let decision: Decision
  if (config.url === undefined) {
    // The not-found handler: the context's steps.
    decision = { refused: null, ...steps.other }
  } else {
    const record = config[kRecord] as RouteRecord | undefined
    const own = record !== undefined && record.url === config.url && methodsOf({ method: config.method }).every((m) => record.methods.includes(m)) ? record : undefined
    if (own !== undefined) {
      decision = { refused: difference(own, config), ...steps.compiled }
    } else {
      decision = { refused: uncompiled(registry, config, request), ...steps.other }
    }
  }
  state.decisions.set(config, decision)
  return decision
}

/** A route no onRoute hook of the suite compiled: refused if it asks for a convention, else served with a warning. */
function uncompiled (registry: Registry | undefined, config: Record<string | symbol, unknown>, request: FastifyRequest): string | null {
  const methods = methodsOf({ method: config.method })
  const where = routeWhere({ method: config.method, url: String(config.url) })
  const asked = [...new Set([...asksFor(config), ...policiesFor(registry, config, methods)])]
  if (asked.length > 0) {
    const why = registry === undefined || asked.some((k) => lookup(registry, k) === undefined)
      ? 'no registered fastify-http-conventions provides it in its context'
      : 'it was declared before fastify-http-conventions was loaded in its context'
    return `${where} asks for ${asked.join(', ')}, but ${why}; ${fixFor(asked[0])}`
  }
  if (registry !== undefined) {
    const missed = COMPILE_ORDER.filter((k) => lookup(registry, k)?.compile !== undefined)
    request.log.warn({ route: where, conventions: missed }, `${where} was declared before fastify-http-conventions was loaded in its context: it gets only the answers every route of the context gets, not ${missed.join(', ')}; declare it after await fastify.register(...)`)
  }
  return null
}

/**
 * The headers every answer of `instance`'s context carries (each convention in effect there
 * that declares some), for answers written where no route and no hook runs.
 */
export function contextHeaders (instance: FastifyInstance): Record<string, string> {
  const out: Record<string, string> = {}
  const registry = registryOf(instance)
  if (registry === undefined) return out
  for (const key of COMPILE_ORDER) Object.assign(out, lookup(registry, key)?.headers)
  return out
}

/**
 * Fastify's `frameworkErrors` (set by `serverOptions`): a request its router refused before
 * any route or hook (a path that does not decode, a path parameter over `maxParamLength`)
 * gets the suite's answer, as its root context gives it: the catalogue's error in the
 * context's format, with the headers every answer of the context carries. Nothing of the
 * request is repeated. An error the catalogue does not know is Fastify's to answer.
 */
export function answerFrameworkError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const registry = registryOf(request.server)
  const defaults = profileDefaults(nearest(registry, (r) => r.profile))
  const err = fromFastifyError(error, request, defaults) ?? misconfigured('the server could not route this request')
  logConventionError(request, err)
  const headers = contextHeaders(request.server)
  for (const name of Object.keys(headers)) reply.header(name, headers[name])
  sendConventionError(reply, err, formatOf(registry))
}

/**
 * Fastify's `clientErrorHandler` (set by `serverOptions`): a request Node's HTTP parser
 * refused gets the suite's answer on the raw socket, dressed as every answer (Date, the
 * headers of every answer of the root context), then the connection closes: 408 for a
 * request that did not arrive in time (RFC 9110 15.5.9), 431 for a header section over the
 * server's limit (RFC 6585 5), 400 for anything that is not HTTP/1.1 as RFC 9112 writes it.
 * A request the content-length plugin answered (a framing error) is left alone.
 */
export function answerClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // Node: a reset connection, or one already answered and destroyed, has nothing more to say.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const err = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? requestTimeout('the request did not arrive in time')
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? headersTooLarge('the header section is larger than this server reads')
      : badFraming('the request is not HTTP/1.1 as RFC 9112 writes it')
  this.log.trace({ err: error }, 'client error')
  if (socket.writable) socket.write(rawResponse(err, contextHeaders(this)))
  socket.destroy(error)
}

/**
 * Declares a convention in `fastify`'s context. Called by each plugin of the suite when it
 * is registered; installs the kernel in the context the first time.
 */
export function declareConvention (fastify: FastifyInstance, convention: Convention, opts: { profile?: Profile } = {}): void {
  const manifest = entryOf(convention.key)
  if (manifest === undefined) throw invalidOption(convention.plugin, `the convention ${JSON.stringify(convention.key)} is not in the manifest (plugins/manifest.ts)`)
  if (convention.configKey !== manifest.configKey) throw invalidOption(convention.plugin, `the ${convention.key} convention's config key is ${JSON.stringify(manifest.configKey)} in the manifest, not ${JSON.stringify(convention.configKey)}`)
  const registry = ownRegistry(fastify)
  if (registry.entries.has(convention.key)) {
    throw invalidOption(convention.plugin, `the ${convention.key} convention is already registered in this context; give its options once (to the umbrella or to this plugin), or register it in a child context to give part of the app other options`)
  }
  registry.entries.set(convention.key, convention)
  if (opts.profile !== undefined && registry.profile === undefined) registry.profile = opts.profile
}

/** Sets the profile and the handler of errors the suite does not own, for `fastify`'s context. */
export function configureContext (fastify: FastifyInstance, opts: { profile?: Profile, fallback?: ErrorFallback, format?: ErrorFormat }): void {
  const registry = ownRegistry(fastify)
  if (opts.format !== undefined) registry.format = opts.format
  if (opts.profile !== undefined) registry.profile = opts.profile
  if (opts.fallback !== undefined) registry.fallback = opts.fallback
}

function ownRegistry (fastify: FastifyInstance): Registry {
  const own = ownContextValue<Registry>(fastify, kRegistry)
  if (own !== undefined) return own
  const registry: Registry = { parent: registryOf(fastify) ?? null, entries: new Map(), fallbacks: new Map(), profile: undefined, fallback: undefined, format: undefined, resolved: null }
  setContextValue(fastify, kRegistry, registry)
  addEnvelopeSchema(fastify)
  install(fastify)
  return registry
}

/** The guard's hooks: one set per app in its root, and in a context made before the root got them. */
function install (instance: FastifyInstance): void {
  const state = appState(instance)
  if (!state.installed) {
    state.installed = true
    const root = rootOf(instance)
    addGuard(root, state)
    root.addHook('onReady', function httpConventionsCheckRoutes (done) {
      for (const record of state.records.splice(0)) {
        const problem = difference(record, (record.route.config ?? {}) as Record<string | symbol, unknown>)
        if (problem !== null) state.problems.push(problem)
      }
      if (state.problems.length === 0) return done()
      const list = state.problems.splice(0)
      done(invalidOption('fastify-http-conventions', `${list.length} route(s) ask for more than the suite compiled for them:\n- ${list.join('\n- ')}`))
    })
  }
  // Fastify gives a context the onRoute hooks its parent had when it was made: one made
  // before the root got the kernel's needs its own (a route is compiled once either way).
  if (rootOf(instance) !== instance) instance.addHook('onRoute', compileRoute)
}

/** One hook per phase for the whole app: Fastify adds a hook of the root to every context, made before or after. */
function addGuard (instance: FastifyInstance, state: AppState): void {
  instance.addHook('onRoute', compileRoute)
  // The decision travels with the request from onRequest to onSend (one look-up per request).
  instance.decorateRequest(kDecision, null)
  instance.decorateRequest(kMediaType, null)
  instance.addHook('onRequest', function httpConventionsGuard (this: FastifyInstance, request, reply, done) {
    const decision = decide(this, request, state)
    ;(request as WithDecision)[kDecision] = decision
    if (decision.refused !== null) return refuse(request, reply, decision.refused)
    finish(runChecks(decision.onRequest, request, reply), done)
  })
  instance.addHook('onSend', function httpConventionsGuardOnSend (this: FastifyInstance, request, reply, payload, done) {
    const decision = (request as WithDecision)[kDecision] ?? decide(this, request, state)
    done(null, runPayloadChecks(decision.onSend, request, reply, payload))
  })
}

function compileRoute (this: FastifyInstance, route: RouteOptions): void {
  const config = (route.config ?? {}) as Record<string | symbol, unknown>
  // Seen by the onRoute hook of its context and of the root: compiled once.
  if ((config[kRecord] as RouteRecord | undefined)?.route === route) return
  const registry = registryOf(this)
  const state = appState(this)
  const where = routeWhere(route)
  if (registry === undefined) {
    // A context without the suite: fine unless the route asks for a convention.
    for (const key of asksFor(config)) state.problems.push(`${where} asks for ${key}, but no convention of the suite is registered in its context; ${fixFor(key)}`)
    return
  }
  // A fresh config object per route, never the user's (it may be shared by several routes).
  const fresh: Record<string | symbol, unknown> = { ...config }
  route.config = fresh as RouteOptions['config']
  const methods = methodsOf(route)
  type Item = { name: string, fn: { fn: unknown, sync: boolean } }
  const phases: Record<RoutePhase, Item[]> = { onRequest: [], preValidation: [], preHandler: [], preSerialization: [], onSend: [] }
  const provided = new Map<string, unknown>()
  const defaults = profileDefaults(nearest(registry, (r) => r.profile))
  const policy: ErrorPolicy = { limitStatus: defaults.limitStatus, mismatchStatus: defaults.mismatchStatus, format: formatOf(registry) }
  const compiler: RouteCompiler = {
    route,
    config: config as Record<string, unknown>,
    methods,
    where,
    step (phase, name, fn) { phases[phase].push({ name, fn: { fn, sync: false } }) },
    check (phase, name, fn) { phases[phase].push({ name, fn: { fn, sync: true } }) },
    use: <T>(key: Provision<T>) => provided.get(key.name) as T | undefined,
    provide: (key, value) => { provided.set(key.name, value) },
    respond: (status, response) => recordResponse(route, status, response),
    errorPolicy: (p) => { Object.assign(policy, p) },
    errorFormat: policy.format
  }
  const entries = new Map<ConventionKey, Convention | undefined>()
  const needed = new Map<ConventionKey, Convention>()
  for (const key of COMPILE_ORDER) {
    const registered = lookup(registry, key)
    entries.set(key, registered)
    const convention = registered ?? needed.get(key)
    if (convention === undefined) continue
    const before = provided.size
    convention.compile?.(compiler)
    // A convention that provided something for this route brings what it needs (with its
    // defaults) where that is not registered: a PATCH route still honours If-Match.
    if (provided.size === before) continue
    for (const k of convention.needs ?? []) {
      const make = FALLBACKS[k]
      if (make !== undefined && lookup(registry, k) === undefined && !needed.has(k)) needed.set(k, fallback(registry, k, make))
    }
  }
  for (const key of asksFor(config)) {
    if (entries.get(key) === undefined && needed.get(key) === undefined) state.problems.push(`${where} asks for ${key}, which is not registered in its context; ${fixFor(key)}`)
  }

  const hooks: Array<[RoutePhase, unknown]> = []
  const rank = (phase: RoutePhase) => (name: string) => STEP_RANKS[phase].get(name) ?? 0
  const hookOf = (phase: RoutePhase): HookStep => runHooks(sortByRank(rank(phase), phases[phase] as Array<{ name: string, fn: Compiled<HookStep, CheckStep> }>))
  const payloadHookOf = (phase: RoutePhase): PayloadStep => runPayloadSteps(sortByRank(rank(phase), phases[phase] as Array<{ name: string, fn: Compiled<PayloadStep, PayloadCheck> }>))
  const put = (phase: RoutePhase, hook: unknown, first: boolean): void => {
    hooks.push([phase, hook])
    route[phase] = (first ? [hook, ...asArray(route[phase])] : [...asArray(route[phase]), hook]) as never
  }
  if (phases.onRequest.length > 0) put('onRequest', hookOf('onRequest'), true)
  if (phases.preValidation.length > 0) put('preValidation', hookOf('preValidation'), true)
  // After the route's own preHandler hooks: a write (PATCH) happens where the handler would run.
  if (phases.preHandler.length > 0) put('preHandler', hookOf('preHandler'), false)
  if (phases.preSerialization.length > 0) put('preSerialization', payloadHookOf('preSerialization'), false)
  // Before the route's own onSend hooks, and before the hook Fastify ends a HEAD route with
  // (it drops the payload): the suite decides on the payload the handler produced.
  if (phases.onSend.length > 0) put('onSend', payloadHookOf('onSend'), true)

  route.errorHandler = routeErrorHandler(policy, route.errorHandler, nearest(registry, (r) => r.fallback))

  const snapshot = new Map<string, unknown>()
  for (const a of ASKS) snapshot.set(a.configKey, snap(fresh[a.configKey]))
  const record: RouteRecord = { url: route.url, methods, where, route, instance: this, entries, snapshot, hooks }
  fresh[kRecord] = record
  state.records.push(record)
}
