/**
 * The Fastify server options the suite needs (`Fastify({ ...serverOptions })`): what no
 * plugin can set from inside a context, because Fastify reads it when the server is made.
 * Its validator compiler (every problem of a body reported, its work bounded), its request
 * log lines without the credentials of a URL, and its answers to what Fastify's router and
 * Node's HTTP parser refuse before any route runs. The validation plugin checks at boot
 * that the server was made with them (serverOptionsProblem).
 */
import { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import { createUrlRedactor } from '@http-conventions/grammar'
import { answerFrameworkError } from './server-answers'
import { answerFramingError } from './framing'
import { installedClientErrorHandler, isRouterRefusal } from '../infrastructure/adapter'
import { contextHeaders } from '../kernel/index'
import { buildChecked, checkersOf, compilerPoolOf } from '../services/schema-check'

type RouteCompile = (route: { httpPart?: string, schema?: unknown }) => unknown

/**
 * Most values (objects, arrays, scalars) of a body validated with allErrors. Ajv builds one
 * error object per problem before the 422 lists at most 100 of them, and has no bound of its
 * own: a body of 100k invalid items would cost 100k error objects. A larger invalid body is
 * reported by its first problem and an entry saying the rest was not looked for.
 */
export const ALL_ERRORS_MAX_VALUES = 10_000

type Validate = ((data: unknown) => unknown) & { errors?: unknown[] | null }

/** True when `data` holds more than `max` JSON values; at most `max + 1` of them are visited. */
function holdsMoreValues (data: unknown, max: number): boolean {
  const stack: unknown[] = [data]
  let seen = 0
  while (stack.length > 0) {
    const value = stack.pop()
    if (++seen > max) return true
    if (value === null || typeof value !== 'object') continue
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length && seen + stack.length <= max; i++) stack.push(value[i])
    } else {
      for (const key in value) {
        if (seen + stack.length > max) break
        stack.push((value as Record<string, unknown>)[key])
      }
    }
  }
  return false
}

/**
 * The body validator, its work bounded: a first-problem pass (allErrors off) decides
 * validity; only an invalid body of at most ALL_ERRORS_MAX_VALUES values is validated again
 * with allErrors, for its every problem (docs/conventions.md (errors)).
 */
function boundedAllErrors (first: Validate, every: Validate): Validate {
  const validate: Validate = function boundedValidate (data: unknown): unknown {
    if (first(data) === true) {
      validate.errors = null
      return true
    }
    if (!holdsMoreValues(data, ALL_ERRORS_MAX_VALUES)) {
      const result = every(data)
      validate.errors = every.errors
      return result
    }
    validate.errors = [...(first.errors ?? []), {
      keyword: 'allErrorsBound',
      instancePath: '',
      schemaPath: '#',
      params: { limit: ALL_ERRORS_MAX_VALUES },
      message: `holds more than ${ALL_ERRORS_MAX_VALUES} values: only its first problem was looked for`
    }]
    return false
  }
  return validate
}
type BuildValidator = (externalSchemas: Record<string, unknown>, options: { customOptions: Record<string, unknown>, onCreate?: (ajv: unknown) => void }) => RouteCompile

/**
 * Builds the server's validators: request bodies are validated as sent (no type
 * coercion: `"title": 1` is a 422, not the string "1"); querystring, params and headers
 * are coerced as Fastify does by default (`?limit=5` is the integer 5).
 *
 * That takes two Ajv instances, each built when a route first needs it; only one instance
 * of the app checks schemas against the JSON Schema meta-schema (schema-check.ts).
 */
/** The validator compilers buildValidator made: a server whose compiler is one was made with serverOptions' schemaController. */
const madeBySuite = new WeakSet<object>()

/** True when `compile` (a server's `validatorCompiler`) was built by serverOptions' schemaController. */
export function isSuiteValidatorCompiler (compile: unknown): boolean {
  return typeof compile === 'function' && madeBySuite.has(compile)
}

export const buildValidator: BuildValidator = function buildConventionsValidator (externalSchemas, options) {
  const build = compilerPoolOf(options) as unknown as BuildValidator
  let strict: RouteCompile | undefined
  let strictFirst: RouteCompile | undefined
  let coercing: RouteCompile | undefined
  function make (customOptions: Record<string, unknown>): RouteCompile {
    // Fastify hands every context of an app the same `ajv` options object, one per app.
    return buildChecked(checkersOf(options), customOptions, Object.values(externalSchemas), (instanceOptions, created) => build(externalSchemas, {
      ...options,
      customOptions: instanceOptions,
      onCreate (ajv) {
        created(ajv)
        options.onCreate?.(ajv)
      }
    }))
  }
  const compiler: RouteCompile = function conventionsValidatorCompiler (route) {
    if (route.httpPart === 'body') {
      const every = (strict ??= make({ ...options.customOptions, coerceTypes: false }))(route)
      // An $async schema's validator answers with a promise: left to Ajv as it is.
      if (options.customOptions?.allErrors !== true || (route.schema as { $async?: unknown } | undefined)?.$async === true) return every
      const first = (strictFirst ??= make({ ...options.customOptions, coerceTypes: false, allErrors: false }))(route)
      return boundedAllErrors(first as Validate, every as Validate)
    }
    return (coercing ??= make(options.customOptions))(route)
  }
  madeBySuite.add(compiler)
  return compiler
}

const redactUrl = createUrlRedactor()

/** Only a query, a fragment or a userinfo can carry a secret (packages/grammar/src/redact.ts). */
function mayCarrySecret (url: unknown): url is string {
  return typeof url === 'string' && (url.includes('?') || url.includes('#') || url.includes('@'))
}

/** `target` seen with its `url` (and `originalUrl`) redacted; every other property is the target's own. */
function withRedactedUrl<T extends object> (target: T): T {
  return new Proxy(target, {
    get (t, prop) {
      if (prop === 'url' || prop === 'originalUrl') {
        const value: unknown = Reflect.get(t, prop, t)
        return mayCarrySecret(value) ? redactUrl(value) : value
      }
      if (prop === 'raw') {
        const raw: unknown = Reflect.get(t, prop, t)
        return raw !== null && typeof raw === 'object' ? withRedactedUrl(raw) : raw
      }
      return Reflect.get(t, prop, t)
    }
  })
}

function redacted (request: FastifyRequest): FastifyRequest {
  return mayCarrySecret(request.raw?.url) || mayCarrySecret(request.originalUrl) ? withRedactedUrl(request) : request
}

/** The root context's headers on the reply of a request the router refused; a header already set is kept. */
function dressRefusal (request: FastifyRequest, reply: FastifyReply): void {
  const headers = contextHeaders(request.server)
  for (const name of Object.keys(headers)) if (!reply.hasHeader(name)) reply.header(name, headers[name])
}

/**
 * Fastify's own request log lines with the secrets of the URL redacted (packages/grammar/src/redact.ts):
 * "Route GET:/x?access_token=... not found" (the default not-found handler, also reached
 * by `reply.callNotFound()`), and the `req` of "incoming request" and of 5xx error lines,
 * whatever the logger's serializers. A URL without query, fragment or userinfo is passed
 * through as it is. Fastify's top-level `disableRequestLogging` still applies; pass a
 * `requestIdLogLabel` to its constructor (the top-level option is read from the controller).
 */
// Before Fastify 5.10 (no LogController) the module still loads, so registering fails with the plugins' version range, not a TypeError.
class RedactingLogController extends ((LogController as typeof LogController | undefined) ?? (class {} as typeof LogController)) {
  override isLogDisabled (request: FastifyRequest): boolean {
    if (super.isLogDisabled(request)) return true
    // The deprecated top-level option, which Fastify ignores once a controller is given.
    const top: unknown = request.server?.initialConfig?.disableRequestLogging
    return typeof top === 'function' ? (top as (r: FastifyRequest) => boolean)(request) === true : top === true
  }

  override incomingRequest (request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    // A request Fastify's router refused is answered by `frameworkErrors` (serverOptions' own, or
    // the app's) where no hook runs: its reply gets the headers every answer of the root
    // context carries (Cross-Origin-Resource-Policy) before either writes it.
    if (isRouterRefusal(request)) dressRefusal(request, reply)
    super.incomingRequest(redacted(request), reply, metadata)
  }

  override routeNotFound (request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    super.routeNotFound(redacted(request), reply, metadata)
  }

  override defaultErrorLog (error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    super.defaultErrorLog(error, redacted(request), reply, metadata)
  }

  override writeHeadError (error: Error, request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    super.writeHeadError(error, redacted(request), reply, metadata)
  }
}

/**
 * The server options `serverOptions` sets: `ajv`, `schemaController`, `logController`,
 * `frameworkErrors` and `clientErrorHandler`,
 * so the object spreads into every overload of `Fastify()` (http2, https, loggerInstance, ...).
 */
export interface ServerOptions {
  /**
   * The Ajv options the suite needs. An app with Ajv options of its own merges them in:
   * `ajv: { ...serverOptions.ajv, customOptions: { ...serverOptions.ajv.customOptions, ...yours }, plugins: [...] }`.
   */
  readonly ajv: {
    readonly customOptions: Readonly<{ allErrors: true, removeAdditional: false, coerceTypes: 'array', useDefaults: true }>
  }
  readonly schemaController: NonNullable<FastifyServerOptions['schemaController']>
  /** Fastify's request log lines without the credentials a client put in the URL. */
  readonly logController: NonNullable<FastifyServerOptions['logController']>
  /** Requests Fastify's router refuses before any route (a path that does not decode, a path parameter too long) get the suite's answer. */
  readonly frameworkErrors: (error: FastifyError, request: unknown, reply: unknown) => void
  /**
   * Requests Node's HTTP parser refuses get the suite's answer, dressed as every answer: a
   * framing error (a duplicate or malformed Content-Length, Content-Length with
   * Transfer-Encoding, a body longer or shorter than its Content-Length) as the
   * content-length plugin says (411, or 400 under rfc9110); anything else 400, 408 or 431.
   */
  readonly clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']>
}

/**
 * Fastify server options the suite needs: every problem reported (allErrors), unknown
 * properties refused (removeAdditional: false), bodies validated without coercion, and
 * no credential of a URL in Fastify's request log lines (RedactingLogController).
 * `Fastify({ ...serverOptions, logger: true })`.
 */
export const serverOptions: ServerOptions = Object.freeze({
  ajv: Object.freeze({
    customOptions: Object.freeze({
      allErrors: true,
      removeAdditional: false as const,
      coerceTypes: 'array' as const,
      useDefaults: true
    })
  }),
  schemaController: Object.freeze({
    compilersFactory: Object.freeze({ buildValidator: buildValidator as unknown as NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator'] })
  }),
  // Holds only its (frozen) options: apps that share it share no state.
  logController: Object.freeze(new RedactingLogController()),
  // Any server's request and reply (http, https, http2): the answer only uses what they share.
  frameworkErrors: answerFrameworkError as (error: FastifyError, request: unknown, reply: unknown) => void,
  clientErrorHandler: answerFramingError as NonNullable<FastifyServerOptions['clientErrorHandler']>
})

/**
 * What is wrong with a server that built no validator (no route has a schema), or null when
 * it was made with serverOptions. The one trace serverOptions leave on a server at boot is
 * their clientErrorHandler, which Fastify installs as the server's `clientError` listener
 * (plugins/infrastructure/adapter.ts).
 */
export function serverOptionsProblem (fastify: FastifyInstance): string | null {
  if (installedClientErrorHandler(fastify, answerFramingError)) return null
  return 'the server was made without the suite\'s server options (no route has a schema whose validator could be probed, and the server\'s clientErrorHandler is not theirs)'
}
