/**
 * Error rendering: every error of lib/errors.ts, and Fastify's own validation and
 * body-parsing errors, become the status, headers and body of docs/architecture.md's error
 * table. Each route the suite compiles carries an error handler built on `renderError`;
 * errors it does not own go on to the route's own handler, the `errorHandler` option, or
 * the context's handler, so a service's own handling keeps working.
 */
import fp from 'fastify-plugin'
import fjs from 'fast-json-stringify'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  badFraming, contentTooLarge, invalidOption, isConventionError, lengthRequired, malformedBody,
  unprocessable, unsupportedMediaType, type ConventionError, type ErrorEntry
} from '../lib/errors'
import { render } from '../lib/render'
import { ajvErrorsToEntries } from '../lib/validation-errors'
import { profileDefaults, type Profile } from '../lib/profile'
import envelopeSchema from '../schemas/errors.json'
import { profileError } from './shared'

export const ERRORS_SCHEMA_ID = envelopeSchema.$id

/** `{ errors: [...] }` serialized through the envelope schema (fast-json-stringify). */
export const serializeEnvelope: (body: { errors: ErrorEntry[] }) => string = fjs(envelopeSchema as object)

export type ErrorHandler = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

export interface ErrorsOptions {
  profile?: Profile
  /** Status for a body over the limit when Fastify itself detects it (chunked bodies): 411 (spec) or 413. */
  limitStatus?: 411 | 413
  /** Status when Fastify finds the body shorter or longer than Content-Length: 411 (spec) or 400. */
  mismatchStatus?: 411 | 400
  /** Called for errors the suite does not own (instead of passing them to the parent handler). */
  errorHandler?: ErrorHandler
}

/** Maps Fastify's own errors to the catalogue; null for errors the suite does not own. */
export function fromFastifyError (error: FastifyError & { validation?: unknown, validationContext?: string }, request: FastifyRequest, opts: { limitStatus: 411 | 413, mismatchStatus: 411 | 400 }): ConventionError | null {
  if (isConventionError(error)) return error
  if (Array.isArray(error.validation)) {
    // Spec section 7, 422: one errors[] entry per problem Ajv found (allErrors).
    const entries = ajvErrorsToEntries(error.validation, error.validationContext ?? 'body')
    return unprocessable(entries.length > 0 ? entries : [{ field: error.validationContext ?? 'body', message: error.message }])
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
  }
  return null
}

/** Writes a ConventionError to the reply. Usable from a service's own error handler. */
export function sendConventionError (reply: FastifyReply, err: ConventionError): FastifyReply {
  const r = render(err, serializeEnvelope)
  reply.code(r.statusCode)
  for (const name of Object.keys(r.headers)) reply.header(name, r.headers[name])
  reply.header('content-type', r.contentType)
  // A Buffer is sent as it is: the envelope's Content-Type stays exactly `application/json`
  // (spec section 7; RFC 8259 defines no charset parameter), Content-Length is set.
  return reply.send(Buffer.from(r.body))
}

/** How a route's error handler maps Fastify's framing and size errors (from its Content-Length convention). */
export interface ErrorPolicy {
  limitStatus: 411 | 413
  mismatchStatus: 411 | 400
}

/**
 * Renders an error the suite owns (its catalogue, Fastify's validation and body errors) and
 * returns true; returns false for any other error, which the caller passes on.
 */
export function renderError (error: FastifyError, request: FastifyRequest, reply: FastifyReply, policy: ErrorPolicy): boolean {
  const err = fromFastifyError(error, request, policy)
  if (err === null) return false
  sendConventionError(reply, err)
  return true
}

const kOwnHandler = Symbol('http-conventions.errors.handler')

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
    mismatchStatus: opts.mismatchStatus ?? defaults.mismatchStatus
  }
  const fallback = opts.errorHandler

  fastify.setErrorHandler(function httpConventionsErrorHandler (error: FastifyError, request, reply) {
    if (renderError(error, request, reply, policy)) return
    if (fallback !== undefined) return fallback.call(this, error, request, reply)
    throw error
  })
  done()
}

/** Adds the envelope schema to the context, so routes can refer to ERRORS_SCHEMA_ID. */
export function addEnvelopeSchema (fastify: FastifyInstance): void {
  if (fastify.getSchema(ERRORS_SCHEMA_ID) === undefined) fastify.addSchema(envelopeSchema)
}

/** Installs the envelope error handler in its context. */
export const httpConventionsErrors = fp(errorsPlugin, { fastify: '5.x', name: 'fastify-http-conventions-errors' })
