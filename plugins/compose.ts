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
 * - A compiled route's every-response duties (the resource policy, the Content-Type charset,
 *   the redirect rules, a "not modified" of another plugin) are steps of its own, compiled
 *   from its config like the rest: a route that turns a convention off pays nothing for it.
 * - One context-level hook per phase (onRequest, onSend), installed in the outermost context
 *   that registers the suite, covers what no route compiled: the not-found handler and
 *   routes declared before the suite. Fastify binds it to each route when the app gets
 *   ready; for a compiled route it runs only the few checks that concern every request
 *   (repeated Host lines) and every answer (errors in Fastify's shape, a closing connection).
 * - Fail closed: a route whose config asks for a convention that is not in effect in its
 *   context makes `ready()` reject, naming the route, the convention and the fix. A route
 *   declared before the suite was loaded in its context cannot be seen by any onRoute hook;
 *   if it asks for a convention, it is refused with 500 at request time and logged (the
 *   context-level guard), never served without it.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { invalidOption, misconfigured } from '../lib/errors'
import { profileDefaults, type Profile } from '../lib/profile'
import { asArray, methodsOf, routeWhere } from './shared'
import { recordResponse, type ConventionResponse } from './openapi'
import { addEnvelopeSchema, routeErrorHandler, sendConventionError, type ErrorFormat, type ErrorPolicy } from './errors'

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
    // RFC 9110 15.4.8: 307 before any body is read (the answer carries the policy above).
    'redirect',
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
  // A "not modified" another plugin wrote becomes the convention's 412 first; the charset is
  // settled; the ETag and the 412/304 decision are final before a 226 is made of the answer.
  onSend: ['conditional:elsewhere', 'content-type:charset', 'conditional', 'patch:accept-patch', 'delta-encoding']
} as const

/**
 * Context steps, in the order they run. `everyRequest` and `everyResponse` run for every
 * request of the context, compiled routes included; `onRequest` and `onSend` only where no
 * route was compiled (the not-found handler, routes declared before the suite), in place of
 * the compiled steps. Each convention has at most one step of each kind.
 */
export const CONTEXT_PIPELINE = {
  // Repeated Host lines (RFC 9112 3.2).
  everyRequest: ['content-length'],
  // The policy first (every answer carries it), then the redirect rules, then unread bodies of GET/HEAD.
  onRequest: ['resource-policy', 'redirect', 'content-length'],
  // Errors in Fastify's shape are re-rendered; a connection that closes ends its pipeline.
  everyResponse: ['errors', 'content-length'],
  onSend: ['conditional', 'content-type']
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
  /** Adds a synchronous step (cheaper: no callback); the phase and its position come from PIPELINE. */
  check: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadCheck : CheckStep) => void
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
  /** Steps of the context-level hooks (see CONTEXT_PIPELINE). */
  context?: { everyRequest?: CheckStep, onRequest?: CheckStep, everyResponse?: PayloadCheck, onSend?: PayloadCheck }
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
  resolved: ContextSteps | null
}

/** What the context-level hooks run: for compiled routes, and for the rest. */
interface ContextSteps {
  compiled: { onRequest: CheckStep[], onSend: PayloadCheck[] }
  other: { onRequest: CheckStep[], onSend: PayloadCheck[] }
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

function sortByTable<T> (table: readonly string[], items: Array<{ name: string, fn: T }>): T[] {
  return items.sort((a, b) => table.indexOf(a.name) - table.indexOf(b.name)).map((s) => s.fn)
}

/** Context steps of the conventions in effect for a registry, in CONTEXT_PIPELINE order. */
function resolveContext (registry: Registry): ContextSteps {
  if (registry.resolved !== null) return registry.resolved
  const kinds = { everyRequest: [], onRequest: [], everyResponse: [], onSend: [] } as Record<keyof typeof CONTEXT_PIPELINE, Array<{ name: string, fn: never }>>
  for (const key of COMPILE_ORDER) {
    const steps = lookup(registry, key)?.context
    if (steps === undefined) continue
    for (const kind of Object.keys(kinds) as Array<keyof typeof CONTEXT_PIPELINE>) {
      const fn = steps[kind]
      if (fn !== undefined) kinds[kind].push({ name: key, fn: fn as never })
    }
  }
  const sorted = <T>(kind: keyof typeof CONTEXT_PIPELINE): T[] => sortByTable(CONTEXT_PIPELINE[kind], kinds[kind]) as T[]
  const everyRequest = sorted<CheckStep>('everyRequest')
  const everyResponse = sorted<PayloadCheck>('everyResponse')
  registry.resolved = {
    compiled: { onRequest: everyRequest, onSend: everyResponse },
    other: { onRequest: [...everyRequest, ...sorted<CheckStep>('onRequest')], onSend: [...everyResponse, ...sorted<PayloadCheck>('onSend')] }
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

const NO_STEPS: ContextSteps = { compiled: { onRequest: [], onSend: [] }, other: { onRequest: [], onSend: [] } }

function contextSteps (instance: FastifyInstance): ContextSteps {
  const registry = registryOf(instance)
  return registry === undefined ? NO_STEPS : resolveContext(registry)
}

/** The config of the request's route (undefined for the not-found handler). */
function configOf (request: FastifyRequest): Record<string | symbol, unknown> | undefined {
  return request.is404 ? undefined : request.routeOptions.config as unknown as Record<string | symbol, unknown> | undefined
}

function isCompiled (config: Record<string | symbol, unknown> | undefined): boolean {
  return config !== undefined && config[kCompiled] !== undefined
}

/** Why requests of a route that was not compiled are refused: it asks for conventions (null: fine). */
function refusal (request: FastifyRequest, config: Record<string | symbol, unknown> | undefined): string | null {
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
 * A context-level hook. Fastify binds every hook of a context to each route's instance when
 * the app gets ready (`hook.bind(instance)`); binding this one makes a hook for that route
 * alone, which decides on the route's first request (routes are final by then) whether it was
 * compiled, and which steps it runs from then on.
 */
function bindable<F extends (...args: never[]) => void> (name: string, bind: (instance: FastifyInstance) => F): F {
  // Fastify binds every hook per route; called unbound, it decides on every request (correct, slower).
  /* c8 ignore next */
  const unbound = function (this: FastifyInstance, ...args: Parameters<F>): void { bind(this)(...args) }
  Object.defineProperty(unbound, 'name', { value: name })
  Object.defineProperty(unbound, 'bind', { value: bind })
  return unbound as unknown as F
}

/** The context-level onRequest hook: for a compiled route its every-request checks; else the guard, then the context's steps. */
function contextOnRequest (): HookStep {
  return bindable<HookStep>('httpConventionsContextOnRequest', function bindToRoute (instance) {
    let steps: CheckStep[] | null = null
    let refused: string | null = null
    return function httpConventionsContextOnRequest (request, reply, done) {
      if (steps === null) {
        const config = configOf(request)
        const all = contextSteps(instance)
        if (isCompiled(config)) {
          steps = all.compiled.onRequest
        } else {
          refused = refusal(request, config)
          steps = all.other.onRequest
        }
      }
      if (refused !== null) return refuse(request, reply, refused)
      finish(runChecks(steps, request, reply), done)
    }
  })
}

/** The context-level onSend hook: for a compiled route its every-answer steps; else the context's steps. */
function contextOnSend (): PayloadStep {
  return bindable<PayloadStep>('httpConventionsContextOnSend', function bindToRoute (instance) {
    let steps: PayloadCheck[] | null = null
    return function httpConventionsContextOnSend (request, reply, payload, done) {
      if (steps === null) {
        const all = contextSteps(instance)
        steps = isCompiled(configOf(request)) ? all.compiled.onSend : all.other.onSend
      }
      done(null, runPayloadChecks(steps, request, reply, payload))
    }
  })
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
  type HookItem = { name: string, fn: Compiled<HookStep, CheckStep> }
  type PayloadItem = { name: string, fn: Compiled<PayloadStep, PayloadCheck> }
  const onRequest: HookItem[] = []
  const preValidation: HookItem[] = []
  const preHandler: HookItem[] = []
  const preSerialization: PayloadItem[] = []
  const onSend: PayloadItem[] = []
  const add = (phase: RoutePhase, name: string, fn: unknown, sync: boolean): void => {
    const list = { onRequest, preValidation, preHandler, preSerialization, onSend }[phase] as Array<{ name: string, fn: { fn: unknown, sync: boolean } }>
    list.push({ name, fn: { fn, sync } })
  }
  const provided = new Map<string, unknown>()
  const defaults = profileDefaults(nearest(registry, (r) => r.profile))
  const policy: ErrorPolicy = { limitStatus: defaults.limitStatus, mismatchStatus: defaults.mismatchStatus, format: formatOf(registry) }
  const compiler: RouteCompiler = {
    route,
    config: config as Record<string, unknown>,
    methods,
    where,
    step (phase, name, fn) { add(phase, name, fn, false) },
    check (phase, name, fn) { add(phase, name, fn, true) },
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

  route.errorHandler = routeErrorHandler(policy, route.errorHandler, nearest(registry, (r) => r.fallback))
}
