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
import { contextsBelow, declaredRoutes, isRootContext, otherFastifyCopy, routesDeclared } from '../infrastructure/adapter'
import { invalidOption } from '../../lib/errors'
import { errorsExtension, sendConventionError, type ErrorFormat } from '../services/errors'
import { openapiExtension } from '../services/openapi'
import { REQUEST_SLOTS } from '../services/symbols'

export * from '../kernel/index'

const HOST: KernelHost = {
  isRootContext,
  contextsBelow,
  routesDeclared,
  declaredRoutes,
  requestSlots: REQUEST_SLOTS,
  refuse: (reply, err) => { sendConventionError(reply, err, formatOf(nodeOf(reply.request.server))) },
  extensions: [errorsExtension, openapiExtension]
}

/**
 * At registration: the app was made by the copy of Fastify the suite resolves. With two copies
 * installed, Fastify's own checks fail with messages that name neither (a log controller of
 * the other copy is FST_ERR_LOG_INVALID_LOG_CONTROLLER): this names both paths and the fix.
 */
function assertOneFastify (fastify: FastifyInstance, plugin: string): void {
  const copy = otherFastifyCopy(fastify)
  if (copy === null) return
  const others = copy.others.length === 0 ? 'another copy' : copy.others.join(', ')
  throw invalidOption(plugin, `the app was made by a copy of Fastify (${others}) other than the one fastify-http-conventions resolves (${copy.suite}); ` +
    'two copies share no classes and no state (Fastify() refuses serverOptions.logController of the other copy with FST_ERR_LOG_INVALID_LOG_CONTROLLER). Install one fastify: `npm ls fastify` lists the copies, `npm dedupe` (or one version range for every package) merges them, ' +
    'and a bundler or workspace must resolve fastify to one path for the app and the suite')
}

/** Declares a convention in `fastify`'s context (each plugin of the suite, when registered). */
export function declareConvention (fastify: FastifyInstance, convention: Convention, opts: { profile?: Profile } = {}): void {
  assertOneFastify(fastify, convention.plugin)
  kernel.declareConvention(HOST, fastify, convention, opts)
}

/** Sets the profile, the error format and the handler of errors the suite does not own, for `fastify`'s context. */
export function configureContext (fastify: FastifyInstance, plugin: string, opts: { profile?: Profile, fallback?: ErrorFallback, format?: ErrorFormat }): void {
  assertOneFastify(fastify, plugin)
  kernel.configureContext(HOST, fastify, plugin, opts)
}
