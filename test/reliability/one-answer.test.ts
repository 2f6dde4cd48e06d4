/**
 * RFC 9112 9.6: a request gets exactly one answer, then the connection closes when the
 * server did not read its body. Over real sockets (inject() skips Node's HTTP parser).
 */
import { test, type Test } from 'tap'
import { buildApp, listen } from '../helpers/app'
import { rawExchange } from '../helpers/raw'

async function server (t: Test, profile: 'spec' | 'rfc9110' = 'spec'): Promise<number> {
  const app = await buildApp({ profile })
  app.post('/items', async () => ({ ok: true }))
  const port = await listen(app)
  t.teardown(() => app.close())
  return port
}

const CASES: Array<[string, string]> = [
  ['an unknown transfer coding (xchunked)', 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'],
  ['a chunk size that is not hex (zz)', 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
  ['an HTTP/1.0 POST without Content-Length', 'POST /items HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"a":1}'],
  ['an HTTP/1.1 POST without Content-Length, body bytes following', 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{"a":1}']
]

for (const [name, request] of CASES) {
  test(`one answer per request, then close: ${name}`, async (t) => {
    const port = await server(t)
    const { responses, closed } = await rawExchange(port, request, { waitMs: 1500, endAfterMs: 1000 })
    t.equal(responses.length, 1, 'exactly one response')
    t.equal(responses[0]?.status, 411)
    t.ok(closed, 'the connection is closed after it')
  })
}

test('RFC 9112 6.1: the rfc9110 profile answers 501 to an unknown transfer coding, once, then closes', async (t) => {
  const port = await server(t, 'rfc9110')
  const { responses, closed } = await rawExchange(port, CASES[0][1], { waitMs: 1500, endAfterMs: 1000 })
  t.same(responses.map((r) => r.status), [501])
  t.ok(closed)
  const chunked = await rawExchange(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n', { waitMs: 1500 })
  t.same(chunked.responses.map((r) => r.status), [200], 'chunked is read under rfc9110')
})

test('RFC 9112 3.2: two Host lines are a 400 on every route, in both profiles', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const app = await buildApp({ profile })
    app.get('/items', async () => ({ ok: true }))
    app.post('/items', async () => ({ ok: true }))
    const port = await listen(app)
    t.teardown(() => app.close())
    for (const line of ['GET /items', 'HEAD /items', 'POST /items']) {
      const { responses, closed } = await rawExchange(port, `${line} HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\nContent-Length: 0\r\n\r\n`, { waitMs: 1500, endAfterMs: 1000 })
      t.same([responses.map((r) => r.status), closed], [[400], true], `${profile}: ${line}`)
    }
  }
})

async function guarded (t: Test, profile: 'spec' | 'rfc9110'): Promise<number> {
  const app = await buildApp({ profile, auth: { realm: 'one-answer', basic: { users: { u: 'p' } } } })
  app.post('/private', { config: { auth: true } }, async () => ({ ok: true }))
  app.post('/items', async () => ({ ok: true }))
  const port = await listen(app)
  t.teardown(() => app.close())
  return port
}

// RFC 9112 9.6: a request refused from its headers is answered once; a body that then ends
// short of its Content-Length (RFC 9112 6.3) gets no second answer.
const SHORT: Array<[string, string, number]> = [
  ['401 without credentials', 'POST /private HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":', 401],
  ['415 for an unsupported media type', 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: image/png\r\nContent-Length: 100\r\n\r\nabcdef', 415]
]

for (const profile of ['spec', 'rfc9110'] as const) {
  for (const [name, request, status] of SHORT) {
    test(`RFC 9112 9.6, ${profile} profile: ${name}, then a body that ends short of its Content-Length: exactly one answer, then close`, async (t) => {
      const port = await guarded(t, profile)
      const { responses, closed } = await rawExchange(port, request, { waitMs: 1500, endAfterMs: 300 })
      t.same(responses.map((r) => r.status), [status], 'one response')
      t.ok(closed, 'the connection is closed after it')
    })
  }
}
