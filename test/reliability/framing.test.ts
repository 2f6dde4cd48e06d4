/**
 * Framing under stress, over real sockets: pipelined requests, byte-at-a-time senders, and
 * framing errors mid-pipeline. Exact status, connection handling, no handler sees a
 * mis-framed body, and the server serves the next client.
 */
import { test, type Test } from 'tap'
import { rawExchange, rawRequest } from '../helpers/raw'
import { buildApp, listen } from '../helpers/app'

const H = 'Host: x\r\nContent-Type: text/plain\r\n'

async function server (t: Test) {
  const app = await buildApp({}, { bodyLimit: 1000 })
  const seen: string[] = []
  app.post('/echo', async (req) => { seen.push(req.body as string); return `got ${(req.body as string).length}` })
  app.get('/ping', async () => 'pong')
  const port = await listen(app)
  t.teardown(() => app.close())
  return { port, seen }
}

const post = (body: string): string => `POST /echo HTTP/1.1\r\n${H}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

test('pipelined: ten requests on one connection are answered in order', async (t) => {
  const { port, seen } = await server(t)
  const bodies = Array.from({ length: 10 }, (_, i) => 'x'.repeat(i + 1))
  const { responses } = await rawExchange(port, bodies.map(post).join('') + 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', { responses: 11, waitMs: 3000 })
  t.same(responses.map((r) => r.status), [...bodies.map(() => 200), 200])
  t.same(responses.slice(0, 10).map((r) => r.body), bodies.map((b) => `got ${b.length}`))
  t.same(seen, bodies)
})

test('pipelined: a request without Content-Length ends the pipeline with 411; what came before is served', async (t) => {
  const { port, seen } = await server(t)
  const chunked = `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`
  const { responses, closed } = await rawExchange(port, post('one') + chunked + post('never'), { waitMs: 2000 })
  t.same(responses.map((r) => r.status), [200, 411])
  t.ok(closed, 'the connection is closed after the 411: the unread body cannot be framed')
  t.same(seen, ['one'], 'no handler saw the chunked body or anything after it')
  t.equal((await rawRequest(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200)
})

test('pipelined: a body longer than its Content-Length is 411 and the following bytes never reach a handler', async (t) => {
  const { port, seen } = await server(t)
  const lying = `POST /echo HTTP/1.1\r\n${H}Content-Length: 3\r\n\r\nabcdefgh`
  const { responses, closed } = await rawExchange(port, post('one') + lying + post('two'), { waitMs: 2000 })
  t.equal(responses[0]?.status, 200)
  t.equal(responses.at(-1)?.status, 411)
  t.ok(closed)
  t.same(seen, ['one'])
})

test('byte-at-a-time sender: a valid request dribbled one byte at a time is served', async (t) => {
  const { port, seen } = await server(t)
  const raw = post('slow body')
  const res = await rawRequest(port, '', { pieces: [...raw], pauseMs: 2, waitMs: 5000 })
  t.equal(res.status, 200)
  t.same(seen, ['slow body'])
})

test('byte-at-a-time sender: a duplicate Content-Length dribbled one byte at a time is still 411', async (t) => {
  const { port, seen } = await server(t)
  const raw = `POST /echo HTTP/1.1\r\n${H}Content-Length: 4\r\nContent-Length: 4\r\n\r\nabcd`
  const res = await rawRequest(port, '', { pieces: [...raw], pauseMs: 1, waitMs: 5000 })
  t.equal(res.status, 411)
  t.same(seen, [])
  t.equal((await rawRequest(port, 'GET /ping HTTP/1.1\r\nHost: x\r\n\r\n')).status, 200, 'the server serves the next client')
})

test('byte-at-a-time sender: a body that stops half way, then the client leaves: 411, nothing handled', async (t) => {
  const { port, seen } = await server(t)
  const raw = `POST /echo HTTP/1.1\r\n${H}Content-Length: 20\r\n\r\nonly-ten-b`
  const res = await rawRequest(port, '', { pieces: [...raw], pauseMs: 1, endAfterMs: 50, waitMs: 3000 })
  t.equal(res.status, 411)
  t.same(seen, [])
})

test('many clients with broken framing at once: each gets its answer, the server stays healthy', async (t) => {
  const { port, seen } = await server(t)
  const bad = [
    `POST /echo HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`,
    `POST /echo HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`,
    `POST /echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello`,
    `POST /echo HTTP/1.1\r\n${H}Content-Length: 1001\r\n\r\n`
  ]
  const results = await Promise.all(Array.from({ length: 80 }, (_, i) => rawRequest(port, bad[i % bad.length], { waitMs: 3000 })))
  t.same([...new Set(results.map((r) => r.status))], [411])
  t.same(seen, [])
  t.equal((await rawRequest(port, post('after'))).status, 200)
})

test('pipelined behind a 307 that left its body unread: the connection closes and nothing behind it runs', async (t) => {
  const app = await buildApp({ redirect: { rules: [{ from: '/old/', to: '/echo/' }] } })
  const seen: string[] = []
  app.post('/echo', async (req) => { seen.push(req.body as string); return 'ok' })
  // The redirect is the route's compiled step: a route's answers are what the plugin sees.
  app.post('/old/x', async () => 'never')
  const port = await listen(app)
  t.teardown(() => app.close())
  const moved = `POST /old/x HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`
  const { responses, closed } = await rawExchange(port, moved + post('behind'), { waitMs: 2000 })
  t.same(responses.map((r) => r.status), [307])
  t.ok(closed)
  t.same(seen, [])
})
