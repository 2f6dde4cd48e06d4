import { test } from 'tap'
import { PassThrough, Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers/app'

// The JSON parser reads the body itself (no copy of a one-chunk body); every refusal must be
// the one Fastify's own reader gives. The oracle: the same app with the suite's Content-Type
// plugin off, which leaves JSON to Fastify's default parser and reader.
type Scenario = { name: string, headers?: Record<string, string>, payload: () => string | Readable, preParsing?: (payload: NodeJS.ReadableStream) => NodeJS.ReadableStream }

async function appWith (contentType: boolean, scenario: Scenario): Promise<FastifyInstance> {
  const app = await buildApp(contentType ? {} : { contentType: false })
  app.post('/doc', {
    bodyLimit: 64,
    ...(scenario.preParsing === undefined ? {} : { preParsing: async (_req: unknown, _reply: unknown, payload: NodeJS.ReadableStream) => scenario.preParsing?.(payload) })
  }, async (req) => ({ got: req.body }))
  return app
}

function stringStream (parts: string[]): Readable {
  const out = new PassThrough({ encoding: 'utf8' })
  for (const p of parts) out.write(p)
  out.end()
  return out
}

const scenarios: Scenario[] = [
  { name: 'a body in one chunk', headers: { 'content-type': 'application/json' }, payload: () => '{"a":1}' },
  { name: 'a body in several chunks', headers: { 'content-type': 'application/json', 'content-length': '11' }, payload: () => Readable.from([Buffer.from('{"a":'), Buffer.from('[1,2]}')], { objectMode: false }) },
  { name: 'a body over the route limit, no Content-Length', headers: { 'content-type': 'application/json' }, payload: () => Readable.from([Buffer.from('{"a":"'), Buffer.from('x'.repeat(100)), Buffer.from('"}')], { objectMode: false }) },
  { name: 'a stream of another plugin that emits strings', headers: { 'content-type': 'application/json' }, payload: () => '{"s":"é"}', preParsing: (payload) => { const s = new PassThrough({ encoding: 'utf8' }); payload.pipe(s); return s } },
  { name: 'a decompressing stream whose encoded length passes the limit', headers: { 'content-type': 'application/json' }, payload: () => '{"a":1}', preParsing: (payload) => { const s = new PassThrough() as PassThrough & { receivedEncodedLength?: number }; s.receivedEncodedLength = 1000; payload.pipe(s); return s } },
  { name: 'a stream that ends before Content-Length', headers: { 'content-type': 'application/json' }, payload: () => '{"a":1234}', preParsing: () => stringStream(['{"a":1}']) },
  { name: 'a stream that fails while the body is read', headers: { 'content-type': 'application/json' }, payload: () => '{"a":1}', preParsing: () => { const s = new PassThrough(); setImmediate(() => s.destroy(new Error('the upstream went away'))); return s } }
]

test('the JSON reader refuses and accepts exactly as Fastify\'s own reader does', async (t) => {
  for (const scenario of scenarios) {
    const ours = await appWith(true, scenario)
    const fastifys = await appWith(false, scenario)
    const a = await ours.inject({ method: 'POST', url: '/doc', headers: scenario.headers, payload: scenario.payload() })
    const b = await fastifys.inject({ method: 'POST', url: '/doc', headers: scenario.headers, payload: scenario.payload() })
    t.equal(a.statusCode, b.statusCode, `${scenario.name}: ${a.statusCode}`)
    if (b.statusCode === 200) t.same(a.json(), b.json(), `${scenario.name}: the same body`)
    await ours.close()
    await fastifys.close()
  }
})

test('the statuses the JSON reader gives: 200, then 411 for the body limit and the framing (the suite\'s defaults), 400 for a failed stream', async (t) => {
  const expected = [200, 200, 411, 200, 411, 411, 400]
  for (const [i, scenario] of scenarios.entries()) {
    const app = await appWith(true, scenario)
    const res = await app.inject({ method: 'POST', url: '/doc', headers: scenario.headers, payload: scenario.payload() })
    t.equal(res.statusCode, expected[i], scenario.name)
    await app.close()
  }
})
