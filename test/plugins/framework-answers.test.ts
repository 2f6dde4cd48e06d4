/**
 * Every answer dressed (docs/conventions.md (Cross-Origin-Resource-Policy), (errors)): the
 * answers written where no route and no hook runs carry what every answer carries: a Date
 * (RFC 9110 6.6.1), a Content-Type for their body, and Cross-Origin-Resource-Policy where the
 * app's root configures one; none repeats an unbounded part of the request. Over real sockets:
 * - the 411 written on the raw socket to a request Node's HTTP parser refused for its framing
 *   (RFC 9112 6.3: duplicate or non-decimal Content-Length, Content-Length with
 *   Transfer-Encoding);
 * - Fastify's framework errors, answered through `serverOptions.frameworkErrors`: a path that
 *   does not decode (400, RFC 3986 2.1), a path parameter over `maxParamLength` (414, RFC
 *   9110 15.5.15); and the 404 of a URL no route serves.
 */
import net from 'node:net'
import { once } from 'node:events'
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'
import { parseHttpDate } from '../../packages/grammar/src/http-date'
import { listen } from '../helpers/app'
import { parseResponses, rawRequest, type RawResponse } from '../helpers/raw'

async function serve (opts: HttpConventionsOptions = {}): Promise<{ app: FastifyInstance, port: number }> {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions, opts)
  app.get('/articles/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  app.post('/articles', async () => ({ ok: true }))
  const port = await listen(app)
  return { app, port }
}

function dressed (t: Test, name: string, r: RawResponse, corp: string | undefined): void {
  t.ok(r.headers.date !== undefined && parseHttpDate(r.headers.date) !== null, `${name}: a Date (RFC 9110 6.6.1)`)
  t.ok(r.headers['content-type'] !== undefined, `${name}: a Content-Type for its body`)
  t.equal(r.headers['cross-origin-resource-policy'], corp, `${name}: Cross-Origin-Resource-Policy ${corp ?? 'absent'}, as the root configures it`)
}

const FRAMING = [
  ['duplicate Content-Length', 'Content-Length: 5\r\nContent-Length: 6'],
  ['non-decimal Content-Length', 'Content-Length: 5x'],
  ['Content-Length with Transfer-Encoding', 'Content-Length: 5\r\nTransfer-Encoding: chunked']
] as const

test('framing errors answered on the raw socket (RFC 9112 6.3) carry Date, Content-Type and the Cross-Origin-Resource-Policy configured', async (t) => {
  for (const [opts, corp] of [[{}, 'same-origin'], [{ resourcePolicy: { policy: 'cross-origin' } }, 'cross-origin'], [{ resourcePolicy: false }, undefined]] as const) {
    const { app, port } = await serve(opts as HttpConventionsOptions)
    for (const [name, headers] of FRAMING) {
      const r = await rawRequest(port, `POST /articles HTTP/1.1\r\nHost: x\r\n${headers}\r\nContent-Type: application/json\r\n\r\nhello`)
      t.equal(r.status, 411, `${name}: 411`)
      t.match(r.body, /^Length Required\n/)
      dressed(t, name, r, corp)
    }
    await app.close()
  }
})

test('Fastify\'s framework errors get the suite\'s envelope, Date, Content-Type and Cross-Origin-Resource-Policy, and never repeat the URL; its 404 is its own', async (t) => {
  const { app, port } = await serve()
  t.teardown(() => app.close())
  const long = '/articles/' + 'a'.repeat(5000)
  const cases = [
    ['a path parameter over maxParamLength', long, 414, 'a path parameter is longer than the 100 characters this server accepts'],
    ['a path that does not decode', '/articles/%zz', 400, 'the path is not valid percent-encoded UTF-8 (RFC 3986 2.1)'],
    ['a path with a truncated UTF-8 sequence', '/articles/%E0%A4%A', 400, 'the path is not valid percent-encoded UTF-8 (RFC 3986 2.1)']
  ] as const
  for (const [name, path, status, message] of cases) {
    const r = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
    t.equal(r.status, status, `${name}: ${status}`)
    t.equal(r.headers['content-type'], 'application/json', `${name}: the envelope's Content-Type`)
    t.same(JSON.parse(r.body), { errors: [{ field: 'url', message }] }, `${name}: the suite's envelope`)
    t.notMatch(r.body, /aaaa|%zz|bbbb/, `${name}: nothing of the URL is repeated`)
    t.ok(r.body.length < 200, `${name}: a short body (${r.body.length} bytes) for a ${path.length}-character URL`)
    dressed(t, name, r, 'same-origin')
  }
  // A URL no route serves is Fastify's not-found handler's to answer (an app sets its own with setNotFoundHandler).
  const short = await rawRequest(port, 'GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(short.status, 404)
  t.match(JSON.parse(short.body), { statusCode: 404, error: 'Not Found' })
})

test('requests Node\'s HTTP parser refuses (RFC 9112) get the suite\'s answer with Date, Content-Type and Cross-Origin-Resource-Policy, then the connection closes', async (t) => {
  const { app, port } = await serve()
  t.teardown(() => app.close())
  const malformed = await rawRequest(port, 'GET /articles/1 HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n')
  t.equal(malformed.status, 400, 'a header line without a colon: 400')
  t.equal(malformed.body, 'Bad Request\nthe request is not HTTP/1.1 as RFC 9112 writes it\n')
  dressed(t, 'a malformed header line', malformed, 'same-origin')
  t.equal(malformed.headers.connection, 'close', 'the connection closes')
  // RFC 6585 5: over Node's limit of the header section (16 KiB).
  const huge = await rawRequest(port, `GET /articles/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`)
  t.equal(huge.status, 431, 'a header section over the limit: 431')
  t.notMatch(huge.body, /bbbb/, 'nothing of the request is repeated')
  dressed(t, 'a header section over the limit', huge, 'same-origin')
  t.equal(huge.headers.connection, 'close', 'the connection closes')
})

test('a request that does not arrive in time (RFC 9110 15.5.9): 408 with Date and the policy, then the connection closes', async (t) => {
  // Node reports it as ERR_HTTP_REQUEST_TIMEOUT only after its periodic check (30 s by
  // default): the handler is given that error on a real connection.
  const { app } = await serve()
  t.teardown(() => app.close())
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const accepted = once(server, 'connection')
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1')
  const [socket] = await accepted as [net.Socket]
  const received: Buffer[] = []
  client.on('data', (d) => received.push(d))
  const closed = once(client, 'close')
  socket.on('error', () => {})
  serverOptions.clientErrorHandler.call(app, Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }) as never, socket)
  await closed
  const [r] = parseResponses(Buffer.concat(received).toString('latin1'))
  t.equal(r.status, 408)
  t.equal(r.body, 'Request Timeout\nthe request did not arrive in time\n')
  dressed(t, 'a request timeout', { ...r, raw: '', closed: true }, 'same-origin')
})
