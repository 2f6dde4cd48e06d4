/**
 * Answers written where no route runs, given through the server options users spread into
 * `Fastify()` (`serverOptions`): Fastify's framework errors and requests Node's HTTP parser
 * refused. Each is dressed as every answer of the root context (its headers).
 */
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badFraming, headersTooLarge, misconfigured, requestTimeout } from '../lib/errors'
import { profileDefaults } from '../lib/profile'
import { fromFastifyError, logConventionError, rawResponse, sendConventionError } from './errors'
import { contextHeaders, formatOf, nearest, nodeOf } from './kernel/index'

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
 * time (RFC 9110 15.5.9), 431 for a header section over the server's limit (RFC 6585 5), 400
 * for anything that is not HTTP/1.1 as RFC 9112 writes it. A request the content-length
 * plugin answered (a framing error) is left alone.
 */
export function answerClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // Node: a reset connection, or one already answered and destroyed, has nothing more to say.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const err = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? requestTimeout('the request did not arrive in time')
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? headersTooLarge('the header section is larger than this server reads')
      : badFraming('the request is not HTTP/1.1 as RFC 9112 writes it')
  this.log.trace({ err: error }, 'client error')
  if (socket.writable) socket.write(rawResponse(err, contextHeaders(this)))
  socket.destroy(error)
}
