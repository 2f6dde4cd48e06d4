/**
 * The kernel as the suite's plugins use it: the kernel (plugins/kernel/) knows no feature and
 * reads Fastify only through what it is given; this file gives it the suite's host: how to
 * read what Fastify has no public API for (adapter.ts), how to answer a request it refuses
 * (errors.ts), and the parts that consume what it compiles (error handling, OpenAPI).
 */
import type { FastifyInstance } from 'fastify'
import type { Profile } from '../../lib/profile'
import * as kernel from '../kernel/index'
import { formatOf, nodeOf } from '../kernel/index'
import type { Convention, ErrorFallback, KernelHost } from '../kernel/index'
import { contextsBelow, isRootContext, routesDeclared } from './adapter'
import { errorsExtension, sendConventionError, type ErrorFormat } from './errors'
import { openapiExtension } from './openapi'
import { REQUEST_SLOTS } from './symbols'

export * from '../kernel/index'

const HOST: KernelHost = {
  isRootContext,
  contextsBelow,
  routesDeclared,
  requestSlots: REQUEST_SLOTS,
  refuse: (reply, err) => { sendConventionError(reply, err, formatOf(nodeOf(reply.request.server))) },
  extensions: [errorsExtension, openapiExtension]
}

/** Declares a convention in `fastify`'s context (each plugin of the suite, when registered). */
export function declareConvention (fastify: FastifyInstance, convention: Convention, opts: { profile?: Profile } = {}): void {
  kernel.declareConvention(HOST, fastify, convention, opts)
}

/** Sets the profile, the error format and the handler of errors the suite does not own, for `fastify`'s context. */
export function configureContext (fastify: FastifyInstance, plugin: string, opts: { profile?: Profile, fallback?: ErrorFallback, format?: ErrorFormat }): void {
  kernel.configureContext(HOST, fastify, plugin, opts)
}
