/**
 * The kernel: how the conventions meet in Fastify's request lifecycle, on Fastify's public
 * API only (docs/architecture.md, "The kernel").
 *
 * - Installed once per app, in its root, by the first plugin of the suite registered there:
 *   a node per context (registry.ts), the route compiler (compile.ts, `onRoute`) and the
 *   fail-closed check (check.ts, `onReady`). No hook runs on a request the suite has nothing
 *   to do with.
 * - The root sees every route declared after it, but in contexts made before it; so the suite
 *   refuses to be installed anywhere else (the root is found by what it is, through the
 *   host: plugins/infrastructure/adapter.ts), and judges the routes it could not see: at
 *   `ready()` those of contexts made before it, on each request (the guard) those declared
 *   before it.
 * - It knows no feature: what consumes its records (error handling, OpenAPI) is given to it
 *   as extensions of its host (`KernelHost`, plugins/host/suite.ts), and it imports
 *   nothing but its own files, lib/ and Fastify's types.
 */
import type { FastifyInstance } from 'fastify'
import { invalidOption } from '../../lib/errors'
import type { Profile } from '../../lib/profile'
import type { ErrorFormat } from '../../lib/render'
import { checkDependencies, pipelineOrder } from './pipeline'
import { giveNode, lookup, newNode, nodeOf } from './registry'
import { compileRoute } from './compile'
import { appOf, checkRoutes, dressUnseen, guardUnseen, noteUncompiled, type AppState } from './check'
import { kApp, kNode, kOptionsRead } from './symbols'
import { firstHookOf } from './unrouted'
import type { Convention, ErrorFallback, KernelHost } from './types'

export { SENT, capability } from './types'
export { addUnroutedStep, routeOptionsOf } from './unrouted'
export type { BodyStep, CheckStep, Convention, ConventionResponse, ErrorFallback, ErrorPolicy, HookStep, KernelExtension, KernelHost, Next, PayloadCheck, PayloadNext, PayloadStep, Provision, ResponseBody, RouteCompiler, RouteDescription, RouteErrors, StepOptions, HeaderSchema } from './types'
export { defineConvention, headerClaims, stepOrder } from './pipeline'
export type { ConventionDeclaration, ConventionKey, HeaderDeclaration, Phase, RoutePhase, StepDeclaration, StepName, UnroutedStepName } from './pipeline'

function install (host: KernelHost, fastify: FastifyInstance, plugin: string): void {
  if (!host.isRootContext(fastify)) {
    throw invalidOption(plugin, 'the suite is installed in the root context of the app, where it sees every route: register fastify-http-conventions (or this plugin) on the instance Fastify() returned, or in a plugin wrapped with fastify-plugin, before the plugins that declare routes; a child context may then register a convention again with its own options')
  }
  // Routes declared before the suite, where Fastify lists them: one that asks for a convention fails `ready()`.
  const app: AppState = { host, root: fastify, records: [], problems: [], unseen: new WeakMap(), uncompiled: [], declaredBefore: host.declaredRoutes(fastify) ?? [] }
  // Contexts made before the suite keep the onRoute hooks they had: the route compiler never
  // sees their routes. Those declared later are judged when the app gets ready.
  const early = host.contextsBelow(fastify)
  for (const context of early ?? []) context.addHook('onRoute', noteUncompiled)
  // Routes declared before the suite (another plugin's, such as @fastify/cors's preflight, or
  // a register() without await), and any route of a context made before it: no onRoute hook
  // of the suite saw them, so a guard judges them on each request. An app that registers the
  // suite first pays nothing for it.
  if (host.routesDeclared(fastify) || early === undefined || early.length > 0) {
    fastify.addHook('onRequest', guardUnseen)
    fastify.addHook('onSend', dressUnseen)
  }
  fastify.decorate(kApp, app)
  fastify.decorate(kNode, newNode(null))
  // Declared before any context the suite compiles routes of is made: every one inherits them.
  for (const slot of host.requestSlots) fastify.decorateRequest(slot, null)
  fastify.decorateRequest(kOptionsRead, null)
  fastify.addHook('onRegister', giveNode)
  fastify.addHook('onRoute', compileRoute)
  fastify.addHook('onReady', checkRoutes)
  for (const extension of host.extensions) extension.install?.(fastify)
}

/** Declares a convention in `fastify`'s context (each plugin of the suite, when registered); the first installs the kernel with `host`. */
export function declareConvention (host: KernelHost, fastify: FastifyInstance, convention: Convention, opts: { profile?: Profile } = {}): void {
  // Its declaration (pipeline.ts): what it needs is provided, what it is ordered against exists.
  checkDependencies(convention.key, convention.plugin)
  if (!fastify.hasDecorator(kNode)) install(host, fastify, convention.plugin)
  const node = nodeOf(fastify)!
  if (node.entries.has(convention.key)) {
    throw invalidOption(convention.plugin, `the ${convention.key} convention is already registered in this context; give its options once (to the umbrella or to this plugin), or register it in a child context to give part of the app other options`)
  }
  node.entries.set(convention.key, convention)
  // The root's first preParsing hook, before any the app or a plugin registered after the
  // suite adds: no body is read before the suite's refusals (unrouted.ts).
  if (convention.refusesBodies === true) firstHookOf(appOf(fastify).root)
  if (opts.profile !== undefined && node.profile === undefined) node.profile = opts.profile
}

/** Sets the profile, the error format and the handler of errors the suite does not own, for `fastify`'s context. */
export function configureContext (host: KernelHost, fastify: FastifyInstance, plugin: string, opts: { profile?: Profile, fallback?: ErrorFallback, format?: ErrorFormat }): void {
  if (!fastify.hasDecorator(kNode)) install(host, fastify, plugin)
  const node = nodeOf(fastify)!
  if (opts.format !== undefined) node.format = opts.format
  if (opts.profile !== undefined) node.profile = opts.profile
  if (opts.fallback !== undefined) node.fallback = opts.fallback
}

/** The headers every answer of `instance`'s context carries, for answers written where no route runs. */
export function contextHeaders (instance: FastifyInstance): Record<string, string> {
  const out: Record<string, string> = {}
  const node = nodeOf(instance)
  for (const key of pipelineOrder().conventions) Object.assign(out, lookup(node, key)?.headers)
  return out
}

/** The profile and error format in effect in `instance`'s context. */
export { nearest, nodeOf, formatOf } from './registry'
