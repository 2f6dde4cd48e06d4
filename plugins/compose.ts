/**
 * How the conventions meet in Fastify's request lifecycle: one registry per encapsulation
 * context, one table that orders every step, and one compiler that turns a route's config
 * into at most one hook per phase.
 *
 * - A convention plugin does not add hooks itself. It declares a `Convention` (what it
 *   compiles for a route, what it adds to every response of its context) to the registry of
 *   the context it is registered in. A child context that registers a convention again gets
 *   its own entry; its routes use it, its parent and siblings keep theirs (Fastify's
 *   encapsulation). The same convention twice in one context is a boot error.
 * - When a route is added, the compiler walks the conventions in effect for the route's
 *   context in a fixed order (`COMPILE_ORDER`); each adds the steps the route's config asks
 *   for. Steps of one phase are sorted by `PIPELINE` and joined into one hook. A route that
 *   asks for nothing gets no hook.
 * - Steps that concern every response of a context (Cross-Origin-Resource-Policy, the
 *   Content-Type charset, closing a connection whose body was not read) and the redirect
 *   rules (which match URLs, routed or not) run from one context-level hook per phase,
 *   installed in the outermost context that registers the suite.
 * - Fail closed: a route whose config asks for a convention that is not in effect in its
 *   context makes `ready()` reject, naming the route, the convention and the fix. A route
 *   declared before the suite was loaded in its context cannot be seen by any onRoute hook;
 *   if it asks for a convention, it is refused with 500 at request time and logged (the
 *   context-level guard), never served without it.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { invalidOption, misconfigured } from '../lib/errors'
import { profileDefaults, type Profile } from '../lib/profile'
import { asArray } from './shared'
import { recordResponse, type ConventionResponse } from './openapi'
import { addEnvelopeSchema, renderError, sendConventionError, type ErrorFormat, type ErrorPolicy } from './errors'

export type Next = (err?: Error) => void
export type PayloadNext = (err: Error | null, payload?: unknown) => void
/** A step of onRequest, preValidation or preHandler. */
export type HookStep = (request: FastifyRequest, reply: FastifyReply, next: Next) => void
/** A step of preSerialization or onSend. */
export type PayloadStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: PayloadNext) => void
/** A context step of onRequest: synchronous; an error refuses the request, SENT means it answered it. */
export type ContextRequestStep = (request: FastifyRequest, reply: FastifyReply) => Error | typeof SENT | undefined
/** A context step of onSend: synchronous; it sets or removes headers, and may return a new payload. */
export type ContextSendStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown
export const SENT = 'sent'

export type ConventionKey =
  'errors' | 'redirect' | 'content-length' | 'auth' | 'content-type' | 'validation' | 'patch' | 'conditional' | 'delta-encoding' | 'resource-policy'

/** The order in which conventions compile a route: a convention may read what an earlier one provided. */
export const COMPILE_ORDER: readonly ConventionKey[] = [
  'errors', 'redirect', 'content-length', 'auth', 'content-type', 'validation', 'patch', 'conditional', 'delta-encoding', 'resource-policy'
]

/**
 * Every step of the suite, by phase, in the order it runs. This table is the pipeline;
 * docs/architecture.md shows it with the reason for each position.
 */
export const PIPELINE = {
  onRequest: [
    // Fetch standard: the route's policy travels with every answer, errors included.
    'resource-policy',
    // RFC 9112 6: 411 before any byte of the body is read, before credentials are checked.
    'content-length',
    // Conventions (Authentication): 401 before the body is parsed.
    'auth',
    // Conventions (Content-Type) / 4.3: 415 from the headers alone.
    'content-type', 'patch:media-type',
    // RFC 9110 10.1.1: 100 (Continue) only once every check above passed.
    'content-length:continue'
  ],
  preValidation: ['content-length:framing'],
  // RFC 9110 13.2.1: preconditions after auth and validation, before the handler.
  preHandler: ['conditional', 'patch'],
  preSerialization: ['content-type:xml'],
  // The ETag and the 412/304 decision are final before a 226 is made of the answer.
  onSend: ['conditional', 'patch:accept-patch', 'delta-encoding']
} as const

/** Steps that run for every response of a context, from one context-level hook per phase. */
export const CONTEXT_PIPELINE = {
  // By convention: each has at most one context step per phase (redirect rules; unread bodies
  // of GET/HEAD and repeated Host lines).
  onRequest: ['redirect', 'content-length'],
  // A "not modified" of another plugin and errors in Fastify's shape are re-rendered first; then
  // the headers: closing a connection whose body was not read, the charset, the policy.
  onSend: ['conditional', 'errors', 'content-length', 'content-type', 'resource-policy']
} as const satisfies Record<string, readonly ConventionKey[]>

type RoutePhase = keyof typeof PIPELINE
export type StepName<P extends RoutePhase = RoutePhase> = (typeof PIPELINE)[P][number]

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
  /** Adds a step; the phase and its position come from PIPELINE. */
  step: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadStep : HookStep) => void
  /** A value an earlier convention provided for this route (see COMPILE_ORDER). */
  use: <T>(key: string) => T | undefined
  provide: (key: string, value: unknown) => void
  /** Documents a response this route can give (OpenAPI). */
  respond: (status: number, response: ConventionResponse) => void
  /** Sets how the route's error handler renders framing and size errors. */
  errorPolicy: (policy: Partial<ErrorPolicy>) => void
}

export interface Convention {
  key: ConventionKey
  /** The plugin's name, for messages. */
  plugin: string
  /** The config key a route uses to ask for the convention (undefined: none). */
  configKey?: string
  /** Compiles the route; called for every route of the contexts where the convention is in effect. */
  compile?: (c: RouteCompiler) => void
  /** Steps of this convention that run for every response of the context. */
  context?: { onRequest?: ContextRequestStep, onSend?: ContextSendStep }
  /** Conventions compiled with their defaults for a route when not registered (e.g. patch needs conditional). */
  needs?: Partial<Record<ConventionKey, () => Convention>>
}

/** Config keys that ask for a convention, and what turns each off. */
const ASKS: ReadonlyArray<{ configKey: string, key: ConventionKey, off: (v: unknown) => boolean }> = [
  { configKey: 'auth', key: 'auth', off: (v) => v === false },
  { configKey: 'conditional', key: 'conditional', off: (v) => v === false },
  { configKey: 'patch', key: 'patch', off: (v) => v === false },
  { configKey: 'deltaEncoding', key: 'delta-encoding', off: (v) => v === false },
  { configKey: 'contentType', key: 'content-type', off: (v) => v === false },
  { configKey: 'contentLength', key: 'content-length', off: (v) => v === false },
  { configKey: 'resourcePolicy', key: 'resource-policy', off: (v) => v === false },
  { configKey: 'redirect', key: 'redirect', off: (v) => v === false }
]

interface Registry {
  parent: Registry | null
  /** The context that owns this registry. */
  owner: FastifyInstance
  entries: Map<ConventionKey, Convention>
  /** Profile and fallback handler for errors, when this context's registrations set them. */
  profile: Profile | undefined
  fallback: ErrorFallback | undefined
  format: ErrorFormat | undefined
  /** Context steps resolved once the app is ready (registrations cannot change after that). */
  resolved: { onRequest: ContextRequestStep[], onSend: ContextSendStep[] } | null
}

export type ErrorFallback = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

interface ServerState {
  problems: string[]
  sentinel: boolean
}

const kRegistry = Symbol('http-conventions.registry')
const kServer = Symbol('http-conventions.server')
/** On a route's config (Fastify copies it into the route context): the route was compiled. */
const kCompiled = Symbol('http-conventions.compiled')

type WithRegistry = FastifyInstance & { [kRegistry]?: Registry }
type WithServer = { [kServer]?: ServerState }

function registryOf (instance: FastifyInstance): Registry | undefined {
  return (instance as WithRegistry)[kRegistry]
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

function formatOf (registry: Registry | null | undefined): ErrorFormat {
  return nearest(registry, (r) => r.format) ?? 'envelope'
}

/** The outermost Fastify instance (every context is created from its parent with Object.create). */
function rootOf (instance: FastifyInstance): FastifyInstance {
  let root = instance
  for (;;) {
    const proto = Object.getPrototypeOf(root) as FastifyInstance | null
    if (proto === null || typeof (proto as { addHook?: unknown }).addHook !== 'function' || proto.server !== instance.server) return root
    root = proto
  }
}

function methodsOf (route: { method: string | string[] }): string[] {
  return (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())
}

/** `route GET /x` (or `route GET,HEAD /x`): how boot errors name a route. */
export function routeWhere (route: { method: string | string[], url: string }): string {
  return `route ${methodsOf(route).join(',')} ${route.url}`
}

function runHooks (steps: HookStep[]): HookStep {
  if (steps.length === 1) return steps[0]
  return function httpConventionsSteps (request, reply, done) {
    let i = 0
    const next: Next = (err) => {
      if (err !== undefined && err !== null) return done(err)
      if (i === steps.length) return done()
      steps[i++](request, reply, next)
    }
    next()
  }
}

function runPayloadSteps (steps: PayloadStep[]): PayloadStep {
  if (steps.length === 1) return steps[0]
  return function httpConventionsPayloadSteps (request, reply, payload, done) {
    let i = 0
    const next: PayloadNext = (err, value) => {
      if (err !== null) return done(err)
      if (i === steps.length) return done(null, value)
      steps[i++](request, reply, value, next)
    }
    next(null, payload)
  }
}

function sortByTable<T> (table: readonly string[], items: Array<{ name: string, fn: T }>): T[] {
  return items.sort((a, b) => table.indexOf(a.name) - table.indexOf(b.name)).map((s) => s.fn)
}

/** Context steps of the conventions in effect for a registry, in CONTEXT_PIPELINE order. */
function resolveContext (registry: Registry): NonNullable<Registry['resolved']> {
  if (registry.resolved !== null) return registry.resolved
  const onRequest: Array<{ name: string, fn: ContextRequestStep }> = []
  const onSend: Array<{ name: string, fn: ContextSendStep }> = []
  for (const key of COMPILE_ORDER) {
    const c = lookup(registry, key)
    if (c?.context?.onRequest !== undefined) onRequest.push({ name: key, fn: c.context.onRequest })
    if (c?.context?.onSend !== undefined) onSend.push({ name: key, fn: c.context.onSend })
  }
  registry.resolved = {
    onRequest: sortByTable(CONTEXT_PIPELINE.onRequest, onRequest),
    onSend: sortByTable(CONTEXT_PIPELINE.onSend, onSend)
  }
  return registry.resolved
}

function asksFor (config: Record<string | symbol, unknown> | undefined): ConventionKey[] {
  if (config === undefined || config === null) return []
  const out: ConventionKey[] = []
  for (const a of ASKS) {
    const v = config[a.configKey]
    if (v !== undefined && !a.off(v)) out.push(a.key)
  }
  return out
}

function fixFor (key: ConventionKey): string {
  return `register the ${key} convention (or the fastify-http-conventions umbrella) in this route's context or an ancestor, and declare the route after it (await fastify.register(...) before adding routes)`
}

/**
 * Declares a convention in `fastify`'s context. Called by each plugin of the suite when it
 * is registered; installs the compiler in the context the first time.
 */
export function declareConvention (fastify: FastifyInstance, convention: Convention, opts: { profile?: Profile } = {}): void {
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
  const instance = fastify as WithRegistry
  const inherited = registryOf(instance)
  if (Object.prototype.hasOwnProperty.call(instance, kRegistry)) return inherited as Registry
  const registry: Registry = { parent: inherited ?? null, owner: instance, entries: new Map(), profile: undefined, fallback: undefined, format: undefined, resolved: null }
  instance[kRegistry] = registry
  addEnvelopeSchema(instance)
  install(instance, inherited === undefined)
  return registry
}

function serverState (fastify: FastifyInstance): ServerState {
  const server = fastify.server as unknown as WithServer
  return (server[kServer] ??= { problems: [], sentinel: false })
}

function install (instance: FastifyInstance, outermost: boolean): void {
  const state = serverState(instance)
  instance.addHook('onRoute', compileRoute)
  if (!state.sentinel) {
    // Routes of every context created after this point are seen, also where the suite is
    // not registered: one asking for a convention there must fail the boot.
    state.sentinel = true
    const root = rootOf(instance)
    if (root !== instance) root.addHook('onRoute', compileRoute)
    root.addHook('onReady', function httpConventionsCheckRoutes (done) {
      if (state.problems.length === 0) return done()
      const list = state.problems.splice(0)
      done(invalidOption('fastify-http-conventions', `${list.length} route(s) ask for a convention that is not in effect for them:\n- ${list.join('\n- ')}`))
    })
  }
  if (!outermost) return
  // One hook per phase for the whole context tree; each request resolves the steps of its
  // own route's context (`this` is the instance the route was declared in).
  instance.addHook('onRequest', contextOnRequest())
  instance.addHook('onSend', contextOnSend())
}

function runContextRequest (steps: ContextRequestStep[], request: FastifyRequest, reply: FastifyReply, done: Next): void {
  for (let i = 0; i < steps.length; i++) {
    const out = steps[i](request, reply)
    if (out === SENT) return
    if (out !== undefined) return done(out)
  }
  done()
}

function runContextSend (steps: ContextSendStep[], request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  for (let i = 0; i < steps.length; i++) {
    const out = steps[i](request, reply, payload)
    if (out !== undefined) payload = out
  }
  return payload
}

function contextSteps (instance: FastifyInstance): NonNullable<Registry['resolved']> {
  const registry = registryOf(instance)
  return registry === undefined ? { onRequest: [], onSend: [] } : resolveContext(registry)
}

/** The context-level onSend hook: the context's header steps, bound per route like the onRequest hook. */
function contextOnSend (): PayloadStep {
  const unbound = function httpConventionsContextOnSend (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
    done(null, runContextSend(contextSteps(this).onSend, request, reply, payload))
  }
  Object.defineProperty(unbound, 'bind', {
    value: function bindToRoute (instance: FastifyInstance) {
      let steps: ContextSendStep[] | null = null
      return function httpConventionsContextOnSend (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
        steps ??= contextSteps(instance).onSend
        done(null, runContextSend(steps, request, reply, payload))
      }
    }
  })
  return unbound as PayloadStep
}

/** Why a route's requests are refused: it asks for conventions it was never compiled with (null: fine). */
function refusal (request: FastifyRequest): string | null {
  if (request.is404) return null
  const config = request.routeOptions.config as unknown as Record<string | symbol, unknown> | undefined
  if (config === undefined || config[kCompiled] !== undefined) return null
  const asked = asksFor(config)
  if (asked.length === 0) return null
  // Declared before the suite was loaded in its context: no onRoute hook saw it.
  const where = routeWhere(request.routeOptions as { method: string, url: string })
  return `${where} asks for ${asked.join(', ')}, but was declared before fastify-http-conventions was loaded in its context; ${fixFor(asked[0])}`
}

function refuse (request: FastifyRequest, reply: FastifyReply, message: string): void {
  request.log.error({ reason: message }, 'route asks for a convention it was never compiled with; refused')
  // The route has no error handler of the suite: the answer is written here, in the envelope.
  sendConventionError(reply, misconfigured(message))
}

/**
 * The context-level onRequest hook: the guard, then the context's steps. Fastify binds a
 * context hook to each route's instance when the app gets ready (`hook.bind(instance)`);
 * binding this one makes a hook for that route alone, which decides the guard once, on the
 * route's first request. Called unbound, it decides on every request (correct, slower).
 */
function contextOnRequest (): HookStep {
  const unbound = function httpConventionsContextOnRequest (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply, done: Next): void {
    const refused = refusal(request)
    if (refused !== null) return refuse(request, reply, refused)
    runContextRequest(contextSteps(this).onRequest, request, reply, done)
  }
  Object.defineProperty(unbound, 'bind', {
    value: function bindToRoute (instance: FastifyInstance) {
      let decided = false
      let refused: string | null = null
      let steps: ContextRequestStep[] = []
      return function httpConventionsContextOnRequest (request: FastifyRequest, reply: FastifyReply, done: Next): void {
        if (!decided) {
          refused = refusal(request)
          steps = contextSteps(instance).onRequest
          decided = true
        }
        if (refused !== null) return refuse(request, reply, refused)
        if (steps.length === 0) return done()
        runContextRequest(steps, request, reply, done)
      }
    }
  })
  return unbound as HookStep
}

function compileRoute (this: FastifyInstance, route: RouteOptions): void {
  const config = (route.config ?? {}) as Record<string | symbol, unknown>
  if (config[kCompiled] !== undefined) return
  const registry = registryOf(this)
  const asked = asksFor(config)
  const where = routeWhere(route)
  if (registry === undefined) {
    // A context without the suite: fine unless the route asks for a convention.
    const state = serverState(this)
    for (const key of asked) state.problems.push(`${where} asks for ${key}, but no convention of the suite is registered in its context; ${fixFor(key)}`)
    return
  }
  // A fresh config object per route, never the user's (it may be shared by several routes).
  const fresh: Record<string | symbol, unknown> = { ...config }
  route.config = fresh as RouteOptions['config']
  const methods = methodsOf(route)
  const onRequest: Array<{ name: string, fn: HookStep }> = []
  const preValidation: Array<{ name: string, fn: HookStep }> = []
  const preHandler: Array<{ name: string, fn: HookStep }> = []
  const preSerialization: Array<{ name: string, fn: PayloadStep }> = []
  const onSend: Array<{ name: string, fn: PayloadStep }> = []
  const provided = new Map<string, unknown>()
  const defaults = profileDefaults(nearest(registry, (r) => r.profile))
  const policy: ErrorPolicy = { limitStatus: defaults.limitStatus, mismatchStatus: defaults.mismatchStatus, format: formatOf(registry) }
  const compiler: RouteCompiler = {
    route,
    config: config as Record<string, unknown>,
    methods,
    where,
    step (phase, name, fn) {
      const list = { onRequest, preValidation, preHandler, preSerialization, onSend }[phase] as Array<{ name: string, fn: unknown }>
      list.push({ name, fn })
    },
    use: <T>(key: string) => provided.get(key) as T | undefined,
    provide: (key, value) => { provided.set(key, value) },
    respond: (status, response) => recordResponse(route, status, response),
    errorPolicy: (p) => { Object.assign(policy, p) }
  }
  const compiled = new Set<ConventionKey>()
  const needed = new Map<ConventionKey, Convention>()
  for (const key of COMPILE_ORDER) {
    const registered = lookup(registry, key)
    const convention = registered ?? needed.get(key)
    if (convention === undefined) continue
    if (registered !== undefined) compiled.add(key)
    const before = provided.size
    convention.compile?.(compiler)
    // A convention that provided something for this route brings what it needs (with its
    // defaults) where that is not registered: a PATCH route still honours If-Match.
    if (provided.size === before) continue
    for (const [k, make] of Object.entries(convention.needs ?? {}) as Array<[ConventionKey, () => Convention]>) {
      if (lookup(registry, k) === undefined && !needed.has(k)) needed.set(k, make())
    }
  }
  const state = serverState(this)
  for (const key of asked) {
    if (!compiled.has(key)) state.problems.push(`${where} asks for ${key}, which is not registered in its context; ${fixFor(key)}`)
  }

  fresh[kCompiled] = true
  if (onRequest.length > 0) route.onRequest = [runHooks(sortByTable(PIPELINE.onRequest, onRequest)), ...asArray(route.onRequest)] as RouteOptions['onRequest']
  if (preValidation.length > 0) route.preValidation = [runHooks(sortByTable(PIPELINE.preValidation, preValidation)), ...asArray(route.preValidation)] as RouteOptions['preValidation']
  // After the route's own preHandler hooks: a write (PATCH) happens where the handler would run.
  if (preHandler.length > 0) route.preHandler = [...asArray(route.preHandler), runHooks(sortByTable(PIPELINE.preHandler, preHandler))] as RouteOptions['preHandler']
  if (preSerialization.length > 0) route.preSerialization = [...asArray(route.preSerialization), runPayloadSteps(sortByTable(PIPELINE.preSerialization, preSerialization))] as RouteOptions['preSerialization']
  // Before the route's own onSend hooks, and before the hook Fastify ends a HEAD route with
  // (it drops the payload): the suite decides on the payload the handler produced.
  if (onSend.length > 0) route.onSend = [runPayloadSteps(sortByTable(PIPELINE.onSend, onSend)), ...asArray(route.onSend)] as RouteOptions['onSend']

  const own = route.errorHandler
  const fallback = nearest(registry, (r) => r.fallback)
  route.errorHandler = function httpConventionsErrorHandler (this: FastifyInstance, error, request, reply) {
    if (renderError(error, request, reply, policy)) return
    if (own !== undefined) return own.call(this, error, request, reply)
    if (fallback !== undefined) return fallback.call(this, error, request, reply)
    // Errors the suite does not own go on to the context's handler.
    throw error
  }
}
