/** What one answer decides for the rest of its HTTP/1.1 connection (RFC 9112 9.3.2, 9.6). */
import type { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import type { FastifyRequest } from 'fastify'

/** On a socket: the request whose body was left unread; requests parsed behind it are refused. */
export const kRefused = Symbol('http-conventions.refused-request')
export type RefusingSocket = Socket & { [kRefused]?: IncomingMessage }

/**
 * Marks the request's connection: bytes pipelined behind a request whose body was never read
 * cannot be framed (RFC 9112 9.3.2), so requests parsed behind it are refused in turn.
 */
export function markRefused (request: FastifyRequest): void {
  const socket = request.raw.socket as RefusingSocket | null
  // RFC 9113 8.1: an HTTP/2 stream ends with its own frames; nothing behind it is mis-framed.
  if (socket === null || request.raw.httpVersionMajor >= 2) return
  socket[kRefused] ??= request.raw
}
