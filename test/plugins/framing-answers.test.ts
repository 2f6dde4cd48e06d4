/**
 * The clientErrorHandler of serverOptions on a connection whose last request declared a body
 * (RFC 9112 6.3): which parser errors are framing errors of that body, decided without a
 * race against the handler's answer.
 */
import { test, type Test } from 'tap'
import { PassThrough } from 'node:stream'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import Fastify from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'
import { answerFramingError, trackBody } from '../../plugins/edge/framing'

/** A socket that records what is written to it. */
function socket (): Socket & { written: string } {
  const s = new PassThrough() as unknown as Socket & { written: string }
  s.written = ''
  s.write = ((chunk: string) => { s.written += chunk; return true }) as Socket['write']
  s.end = ((chunk?: string) => { if (chunk !== undefined) s.written += chunk; return s }) as never
  // Destroyed without an 'error' event: the test reads what was written.
  s.destroy = (() => s) as never
  return s
}

/** What the clientErrorHandler writes for a parser error `code` on a connection whose last request declared a body, not yet answered. */
async function answerAfterBody (t: Test, code: string): Promise<string> {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.ready()
  const s = socket()
  trackBody({ httpVersionMajor: 1, socket: s, complete: true } as unknown as IncomingMessage, { headersSent: false, req: { complete: true } } as unknown as ServerResponse)
  answerFramingError.call(app, Object.assign(new Error(code), { code }), s)
  return s.written
}

test('RFC 9112 6.3: bytes past the declared body of a request not yet answered read as a broken next request: 411, once', async (t) => {
  const written = await answerAfterBody(t, 'HPE_INVALID_METHOD')
  t.match(written, /^HTTP\/1\.1 411 Length Required\r\n/)
  t.match(written, /the body is longer than its Content-Length/)
})

test('a parser error that says nothing of the body (a header section too large) is answered as any client error: 431', async (t) => {
  t.match(await answerAfterBody(t, 'HPE_HEADER_OVERFLOW'), /^HTTP\/1\.1 431 /)
})
