/**
 * The context's first preParsing hook, shared by two jobs.
 *
 * Requests no route serves. Fastify's not-found handler runs the hooks of its context, so a
 * convention that answers some of them (the resource policy of the not-found answer, a
 * redirect rule's 307, the methods convention's 405 and OPTIONS) needs a hook of the context.
 * They share this one, which runs the context's steps in the order of their declarations
 * (phase `unrouted`, pipeline.ts), whatever order their
 * plugins were registered in.
 *
 * Requests that declare a body. A route's own preParsing hooks run after every preParsing
 * hook of its context (Fastify runs the context's hooks first), so an app's
 * `addHook('preParsing')` that reads the body, or a plugin's stream that inflates it, would
 * read a body the suite then refuses. This hook is added to the root when the kernel is
 * installed, before the app's own preParsing hooks and those of the plugins registered after
 * the suite: for a request that declares a body it runs the route's compiled preParsing hook
 * (its refusals, then the body step) first, and the route's own copy of it then passes. A
 * request without a body runs the route's hook in its place (nothing can read what is not
 * there), so a GET pays one header check here.
 *
 * preParsing: after every onRequest hook of the app (a rate limiter counts the request), before
 * any byte of its body is read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import { stepOrder, stepOwner, type UnroutedStepName } from './pipeline'
import { invalidOption } from '../../lib/errors'
import { SENT, type BodyStep, type CheckStep } from './types'
import { kPreParsing, kOptionsRead } from './symbols'

interface Entry { readonly name: UnroutedStepName, readonly fn: CheckStep }

/** The unrouted steps of each context that has some. */
const contexts = new WeakMap<FastifyInstance, Entry[]>()

/** Adds a step for the requests of `fastify`'s context (and the contexts made after it) that no route serves. */
export function addUnroutedStep (fastify: FastifyInstance, name: UnroutedStepName, fn: CheckStep): void {
  if (stepOwner('unrouted', name) === undefined) throw invalidOption('fastify-http-conventions', `no convention declares the unrouted step ${name}: declare it in the convention's steps (phase 'unrouted')`)
  const steps = firstHookOf(fastify)
  steps.push({ name, fn })
  const order = stepOrder('unrouted')
  steps.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name))
}

/** The context's first preParsing hook (added now if it has none); returns its unrouted steps. */
export function firstHookOf (fastify: FastifyInstance): Entry[] {
  let steps = contexts.get(fastify)
  if (steps === undefined) {
    steps = []
    contexts.set(fastify, steps)
    fastify.addHook('preParsing', firstHook(steps))
  }
  return steps
}

type Done = (err?: Error | null, body?: RequestPayload) => void

function firstHook (steps: readonly Entry[]) {
  return function httpConventionsFirst (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, next: Done): void {
    if (!request.is404) return beforeBody(request, reply, payload, next)
    for (let i = 0; i < steps.length; i++) {
      const out = steps[i].fn(request, reply)
      if (out === SENT) return
      if (out !== undefined) return next(out)
    }
    next()
  }
}

/** A routed request that declares a body: the route's compiled preParsing hook, now, before any other preParsing hook reads the body. */
function beforeBody (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, next: Done): void {
  const headers = request.headers
  if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return next()
  const slots = request as unknown as Record<symbol, unknown>
  if (slots[kOptionsRead] !== null) return next()
  const options = request.routeOptions
  slots[kOptionsRead] = options
  const hook = (options.config as unknown as Record<symbol, BodyStep | undefined>)[kPreParsing]
  if (hook === undefined) return next()
  hook(request, reply, payload, next as Parameters<BodyStep>[3])
}

/** The route's options: as the context's first hook read them, or read now. */
export function routeOptionsOf (request: FastifyRequest): FastifyRequest['routeOptions'] {
  return ((request as unknown as Record<symbol, unknown>)[kOptionsRead] as FastifyRequest['routeOptions'] | null) ?? request.routeOptions
}

/** The route's preParsing hook as the route runs it: it passes where the context's first hook ran it already. */
export function unlessRanFirst (hook: BodyStep): BodyStep {
  return function httpConventionsRouteRefusals (request, reply, payload, done) {
    if ((request as unknown as Record<symbol, unknown>)[kOptionsRead] !== null) return done(null)
    hook(request, reply, payload, done)
  }
}
