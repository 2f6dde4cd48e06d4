/**
 * The capabilities the suite's conventions give each other, as typed keys: a convention
 * declares what it `provides`, `uses` and `needs` by these names (plugins/kernel/pipeline.ts),
 * and reads or gives the value through the key, so no convention imports another.
 */
import type { FastifyRequest } from 'fastify'
import { capability } from '../kernel/index'

/** A route's current validators, read once per request (a PATCH route's loader doubles as its provider). */
export const VALIDATORS = capability<(request: FastifyRequest) => unknown>('validators')
/** The media types a PATCH route takes (its 415 and Accept-Patch, RFC 5789 3.1), for the OPTIONS answer of its path. */
export const ACCEPT_PATCH = capability<string>('accept-patch')
/** The route is protected: later conventions key per-user state by `request.principal`. */
export const AUTHENTICATED = capability<{ readonly scopes: readonly string[] }>('auth')
/** `request.preconditions` is set before the route's handler (or write) runs: a write that lost a race answers `preconditions.failed()`. */
export const PRECONDITIONS = 'preconditions'
