/**
 * Validation (docs/conventions.md (errors), 422): Ajv errors of body, querystring, params and headers
 * become one `errors[]` entry per problem (the error handler in errors.ts maps them).
 * This plugin checks at boot that the server's Ajv reports every problem (allErrors)
 * and refuses unknown properties instead of silently removing them.
 */
import fp from 'fastify-plugin'
import { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import { invalidOption } from '../../lib/errors'
import { MESSAGE, optionsChecker, PROFILE_SCHEMA } from '../infrastructure/options'
import { createUrlRedactor } from '../../lib/redact'
import { type Profile } from '../../lib/profile'
import { declareConvention } from '../kernel/index'
import { answerFrameworkError } from '../infrastructure/server-answers'
import { answerFramingError } from '../infrastructure/framing'
import { installedClientErrorHandler } from '../infrastructure/adapter'
import { buildChecked, checkersOf, compilerPoolOf } from '../infrastructure/schema-check'

/** Options of the Validation plugin (422 with every problem). */
export interface ValidationOptions {
  profile?: Profile
  /** What to do at boot when the server's Ajv options would lose problems: 'throw' (default), 'warn' or 'ignore'. */
  checkServerOptions?: 'throw' | 'warn' | 'ignore'
}

const PLUGIN = 'fastify-http-conventions-validation'
const WHERE = 'http-conventions/validation'

/** The plugin's options as JSON Schema, checked at registration. */
export const validationOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    checkServerOptions: { enum: ['throw', 'warn', 'ignore'], [MESSAGE]: "must be 'throw', 'warn' or 'ignore'" }
  }
} as const

const checkOptions = optionsChecker(WHERE, validationOptionsSchema)

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
  return function conventionsValidatorCompiler (route) {
    if (route.httpPart === 'body') {
      const every = (strict ??= make({ ...options.customOptions, coerceTypes: false }))(route)
      // An $async schema's validator answers with a promise: left to Ajv as it is.
      if (options.customOptions?.allErrors !== true || (route.schema as { $async?: unknown } | undefined)?.$async === true) return every
      const first = (strictFirst ??= make({ ...options.customOptions, coerceTypes: false, allErrors: false }))(route)
      return boundedAllErrors(first as Validate, every as Validate)
    }
    return (coercing ??= make(options.customOptions))(route)
  }
}

const redactUrl = createUrlRedactor()

/** Only a query, a fragment or a userinfo can carry a secret (lib/redact.ts). */
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

/**
 * Fastify's own request log lines with the secrets of the URL redacted (lib/redact.ts):
 * "Route GET:/x?access_token=... not found" (the default not-found handler, also reached
 * by `reply.callNotFound()`), and the `req` of "incoming request" and of 5xx error lines,
 * whatever the logger's serializers. A URL without query, fragment or userinfo is passed
 * through as it is. Fastify's top-level `disableRequestLogging` still applies; pass a
 * `requestIdLogLabel` to its constructor (the top-level option is read from the controller).
 */
class RedactingLogController extends LogController {
  override isLogDisabled (request: FastifyRequest): boolean {
    if (super.isLogDisabled(request)) return true
    // The deprecated top-level option, which Fastify ignores once a controller is given.
    const top: unknown = request.server?.initialConfig?.disableRequestLogging
    return typeof top === 'function' ? (top as (r: FastifyRequest) => boolean)(request) === true : top === true
  }

  override incomingRequest (request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
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
  readonly ajv: NonNullable<FastifyServerOptions['ajv']>
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

type Compile = (route: { schema: object, method: string, url: string, httpPart: string }) => (data: unknown) => unknown

/** Returns what is wrong with the server's validator, or null when it reports every problem. */
export function probeValidator (compile: Compile): string | null {
  const problems: string[] = []
  let twoRequired: ((d: unknown) => unknown) & { errors?: unknown[] }
  let answer: unknown
  try {
    twoRequired = compile({ schema: { type: 'object', required: ['a', 'b'] }, method: 'POST', url: '/', httpPart: 'body' }) as typeof twoRequired
    answer = twoRequired({})
  } catch {
    // A compiler for another schema language (a Zod type provider): nothing here to check.
    return null
  }
  // Only an Ajv-style validator (boolean, errors on the function) can be probed; another
  // compiler (TypeBox's, returning { value } or { error }) reports its errors its own way.
  if (typeof answer !== 'boolean') return null
  if ((twoRequired.errors?.length ?? 0) < 2) problems.push('ajv.customOptions.allErrors is not true (only the first problem would be reported)')
  const closed = compile({ schema: { type: 'object', properties: {}, additionalProperties: false }, method: 'POST', url: '/', httpPart: 'body' }) as (d: unknown) => boolean
  if (closed({ unknown: 1 }) === true) problems.push('ajv.customOptions.removeAdditional is on (unknown properties would be dropped instead of refused with 422)')
  const typed = compile({ schema: { type: 'object', properties: { a: { type: 'string' } } }, method: 'POST', url: '/', httpPart: 'body' }) as (d: unknown) => boolean
  if (typed({ a: 1 }) === true) problems.push('request bodies are type-coerced (a number would pass as a string)')
  return problems.length === 0 ? null : problems.join('; ')
}

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

/**
 * What the boot check finds wrong with the server, or null. With a route that has a schema,
 * the validator Fastify built is probed; with none, Fastify built no validator, and the
 * server is checked for serverOptions themselves (docs/plugins.md (Validation (422)): the
 * boot stops without them, whatever the routes).
 */
function serverProblem (fastify: FastifyInstance): string | null {
  const compile = fastify.validatorCompiler as unknown as Compile | undefined
  if (compile === undefined) return serverOptionsProblem(fastify)
  const lost = probeValidator(compile)
  return lost === null ? null : `the server's Ajv options lose validation problems: ${lost}`
}

function validationPlugin (fastify: FastifyInstance, opts: ValidationOptions, done: (err?: Error) => void): void {
  const where = WHERE
  try { checkOptions(opts) } catch (err) { return done(err as Error) }
  const mode = opts.checkServerOptions ?? 'throw'
  try {
    declareConvention(fastify, {
      key: 'validation',
      plugin: PLUGIN,
      compile (c) {
        // Fastify has no per-route switch for validation, and the suite adds none: a route
        // that says `config.validation` would silently keep validating; refused when added.
        if (c.config.validation !== undefined) {
          throw invalidOption(c.where, 'config.validation is not an option: a route with a schema is validated and its problems answered 422; to handle them yourself, set attachValidation: true on the route (request.validationError) or give the route an errorHandler')
        }
        const schema = c.route.schema as Record<string, unknown> | undefined
        if (schema !== undefined && (schema.body !== undefined || schema.querystring !== undefined || schema.params !== undefined || schema.headers !== undefined)) {
          c.respond(422, { description: 'Unprocessable Entity: one errors[] entry per problem', body: 'envelope' })
        }
      }
    }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  if (mode === 'ignore') return done()

  fastify.addHook('onReady', function checkValidatorOptions (next) {
    const problem = serverProblem(fastify)
    if (problem === null) return next()
    const message = `${problem}. Pass the exported serverOptions to Fastify(): Fastify({ ...serverOptions })`
    if (mode === 'warn') {
      fastify.log.warn(message)
      return next()
    }
    next(invalidOption(where, message))
  })
  done()
}

/** The Validation plugin: a 422 that lists every problem of the request (path, query, headers, body) in the `errors[]` envelope. */
export const httpConventionsValidation = fp(validationPlugin, { fastify: '5.x', name: PLUGIN })
