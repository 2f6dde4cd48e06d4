/**
 * Large deltas are encoded off the event loop: a pool of worker threads with a bounded
 * queue and a deadline; when either is exceeded the answer is the plain instance (200).
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'
import { MemoryInstanceStore } from '../../plugins/entries/stores'
import { DeltaClient } from '../../plugins/entries/client'
import { listen } from '../helpers/app'

function doc (version: number): string {
  const lines: string[] = []
  for (let i = 0; i < 4000; i++) lines.push(`line ${i}: ${i === 2000 ? `edited in version ${version}` : 'the same in every version'}`)
  return lines.join('\n')
}

async function app (offload: object) {
  const a = Fastify(serverOptions)
  await a.register(httpConventions, { deltaEncoding: { store: new MemoryInstanceStore({ maxBytes: 1 << 24 }), offload } })
  let version = 1
  a.get('/big', { config: { deltaEncoding: true } }, async (_req, reply) => {
    reply.header('etag', `"v${version}"`).type('text/plain')
    return doc(version)
  })
  return { a, bump: () => { version++ } }
}

test('an instance above offload.minBytes is encoded by the worker pool; the delta decodes exactly', async (t) => {
  const { a, bump } = await app({ minBytes: 1024, deadlineMs: 120_000, threads: 1 })
  const port = await listen(a)
  t.teardown(() => a.close())
  const first = await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff' } })
  bump()
  const res = await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string } })
  t.equal(res.statusCode, 226)
  t.equal(res.headers.im, 'vcdiff')
  t.ok(res.rawPayload.length < 1000, `a small delta (${res.rawPayload.length} bytes)`)
  const client = new DeltaClient()
  const one = await client.get(`http://127.0.0.1:${port}/big`)
  bump()
  const two = await client.get(`http://127.0.0.1:${port}/big`)
  t.equal(one.status, 200)
  t.equal(two.wireStatus, 226, 'a real client gets a delta from the pool')
  t.equal(Buffer.from(two.body).toString(), doc(3), 'and decodes it exactly')
})

test('a passed deadline answers the plain instance (200), never an unbounded wait', async (t) => {
  const { a, bump } = await app({ minBytes: 1024, deadlineMs: 1, threads: 1 })
  t.teardown(() => a.close())
  const first = await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff' } })
  bump()
  const res = await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string } })
  t.equal(res.statusCode, 200)
  t.equal(res.body, doc(2))
})

test('offload: false encodes on the event loop; bad offload options fail at boot', async (t) => {
  const { a, bump } = await app(false as unknown as object)
  t.teardown(() => a.close())
  const first = await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff' } })
  bump()
  t.equal((await a.inject({ url: '/big', headers: { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string } })).statusCode, 226)
  for (const bad of [{ nope: 1 }, { minBytes: 0 }, { deadlineMs: -1 }, 'yes']) {
    const b = Fastify(serverOptions)
    b.register(httpConventions, { deltaEncoding: { offload: bad as never } })
    await t.rejects(Promise.resolve(b.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(bad))
  }
})
