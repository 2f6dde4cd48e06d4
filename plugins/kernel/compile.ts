/**
 * The route compiler (an `onRoute` hook of the root, which every context made after it
 * inherits): the conventions in effect for a route's context compile it, in the order their
 * declarations give (pipeline.ts), into at most one hook per phase holding only what its config asks for. A route
 * that uses no convention gets no hook at all. What was compiled is recorded; check.ts
 * compares every record with the route's final config when the app gets ready.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload, RouteOptions } from 'fastify'
import { invalidOption } from '../../lib/errors'
import { profileDefaults } from '../../lib/profile'
import { asArray, methodsOf, routeWhere } from './routes'
import { declarationOf, pipelineOrder, providersOf, ROUTE_PHASES, stepOrder, stepOwner, type ConventionKey, type RoutePhase } from './pipeline'
import { formatOf, lookup, nearest, nodeOf, type Node } from './registry'
import { kPreParsing, kRecord } from './symbols'
import { unlessRanFirst } from './unrouted'
import {
  SENT, type BodyStep, type CheckStep, type Convention, type ErrorPolicy, type HookStep, type KernelHost, type Next, type PayloadCheck, type PayloadNext,
  type PayloadStep, type Provision, type RouteCompiler
} from './types'
import { appOf, asksFor, constraintsOf, fixFor, snapshotOf, typos, type RouteRecord } from './check'

interface Step { name: string, fn: unknown, sync: boolean, weak?: boolean, body?: boolean }
type Phases = Record<RoutePhase, Step[]>

export function compileRoute (this: FastifyInstance, route: RouteOptions): void {
  const node = nodeOf(this) as Node
  const app = appOf(this)
  const config = (route.config ?? {}) as Record<string | symbol, unknown>
  const where = routeWhere(route)
  const typo = typos(config, where)
  if (typo.length > 0) throw invalidOption('fastify-http-conventions', typo[0])
  // A fresh config object per route, never the user's (it may be shared by several routes).
  const fresh: Record<string | symbol, unknown> = { ...config }
  route.config = fresh as RouteOptions['config']
  const phases: Phases = { preParsing: [], preValidation: [], preHandler: [], preSerialization: [], onSend: [] }
  const defaults = profileDefaults(nearest(node, (n) => n.profile))
  const policy: ErrorPolicy = { limitStatus: defaults.limitStatus, mismatchStatus: defaults.mismatchStatus, format: formatOf(node) }
  const compiler = makeCompiler(route, config as Record<string, unknown>, where, phases, policy, app.host, node)
  const entries = compileConventions(node, compiler)
  for (const key of asksFor(config)) {
    if (entries.get(key) === undefined) app.problems.push(`${where} asks for ${key}, which is not registered in its context; ${fixFor(key)}`)
  }
  // The extensions (the route's error handler, its OpenAPI records) read what the conventions made of the route.
  const errors = { policy, problemByAccept: defaults.problemByAccept, fallback: nearest(node, (n) => n.fallback) }
  for (const extension of app.host.extensions) extension.compile?.(compiler, errors)
  const hooks = attachHooks(route, phases, fresh)
  const record: RouteRecord = { where, route, node, entries, snapshot: snapshotOf(config), hooks, methods: methodsOf(route).join(','), url: route.url, constraints: constraintsOf(route) }
  fresh[kRecord] = record
  app.records.push(record)
}

/** A step's name must be declared in its phase (`defineConvention`): its place comes from the declaration. */
function declared (phase: RoutePhase, name: string, where: string): string {
  if (stepOwner(phase, name) === undefined) throw invalidOption('fastify-http-conventions', `${where}: no convention declares the ${phase} step ${name}; declare it in the convention's steps (defineConvention)`)
  return name
}

function makeCompiler (route: RouteOptions, config: Record<string, unknown>, where: string, phases: Phases, policy: ErrorPolicy, host: KernelHost, node: Node): RouteCompiler & { provided: Map<string, unknown> } {
  const provided = new Map<string, unknown>()
  return {
    route,
    config,
    methods: methodsOf(route),
    where,
    provided,
    step (phase, name, fn) { phases[phase].push({ name: declared(phase, name, where), fn, sync: false }) },
    check (phase, name, fn, opts) { phases[phase].push({ name: declared(phase, name, where), fn, sync: true, weak: opts?.weak }) },
    body (name, fn) { phases.preParsing.push({ name: declared('preParsing', name, where), fn, sync: false, body: true }) },
    headerOwner: (name) => headerOwnerIn(node, name),
    use: <T>(key: Provision<T>) => provided.get(key.name) as T | undefined,
    provide: (key, value) => { provided.set(key.name, value) },
    respond: (status, response) => { for (const extension of host.extensions) extension.respond?.(route, status, response) },
    describe: (description) => { for (const extension of host.extensions) extension.describe?.(route, description) },
    errorPolicy: (p) => { Object.assign(policy, p) },
    errorFormat: policy.format
  }
}

/** The convention in effect in `node`'s context that owns response header `name`. */
function headerOwnerIn (node: Node, name: string): ConventionKey | undefined {
  const lower = name.toLowerCase()
  return pipelineOrder().conventions.find((key) => declarationOf(key)?.headers?.[lower]?.owns === true && lookup(node, key) !== undefined)
}

/**
 * Each convention in effect compiles the route, in the declarations' order. One that provided
 * something for the route brings, where no convention in effect provides a capability it
 * needs, the provider's defaults (its declaration's `byDefault`): a PATCH route still
 * honours If-Match. A route that makes no sense throws.
 */
function compileConventions (node: Node, c: RouteCompiler & { provided: Map<string, unknown> }): Map<ConventionKey, Convention | undefined> {
  const entries = new Map<ConventionKey, Convention | undefined>()
  const needed = new Map<ConventionKey, Convention>()
  for (const key of pipelineOrder().conventions) {
    const registered = lookup(node, key)
    entries.set(key, registered)
    const convention = registered ?? needed.get(key)
    if (convention?.compile === undefined) continue
    const before = c.provided.size
    convention.compile(c)
    if (c.provided.size === before) continue
    for (const capability of declarationOf(key)?.needs ?? []) bringProvider(node, capability, needed, entries)
  }
  return entries
}

/** The first provider of `capability` with defaults, where no provider is in effect in the context. */
function bringProvider (node: Node, capability: string, needed: Map<ConventionKey, Convention>, entries: Map<ConventionKey, Convention | undefined>): void {
  const providers = providersOf(capability)
  if (providers.some((p) => lookup(node, p.key) !== undefined || needed.has(p.key))) return
  const provider = providers.find((p) => p.byDefault !== undefined)
  if (provider?.byDefault === undefined) return
  let made = node.made.get(provider.key)
  if (made === undefined) node.made.set(provider.key, made = provider.byDefault(nearest(node, (n) => n.profile)))
  needed.set(provider.key, made)
  entries.set(provider.key, made)
}

/** One hook per phase that has steps, in the pipeline's order; returns what was attached. */
function attachHooks (route: RouteOptions, phases: Phases, config: Record<string | symbol, unknown>): Array<readonly [RoutePhase, unknown]> {
  const hooks: Array<readonly [RoutePhase, unknown]> = []
  for (const phase of ROUTE_PHASES) {
    const steps = phases[phase]
    if (steps.every((s) => s.weak === true)) continue
    const order = stepOrder(phase)
    steps.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name))
    let hook: unknown
    if (phase === 'preParsing') {
      // The context's first hook runs it for a request that declares a body, before any other
      // preParsing hook of the context or the route can read that body (unrouted.ts).
      const parsing = joinParsingSteps(steps)
      config[kPreParsing] = parsing
      hook = unlessRanFirst(parsing)
    } else {
      hook = phase === 'onSend' || phase === 'preSerialization' ? joinPayloadSteps(steps) : joinSteps(steps)
    }
    // onRequest, preParsing, preValidation and onSend run before the route's own hooks of
    // the phase (preParsing: before any stream that reads the body; onSend: before the hook
    // Fastify ends a HEAD route with, which drops the payload); preHandler and
    // preSerialization after them, so a write happens where the handler would run. The
    // refusals sit in preParsing, so every onRequest hook (the app's, a rate limiter's) has
    // seen the request first, whatever the order the plugins were registered in.
    const first = phase !== 'preHandler' && phase !== 'preSerialization'
    route[phase] = (first ? [hook, ...asArray(route[phase])] : [...asArray(route[phase]), hook]) as never
    hooks.push([phase, hook])
  }
  return hooks
}

/**
 * The preParsing hook: the checks, then the body step (if any), which may hand Fastify
 * another stream of the body. Fastify reads `done(err)` without a stream as "the stream is
 * unchanged".
 */
function joinParsingSteps (steps: readonly Step[]): (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (err: Error | null, body?: RequestPayload) => void) => void {
  const body = steps.find((s) => s.body === true)?.fn as BodyStep | undefined
  const rest = steps.filter((s) => s.body !== true)
  const checks = joinSteps(rest)
  if (body === undefined) {
    return function httpConventionsRefusals (request, reply, _payload, done) {
      checks(request, reply, done as Next)
    }
  }
  if (rest.every((s) => s.sync)) {
    const fns = rest.map((s) => s.fn as CheckStep)
    return function httpConventionsRefusalsAndBody (request, reply, payload, done) {
      let out: ReturnType<CheckStep>
      try {
        out = runChecks(fns, request, reply)
      } catch (thrown) {
        return done(asThrown(thrown))
      }
      if (out === SENT) return
      if (out !== undefined) return done(out)
      body(request, reply, payload, done)
    }
  }
  return function httpConventionsStepsAndBody (request, reply, payload, done) {
    checks(request, reply, (err) => { if (err !== undefined && err !== null) done(err); else body(request, reply, payload, done) })
  }
}

/** Joins the steps of one phase into one hook; synchronous steps run inline, without a callback each. */
function joinSteps (steps: readonly Step[]): HookStep {
  if (steps.every((s) => s.sync)) {
    const checks = steps.map((s) => s.fn as CheckStep)
    return function httpConventionsChecks (request, reply, done) {
      let out: ReturnType<CheckStep>
      try {
        out = runChecks(checks, request, reply)
      } catch (thrown) {
        return done(asThrown(thrown))
      }
      if (out !== SENT) done(out)
    }
  }
  if (steps.length === 1) return steps[0].fn as HookStep
  return function httpConventionsSteps (request, reply, done) {
    let i = 0
    const next: Next = (err) => {
      if (err !== undefined && err !== null) return done(err)
      // Once an asynchronous step resumes, this runs outside the try/catch Fastify puts around
      // a hook: a step that throws here takes the error path, as it would in Fastify's runner.
      let out: ReturnType<CheckStep> | typeof PENDING
      try {
        out = runFrom(steps, () => i++, request, reply, next)
      } catch (thrown) {
        return done(asThrown(thrown))
      }
      if (out === SENT || out === PENDING) return
      done(out)
    }
    next()
  }
}

/** Runs synchronous checks in order: the first error or SENT ends them. */
function runChecks (checks: readonly CheckStep[], request: FastifyRequest, reply: FastifyReply): ReturnType<CheckStep> {
  for (let i = 0; i < checks.length; i++) {
    const out = checks[i](request, reply)
    if (out !== undefined) return out
  }
  return undefined
}

/** Marks that an asynchronous step took over: it calls `next` itself. */
const PENDING = 'pending'

/** Runs the steps from the next index: a step's error or SENT ends it; an asynchronous step takes over (PENDING). */
function runFrom (steps: readonly Step[], take: () => number, request: FastifyRequest, reply: FastifyReply, next: Next): ReturnType<CheckStep> | typeof PENDING {
  for (let i = take(); i < steps.length; i = take()) {
    const step = steps[i]
    if (!step.sync) {
      (step.fn as HookStep)(request, reply, next)
      return PENDING
    }
    const out = (step.fn as CheckStep)(request, reply)
    if (out !== undefined) return out
  }
  return undefined
}

/**
 * What Fastify's runner makes of a throw: an error to the error path. A thrown value that is
 * not an Error (`undefined` included) still refuses the request, as a 500.
 */
function asThrown (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`a step of fastify-http-conventions threw ${typeof thrown === 'string' ? thrown : String(thrown)}`)
}

/** Joins the steps of a payload phase into one hook; each may replace the payload. */
function joinPayloadSteps (steps: readonly Step[]): PayloadStep {
  if (steps.every((s) => s.sync)) {
    const checks = steps.map((s) => s.fn as PayloadCheck)
    return function httpConventionsPayloadChecks (request, reply, payload, done) {
      try {
        for (let i = 0; i < checks.length; i++) {
          const out = checks[i](request, reply, payload)
          if (out !== undefined) payload = out
        }
      } catch (thrown) {
        return done(asThrown(thrown))
      }
      done(null, payload)
    }
  }
  if (steps.length === 1) return steps[0].fn as PayloadStep
  return function httpConventionsPayloadSteps (request, reply, payload, done) {
    let i = 0
    const next: PayloadNext = (err, value) => {
      if (err !== null) return done(err)
      // As in httpConventionsSteps: a throw after an asynchronous step resumed takes the error path.
      try {
        while (i < steps.length) {
          const step = steps[i++]
          if (!step.sync) return (step.fn as PayloadStep)(request, reply, value, next)
          const out = (step.fn as PayloadCheck)(request, reply, value)
          if (out !== undefined) value = out
        }
      } catch (thrown) {
        return done(asThrown(thrown))
      }
      done(null, value)
    }
    next(null, payload)
  }
}
