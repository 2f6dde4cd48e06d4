/**
 * The one catalogue of errors the suite raises. Every error carries its HTTP status,
 * how it is rendered (docs/architecture.md, "Errors"), the
 * `errors[]` entries of the envelope, and the headers that must travel with it.
 * Plugins throw these (or pass them to `done(err)`); one error handler renders them.
 */
import createError from '@fastify/error'

/** One entry of the `errors[]` envelope: the field at fault and what is wrong with it. */
export interface ErrorEntry {
  /** Name of the field at fault: a dotted path for body data, a header name, or `body`; absent where no field is at fault (a 404, a 429). */
  field?: string
  /** Human-readable message. */
  message: string
  /** Machine-readable code of the problem, where one is known. */
  code?: string
}

/** How an error's body is written: the JSON `errors[]` envelope, plain text, or a small HTML page. */
export type Rendering = 'envelope' | 'text' | 'html'

/** An error of the suite's catalogue: the status, headers and body entries of its answer. Made by the constructors (`unprocessable`, ...), recognized by `isConventionError`. */
export interface ConventionError extends Error {
  code: string
  statusCode: number
  rendering: Rendering
  errors: ErrorEntry[]
  headers: Record<string, string | string[]>
  /** True when the request body was not read: the connection is closed after the response. */
  closeConnection: boolean
}

const kConvention = Symbol.for('fastify-http-conventions.error')

const PREFIX = 'FST_HTTP_CONVENTIONS_'

/**
 * Error constructors, by code. `code` and `statusCode` are stable and documented. Answers to
 * the client (4xx, 503) carry no stack trace: it says nothing about them and costs more to
 * capture than a small body costs to send; the server's own faults keep theirs.
 */
export const errorCodes = {
  LENGTH_REQUIRED: createError(`${PREFIX}LENGTH_REQUIRED`, 'Length Required: %s', 411, Error, false),
  CONTENT_TOO_LARGE: createError(`${PREFIX}CONTENT_TOO_LARGE`, 'Content Too Large: %s', 413, Error, false),
  BAD_FRAMING: createError(`${PREFIX}BAD_FRAMING`, 'Bad Request: %s', 400, Error, false),
  MALFORMED_BODY: createError(`${PREFIX}MALFORMED_BODY`, '%s', 400, Error, false),
  UNSUPPORTED_MEDIA_TYPE: createError(`${PREFIX}UNSUPPORTED_MEDIA_TYPE`, '%s', 415, Error, false),
  UNPROCESSABLE_ENTITY: createError(`${PREFIX}UNPROCESSABLE_ENTITY`, '%s', 422, Error, false),
  PATCH_TOO_COSTLY: createError(`${PREFIX}PATCH_TOO_COSTLY`, '%s', 422, Error, false),
  PRECONDITION_FAILED: createError(`${PREFIX}PRECONDITION_FAILED`, '%s', 412, Error, false),
  PRECONDITION_REQUIRED: createError(`${PREFIX}PRECONDITION_REQUIRED`, '%s', 428, Error, false),
  UNAUTHORIZED: createError(`${PREFIX}UNAUTHORIZED`, '%s', 401, Error, false),
  FORBIDDEN: createError(`${PREFIX}FORBIDDEN`, '%s', 403, Error, false),
  METHOD_NOT_ALLOWED: createError(`${PREFIX}METHOD_NOT_ALLOWED`, '%s', 405, Error, false),
  SERVICE_UNAVAILABLE: createError(`${PREFIX}SERVICE_UNAVAILABLE`, '%s', 503, Error, false),
  NOT_IMPLEMENTED: createError(`${PREFIX}NOT_IMPLEMENTED`, 'Not Implemented: %s', 501, Error, false),
  BAD_URL: createError(`${PREFIX}BAD_URL`, '%s', 400, Error, false),
  REQUEST_TIMEOUT: createError(`${PREFIX}REQUEST_TIMEOUT`, 'Request Timeout: %s', 408, Error, false),
  HEADERS_TOO_LARGE: createError(`${PREFIX}HEADERS_TOO_LARGE`, 'Request Header Fields Too Large: %s', 431, Error, false),
  URI_TOO_LONG: createError(`${PREFIX}URI_TOO_LONG`, '%s', 414, Error, false),
  EXPECTATION_FAILED: createError(`${PREFIX}EXPECTATION_FAILED`, 'Expectation Failed: %s', 417, Error, false),
  HTTP_VERSION_NOT_SUPPORTED: createError(`${PREFIX}HTTP_VERSION_NOT_SUPPORTED`, 'HTTP Version Not Supported: %s', 505, Error, false),
  /** A route asks for a convention it was never compiled with: refused, never served without it. */
  MISCONFIGURED: createError(`${PREFIX}MISCONFIGURED`, '%s', 500),
  /** Thrown at registration (boot) for options that make no sense; never per request. */
  INVALID_OPTION: createError(`${PREFIX}INVALID_OPTION`, '%s: %s', 500, TypeError)
} as const

type Ctor = (typeof errorCodes)[keyof typeof errorCodes]

interface Extra {
  rendering: Rendering
  errors?: ErrorEntry[]
  headers?: Record<string, string | string[]>
  closeConnection?: boolean
}

function make (Ctor: Ctor, args: unknown[], extra: Extra): ConventionError {
  const err = new Ctor(...args) as unknown as ConventionError
  err.rendering = extra.rendering
  err.errors = extra.errors ?? []
  err.headers = extra.headers ?? {}
  err.closeConnection = extra.closeConnection ?? false
  Object.defineProperty(err, kConvention, { value: true })
  return err
}

/** True for every error of this catalogue (the ones the suite's error handler owns). */
export function isConventionError (err: unknown): err is ConventionError {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[kConvention] === true
}

/** 411 (RFC 9110 15.5.12; docs/conventions.md (Content-Length)): the body lacks a valid Content-Length, or is over the limit. Plain text; the connection is closed by default. */
export function lengthRequired (reason: string, closeConnection = true): ConventionError {
  return make(errorCodes.LENGTH_REQUIRED, [reason], { rendering: 'text', closeConnection })
}

// RFC 9110 15.5.14: the rfc9110 profile's answer to a body over the limit.
export function contentTooLarge (reason: string, closeConnection = true): ConventionError {
  return make(errorCodes.CONTENT_TOO_LARGE, [reason], { rendering: 'text', closeConnection })
}

// RFC 9112 6.3: the rfc9110 profile's answer to a Content-Length that does not match the body.
export function badFraming (reason: string, closeConnection = true): ConventionError {
  return make(errorCodes.BAD_FRAMING, [reason], { rendering: 'text', closeConnection })
}

/** A body that is not well-formed (bad JSON or XML): 400 with the envelope, field `body`. */
export function malformedBody (message: string): ConventionError {
  return make(errorCodes.MALFORMED_BODY, [message], { rendering: 'envelope', errors: [{ field: 'body', message }] })
}

/** 415 (RFC 9110 15.5.16): the body's media type (or charset) is not accepted; field `Content-Type`. */
export function unsupportedMediaType (message: string, headers?: Record<string, string>): ConventionError {
  return make(errorCodes.UNSUPPORTED_MEDIA_TYPE, [message], {
    rendering: 'envelope',
    errors: [{ field: 'Content-Type', message }],
    headers
  })
}

/**
 * 422 with one `errors[]` entry per problem. This is the one call a service makes to
 * report its own semantic problems (duplicate identifier, conflicting property):
 * `throw unprocessable({ field: 'slug', message: 'is already taken' })`.
 */
export function unprocessable (entries: ErrorEntry | ErrorEntry[]): ConventionError {
  const errors = Array.isArray(entries) ? entries : [entries]
  if (errors.length === 0) throw new TypeError('unprocessable() needs at least one { field, message } entry')
  for (const e of errors) {
    if (typeof e?.field !== 'string' || typeof e.message !== 'string') {
      throw new TypeError('unprocessable() entries are { field: string, message: string }')
    }
  }
  return make(errorCodes.UNPROCESSABLE_ENTITY, [errors.map((e) => `${e.field}: ${e.message}`).join('; ')], {
    rendering: 'envelope',
    errors
  })
}

/**
 * A patch document that is well-formed but would cost more than the server agrees to
 * spend applying it: too many operations, a working document that grows past the
 * bound, or values nested too deeply. RFC 5789 2.2 ("Unprocessable request": the patch
 * document is understood and its syntax valid, but the server is incapable of
 * processing it) and RFC 9110 15.5.21 name 422 for this. 413 (RFC 9110 15.5.14) would
 * say the request content itself is too large, which it is not: a few kilobytes of
 * `copy` operations can ask for gigabytes. Its own code (PATCH_TOO_COSTLY) tells it
 * apart from a patch that does not apply; `field` is the operation's path, or `body`.
 */
export function patchTooCostly (message: string, field = 'body'): ConventionError {
  return make(errorCodes.PATCH_TOO_COSTLY, [message], { rendering: 'envelope', errors: [{ field, message }] })
}

/** 412 (RFC 9110 15.5.13): a precondition failed. `field` is the header name; the current ETag travels along when known. */
export function preconditionFailed (field: string, message: string, etag?: string): ConventionError {
  return make(errorCodes.PRECONDITION_FAILED, [message], {
    rendering: 'envelope',
    errors: [{ field, message }],
    headers: etag === undefined ? {} : { etag }
  })
}

/** 428 (RFC 6585 3): the origin requires the request to be conditional; field `If-Match`. */
export function preconditionRequired (message: string): ConventionError {
  return make(errorCodes.PRECONDITION_REQUIRED, [message], {
    rendering: 'envelope',
    errors: [{ field: 'If-Match', message }],
    headers: { 'cache-control': 'no-store' }
  })
}

/** 401 (RFC 9110 15.5.2, 11.6.1): always with WWW-Authenticate, one line per challenge. */
export function unauthorized (message: string, challenges: string[]): ConventionError {
  return make(errorCodes.UNAUTHORIZED, [message], {
    rendering: 'html',
    headers: { 'www-authenticate': challenges, 'cache-control': 'no-store' }
  })
}

/** 403 (RFC 6750 3.1): the rfc9110 profile's answer to valid credentials lacking scope. */
export function forbidden (message: string, challenges: string[] = []): ConventionError {
  const headers: Record<string, string | string[]> = { 'cache-control': 'no-store' }
  if (challenges.length > 0) headers['www-authenticate'] = challenges
  return make(errorCodes.FORBIDDEN, [message], { rendering: 'html', headers })
}

/**
 * 405 (RFC 9110 15.5.6): the method is known to the server but the target resource does not serve
 * it; `allow` (RFC 9110 10.2.1) lists the methods it does serve.
 */
export function methodNotAllowed (method: string, allow: string): ConventionError {
  const message = `${method} is not allowed here; this resource serves ${allow}`
  return make(errorCodes.METHOD_NOT_ALLOWED, [message], { rendering: 'envelope', errors: [{ message }], headers: { allow } })
}

/** 503 (RFC 9110 15.6.4) with Retry-After: a store the request depends on is down; the client may retry later. */
export function serviceUnavailable (message: string, retryAfterSeconds = 5): ConventionError {
  return make(errorCodes.SERVICE_UNAVAILABLE, [message], {
    rendering: 'html',
    headers: { 'retry-after': String(retryAfterSeconds), 'cache-control': 'no-store' }
  })
}

// RFC 9112 6.1: a transfer coding the server does not understand; the body cannot be read.
export function notImplemented (reason: string): ConventionError {
  return make(errorCodes.NOT_IMPLEMENTED, [reason], { rendering: 'text', closeConnection: true })
}

// RFC 3986 2.1 and 2.4: the request target's path does not decode (a "%" not followed by two
// hexadecimal digits, or bytes that are not UTF-8); the answer never repeats the target.
export function badUrl (message: string): ConventionError {
  return make(errorCodes.BAD_URL, [message], { rendering: 'envelope', errors: [{ field: 'url', message }] })
}

// RFC 9110 15.5.15: the request target is longer than the server interprets; never repeated.
export function uriTooLong (message: string): ConventionError {
  return make(errorCodes.URI_TOO_LONG, [message], { rendering: 'envelope', errors: [{ field: 'url', message }] })
}

// RFC 9110 15.5.9: the request did not arrive within the server's time; the connection closes.
export function requestTimeout (reason: string): ConventionError {
  return make(errorCodes.REQUEST_TIMEOUT, [reason], { rendering: 'text', closeConnection: true })
}

// RFC 6585 5: the request's header section is larger than the server reads; the connection closes.
export function headersTooLarge (reason: string): ConventionError {
  return make(errorCodes.HEADERS_TOO_LARGE, [reason], { rendering: 'text', closeConnection: true })
}

// RFC 9110 10.1.1 / 15.5.18: an expectation other than 100-continue, which no server here meets.
export function expectationFailed (reason: string): ConventionError {
  return make(errorCodes.EXPECTATION_FAILED, [reason], { rendering: 'text' })
}

// RFC 9110 15.6.6 / RFC 9112 2.3: a request of another major version than HTTP/1; the connection closes.
export function httpVersionNotSupported (reason: string): ConventionError {
  return make(errorCodes.HTTP_VERSION_NOT_SUPPORTED, [reason], { rendering: 'text', closeConnection: true })
}

// RFC 9110 15.6.1: the server is misconfigured for this route; fail closed and say so in the log.
export function misconfigured (message: string): ConventionError {
  return make(errorCodes.MISCONFIGURED, [message], {
    rendering: 'envelope',
    errors: [{ field: 'route', message: 'this route is misconfigured on the server and cannot be served' }]
  })
}

/** Thrown at registration when a plugin option or a route's `config` is wrong. */
export function invalidOption (where: string, message: string): Error {
  return new errorCodes.INVALID_OPTION(where, message)
}

/**
 * What the log says of a suite error (the line's message is the error's): its code, status
 * and errors[] (the fields at fault, the reason), nothing else: no header value, no body,
 * never a credential. No `message` member, so that pino's error serializer leaves it as it is.
 */
export interface ErrorLogEntry {
  code: string
  statusCode: number
  /** The envelope's entries, when it has any. */
  errors?: ErrorEntry[]
}

export function logEntryOf (err: ConventionError): ErrorLogEntry {
  const entry: ErrorLogEntry = { code: err.code, statusCode: err.statusCode }
  if (err.errors.length > 0) entry.errors = err.errors.map((e) => ({ field: e.field, message: e.message }))
  return entry
}
