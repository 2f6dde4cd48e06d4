import { test } from 'tap'
import type { Test } from 'tap'
import { rawExchange, rawRequest } from '../helpers/raw'
import { boot, buildApp, listen } from '../helpers/app'
import http2 from 'node:http2'
import { httpConventions, httpConventionsContentLength, serverOptions } from '../../plugins/index'
import Fastify from 'fastify'

const H = 'Host: x\r\nContent-Type: text/plain\r\n'

async function framingServer (t: Test, opts = {}): Promise<{ port: number, seen: string[] }> {
  const app = await buildApp(opts, { bodyLimit: 1000 })
  const seen: string[] = []
  app.post('/echo', async (req) => { seen.push(req.body as string); return 'ok' })
  app.put('/echo', async (req) => { seen.push(req.body as string); return 'ok' })
  app.patch('/echo', async (req) => { seen.push(req.body as string); return 'ok' })
  app.get('/ping', async () => 'pong')
  const port = await listen(app)
  t.teardown(() => app.close())
  return { port, seen }
}

async function stillServes (t: Test, port: number): Promise<void> {
  const next = await rawRequest(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 500 })
  t.equal(next.status, 200, 'the server serves the next connection')
  t.equal(next.body, 'pong')
}

// docs/conventions.md (Content-Length (411)); RFC 9112 6.2, 6.3: framing vectors over real sockets, through Node's HTTP parser.
const vectors: Array<{ name: string, raw: string, endAfterMs?: number }> = [
  { name: 'duplicate Content-Length, equal values', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello` },
  { name: 'duplicate Content-Length, different values', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!` },
  { name: 'Content-Length: +5', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: +5\r\n\r\nhello` },
  { name: 'Content-Length: 0x5', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 0x5\r\n\r\nhello` },
  { name: 'Content-Length: -1', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\nhello` },
  { name: 'Content-Length: 5, 5', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\nhello` },
  { name: 'empty Content-Length', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: \r\n\r\nhello` },
  { name: 'overflowing digits', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 99999999999999999999999999\r\n\r\nhello` },
  { name: 'Content-Length with Transfer-Encoding', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` },
  { name: 'chunked without Content-Length', raw: `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` },
  { name: 'Content-Length shorter than the body', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 3\r\n\r\nhello world` },
  { name: 'Content-Length longer than the body (client half-closes)', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 10\r\n\r\nhello`, endAfterMs: 100 },
  { name: 'PUT without Content-Length', raw: `PUT /echo HTTP/1.1\r\n${H}\r\n` },
  { name: 'PATCH without Content-Length', raw: `PATCH /echo HTTP/1.1\r\n${H}\r\n` },
  { name: 'POST without any body or Content-Length', raw: 'POST /echo HTTP/1.1\r\nHost: x\r\n\r\n' },
  { name: 'body over the limit, decided from Content-Length', raw: `POST /echo HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n` }
]

for (const v of vectors) {
  test(`conventions (Content-Length): ${v.name} is refused with 411 and no handler sees the body`, async (t) => {
    const { port, seen } = await framingServer(t)
    const res = await rawRequest(port, v.raw, { endAfterMs: v.endAfterMs, waitMs: 1500 })
    t.equal(res.status, 411)
    t.match(res.headers['content-type'], /^text\/plain; charset=utf-8$/)
    t.match(res.body, /^Length Required\n[^\n]+\n$/, 'the body is the status phrase then a one-line reason')
    t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body))
    t.same(seen, [], 'no handler ran')
    await stillServes(t, port)
  })
}

test('conventions (Content-Length): a body over the limit is refused before it is read, and the connection closes', async (t) => {
  const { port, seen } = await framingServer(t)
  // Headers only: the server must answer without waiting for the 1001 bytes it was promised.
  const res = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`, { waitMs: 1500, responses: undefined })
  t.equal(res.status, 411)
  t.equal(res.headers.connection, 'close')
  t.ok(res.closed, 'the server closed the connection')
  t.same(seen, [])
})

test('conventions (Content-Length): a body exactly at the limit is accepted', async (t) => {
  const { port, seen } = await framingServer(t)
  const body = 'x'.repeat(1000)
  const res = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 1000\r\n\r\n${body}`)
  t.equal(res.status, 200)
  t.same(seen, [body])
})

test('a valid Content-Length passes, and pipelined requests on one connection are each served', async (t) => {
  const { port, seen } = await framingServer(t)
  const one = `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`
  const two = `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nworld`
  const { responses } = await rawExchange(port, one + two + 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 800 })
  t.same(responses.map((r) => r.status), [200, 200, 200])
  t.same(seen, ['hello', 'world'])
})

test('GET without a body needs no Content-Length', async (t) => {
  const { port } = await framingServer(t)
  await stillServes(t, port)
})

test('conventions (Content-Length): a GET body is never read, and refused all the same when chunked or over the limit; its connection closes', async (t) => {
  const { port } = await framingServer(t)
  const chunked = await rawRequest(port, `GET /ping HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
  t.equal(chunked.status, 411, 'chunked: 411, as for any body without Content-Length')
  t.equal(chunked.headers.connection, 'close')
  const big = await rawRequest(port, `GET /ping HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`)
  t.equal(big.status, 411, 'over the limit: 411 (spec profile)')
  t.equal(big.headers.connection, 'close')
  const small = await rawRequest(port, `GET /ping HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`)
  t.equal(small.status, 200, 'a small GET body within the limit is left alone')
  await stillServes(t, port)
})

test('rfc9110 profile: 413 over the limit, 400 for a mismatch, chunked bodies accepted (RFC 9110 15.5.14, RFC 9112 6.1/6.3)', async (t) => {
  const { port, seen } = await framingServer(t, { profile: 'rfc9110' })
  const big = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`)
  t.equal(big.status, 413)
  t.match(big.body, /^Content Too Large\n/)
  const dup = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`)
  t.equal(dup.status, 400)
  t.match(dup.body, /^Bad Request\n/)
  const chunked = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
  t.equal(chunked.status, 200)
  const chunkedBig = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n3e9\r\n${'x'.repeat(1001)}\r\n0\r\n\r\n`)
  t.equal(chunkedBig.status, 413, 'a chunked body over the limit is refused while it is read')
  const none = await rawRequest(port, 'POST /echo HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(none.status, 200, 'a POST with no body at all is a zero-length body')
  t.same(seen, ['hello', undefined])
})

test('options: each departure has its own option that wins over the profile', async (t) => {
  const { port } = await framingServer(t, { contentLength: { limitStatus: 413, requireContentLength: true } })
  const big = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`)
  t.equal(big.status, 413)
  const chunked = await rawRequest(port, `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
  t.equal(chunked.status, 411)
})

test('per route: config.contentLength.bodyLimit, a route bodyLimit, and false', async (t) => {
  const app = await buildApp({ contentLength: { bodyLimit: 100 } })
  app.post('/small', { config: { contentLength: { bodyLimit: 4 } } }, async () => 'ok')
  app.post('/route-limit', { bodyLimit: 10 }, async () => 'ok')
  app.post('/free', { config: { contentLength: false } }, async (req) => req.body ?? 'none')
  app.post('/default', async () => 'ok')
  const port = await listen(app)
  t.teardown(() => app.close())
  t.equal((await rawRequest(port, `POST /small HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`)).status, 411)
  t.equal((await rawRequest(port, `POST /small HTTP/1.1\r\n${H}Content-Length: 4\r\n\r\nhell`)).status, 200)
  t.equal((await rawRequest(port, `POST /route-limit HTTP/1.1\r\n${H}Content-Length: 11\r\n\r\nhello world`)).status, 411)
  t.equal((await rawRequest(port, `POST /default HTTP/1.1\r\n${H}Content-Length: 101\r\n\r\n`)).status, 411)
  const free = await rawRequest(port, 'POST /free HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(free.status, 200, 'the plugin is off for the route')
})

test('registered alone, the plugin still answers 411 with its own error handler', async (t) => {
  const app = Fastify()
  await app.register(httpConventionsContentLength)
  app.post('/', async () => 'ok')
  const port = await listen(app)
  t.teardown(() => app.close())
  const res = await rawRequest(port, 'POST / HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(res.status, 411)
  t.match(res.body, /^Length Required\n/)
})

test('bad options throw at boot', async (t) => {
  for (const bad of [{ bodyLimit: -1 }, { bodyLimit: 1.5 }, { limitStatus: 412 }, { mismatchStatus: 500 }, { methods: 'POST' }, { requireContentLength: 'yes' }, { profile: 'http2' }]) {
    const app = Fastify()
    await t.rejects(boot(app.register(httpConventionsContentLength, bad as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(bad))
  }
  const app = Fastify()
  await app.register(httpConventionsContentLength)
  t.throws(() => app.post('/', { config: { contentLength: { bodyLimit: -5 } } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  t.throws(() => app.post('/x', { config: { contentLength: 'big' as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
})

test('RFC 9110 10.1.1: 100 (Continue) comes only after the length check; a refused upload gets only its 411', async (t) => {
  const app = await buildApp({}, { bodyLimit: 1000 })
  const seen: string[] = []
  app.post('/echo', async (req) => { seen.push(req.body as string); return 'ok' })
  const port = await listen(app)
  t.teardown(() => app.close())
  const ok = await rawExchange(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nExpect: 100-continue\r\n\r\n`, { responses: 1, waitMs: 1500 })
  t.equal(ok.responses[0]?.status, 100, 'an acceptable upload is told to continue')
  const big = await rawExchange(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 5000\r\nExpect: 100-continue\r\n\r\n`, { responses: 1, waitMs: 1500 })
  t.same(big.responses.map((r) => r.status), [411], 'no 100 before the refusal')
  t.same(seen, [])
})

test('RFC 9110 10.1.1: one 100 (Continue) per request, from the route, never a second from Node', async (t) => {
  const { port, seen } = await framingServer(t)
  const { raw } = await rawExchange(port, `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nExpect: 100-continue\r\n\r\n`, { waitMs: 300 })
  t.equal(raw.split('HTTP/1.1 100 Continue').length - 1, 1, 'one 100')
  t.same(seen, [])
})

test('RFC 9112 9.6: a client still sending a refused body reads its 411 (lingering close, no reset)', async (t) => {
  const { port, seen } = await framingServer(t)
  const pieces = [`POST /echo HTTP/1.1\r\n${H}Content-Length: 400000\r\n\r\n`, ...Array.from({ length: 40 }, () => 'x'.repeat(10000))]
  const res = await rawRequest(port, '', { pieces, pauseMs: 1, waitMs: 4000, responses: undefined })
  t.equal(res.status, 411)
  t.ok(res.closed, 'the server closes once the client stops (or after the linger time)')
  t.same(seen, [])
})

test('a limit of 0 admits no body: any body is refused before it is read (411 spec, 413 rfc9110), an empty one passes', async (t) => {
  for (const [profile, status] of [['spec', 411], ['rfc9110', 413]] as const) {
    const app = await buildApp({ profile })
    app.post('/none', { config: { contentLength: { bodyLimit: 0 } } }, async () => 'ok')
    const port = await listen(app)
    t.teardown(() => app.close())
    // (Fastify itself refuses a route option bodyLimit: 0 when the route is added.)
    {
      const path = '/none'
      const one = await rawRequest(port, `POST ${path} HTTP/1.1\r\n${H}Content-Length: 1\r\n\r\nx`)
      t.same([one.status, one.headers.connection], [status, 'close'], `${profile} ${path}: a one-byte body`)
      const chunked = await rawRequest(port, `POST ${path} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n`)
      t.equal(chunked.status, profile === 'spec' ? 411 : 413, `${profile} ${path}: a chunked body`)
      t.equal((await rawRequest(port, `POST ${path} HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\n`)).status, 200, `${profile} ${path}: an empty body`)
    }
  }
  const app = await buildApp({ contentLength: { bodyLimit: 0 } })
  app.post('/any', async () => 'ok')
  app.get('/ping', async () => 'pong')
  const port = await listen(app)
  t.teardown(() => app.close())
  t.equal((await rawRequest(port, `POST /any HTTP/1.1\r\n${H}Content-Length: 1\r\n\r\nx`)).status, 411, 'the plugin option bodyLimit: 0')
  t.equal((await rawRequest(port, `GET /ping HTTP/1.1\r\n${H}Content-Length: 1\r\n\r\nx`)).status, 411, 'a GET body too')
})

test('the not-found path is Fastify\'s: it reads a body up to the server\'s bodyLimit, then answers 404', async (t) => {
  const { port } = await framingServer(t)
  const chunked = await rawRequest(port, `POST /nowhere HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`)
  t.equal(chunked.status, 404, 'chunked: read, then 404')
  const big = await rawRequest(port, `PUT /nowhere HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`, { responses: undefined, waitMs: 1500 })
  t.equal(big.status, 413, 'over the server\'s bodyLimit: Fastify\'s 413, from the declared length')
  const small = await rawRequest(port, `POST /nowhere HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`)
  t.equal(small.status, 404, 'a body within the limit: the 404')
})

test('RFC 9113 8.2.2: over HTTP/2 no answer carries a connection-specific field (a 411, a 307), and Node warns of none', async (t) => {
  const app = Fastify({ ...serverOptions, http2: true })
  await app.register(httpConventions, { redirect: { rules: [{ from: '/old/', to: '/new/' }] } })
  app.post('/items', async () => 'ok')
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const warnings: string[] = []
  const onWarning = (w: Error): void => { warnings.push(`${w.name}: ${w.message}`) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const address = app.server.address() as { port: number }
  const client = http2.connect(`http://127.0.0.1:${address.port}`)
  t.teardown(() => client.close())
  const ask = (headers: http2.OutgoingHttpHeaders, body?: string): Promise<{ status: number, headers: http2.IncomingHttpHeaders, body: string }> => new Promise((resolve, reject) => {
    const req = client.request(headers)
    const data: Buffer[] = []
    let head: http2.IncomingHttpHeaders = {}
    req.on('response', (h) => { head = h })
    req.on('data', (d: Buffer) => data.push(d))
    req.on('end', () => resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(data).toString() }))
    req.on('error', reject)
    req.end(body)
  })
  const noLength = await ask({ ':method': 'POST', ':path': '/items', 'content-type': 'text/plain' }, 'hello')
  t.equal(noLength.status, 411)
  t.match(noLength.body, /^Length Required\n/)
  t.equal(noLength.headers.connection, undefined)
  const moved = await ask({ ':method': 'POST', ':path': '/old/x', 'content-type': 'text/plain', 'content-length': '5' }, 'hello')
  t.equal(moved.status, 307)
  t.equal(moved.headers.connection, undefined)
  const ok = await ask({ ':method': 'POST', ':path': '/items', 'content-type': 'text/plain', 'content-length': '5' }, 'hello')
  t.equal(ok.status, 200, 'the session serves the next stream: a refusal ends no other stream')
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings, [], 'no UnsupportedWarning')
})

test('RFC 9113 8.2.2: a Connection: close a handler sets on an HTTP/2 error answer is dropped', async (t) => {
  const app = Fastify({ ...serverOptions, http2: true })
  await app.register(httpConventions)
  app.get('/gone', async (_request, reply) => reply.code(410).header('connection', 'close').send('gone'))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const client = http2.connect(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`)
  const head = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    const req = client.request({ ':path': '/gone' })
    req.on('response', (h) => { req.resume(); req.on('end', () => resolve(h)) })
    req.on('error', reject)
    req.end()
  })
  client.close()
  await app.close()
  t.equal(head[':status'], 410)
  t.equal(head.connection, undefined)
})
