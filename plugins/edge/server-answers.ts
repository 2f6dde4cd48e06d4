/**
 * Answers written where no route runs, given through the server options users spread into
 * `Fastify()` (`serverOptions`): Fastify's framework errors and requests Node's HTTP parser
 * refused. Each is dressed as every answer of the root context (its headers).
 */
import { IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badFraming, expectationFailed, headersTooLarge, httpVersionNotSupported, logEntryOf, misconfigured, requestTimeout, type ConventionError } from '../../lib/errors'
import { profileDefaults } from '../../lib/profile'
import { reasonPhrase, renderError } from '../../lib/render'
import { fromFastifyError, logConventionError, rawResponse, sendConventionError } from '../services/errors'
import { contextHeaders, formatOf, nearest, nodeOf } from '../kernel/index'
import { answerExpectations, gateRequests, isGated, lingerOnClose, refusedMajorVersion, takeOverHostCheck } from '../infrastructure/adapter'
import { declaresBody, hostLines } from '../services/shared'

/**
 * Fastify's `frameworkErrors`: a request its router refused before any route or hook (a path
 * that does not decode, a path parameter over `maxParamLength`) gets the suite's answer: the
 * catalogue's error in the context's format, with the headers every answer of the context
 * carries. Nothing of the request is repeated.
 */
export function answerFrameworkError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const node = nodeOf(request.server)
  const defaults = profileDefaults(nearest(node, (n) => n.profile))
  const err = fromFastifyError(error, request, defaults) ?? misconfigured('the server could not route this request')
  logConventionError(request, err)
  const headers = contextHeaders(request.server)
  for (const name of Object.keys(headers)) reply.header(name, headers[name])
  sendConventionError(reply, err, formatOf(node))
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused gets the suite's answer
 * on the raw socket, then the connection closes: 408 for a request that did not arrive in
 * time (RFC 9110 15.5.9), 431 for a header section over the server's limit (RFC 6585 5), 505
 * for a request line of another major version Node's parser refuses (`HTTP/3.0`; RFC 9110
 * 15.6.6), 400 for anything else that is not HTTP/1.1 as RFC 9112 writes it (`HTTP/1.2`
 * included: RFC 9110 2.5 would serve it as 1.1, but Node's parser stops at it, so no
 * request exists to serve). A request the content-length
 * plugin answered (a framing error) is left alone.
 */
export function answerClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // Node: a reset connection, or one already answered and destroyed, has nothing more to say.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // RFC 9112 9.6: bytes after a request that closes its connection (HTTP/1.0, `Connection:
  // close`) are not read; that request's answer is still to come, and Node closes the
  // connection once it is written. A 400 here would go out first, in its place.
  if (error.code === 'HPE_CLOSED_CONNECTION') return
  const err = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? requestTimeout('the request did not arrive in time')
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? headersTooLarge('the header section is larger than this server reads')
      : error.code === 'HPE_INVALID_VERSION' && (refusedMajorVersion(error) ?? 1) !== 1
        ? httpVersionNotSupported('this server speaks HTTP/1.1 (and HTTP/1.0) on this connection')
        : badFraming('the request is not HTTP/1.1 as RFC 9112 writes it')
  this.log.trace({ err: error }, 'client error')
  if (socket.writable) socket.write(rawResponse(err, contextHeaders(this)))
  socket.destroy(error)
}

/**
 * What the suite answers at the server, before Fastify routes a request (for every URL,
 * routed or not), where Node would answer with a bare status or serve what it should not:
 * - 505 to a request line of another major version than 1 (`HTTP/2.0`, `HTTP/0.9`), which
 *   Node's parser accepts and would serve (RFC 9110 15.6.6, RFC 9112 2.3);
 * - 400 to an HTTP/1.1 request without Host (RFC 9112 3.2), which Node answers itself with a
 *   bare 400 unless the check is handed over (plugins/infrastructure/adapter.ts);
 * - 417 to an `Expect` other than 100-continue (RFC 9110 10.1.1), through Node's documented
 *   checkExpectation event, where Node would write a bare 417.
 * Each carries the headers every answer of the root context carries, in the text rendering
 * of the parser's answers. Installed once per server, by the first registration of the
 * content-length convention (the root's); an HTTP/2 stream is never refused here.
 */
export function answerAtServer (app: FastifyInstance): void {
  const server = app.server as unknown as Server
  if (isGated(server)) return
  const hostRequired = takeOverHostCheck(server)
  function refusal (request: IncomingMessage): ConventionError | null {
    // The common request: HTTP/1.1 with Host, or HTTP/1.0.
    if (request.httpVersionMajor === 1) {
      return hostRequired && request.httpVersionMinor === 1 && hostLines(request.rawHeaders, 1) === 0
        ? badFraming('an HTTP/1.1 request must carry a Host field (RFC 9112 3.2)')
        : null
    }
    // RFC 9113: an HTTP/2 stream is no HTTP/1 request line; Node's parser read every IncomingMessage.
    if (!(request instanceof IncomingMessage)) return null
    return httpVersionNotSupported('this server speaks HTTP/1.1 (and HTTP/1.0) on this connection')
  }
  // RFC 9112 9.6: connections this server refused a request on; requests pipelined behind it never run.
  const closing = new WeakSet<object>()
  gateRequests(server, function refuseAtServer (request, response) {
    const err = refusal(request)
    if (err === null) return closing.has(request.socket)
    closing.add(request.socket)
    answerAtServerWith(app, request, response, err)
    return true
  })
  // A checkExpectation listener of the app's own is left to answer.
  answerExpectations(server, function answerExpectation (request, response) {
    const err = refusal(request)
    if (err !== null) closing.add(request.socket)
    answerAtServerWith(app, request, response, err ?? expectationFailed('the only expectation this server meets is 100-continue (RFC 9110 10.1.1)'))
  })
}

function answerAtServerWith (app: FastifyInstance, request: IncomingMessage, response: ServerResponse, err: ConventionError): void {
  app.log.trace({ err: logEntryOf(err) }, err.message)
  const r = renderError(err, 'envelope')
  const body = r.body
  // RFC 9112 9.6: a body left unread when the connection closes is read on for a while, so the client sees the answer.
  if (err.closeConnection && declaresBody(request.headers)) lingerOnClose(request.socket)
  response.writeHead(r.statusCode, reasonPhrase(r.statusCode), { ...contextHeaders(app), ...r.headers, 'content-type': r.contentType, 'content-length': String(Buffer.byteLength(body)) })
  response.end(body)
}
