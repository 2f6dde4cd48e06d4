import { test, type Test } from 'tap'
import Fastify from 'fastify'
import { Client } from 'undici'
import { httpConventions, serverOptions } from '../../plugins/index'
import { decode } from '../../packages/vcdiff/src/index'

// docs/conventions.md (Delta encoding): a client that names a stored instance in
// If-None-Match and lists vcdiff in A-IM gets a 226 whose body is the delta (RFC 3229 10.4.1).
// Here the document changes on every request (as one that changes every few milliseconds
// does under polling), and the client that asks for deltas first polled it with full GETs
// for longer than the per-client insert budget allows (more than 120 versions in a minute).

/** A JSON document of about `bytes` bytes whose version sits in its middle. */
function documentOf (bytes: number): (version: number) => string {
  const items: string[] = []
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const item = JSON.stringify({ id: i, sku: `SKU-${(i * 7919).toString(36)}`, description: `item ${i} of the catalogue, kept in stock`.repeat(2) })
    items.push(item)
    size += item.length + 1
  }
  const half = items.length >> 1
  const head = `{"items":[${items.slice(0, half).join(',')},{"revision":"`
  const tail = `"},${items.slice(half).join(',')}]}`
  return (version) => head + String(version).padStart(12, '0') + tail
}

async function server (t: Test): Promise<{ client: Client, versions: { current: number } }> {
  const doc = documentOf(300 * 1024)
  const versions = { current: 0 }
  const app = Fastify(serverOptions)
  // A deadline no loaded test machine reaches: the count of 226s does not depend on speed.
  await app.register(httpConventions, { deltaEncoding: { offload: { deadlineMs: 120_000 } } })
  app.decorateRequest('docVersion', 0)
  app.get('/doc', {
    config: { deltaEncoding: true, conditional: { validators: (request) => ({ etag: `"v${(request as unknown as { docVersion: number }).docVersion}"` }) } },
    onRequest (request, reply, done) {
      (request as unknown as { docVersion: number }).docVersion = ++versions.current
      done()
    }
  }, async (request, reply) => {
    reply.type('application/json')
    return doc((request as unknown as { docVersion: number }).docVersion)
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address() as { port: number }
  const client = new Client(`http://127.0.0.1:${address.port}`)
  t.teardown(async () => {
    await client.close()
    await app.close()
  })
  return { client, versions }
}

test('deltas keep flowing after load: after 150 full GETs of a changing document, a client asking with A-IM: vcdiff and the ETag it fetched gets 226s (RFC 3229 10.4.1)', async (t) => {
  const { client } = await server(t)
  // The load: full GETs without A-IM, each a new version of the one representation.
  let full = 0
  for (let i = 0; i < 150; i++) {
    const res = await client.request({ path: '/doc', method: 'GET' })
    await res.body.dump()
    if (res.statusCode === 200) full++
  }
  t.equal(full, 150, 'the load: 150 full 200s')
  // The client fetches the document once (a delta client: A-IM on every GET), then keeps asking for a delta against it.
  const first = await client.request({ path: '/doc', method: 'GET', headers: { 'a-im': 'vcdiff' } })
  const base = Buffer.from(await first.body.arrayBuffer())
  const etag = first.headers.etag as string
  const statuses: Record<number, number> = {}
  let decoded = 0
  for (let i = 0; i < 20; i++) {
    const res = await client.request({ path: '/doc', method: 'GET', headers: { 'a-im': 'vcdiff', 'if-none-match': etag } })
    const body = Buffer.from(await res.body.arrayBuffer())
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    if (res.statusCode === 226) {
      t.equal(res.headers['delta-base'], etag, 'the delta is against the instance the client holds')
      const instance = Buffer.from(decode(base, body)).toString('utf8')
      const version = Number(/^"v(\d+)"$/.exec(res.headers.etag as string)?.[1])
      t.ok(instance.includes(`"revision":"${String(version).padStart(12, '0')}"`), 'the delta decodes to the version its ETag names')
      decoded++
    }
  }
  t.ok(decoded >= 19, `at least 95% of the delta requests answered 226 (statuses: ${JSON.stringify(statuses)})`)
})

test('the per-client insert budget still bounds representations: versions of one URL do not count, new URLs do', async (t) => {
  const { client } = await server(t)
  for (let i = 0; i < 130; i++) {
    const res = await client.request({ path: `/doc?variant=${i}`, method: 'GET', headers: { 'a-im': 'vcdiff' } })
    await res.body.dump()
  }
  // Past 120 new representations in the minute, a new URL's instance is not kept: no delta against it.
  const late = await client.request({ path: '/doc?variant=late', method: 'GET', headers: { 'a-im': 'vcdiff' } })
  await late.body.dump()
  const res = await client.request({ path: '/doc?variant=late', method: 'GET', headers: { 'a-im': 'vcdiff', 'if-none-match': late.headers.etag as string } })
  await res.body.dump()
  t.equal(res.statusCode, 200, 'the 121st new representation of the minute was not stored')
  // A URL kept before the budget ran out still gets its new versions kept.
  const kept = await client.request({ path: '/doc?variant=3', method: 'GET', headers: { 'a-im': 'vcdiff' } })
  await kept.body.dump()
  const delta = await client.request({ path: '/doc?variant=3', method: 'GET', headers: { 'a-im': 'vcdiff', 'if-none-match': kept.headers.etag as string } })
  await delta.body.dump()
  t.equal(delta.statusCode, 226, 'a new version of a kept representation is stored whatever the budget')
})
