/**
 * Requests no route serves. Fastify's not-found handler runs the hooks of its context, so a
 * convention that answers some of them (a redirect rule's 307, the methods convention's 405
 * and OPTIONS) needs a hook of the context. They share one: a preParsing hook per context,
 * added with the first such step, that returns at once for a routed request and otherwise
 * runs the context's steps in UNROUTED order, whatever order their plugins were registered
 * in. A routed request pays one function call for all of them, not a hook phase each.
 * preParsing: after every onRequest hook of the app (a rate limiter counts the request),
 * before any byte of its body is read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify'
import { UNROUTED, type UnroutedStepName } from './pipeline'
import { SENT, type CheckStep } from './types'

interface Entry { readonly name: UnroutedStepName, readonly fn: CheckStep }

/** The unrouted steps of each context that has some. */
const contexts = new WeakMap<FastifyInstance, Entry[]>()

/** Adds a step for the requests of `fastify`'s context (and the contexts made after it) that no route serves. */
export function addUnroutedStep (fastify: FastifyInstance, name: UnroutedStepName, fn: CheckStep): void {
  let steps = contexts.get(fastify)
  if (steps === undefined) {
    steps = []
    contexts.set(fastify, steps)
    fastify.addHook('preParsing', unroutedHook(steps))
  }
  steps.push({ name, fn })
  steps.sort((a, b) => UNROUTED.indexOf(a.name) - UNROUTED.indexOf(b.name))
}

function unroutedHook (steps: readonly Entry[]) {
  return function httpConventionsUnrouted (request: FastifyRequest, reply: FastifyReply, _payload: RequestPayload, next: (err?: Error | null) => void): void {
    if (!request.is404) return next()
    for (let i = 0; i < steps.length; i++) {
      const out = steps[i].fn(request, reply)
      if (out === SENT) return
      if (out !== undefined) return next(out)
    }
    next()
  }
}
