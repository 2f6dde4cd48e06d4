import { test } from 'tap'
import { PassThrough, Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers/app'
import { readBody, setSuiteParser, type BodyStream, type Done } from '../../plugins/services/body-reader'

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

// What a parser throws while it decodes a body the reader collected is an answer to that
// request, never an exception from the stream's 'end' listener (which would end the process).
test('a body the parser cannot decode for want of memory is a 503 with Retry-After (RFC 9110 15.6.4); one too long for a string is over the limit (the suite\'s limit status); any other failure is a 500', async (t) => {
  const throwing: Array<[string, unknown, number]> = [
    ['out of memory', new RangeError('Array buffer allocation failed'), 503],
    ['a string longer than V8 allows', Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' }), 411],
    ['a fault of the parser', new TypeError('not a function'), 500],
    ['a throw of undefined', undefined, 500]
  ]
  for (const profile of ['spec', 'rfc9110'] as const) {
    const app = await buildApp({ profile })
    await app.register(async function throwingParser (child) {
      setSuiteParser(child, ['application/x-throwing'], function parseThrowing (request, payload: BodyStream, next: Done) {
        readBody(request, payload, next, () => { throw throwing[Number(request.headers['x-case'])][1] })
      })
      child.post('/doc', async () => 'parsed')
    })
    for (const [i, [name, , status]] of throwing.entries()) {
      const expected = status === 411 && profile === 'rfc9110' ? 413 : status
      const res = await app.inject({ method: 'POST', url: '/doc', headers: { 'content-type': 'application/x-throwing', 'x-case': String(i) }, payload: 'body' })
      t.equal(res.statusCode, expected, `${profile}, ${name}: ${expected}`)
      if (expected === 503) t.equal(res.headers['retry-after'], '5', `${profile}, ${name}: Retry-After`)
    }
    const ok = await app.inject({ method: 'POST', url: '/doc', headers: { 'content-type': 'application/json' }, payload: '{}' })
    t.equal(ok.statusCode, 200, `${profile}: the app goes on serving`)
    await app.close()
  }
})
