/**
 * Hostile input: every body the suite parses or transforms has a bounded cost and a 4xx
 * answer from the catalogue, never a 5xx; bytes are never stored as something they are not.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { ALL_ERRORS_MAX_VALUES } from '../../plugins/edge/server-options'

async function app () {
  const a = Fastify({ ...serverOptions, bodyLimit: 1 << 20 })
  await a.register(httpConventions)
  let doc: unknown = { title: 'hello', tags: ['a'], list: new Array(100_000).fill(0) }
  a.patch('/doc', {
    config: { patch: { schema: { type: 'object' }, load: () => ({ document: doc, etag: '"1"' }), save: (_r, d) => { doc = d; return { document: d, etag: '"2"' } } } }
  }, async () => ({ ok: true }))
  a.post('/items', { schema: { body: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', maxLength: 1 } } } } } }, async (request) => request.body)
  a.post('/xml', { schema: { body: { type: 'object', properties: { title: { type: 'string' } } } } }, async (request) => request.body)
  a.get('/ping', async () => 'pong')
  return a
}

function bomb (): string {
  const ops: unknown[] = []
  for (let i = 0; i < 19; i++) ops.push({ op: 'copy', from: '', path: `/k${i}` })
  for (let i = 0; i < 60; i++) ops.push({ op: 'copy', from: '/k18', path: `/m${i}` })
  return JSON.stringify(ops)
}

test('a JSON Patch bomb (copy doubling the document) is refused with 422 before its cost is paid, while other clients are served', async (t) => {
  const a = await app()
  const port = await listen(a)
  t.teardown(() => a.close())
  const rss = process.memoryUsage().rss
  const pending = fetch(`http://127.0.0.1:${port}/doc`, { method: 'PATCH', headers: { 'content-type': 'application/json-patch+json' }, body: bomb() })
  const ping = await fetch(`http://127.0.0.1:${port}/ping`)
  const res = await pending
  t.equal(ping.status, 200, 'another client is served meanwhile')
  t.equal(res.status, 422)
  const body = await res.json() as { errors: Array<{ field: string, message: string }> }
  t.match(body.errors[0].message, /larger|size|limit|bytes|budget/i, body.errors[0].message)
  t.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024, 'memory stays bounded')
})

test('a merge patch 100k levels deep is a 400, not a 500 (no stack overflow)', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const deep = '{"title":' + '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) + '}'
  const res = await a.inject({ method: 'PATCH', url: '/doc', headers: { 'content-type': 'application/merge-patch+json' }, payload: deep })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'body')
  const arrays = '{"tags":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'
  const nested = await a.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: arrays })
  t.equal(nested.statusCode, 400, 'nested arrays in a JSON body: 400')
})

test('a 422 lists at most 100 problems and says how many more there were', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const tags = JSON.stringify({ tags: Array.from({ length: 5000 }, () => 'xx') })
  const res = await a.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: tags })
  t.equal(res.statusCode, 422)
  const errors = res.json().errors as Array<{ message: string }>
  t.equal(errors.length, 101)
  t.match(errors[100].message, /4900 more problems/)
})

test('invalid UTF-8 in a JSON body is a 400 (field body), never stored as U+FFFD', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const payload = Buffer.concat([Buffer.from('{"tags":["'), Buffer.from([0xff, 0xfe]), Buffer.from('"]}')])
  const res = await a.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].field, 'body')
  const surrogate = await a.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{"tags":["a\\ud800b"]}' })
  t.equal(surrogate.statusCode, 422, 'a lone surrogate is refused')
})

test('RFC 7303 3.2: an XML body declaring ISO-8859-1 is decoded by its declaration', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const payload = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><doc><title>caf'), Buffer.from([0xe9]), Buffer.from('</title></doc>')])
  const res = await a.inject({ method: 'POST', url: '/xml', headers: { 'content-type': 'application/xml' }, payload })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { title: 'café' })
})

test('bounded work: a body of 100k violations gets its first problem and a note, without 100k error objects built', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const post = async (tags: unknown[]): Promise<{ status: number, errors: Array<{ field: string, message: string }> }> => {
    const res = await a.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ tags }) })
    return { status: res.statusCode, errors: res.json().errors }
  }
  const huge = await post(Array.from({ length: 100_000 }, () => 'xx'))
  t.equal(huge.status, 422)
  t.same(huge.errors, [
    { field: 'tags.0', message: 'must NOT have more than 1 characters' },
    { field: 'body', message: `holds more than ${ALL_ERRORS_MAX_VALUES} values: only its first problem was looked for` }
  ], 'every problem would have been 100k error objects: the first is listed, and the bound is said')
  // One problem deep in a large body is still found and named.
  const late = await post([...Array.from({ length: 20_000 }, () => 'x'), 7])
  t.same(late.errors[0], { field: 'tags.20000', message: 'must be string' })
  t.equal(late.errors.length, 2)
  // Up to the bound, every problem is looked for (the 422 lists 100 and counts the rest).
  const within = await post([...Array.from({ length: ALL_ERRORS_MAX_VALUES - 10 }, () => 'xx')])
  t.equal(within.errors.length, 101)
  t.match(within.errors[100].message, new RegExp(`${ALL_ERRORS_MAX_VALUES - 10 - 100} more problems`))
  const valid = await post(Array.from({ length: 50_000 }, () => 'x'))
  t.equal(valid.status, 200, 'a large valid body passes')
})

test('bounded work: JSON Patch splices are bounded by the elements they shift in all: a thousand front inserts into a long array are a 422', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const patch = (ops: unknown[]): Promise<{ statusCode: number, json: () => any }> => a.inject({ method: 'PATCH', url: '/doc', headers: { 'content-type': 'application/json-patch+json' }, payload: JSON.stringify(ops) })
  const front = await patch(new Array(1000).fill({ op: 'add', path: '/list/0', value: 1 }))
  t.equal(front.statusCode, 422)
  t.match(front.json(), { errors: [{ field: 'list.0', message: /shift more than \d+ array elements/ }] })
  const churn = await patch(new Array(1000).fill({ op: 'move', from: '/list/0', path: '/list/-' }))
  t.equal(churn.statusCode, 422, 'a move that does not grow the document is counted too')
  const appends = await patch(new Array(1000).fill({ op: 'add', path: '/list/-', value: 1 }))
  t.equal(appends.statusCode, 200, 'appends shift nothing')
})
