/**
 * Framing (docs/security-model.md, framing): what the Content-Length convention knows of a
 * connection, and the answer to framing errors Node's HTTP parser refuses before Fastify
 * sees a request.
 *
 * Nothing here is installed on the server by a plugin. The server-level part is
 * `answerFramingError`, the `clientErrorHandler` of `serverOptions` (plugins/edge/server-options.ts),
 * which apps spread into `Fastify({ ...serverOptions })`. What it knows of a connection
 * comes from three weak maps keyed by the socket, written only on rare paths (a request
 * that declares a body, a refusal, a framing error): a request without a body leaves
 * them untouched, and no property is added to a request or socket (the lingering close of a
 * refused request is plugins/infrastructure/adapter.ts's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { ConventionError } from '../../lib/errors'
import { rawResponse } from '../services/errors'
import { contextHeaders } from '../kernel/index'
import { answerClientError } from './server-answers'

/** How the app answers a framing error; set by the first registration of the content-length plugin. */
export interface FramingPolicy {
  readonly mismatch: (reason: string) => ConventionError
}

type Conn = object

const policies = new WeakMap<object, FramingPolicy>()
/** Per connection: the response of the first request answered without its body being read. */
const closing = new WeakMap<Conn, ServerResponse>()
/** Per connection: the response of the latest request that declared a body. */
const withBody = new WeakMap<Conn, ServerResponse>()
/** Connections whose framing broke after a request was parsed (its body is in doubt). */
const misframed = new WeakSet<Conn>()

// Parser errors that are about the message's framing (RFC 9112 6.1-6.3).
const FRAMING_ERRORS = new Set(['HPE_UNEXPECTED_CONTENT_LENGTH', 'HPE_INVALID_CONTENT_LENGTH', 'HPE_INVALID_TRANSFER_ENCODING'])
// Errors that follow a body longer than its Content-Length: the excess reads as a broken next request.
const TRAILING_ERRORS = new Set(['HPE_INVALID_METHOD', 'HPE_INVALID_CONSTANT', 'HPE_INVALID_URL', 'HPE_INVALID_VERSION', 'HPE_CR_EXPECTED', 'HPE_LF_EXPECTED', 'HPE_INVALID_HEADER_TOKEN'])

/** The app's framing answers (first registration wins: no route is known for a parser error). */
export function setFramingPolicy (server: object, policy: FramingPolicy): void {
  if (!policies.has(server)) policies.set(server, policy)
}

/**
 * RFC 9112 9.6: the request's connection closes after its answer, its body unread; requests
 * pipelined behind it on the connection must never run. HTTP/1 only.
 */
export function markClosing (request: IncomingMessage, response: ServerResponse): void {
  if (request.httpVersionMajor !== 1 || closing.has(request.socket)) return
  closing.set(request.socket, response)
}

/** RFC 9112 9.3.2: true when an earlier request on this connection closes it, so this one must not run. */
export function behindClosing (request: IncomingMessage): boolean {
  if (request.httpVersionMajor !== 1) return false
  const first = closing.get(request.socket)
  return first !== undefined && first.req !== request
}

/** Remembers the request that declared a body, for a parser error that comes with it. */
export function trackBody (request: IncomingMessage, response: ServerResponse): void {
  if (request.httpVersionMajor === 1) withBody.set(request.socket, response)
}

/** True when the parser found the connection's framing broken after this request was parsed. */
export function isMisframed (request: IncomingMessage): boolean {
  return request.httpVersionMajor === 1 && misframed.has(request.socket)
}

type ClientError = Error & { code?: string }

/**
 * `clientErrorHandler` (serverOptions): a framing error is answered as the content-length
 * plugin says (411, or 400 under rfc9110); anything else is the kernel's answer.
 */
export function answerFramingError (this: FastifyInstance, error: ClientError, socket: Socket): void {
  if (!answeredFraming(this, error, socket)) answerClientError.call(this, error, socket)
}

function answeredFraming (app: FastifyInstance, error: ClientError, socket: Socket): boolean {
  const policy = policies.get(app.server)
  if (policy === undefined || error.code === 'ECONNRESET' || socket.destroyed) return false
  // RFC 9112 9.6: one answer per request. Bytes that break the framing after a request was
  // answered (a body it refused, then a bad chunk size; a body without Content-Length read
  // as a next request; a body that ends short after a 401) close without a second answer.
  const refused = closing.get(socket)
  const last = withBody.get(socket)
  if (socket.writableEnded || refused?.headersSent === true || (last !== undefined && last.headersSent && (!last.writableFinished || !last.req.complete))) {
    socket.destroy()
    return true
  }
  const reason = framingReason(error.code ?? '', last)
  if (reason === null) return false
  misframed.add(socket)
  if (socket.writable) socket.end(rawResponse(policy.mismatch(reason), contextHeaders(app)))
  socket.destroy()
  return true
}

/** Why a parser error is a framing error of the connection (RFC 9112 6.1-6.3), or null. */
function framingReason (code: string, last: ServerResponse | undefined): string | null {
  // RFC 9112 6.3: an invalid Content-Length (duplicate, non-digit, overflow, or with Transfer-Encoding) is unrecoverable.
  if (code === 'HPE_INVALID_TRANSFER_ENCODING') return 'Content-Length and Transfer-Encoding must not both be present'
  if (FRAMING_ERRORS.has(code)) return 'Content-Length is not one valid decimal number'
  if (last === undefined) return null
  // RFC 9112 8: the connection closed before the message was complete.
  if (code === 'HPE_INVALID_EOF_STATE' && !last.req.complete) return 'the connection ended before the body reached its Content-Length'
  if (TRAILING_ERRORS.has(code)) return 'the body is longer than its Content-Length'
  return null
}
