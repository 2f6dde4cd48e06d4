/**
 * The client's interceptors compose with undici's own (`retry`, `decompress`, `cache`) in
 * one `Agent#compose`, over real sockets: under the facade (undici's below, answering per
 * attempt) and side by side against the reference service.
 */
import { test } from 'tap'
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { Agent, interceptors } from 'undici'
import { startService } from '../../../test/helpers/service'
import { recorder } from '../../../test/helpers/client-peers'
import { authInterceptor, type AuthEvent } from '../src/auth'
import { deltaInterceptor, type DeltaEvent } from '../src/delta'
import { framingInterceptor } from '../src/framing'
import { redirectInterceptor } from '../src/redirect'
import { createConventionsClient } from '../src/client'

test('undici\'s retry and decompress below the facade: a 503 is retried, a gzip body is decoded, the delta interceptor keeps the decoded instance', async (t) => {
  let calls = 0
  const server = await recorder((_req, res) => {
    if (++calls === 1) return res.writeHead(503, { 'retry-after': '0' }).end()
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', etag: '"e1"' }).end(gzipSync(JSON.stringify({ hello: 'world' })))
  })
  t.teardown(() => server.close())
  const below = new Agent().compose(interceptors.retry({ maxRetries: 2, minTimeout: 1, timeoutFactor: 1 }), interceptors.decompress())
  t.teardown(() => below.close())
  const deltas: DeltaEvent[] = []
  const client = createConventionsClient({ dispatcher: below, delta: { onResponse: (e) => deltas.push(e) } })
  const res = await client.get<{ hello: string }>(`${server.origin}/doc`)
  t.same([res.status, res.body, res.etag], [200, { hello: 'world' }, '"e1"'])
  t.equal(calls, 2, 'the 503 was retried below')
  t.same(deltas.map((d) => [d.wireStatus, d.bytes]), [[200, 17]], 'the delta interceptor saw the decoded instance')
})

test('side by side with undici\'s retry and cache against the reference service: a Digest write of a stream through /v1/, then reads', async (t) => {
  const svc = await startService()
  t.teardown(() => svc.stop())
  const events: AuthEvent[] = []
  const agent = new Agent().compose(
    interceptors.cache(),
    deltaInterceptor(),
    authInterceptor({ credentials: [{ origin: svc.url, username: 'demo', password: 'demo-password' }], onEvent: (e) => events.push(e) }),
    redirectInterceptor(),
    framingInterceptor(),
    interceptors.retry({ maxRetries: 1 })
  )
  t.teardown(() => agent.close())
  const body = Readable.from([JSON.stringify({ slug: 'composed', title: 'T', body: 'B' })])
  const created = await agent.request({ origin: svc.url, path: '/v1/articles', method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const article = await created.body.json() as { id: string }
  t.equal(created.statusCode, 201)
  t.same(events.map((e) => [e.scheme, e.algorithm]), [['digest', 'SHA-256']])
  const queried = await agent.request({ origin: svc.url, path: '/articles', query: { note: 'a b' }, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'composed-query', title: 'T', body: 'B' }) })
  await queried.body.dump()
  t.equal(queried.statusCode, 201, 'a query given apart is part of the Digest uri')
  for (let i = 0; i < 2; i++) {
    const read = await agent.request({ origin: svc.url, path: `/articles/${article.id}`, method: 'GET' })
    t.same([read.statusCode, (await read.body.json() as { id: string }).id], [200, article.id])
  }
})
