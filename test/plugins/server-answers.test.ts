/**
 * Every answer dressed, every request checked once, over real sockets: the answers Node's HTTP
 * server would write itself, or the requests it would serve that HTTP/1.1 refuses, are the
 * suite's (docs/plugins.md, "Answers written before a route runs"):
 * - an `Expect` other than 100-continue: 417 (RFC 9110 10.1.1), where Node writes a bare 417;
 * - an HTTP/1.1 request without Host: 400 (RFC 9112 3.2), where Node writes a bare 400;
 * - a request line of another major version: 505 (RFC 9110 15.6.6, RFC 9112 2.3), where Node
 *   serves `HTTP/2.0` and `HTTP/0.9` and answers `HTTP/3.0` 400;
 * each with Date, a Content-Type for its body and the Cross-Origin-Resource-Policy the root
 * configures, never reaching a handler (or the not-found handler).
 */
import http2 from 'node:http2'
import { once } from 'node:events'
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'
import { parseHttpDate } from '../../packages/grammar/src/http-date'
import { listen } from '../helpers/app'
import { rawExchange, rawRequest, type RawResponse } from '../helpers/raw'

interface Served { app: FastifyInstance, port: number, handled: string[] }

async function serve (opts: HttpConventionsOptions = {}, server: FastifyServerOptions = {}): Promise<Served> {
  const app = Fastify({ ...serverOptions, ...server })
  await app.register(httpConventions, opts)
  const handled: string[] = []
  app.get('/articles/:id', async (request) => { handled.push(request.url); return { id: (request.params as { id: string }).id } })
  app.post('/articles', async (request) => { handled.push(request.url); return { ok: true } })
  app.setNotFoundHandler(async (request, reply) => { handled.push(`404 ${request.url}`); return reply.code(404).send({ missing: true }) })
  const port = await listen(app)
  return { app, port, handled }
}

function dressed (t: Test, name: string, r: RawResponse, corp: string | undefined): void {
  t.ok(r.headers.date !== undefined && parseHttpDate(r.headers.date) !== null, `${name}: a Date (RFC 9110 6.6.1)`)
  t.equal(r.headers['content-type'], 'text/plain; charset=utf-8', `${name}: a Content-Type for its body`)
  t.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)), `${name}: a Content-Length for its body`)
  t.equal(r.headers['cross-origin-resource-policy'], corp, `${name}: Cross-Origin-Resource-Policy ${corp ?? 'absent'}, as the root configures it`)
}

const POLICIES = [[{}, 'same-origin'], [{ resourcePolicy: { policy: 'cross-origin' } }, 'cross-origin'], [{ resourcePolicy: false }, undefined]] as const

test('an Expect other than 100-continue (RFC 9110 10.1.1) is the suite\'s 417 with Date, Content-Type and the policy configured; no handler runs and the connection goes on', async (t) => {
  for (const [opts, corp] of POLICIES) {
    const { app, port, handled } = await serve(opts as HttpConventionsOptions)
    for (const path of ['/articles/1', '/nothing']) {
      const { responses } = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\nGET /articles/2 HTTP/1.1\r\nHost: x\r\n\r\n`, { responses: 2 })
      t.equal(responses[0].status, 417, `${path}: 417`)
      t.equal(responses[0].body, 'Expectation Failed\nthe only expectation this server meets is 100-continue (RFC 9110 10.1.1)\n')
      dressed(t, `417 for ${path}`, { ...responses[0], raw: '', closed: false }, corp)
      t.equal(responses[1]?.status, 200, `${path}: the next request on the connection is served`)
    }
    // A body sent with the expectation is read past (its framing is known): the next request is served.
    const withBody = await rawExchange(port, 'POST /articles HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}GET /articles/3 HTTP/1.1\r\nHost: x\r\n\r\n', { responses: 2 })
    t.same(withBody.responses.map((r) => r.status), [417, 200], 'a refused body never reads as the next request')
    t.same(handled, ['/articles/2', '/articles/2', '/articles/3'], 'only the requests after the 417s reached a handler')
    await app.close()
  }
})

test('an app\'s own checkExpectation listener answers its expectations (Node\'s documented event), the suite leaves it', async (t) => {
  const app = Fastify({ ...serverOptions })
  app.server.on('checkExpectation', (_request, response) => { response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }); response.end('met') })
  await app.register(httpConventions)
  const port = await listen(app)
  t.teardown(() => app.close())
  const r = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\n')
  t.equal(r.status, 200)
  t.equal(r.body, 'met')
})

test('an HTTP/1.1 request without Host (RFC 9112 3.2) is the suite\'s 400 with Date, Content-Type and the policy configured; no handler runs, the connection closes', async (t) => {
  for (const [opts, corp] of POLICIES) {
    const { app, port, handled } = await serve(opts as HttpConventionsOptions)
    for (const request of ['GET /articles/1 HTTP/1.1\r\n\r\n', 'GET /nothing HTTP/1.1\r\n\r\n', 'GET /articles/1 HTTP/1.1\r\nExpect: fancy\r\n\r\n', 'GET /articles/1 HTTP/1.1\r\nExpect: 100-continue\r\n\r\n']) {
      const r = await rawRequest(port, request)
      const name = JSON.stringify(request.split('\r\n').slice(0, -2).join(' '))
      t.equal(r.status, 400, `${name}: 400`)
      t.equal(r.body, 'Bad Request\nan HTTP/1.1 request must carry a Host field (RFC 9112 3.2)\n')
      t.equal(r.headers.connection, 'close', `${name}: the connection closes`)
      dressed(t, name, r, corp)
    }
    // RFC 9112 9.6: a body it declared is read on after the answer, so the client sees the 400.
    const post = await rawRequest(port, `POST /articles HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n${'{'.repeat(60_000)}`)
    t.equal(post.status, 400, 'a POST without Host: 400, read by the client')
    t.same(handled, [], 'no handler and no not-found handler ran')
    await app.close()
  }
})

test('HTTP/1.0 needs no Host (RFC 9112 3.2), and an app that made its server with requireHostHeader: false keeps that choice', async (t) => {
  const { app, port } = await serve()
  const old = await rawRequest(port, 'GET /articles/1 HTTP/1.0\r\n\r\n')
  t.equal(old.status, 200, 'HTTP/1.0 without Host is served')
  t.same(JSON.parse(old.body), { id: '1' })
  await app.close()
  const lenient = await serve({}, { http: { requireHostHeader: false } } as FastifyServerOptions)
  t.teardown(() => lenient.app.close())
  const r = await rawRequest(lenient.port, 'GET /articles/1 HTTP/1.1\r\n\r\n')
  t.equal(r.status, 200, 'served, as the app chose')
})

test('a request line of another major version (RFC 9110 15.6.6, RFC 9112 2.3) is the suite\'s 505 with Date, Content-Type and the policy configured; no handler runs, HTTP/1.0 and HTTP/1.1 are served', async (t) => {
  for (const [opts, corp] of POLICIES) {
    const { app, port, handled } = await serve(opts as HttpConventionsOptions)
    // HTTP/2.0 and HTTP/0.9: Node's parser reads them and would serve them; the others it refuses.
    for (const version of ['HTTP/2.0', 'HTTP/0.9', 'HTTP/3.0', 'HTTP/9.9', 'HTTP/2.1']) {
      for (const path of ['/articles/1', '/nothing']) {
        const r = await rawRequest(port, `GET ${path} ${version}\r\nHost: x\r\n\r\n`)
        t.equal(r.status, 505, `${version} ${path}: 505`)
        t.equal(r.body, 'HTTP Version Not Supported\nthis server speaks HTTP/1.1 (and HTTP/1.0) on this connection\n')
        t.equal(r.headers.connection, 'close', `${version}: the connection closes`)
        dressed(t, `${version} ${path}`, r, corp)
      }
    }
    t.same(handled, [], 'no handler and no not-found handler ran')
    for (const version of ['HTTP/1.0', 'HTTP/1.1']) {
      const r = await rawRequest(port, `GET /articles/7 ${version}\r\nHost: x\r\n\r\n`)
      t.equal(r.status, 200, `${version}: served`)
    }
    await app.close()
  }
})

test('HTTP/1.2 and a version that is no number are 400 (Node\'s parser stops at them; RFC 9110 2.5 would serve 1.2 as 1.1, but no request exists to serve), dressed', async (t) => {
  const { app, port } = await serve()
  t.teardown(() => app.close())
  for (const version of ['HTTP/1.2', 'HTTP/x.1', 'HTTP/12.0']) {
    const r = await rawRequest(port, `GET /articles/1 ${version}\r\nHost: x\r\n\r\n`)
    t.equal(r.status, 400, `${version}: 400`)
    t.equal(r.body, 'Bad Request\nthe request is not HTTP/1.1 as RFC 9112 writes it\n')
    t.equal(r.headers['cross-origin-resource-policy'], 'same-origin')
  }
  // A request line cut in the middle of its version: the parser stops in the second piece.
  const { responses } = await rawExchange(port, '', { pieces: ['GET /articles/1 HT', 'TP/3.0\r\nHost: x\r\n\r\n'], responses: 1 })
  t.equal(responses[0].status, 505, 'a version that arrives in two pieces: 505')
})

test('HTTP/2 streams (RFC 9113) are served: the version check is HTTP/1\'s', async (t) => {
  const app = Fastify({ ...serverOptions, http2: true })
  await app.register(httpConventions)
  app.get('/articles/:id', async (request) => ({ id: (request.params as { id: string }).id }))
  const port = await listen(app as unknown as FastifyInstance)
  t.teardown(() => app.close())
  const client = http2.connect(`http://127.0.0.1:${port}`)
  t.teardown(() => client.close())
  const stream = client.request({ ':path': '/articles/1' })
  const [headers] = await once(stream, 'response') as [Record<string, string | number>]
  stream.setEncoding('utf8')
  let body = ''
  stream.on('data', (d: string) => { body += d })
  await once(stream, 'end')
  t.equal(headers[':status'], 200)
  t.same(JSON.parse(body), { id: '1' })
})

test('bytes pipelined after a request that closes its connection (RFC 9112 9.6: HTTP/1.0, Connection: close, a 505) are not read: that request gets its own answer, then the connection closes', async (t) => {
  const { app, port, handled } = await serve()
  t.teardown(() => app.close())
  const cases = [
    ['HTTP/1.0', 'GET /articles/1 HTTP/1.0\r\nHost: x\r\n\r\n', 200],
    ['Connection: close', 'GET /articles/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 200],
    ['HTTP/2.0', 'GET /articles/1 HTTP/2.0\r\nHost: x\r\n\r\n', 505],
    ['no Host', 'GET /articles/1 HTTP/1.1\r\n\r\n', 400],
    ['no Host, Expect: fancy', 'GET /articles/1 HTTP/1.1\r\nExpect: fancy\r\n\r\n', 400]
  ] as const
  for (const [name, first, status] of cases) {
    const { responses, closed } = await rawExchange(port, `${first}GET /articles/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n`)
    t.same(responses.map((r) => r.status), [status], `${name}: one answer, its own`)
    t.ok(closed, `${name}: then the connection closes`)
  }
  t.same(handled, ['/articles/1', '/articles/1'], 'no request behind them reached a handler')
})
