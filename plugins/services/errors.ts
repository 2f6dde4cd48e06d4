/**
 * Error rendering: every error of lib/errors.ts, and Fastify's own validation and
 * body-parsing errors, become the status, headers and body of docs/architecture.md's error
 * table. Each route the suite compiles carries an error handler (`routeErrorHandler`): it
 * maps the error to the catalogue, and answers it itself only when the app has no error
 * handler of its own for the route. Otherwise the app's handlers see the suite's error first,
 * nearest first, as Fastify calls them; one that passes it on (rethrows it, or
 * `reply.send(err)`) still gets the suite's answer (docs/plugins.md, "Composing with your own
 * error handler").
 */
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import {
  badFraming, badUrl, uriTooLong, contentTooLarge, invalidOption, isConventionError, lengthRequired, logEntryOf, malformedBody,
  unprocessable, unsupportedMediaType, type ConventionError, type ErrorEntry
} from '../../lib/errors'
import { PROBLEM_TYPE, reasonPhrase, renderError, serializeEnvelope as envelopeOf, type ErrorFormat, type HtmlAs, type PreparedError } from '../../lib/render'
import { formatHttpDate, negotiateMediaType } from '@http-conventions/grammar'
import { ajvErrorsToEntries, partField, type AjvErrorLike } from '../../lib/validation-errors'
import { profileDefaults, type Profile } from '../../lib/profile'
import envelopeSchema from '../../schemas/errors.json'
import { addVary, profileError, replacePayload } from './shared'
import { nearest, nodeOf } from '../kernel/index'
import type { ErrorPolicy, KernelExtension } from '../kernel/types'
import { kPassedOn, kOwnHandler } from './symbols'
import { hasOnlyFastifysErrorHandler, readFastifyErrorBody, sendAsGiven } from '../infrastructure/adapter'
import { defineConvention } from '../kernel/index'

/** The error handling's step in the pipeline (plugins/kernel/pipeline.ts), and what the catalogue's errors need Cache-Control to say. */
defineConvention({
  key: 'errors',
  plugin: 'fastify-http-conventions-errors',
  steps: [{ name: 'errors:passed-on', phase: 'onSend' }], // a suite error the app's handlers passed on to Fastify's is answered as the suite's
  // lib/errors.ts: an answer about credentials or preconditions is never stored (RFC 9111 5.2.2.5).
  headers: { 'cache-control': { says: { 401: 'no-store', 403: 'no-store', 428: 'no-store', 503: 'no-store' } } }
})

/** The `$id` under which the envelope's JSON Schema (schemas/errors.json) is added to Fastify: `$ref` it in a route's response schema. */
export const ERRORS_SCHEMA_ID = envelopeSchema.$id

/** `{ errors: [...] }` as the envelope schema (schemas/errors.json) defines it (lib/render.ts). */
export const serializeEnvelope: typeof envelopeOf = envelopeOf

/** A Fastify error handler, for the errors the suite does not own (`errorHandler` option). */
export type ErrorHandler = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

/** Options of `httpConventionsErrors`, the errors plugin registered alone. */
export interface ErrorsOptions {
  profile?: Profile
  /** Status for a body over the limit when Fastify itself detects it (chunked bodies): 411 (spec) or 413. */
  limitStatus?: 411 | 413
  /** Status when Fastify finds the body shorter or longer than Content-Length: 411 (spec) or 400. */
  mismatchStatus?: 411 | 400
  /** Called for errors the suite does not own (instead of passing them to the parent handler). */
  errorHandler?: ErrorHandler
}

/** The parts of a request Fastify validates, in its order, and where the request holds each. */
const PARTS = [['params', 'params'], ['body', 'body'], ['querystring', 'query'], ['headers', 'headers']] as const
/** The order of the entries of a 422: where the request names the resource, then what it sends. */
const ENTRY_ORDER = ['params', 'querystring', 'headers', 'body'] as const

type PartValidator = ((data: unknown, ctx?: object) => unknown) & { errors?: AjvErrorLike[] | null, schemaEnv?: unknown }

/** The problems the route's own validator finds in one part (Ajv's shape); none for a validator it cannot read synchronously. */
function partProblems (request: FastifyRequest, part: string, key: 'params' | 'body' | 'query' | 'headers'): AjvErrorLike[] {
  const validate = request.getValidationFunction(part as 'body') as unknown as PartValidator | undefined
  // A body schema per media type (`content`), or no schema: nothing to add here.
  if (typeof validate !== 'function') return []
  const value = request[key] ?? null
  let ret: unknown
  try {
    // As Fastify calls it: Ajv may coerce the part itself when it knows its parent.
    ret = validate.schemaEnv !== undefined ? validate(value, { parentData: request, parentDataProperty: key }) : validate(value)
  } catch {
    return []
  }
  if (ret === false) return validate.errors ?? []
  // Other validator compilers (fastify-type-provider-zod) answer { error: [...] }.
  const error = (ret as { error?: unknown } | null)?.error
  if (Array.isArray(error)) return error as AjvErrorLike[]
  const inner = (error as { validation?: unknown } | undefined)?.validation
  return Array.isArray(inner) ? inner as AjvErrorLike[] : []
}

/**
 * Conventions (Validation errors): every problem of every part at once. Fastify validates
 * params, body, querystring and headers in turn and stops at the first part that fails; the
 * parts after it are validated here, with the route's own validators, only for a request that
 * already failed. Entries come path, query, header, body.
 */
function everyProblem (error: FastifyError & { validation: AjvErrorLike[] }, failed: string, request: FastifyRequest): ErrorEntry[] {
  const found = new Map<string, ErrorEntry[]>([[failed, ajvErrorsToEntries(error.validation, failed)]])
  let after = false
  for (const [part, key] of PARTS) {
    if (after) found.set(part, ajvErrorsToEntries(partProblems(request, part, key), part))
    if (part === failed) after = true
  }
  return ENTRY_ORDER.flatMap((part) => found.get(part) ?? [])
}

/** Maps Fastify's own errors to the catalogue; null for errors the suite does not own. */
export function fromFastifyError (error: FastifyError & { validation?: unknown, validationContext?: string }, request: FastifyRequest, opts: { limitStatus: 411 | 413, mismatchStatus: 411 | 400 }): ConventionError | null {
  if (isConventionError(error)) return error
  if (Array.isArray(error.validation)) {
    const failed = error.validationContext ?? 'body'
    const type = request.headers['content-type']
    // Conventions (Content-Type): a body another plugin's parser took but did not give (multipart
    // without attachFieldsToBody) cannot satisfy a body schema: the media type is not accepted.
    if (failed === 'body' && request.body === undefined && typeof type === 'string') {
      return unsupportedMediaType(`Content-Type ${JSON.stringify(type.split(';')[0].trim())} is not accepted here: this route reads its body as JSON, XML or text`)
    }
    // Conventions (errors), 422: one errors[] entry per problem, of every part (allErrors).
    const entries = everyProblem(error as FastifyError & { validation: AjvErrorLike[] }, failed, request)
    const err = unprocessable(entries.length > 0 ? entries : [{ field: partField(failed), message: error.message }])
    // An app's error handler reads a validation error as Fastify gives it (`error.validation`).
    return Object.assign(err, { validation: error.validation, validationContext: error.validationContext })
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_TYPE':
      return unsupportedMediaType(`Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')} is not accepted here`)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return malformedBody('body is empty but Content-Type says JSON')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return malformedBody('body is not well-formed JSON')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return opts.limitStatus === 413 ? contentTooLarge('body is larger than the limit', true) : lengthRequired('body is larger than the limit', true)
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return opts.mismatchStatus === 400
        ? badFraming('body length does not match Content-Length', true)
        : lengthRequired('body length does not match Content-Length', true)
    // Fastify's router refuses these before any route (frameworkErrors); Fastify's own answer
    // repeats the whole URL, the suite's says what is wrong with it.
    case 'FST_ERR_BAD_URL':
      return badUrl('the path is not valid percent-encoded UTF-8 (RFC 3986 2.1)')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return uriTooLong(`a path parameter is longer than the ${request.server.initialConfig.maxParamLength ?? 100} characters this server accepts`)
  }
  return null
}

export type { ErrorFormat }

const FORMAT_OFFERS = ['application/json', PROBLEM_TYPE] as const

/** The profile of the context that serves the request (undefined: the spec's defaults). */
function profileOf (request: FastifyRequest): Profile | undefined {
  return nearest(nodeOf(request.server), (n) => n.profile)
}

/**
 * The format of one error answer: problem details when configured. With the envelope, the
 * profile decides whether Accept plays a part: under the spec never (docs/conventions.md
 * (errors) asks for `application/json` bodies), under rfc9110 a client whose Accept prefers
 * problem details gets them (RFC 9457 3), and then every such answer, whichever format it
 * got, says `Vary: Accept` (RFC 9110 12.5.5): its media type was chosen by that field.
 */
export function formatFor (reply: FastifyReply, format: ErrorFormat, profile: Profile | undefined = profileOf(reply.request)): ErrorFormat {
  if (format === 'problem' || !profileDefaults(profile).problemByAccept) return format
  addVary(reply, 'Accept')
  const accept = reply.request.headers.accept
  if (accept === undefined || accept.indexOf('problem') === -1) return 'envelope'
  return negotiateMediaType(accept, FORMAT_OFFERS) === PROBLEM_TYPE ? 'problem' : 'envelope'
}

/** The bodies an HTML error (401, 403, 503) may have, the page first: a client that states no preference gets the page. */
const PAGE_OFFERS = ['text/html', 'application/json', PROBLEM_TYPE] as const

/**
 * How an HTML error is written for this request (docs/conventions.md, Authentication): its
 * page, or, for a client whose Accept prefers JSON to HTML (`application/json` or problem
 * details), the route's JSON error body, in either profile. Its media type is then chosen by
 * Accept, so the answer says `Vary: Accept` (RFC 9110 12.5.5) whichever body it has.
 */
function htmlAs (reply: FastifyReply): HtmlAs {
  addVary(reply, 'Accept')
  const accept = reply.request.headers.accept
  if (accept === undefined || accept.indexOf('json') === -1) return 'page'
  const chosen = negotiateMediaType(accept, PAGE_OFFERS)
  return chosen === null || chosen === 'text/html' ? 'page' : 'json'
}

/**
 * The one adapter of the renderer (lib/render.ts, `renderError`) to a reply: sets the status
 * and headers of the error, in the format the route's `format` and the client's Accept choose
 * (`formatFor`), and returns its body. Every error answer written on a reply comes from here:
 * the error handlers', the steps' that answer directly (a "not modified" 412) and the onSend
 * steps' that turn another answer into an error.
 */
export function writeError (reply: FastifyReply, err: ConventionError | PreparedError, format: ErrorFormat, profile?: Profile): string {
  reply.code(err.statusCode)
  const headers = err.headers
  for (const name of Object.keys(headers)) reply.header(name, headers[name])
  // RFC 9113 8.2.2: no connection-specific field over HTTP/2 (the stream ends alone).
  if (err.closeConnection && reply.request.raw.httpVersionMajor < 2) reply.header('connection', 'close')
  const page = err.rendering === 'html' ? htmlAs(reply) : 'page'
  const r = renderError(err, err.rendering === 'envelope' || page === 'json' ? formatFor(reply, format, profile) : format, reply.request.url, page)
  // Sent as it is: the envelope's Content-Type stays exactly `application/json`
  // (docs/conventions.md (errors); RFC 8259 defines no charset parameter).
  reply.header('content-type', r.contentType)
  sendAsGiven(reply)
  return r.body
}

/**
 * An answer written on the raw socket, dressed as every answer is: Date (RFC 9110 6.6.1: an
 * origin server with a clock sends it), Content-Type and Content-Length, and the headers
 * every answer of the context carries (Cross-Origin-Resource-Policy where configured).
 */
export function rawResponse (err: ConventionError, headers: Record<string, string>): string {
  const r = renderError(err, 'envelope')
  const body = r.body
  let head = `HTTP/1.1 ${r.statusCode} ${reasonPhrase(err.statusCode)}\r\nDate: ${formatHttpDate(Date.now())}\r\n`
  for (const name of Object.keys(headers)) head += `${name}: ${headers[name]}\r\n`
  return head + `Content-Type: ${r.contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

/** Writes a ConventionError to the reply. Usable from a service's own error handler. */
export function sendConventionError (reply: FastifyReply, err: ConventionError, format: ErrorFormat = 'envelope'): FastifyReply {
  return reply.send(writeError(reply, err, format))
}

const MAX_LOGGED_HEADER = 256

function clip (value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value.join(', ') : value
  return v === undefined || v.length <= MAX_LOGGED_HEADER ? v : v.slice(0, MAX_LOGGED_HEADER) + '...'
}

/**
 * Logs a suite error the suite answers: a 4xx at info, with the reason (the errors[] fields,
 * the Content-Type refused by a 415, the precondition header of a 412 and the value sent), a
 * 5xx at error. No other header and no body is logged: never a credential.
 */
export function logConventionError (request: FastifyRequest, err: ConventionError): void {
  const level = err.statusCode >= 500 ? 'error' : 'info'
  const log = request.log as FastifyRequest['log'] & { isLevelEnabled?: (level: string) => boolean }
  // Below the logger's level (pino's isLevelEnabled), nothing is built.
  if (log.isLevelEnabled !== undefined && !log.isLevelEnabled(level)) return
  const entry: Record<string, unknown> = { ...logEntryOf(err) }
  if (err.statusCode === 415) {
    entry.contentType = clip(request.headers['content-type'])
  } else if (err.statusCode === 412) {
    // RFC 9110 13.1: the field is the precondition header that failed (If-Match, If-Unmodified-Since, ...).
    const header = err.errors[0]?.field
    if (header !== undefined) entry.precondition = { header, value: clip(request.headers[header.toLowerCase()]) }
  }
  log[level]({ err: entry }, err.message)
}

export type { ErrorPolicy }

/**
 * Renders an error the suite owns (its catalogue, Fastify's validation and body errors),
 * logs it, and returns true; returns false for any other error, which the caller passes on.
 */
function answerOwnError (error: FastifyError, request: FastifyRequest, reply: FastifyReply, policy: ErrorPolicy): boolean {
  const err = fromFastifyError(error, request, policy)
  if (err === null) return false
  logConventionError(request, err)
  reply.send(writeError(reply, err, policy.format, policy.profile))
  return true
}

interface PassedOn { err: ConventionError, format: ErrorFormat }
/** The reply decorator (`installPassedOn`): null, or the error passed on. */
type WithPassedOn = FastifyReply & { [kPassedOn]: PassedOn | null }

/** Declares the reply's passed-on marker once per app, so every reply has the same shape from its start. */
export function installPassedOn (root: FastifyInstance): void {
  if (!root.hasReplyDecorator(kPassedOn)) root.decorateReply(kPassedOn, null)
}

/**
 * The answer to a suite error the app's handlers passed on to Fastify's default handler
 * (they rethrew it, or sent it with `reply.send(err)`): Fastify's default handler has set its
 * status and headers and written `{ statusCode, code, error, message }`; the suite writes the
 * error's own body in its place (and logs nothing: Fastify's handler has logged it). A body
 * an app handler wrote itself is left alone. Returns the new payload, or undefined.
 */
export function renderPassedOnError (request: FastifyRequest, reply: FastifyReply, payload: unknown): string | undefined {
  const passed = (reply as WithPassedOn)[kPassedOn]
  if (passed === null || typeof payload !== 'string') return undefined
  ;(reply as WithPassedOn)[kPassedOn] = null
  const err = passed.err
  if (reply.statusCode !== err.statusCode) return undefined
  const body = readFastifyErrorBody(payload)
  if (body === null || body.code !== err.code || body.message !== err.message || body.statusCode !== err.statusCode) return undefined
  return replacePayload(payload, writeError(reply, err, passed.format))
}

/**
 * The error handler of a compiled route. Errors the suite does not own go to the route's own
 * handler, else the umbrella's `errorHandler` option, else on to the context's handler.
 * A suite error (its catalogue, Fastify's validation and body errors mapped to it) goes, as
 * the ConventionError the client would get, to the app's handlers, nearest first: the
 * route's `errorHandler`, then (when that passes it on) the context's handlers up to the
 * root, as Fastify chains them. Where the app has none, the suite answers it here.
 */
export function routeErrorHandler (policy: ErrorPolicy, own: ErrorHandler | undefined, fallback: ErrorHandler | undefined): ErrorHandler {
  return function httpConventionsErrorHandler (this: FastifyInstance, error, request, reply) {
    const err = fromFastifyError(error, request, policy)
    if (err === null) {
      if (own !== undefined) return own.call(this, error, request, reply)
      if (fallback !== undefined) return fallback.call(this, error, request, reply)
      throw error
    }
    if (own === undefined && hasOnlyFastifysErrorHandler(request.server)) {
      logConventionError(request, err)
      sendConventionError(reply, err, policy.format)
      return
    }
    // Should it reach Fastify's default handler, its answer is replaced by the suite's (onSend).
    ;(reply as WithPassedOn)[kPassedOn] = { err, format: policy.format }
    if (own !== undefined) return own.call(this, err as unknown as FastifyError, request, reply)
    // Thrown from the route's handler, the error goes to the context's handler (Fastify's chain).
    throw err
  }
}

/**
 * The envelope for every error of a context: sets the context's error handler. The other
 * plugins do not need it (each route they compile carries its own error handler); register
 * it where errors of routes outside the suite should be rendered the same way.
 */
function errorsPlugin (fastify: FastifyInstance, opts: ErrorsOptions, done: (err?: Error) => void): void {
  const badProfile = profileError('http-conventions', opts.profile)
  if (badProfile !== null) return done(badProfile)
  if (opts.errorHandler !== undefined && typeof opts.errorHandler !== 'function') {
    return done(invalidOption('http-conventions', 'errorHandler must be a function'))
  }
  addEnvelopeSchema(fastify)
  const own = fastify as unknown as Record<symbol, boolean>
  // Registered twice in one context: one handler (a child context sets its own).
  if (Object.prototype.hasOwnProperty.call(own, kOwnHandler)) return done()
  own[kOwnHandler] = true

  const defaults = profileDefaults(opts.profile)
  const policy: ErrorPolicy = {
    limitStatus: opts.limitStatus ?? defaults.limitStatus,
    mismatchStatus: opts.mismatchStatus ?? defaults.mismatchStatus,
    format: 'envelope',
    profile: opts.profile
  }
  const fallback = opts.errorHandler

  fastify.setErrorHandler(function httpConventionsErrorHandler (error: FastifyError, request, reply) {
    if (answerOwnError(error, request, reply, policy)) return
    if (fallback !== undefined) return fallback.call(this, error, request, reply)
    throw error
  })
  done()
}

function hasValidation (route: RouteOptions): boolean {
  const schema = route.schema
  return schema !== undefined && (schema.body !== undefined || schema.querystring !== undefined || schema.params !== undefined || schema.headers !== undefined)
}

/**
 * The suite's error handling, as the kernel's extension: the envelope schema and the reply's
 * passed-on marker in the root; on each route, its error handler and the step that answers a
 * suite error the app's handlers passed on to Fastify's.
 */
export const errorsExtension: KernelExtension = {
  install (root) {
    addEnvelopeSchema(root)
    installPassedOn(root)
  },
  compile (c, errors) {
    // A suite error (a route's step, or validation of its schema) the app's handlers pass on to Fastify's gets the suite's answer.
    // Validation errors, the most common, always; the others where the route answers through onSend anyway.
    c.check('onSend', 'errors:passed-on', renderPassedOnError, { weak: !hasValidation(c.route) })
    c.route.errorHandler = routeErrorHandler(errors.policy, c.route.errorHandler, errors.fallback)
  }
}

/** Adds the envelope schema to the context, so routes can refer to ERRORS_SCHEMA_ID. */
export function addEnvelopeSchema (fastify: FastifyInstance): void {
  if (fastify.getSchema(ERRORS_SCHEMA_ID) === undefined) fastify.addSchema(envelopeSchema)
}

/** Installs the envelope error handler in its context. */
export const httpConventionsErrors = fp(errorsPlugin, { fastify: '^5.10.0', name: 'fastify-http-conventions-errors' })
