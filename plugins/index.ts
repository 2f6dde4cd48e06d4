/**
 * fastify-http-conventions: the umbrella plugin registers every convention plugin with
 * one options object. Each plugin can also be registered alone.
 *
 * @module fastify-http-conventions
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type * as F from 'fastify'
import type { HandlerRequest } from './services/shared'
import { type Profile } from '../lib/profile'
import { type ErrorFormat, type ErrorHandler } from './services/errors'
import { configureContext, type ErrorFallback } from './host/suite'
import { httpConventionsContentLength, type ContentLengthOptions, type ContentLengthRouteConfig } from './conventions/content-length'
import { httpConventionsContentType, type ContentTypeOptions, type ContentTypeRouteConfig } from './conventions/content-type'
import { httpConventionsValidation, type ValidationOptions } from './conventions/validation'
import { httpConventionsPatch, type PatchOptions, type PatchRouteConfig } from './conventions/patch'
import { httpConventionsConditional, type ConditionalOptions, type ConditionalRouteConfig } from './conventions/conditional'
import { httpConventionsDeltaEncoding, type DeltaEncodingOptions, type DeltaEncodingRouteConfig } from './conventions/delta-encoding'
import { httpConventionsAuth, type AuthOptions, type AuthRouteConfig } from './conventions/auth/index'
import { httpConventionsRedirect, type RedirectOptions, type RedirectRouteConfig } from './conventions/redirect'
import { httpConventionsResourcePolicy, type ResourcePolicyOptions, type ResourcePolicyRouteConfig } from './conventions/resource-policy'
import { httpConventionsPrefer, type PreferOptions, type PreferRouteConfig } from './conventions/prefer'
import { httpConventionsMethods, type MethodsOptions, type MethodsRouteConfig } from './conventions/methods'
import { optionsChecker } from './services/options'
import { httpConventionsOptionsSchema } from './umbrella-options'

/** Options of the umbrella plugin: the profile, the error format and handler, and one section per convention plugin (`false` leaves it out). */
export interface HttpConventionsOptions {
  /** 'spec' (default) follows the convention document; 'rfc9110' restores every RFC behaviour it departs from. */
  profile?: Profile
  /** Handler for errors the suite does not own. Default: the parent's (Fastify's) handler. */
  errorHandler?: ErrorHandler
  /**
   * How error bodies are written: the `errors[]` envelope (default), or RFC 9457 problem
   * details (`application/problem+json`, the entries kept as its `errors` member). With the
   * envelope, a request whose Accept prefers `application/problem+json` gets problem details.
   */
  errorFormat?: ErrorFormat
  contentLength?: Omit<ContentLengthOptions, 'profile'> | false
  contentType?: Omit<ContentTypeOptions, 'profile'> | false
  validation?: Omit<ValidationOptions, 'profile'> | false
  conditional?: Omit<ConditionalOptions, 'profile'> | false
  patch?: Omit<PatchOptions, 'profile'> | false
  deltaEncoding?: Omit<DeltaEncodingOptions, 'profile'> | false
  /** Basic, Bearer and Digest (docs/conventions.md (Authentication)). Off unless given: it needs at least one scheme. */
  auth?: Omit<AuthOptions, 'profile'> | false
  /** 307 rules applied before the body is read, and `reply.temporaryRedirect()`; false leaves both out. */
  redirect?: RedirectOptions | false
  /** Cross-Origin-Resource-Policy on every response (default 'same-origin'); false sends none. */
  resourcePolicy?: ResourcePolicyOptions | false
  /** Prefer: return=minimal (RFC 7240 4.2) on routes with `config.prefer: true`; false leaves it out. */
  prefer?: PreferOptions | false
  /** 405 with Allow for a method a path does not serve, OPTIONS answered 204 with Allow (RFC 9110 15.5.6, 9.3.7); false leaves both out. */
  methods?: MethodsOptions | false
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Per-route Content-Length settings, or false to turn the plugin off for the route. */
    contentLength?: ContentLengthRouteConfig | false
    /** Per-route Content-Type settings (accepted types, XML answers), or false. */
    contentType?: ContentTypeRouteConfig | false
    /** Opt in to conditional requests: true (payload-hashed ETag, GET/HEAD) or { validators, ... }; false turns it off. */
    conditional?: ConditionalRouteConfig | boolean
    /** PATCH support for the route's resource: { schema, load, save, formats? }. */
    patch?: PatchRouteConfig | false
    /** Opt in to A-IM instance manipulation (226, vcdiff, gzip): true, { manipulations?, ttl? }, or false. */
    deltaEncoding?: DeltaEncodingRouteConfig
    /** Authentication: false (open), true (protected), or { scopes, schemes, algorithms }. */
    auth?: AuthRouteConfig
    /** false exempts the route from the redirect rules. */
    redirect?: RedirectRouteConfig
    /** The route's Cross-Origin-Resource-Policy ('same-origin', 'same-site', 'cross-origin'), or false for none. */
    resourcePolicy?: ResourcePolicyRouteConfig
    /** true: a write to a client that sends `Prefer: return=minimal` is answered without its body (204, or 201 empty). */
    prefer?: PreferRouteConfig
    /** false leaves the route's path out of the 405 and OPTIONS answers (unless another route of the path is covered). */
    methods?: MethodsRouteConfig
  }

  // Fastify types `config` once for every route, so the route's generics never reach it. These
  // overloads of its route methods (tried first) give `config.conditional.validators` and
  // `config.patch.load` / `save` the request as the route's handler gets it, and `save` the
  // document `load` gives (`Resource`, inferred where no generic is written).
  interface RouteShorthandMethod<RawServer, RawRequest, RawReply, TypeProvider, Logger> {
    <RouteGeneric extends F.RouteGenericInterface = F.RouteGenericInterface, ContextConfig = F.ContextConfigDefault, const SchemaCompiler extends F.FastifySchema = F.FastifySchema, Resource = unknown>(
      path: string,
      opts: TypedRouteOptions<F.RouteShorthandOptions<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>,
        F.FastifyRequest<RouteGeneric, RawServer, RawRequest, SchemaCompiler, TypeProvider, ContextConfig, Logger>, ContextConfig, Resource>,
      handler: F.RouteHandlerMethod<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>
    ): F.FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider>
    <RouteGeneric extends F.RouteGenericInterface = F.RouteGenericInterface, ContextConfig = F.ContextConfigDefault, const SchemaCompiler extends F.FastifySchema = F.FastifySchema, Resource = unknown>(
      path: string,
      opts: TypedRouteOptions<F.RouteShorthandOptionsWithHandler<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>,
        F.FastifyRequest<RouteGeneric, RawServer, RawRequest, SchemaCompiler, TypeProvider, ContextConfig, Logger>, ContextConfig, Resource>
    ): F.FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider>
  }

  interface FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider> {
    route<RouteGeneric extends F.RouteGenericInterface = F.RouteGenericInterface, ContextConfig = F.ContextConfigDefault, const SchemaCompiler extends F.FastifySchema = F.FastifySchema, Resource = unknown>(
      opts: TypedRouteOptions<F.RouteOptions<RawServer, RawRequest, RawReply, RouteGeneric, ContextConfig, SchemaCompiler, TypeProvider, Logger>,
        F.FastifyRequest<RouteGeneric, RawServer, RawRequest, SchemaCompiler, TypeProvider, ContextConfig, Logger>, ContextConfig, Resource>
    ): F.FastifyInstance<RawServer, RawRequest, RawReply, Logger, TypeProvider>
  }
}

/**
 * A route's options with `config.conditional` and `config.patch` typed for the route: their
 * callbacks get `Req`, the request as the route's handler gets it (`HandlerRequest`), and
 * `save` the `Resource` that `load` gives.
 */
export type TypedRouteOptions<Options, Req extends { params: unknown, query: unknown, body: unknown }, ContextConfig, Resource> = Omit<Options, 'config'> & {
  config?: Omit<F.FastifyContextConfig, 'conditional' | 'patch'> & ContextConfig & {
    conditional?: ConditionalRouteConfig<HandlerRequest<Req>> | boolean
    patch?: PatchRouteConfig<Resource, HandlerRequest<Req>> | false
  }
}

const checkOptions = optionsChecker('fastify-http-conventions', httpConventionsOptionsSchema)

/** A section's options (false: the plugin is left out). */
function options<T extends object> (value: T | false | undefined): T | false {
  return value ?? {} as T
}

function umbrella (fastify: FastifyInstance, opts: HttpConventionsOptions, done: (err?: Error) => void): void {
  try {
    checkOptions(opts)
    const profile = opts.profile ?? 'spec'
    const contentLength = options(opts.contentLength)
    const contentType = options(opts.contentType)
    const validation = options(opts.validation)
    const conditional = options(opts.conditional)
    const patch = options(opts.patch)
    const deltaEncoding = options(opts.deltaEncoding)
    const redirect = options(opts.redirect)
    const resourcePolicy = options(opts.resourcePolicy)
    const prefer = options(opts.prefer)
    const methods = options(opts.methods)

    // The conventions' declarations order the steps (kernel/pipeline.ts): the registration order below does not matter.
    configureContext(fastify, 'fastify-http-conventions', { profile, fallback: opts.errorHandler as ErrorFallback | undefined, format: opts.errorFormat })
    if (resourcePolicy !== false) fastify.register(httpConventionsResourcePolicy, resourcePolicy)
    if (redirect !== false) fastify.register(httpConventionsRedirect, redirect)
    if (contentLength !== false) fastify.register(httpConventionsContentLength, { ...contentLength, profile })
    if (opts.auth !== undefined && opts.auth !== false) fastify.register(httpConventionsAuth, { ...opts.auth, profile })
    if (contentType !== false) fastify.register(httpConventionsContentType, { ...contentType, profile })
    if (validation !== false) fastify.register(httpConventionsValidation, { ...validation, profile })
    if (patch !== false) fastify.register(httpConventionsPatch, { ...patch, profile })
    if (conditional !== false) fastify.register(httpConventionsConditional, { ...conditional, profile })
    if (deltaEncoding !== false) fastify.register(httpConventionsDeltaEncoding, { ...deltaEncoding, profile })
    if (prefer !== false) fastify.register(httpConventionsPrefer, prefer)
    if (methods !== false) fastify.register(httpConventionsMethods, methods)
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** The umbrella plugin: registers every convention plugin with one options object (also the default export). */
export const httpConventions = fp(umbrella, { fastify: '^5.10.0', name: 'fastify-http-conventions' })
export default httpConventions

// The root holds the plugins, their options and route config, the error catalogue and
// serverOptions. Helpers live in subpaths of one subject each: /vcdiff, /client, /stores,
// /openapi, /headers, /json-patch, /xml, /auth, /logging.
export { httpConventionsErrors, sendConventionError, ERRORS_SCHEMA_ID } from './services/errors'
export type { ErrorHandler, ErrorsOptions, ErrorFormat } from './services/errors'
export { httpConventionsContentLength } from './conventions/content-length'
export type { ContentLengthOptions, ContentLengthRouteConfig } from './conventions/content-length'
export { httpConventionsContentType } from './conventions/content-type'
export type { ContentTypeOptions, ContentTypeRouteConfig, XmlConfig } from './conventions/content-type'
export { httpConventionsValidation } from './conventions/validation'
export { serverOptions } from './edge/server-options'
export type { ValidationOptions } from './conventions/validation'
export type { ServerOptions } from './edge/server-options'
export { httpConventionsPatch } from './conventions/patch'
export type { PatchOptions, PatchRouteConfig, PatchableResource, PatchFormat } from './conventions/patch'
export { httpConventionsConditional } from './conventions/conditional'
export type { ConditionalOptions, ConditionalRouteConfig, Preconditions, ProvidedValidators, ValidatorsProvider } from './conventions/conditional'
export type { HandlerRequest, RouteRequest } from './services/shared'
export { httpConventionsDeltaEncoding } from './conventions/delta-encoding'
export type { DeltaEncodingOptions, DeltaEncodingRouteConfig, DeltaEncodingRouteOptions, InstanceManipulation } from './conventions/delta-encoding'
export { httpConventionsRedirect } from './conventions/redirect'
export type { RedirectOptions, RedirectRouteConfig, RedirectRule, RedirectMatch } from './conventions/redirect'
export { httpConventionsResourcePolicy } from './conventions/resource-policy'
export type { ResourcePolicy, ResourcePolicyOptions, ResourcePolicyRouteConfig } from './conventions/resource-policy'
export { httpConventionsAuth } from './conventions/auth/index'
export { httpConventionsPrefer } from './conventions/prefer'
export type { PreferOptions, PreferRouteConfig } from './conventions/prefer'
export { httpConventionsMethods } from './conventions/methods'
export type { MethodsOptions, MethodsRouteConfig } from './conventions/methods'
export type {
  AuthOptions, AuthRouteConfig, AuthPrincipal, AuthScheme, AuthUser, AppAuthOptions, AppPrincipal, ConventionAuthStrategy, BasicAuthOptions, BasicVerifyResult,
  BearerAuthOptions, BearerTokenInfo, BearerVerifyResult, DigestAuthOptions, DigestLookupRecord, DigestAlgorithm
} from './conventions/auth/index'
export {
  errorCodes, isConventionError, unprocessable, preconditionFailed, preconditionRequired,
  unsupportedMediaType, malformedBody, unauthorized, forbidden, serviceUnavailable, methodNotAllowed
} from '../lib/errors'
export type { ConventionError, ErrorEntry, Rendering } from '../lib/errors'
// A convention of one's own (docs/adding-a-convention.md): declared to the pipeline, registered in a context.
export { defineConvention, declareConvention, headerClaims, stepOrder, capability, SENT } from './host/suite'
export type {
  ConventionDeclaration, StepDeclaration, HeaderDeclaration, Phase, RoutePhase, Convention, RouteCompiler, CheckStep, HookStep, PayloadCheck, PayloadStep,
  BodyStep, Next, PayloadNext, Provision, ConventionResponse, ResponseBody, StepOptions
} from './host/suite'
export type { Profile } from '../lib/profile'
