import { test, type Test } from 'tap'
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyRequest, type RouteOptions } from 'fastify'
import fresh from 'fresh'
import { fastifyEtag } from '@fastify/etag'
import { boot, buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import {
  httpConventions, httpConventionsConditional, unauthorized, serverOptions, type HttpConventionsOptions, type ConditionalOptions, type ProvidedValidators
} from '../../plugins/index'
import { conventionResponses } from '../../plugins/entries/openapi'
import { formatHttpDate } from '../../packages/grammar/src/http-date'

// Conformance fixture (test/fixtures/conditional-requests.md): current ETag "v2",
// Last-Modified T; the stored time has a fraction of a second (case 15).
const T = Date.UTC(2024, 0, 15, 12, 45, 26)
const STORED = T + 700
const HTTP_T = formatHttpDate(T) // Mon, 15 Jan 2024 12:45:26 GMT
const HTTP_T_MINUS_1 = formatHttpDate(T - 1000)
const HTTP_T_PLUS_1 = formatHttpDate(T + 1000)
const RFC850_T = 'Monday, 15-Jan-24 12:45:26 GMT'
const ASCTIME_T = 'Mon Jan 15 12:45:26 2024'

interface Row { etag: string, lastModified?: number, title: string }

/** An in-memory store with the one write a conditional PUT needs: compare-and-set on the ETag. */
class Store {
  rows = new Map<string, Row>()
  version = 2
  constructor () { this.reset() }
  reset (): void {
    this.rows.clear()
    this.version = 2
    this.rows.set('1', { etag: 'v2', lastModified: STORED, title: 'one' })
    this.rows.set('weak', { etag: 'W/"v2"', lastModified: STORED, title: 'weak' })
    this.rows.set('undated', { etag: 'v2', title: 'undated' })
  }

  validators (id: string): ProvidedValidators | null {
    const row = this.rows.get(id)
    return row === undefined ? null : { etag: row.etag, lastModified: row.lastModified }
  }

  /** `UPDATE rows SET title = ?, etag = ? WHERE id = ? AND etag = ?`: the number of rows changed. */
  compareAndSet (id: string, expected: string, title: string): number {
    const row = this.rows.get(id)
    if (row === undefined || row.etag !== expected) return 0
    row.etag = `v${++this.version}`
    row.title = title
    row.lastModified = Date.now()
    return 1
  }

  /** `INSERT` that fails on a duplicate key. */
  insert (id: string, title: string): number {
    if (this.rows.has(id)) return 0
    this.rows.set(id, { etag: `v${++this.version}`, lastModified: Date.now(), title })
    return 1
  }
}

interface Harness {
  app: FastifyInstance
  store: Store
  runs: Record<string, number>
  /** Runs inside the write, between the precondition check and the compare-and-set. */
  race: { before?: () => void }
  seen: Array<FastifyRequest['preconditions']>
}

async function harness (opts: HttpConventionsOptions = {}, conditional: ConditionalOptions = {}): Promise<Harness> {
  const app = await buildApp({ ...opts, conditional })
  const store = new Store()
  const runs: Record<string, number> = {}
  const race: Harness['race'] = {}
  const seen: Harness['seen'] = []
  const count = (name: string): void => { runs[name] = (runs[name] ?? 0) + 1 }
  const provide = (req: FastifyRequest) => store.validators((req.params as { id: string }).id)
  const asyncProvide = async (req: FastifyRequest) => provide(req)

  app.get('/a/:id', { config: { conditional: { validators: asyncProvide } } }, async (req, reply) => {
    count('GET')
    seen.push(req.preconditions)
    const row = store.rows.get((req.params as { id: string }).id)
    if (row === undefined) return reply.code(404).send({ message: 'no such article' })
    reply.header('cache-control', 'max-age=60').header('vary', 'Accept').header('expires', HTTP_T_PLUS_1).header('content-location', '/a/1.json')
    return { title: row.title, padding: 'x'.repeat(100) }
  })
  const write = async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    count(req.method)
    seen.push(req.preconditions)
    const id = (req.params as { id: string }).id
    const p = req.preconditions
    if (p === null) throw new Error('conditional route without preconditions')
    race.before?.()
    if (p.validators.exists) {
      // The store's atomic write: the ETag the preconditions were evaluated against must still be there.
      const expected = p.expectedEtag ?? p.etag as string
      if (store.compareAndSet(id, expected, String((req.body as { title?: string } | undefined)?.title ?? 'x')) === 0) throw p.failed()
      return { ok: true }
    }
    if (req.method !== 'PUT') return reply.code(404).send({ message: 'no such article' })
    if (store.insert(id, 'new') === 0) throw p.failed()
    return reply.code(201).send({ created: true })
  }
  const writeConfig = { config: { conditional: { validators: provide } } }
  app.put('/a/:id', writeConfig, write)
  app.patch('/a/:id', writeConfig, write)
  app.delete('/a/:id', writeConfig, write)
  app.post('/a/:id', writeConfig, write)
  // Case 17: preconditions come after authentication (onRequest).
  app.put('/secure/:id', {
    config: { conditional: { validators: provide } },
    onRequest: async (req) => { if (req.headers.authorization === undefined) throw unauthorized('credentials are required', ['Basic realm="articles"']) }
  }, write)
  app.get('/hashed', { config: { conditional: true } }, async () => { count('hashed'); return { hello: 'world', padding: 'y'.repeat(100) } })
  app.get('/hashed-dated', { config: { conditional: true } }, async (_req, reply) => {
    reply.header('last-modified', formatHttpDate(STORED))
    return { dated: true }
  })
  app.get('/own-etag', { config: { conditional: {} } }, async (_req, reply) => { reply.header('etag', '"mine"'); return { own: true } })
  app.get('/bad-own-etag', { config: { conditional: {} } }, async (_req, reply) => { reply.header('etag', 'not "an" etag'); return { own: true } })
  app.get('/stream', { config: { conditional: true } }, async (_req, reply) => reply.type('text/plain').send(Readable.from(['a', 'b'])))
  app.get('/sync/:id', { config: { conditional: { validators: provide } } }, async () => ({ sync: true }))
  app.get('/plain', async () => ({ plain: true }))
  return { app, store, runs, race, seen }
}

const sha1 = (s: string): string => '"' + createHash('sha1').update(s).digest('base64') + '"'

type Headers = Record<string, string | string[]>
async function send (h: Harness, method: string, url: string, headers: Headers = {}, payload?: unknown) {
  return h.app.inject({ method: method as 'GET', url, headers: headers as Record<string, string>, payload: payload as string })
}

function assertEnvelope (t: Test, res: { statusCode: number, headers: Record<string, unknown>, json: () => unknown }, field: string, etag?: string): void {
  t.equal(res.statusCode, 412)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json() as { errors: Array<{ field: string, message: string }> }
  t.equal(body.errors.length, 1)
  t.equal(body.errors[0].field, field)
  t.type(body.errors[0].message, 'string')
  t.equal(res.headers.etag, etag, 'the 412 carries the current ETag when known')
}

test('case 1: PUT If-Match "v1" is 412 with the JSON envelope; the handler never runs', async (t) => {
  const h = await harness()
  const res = await send(h, 'PUT', '/a/1', { 'if-match': '"v1"' }, { title: 'new' })
  assertEnvelope(t, res, 'If-Match', '"v2"')
  t.equal(h.runs.PUT, undefined)
  t.equal(h.store.rows.get('1')?.title, 'one')
})

test('case 2: If-Match uses strong comparison, so a weak tag never matches', async (t) => {
  const h = await harness()
  assertEnvelope(t, await send(h, 'PUT', '/a/1', { 'if-match': 'W/"v2"' }, {}), 'If-Match', '"v2"')
  assertEnvelope(t, await send(h, 'PUT', '/a/weak', { 'if-match': '"v2"' }, {}), 'If-Match', 'W/"v2"')
  t.equal(h.runs.PUT, undefined)
})

test('case 3: If-Match lists with OWS, empty elements and several field lines proceed', async (t) => {
  for (const value of ['"x", "v2"', ' "x" ,"v2"', ', "v2"', ['"x"', '"v2"']]) {
    const h = await harness()
    const res = await send(h, 'PUT', '/a/1', { 'if-match': value }, { title: 'new' })
    t.equal(res.statusCode, 200, JSON.stringify(value))
    t.equal(h.store.rows.get('1')?.title, 'new')
  }
})

test('case 3 over a real socket: two separate If-Match lines are one list', async (t) => {
  const h = await harness()
  const port = await listen(h.app)
  t.teardown(() => h.app.close())
  const body = '{"title":"sock"}'
  const res = await rawRequest(port, `PUT /a/1 HTTP/1.1\r\nHost: x\r\nIf-Match: "x"\r\nIf-Match: "v2"\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
  t.equal(res.status, 200)
  t.equal(h.store.rows.get('1')?.title, 'sock')
})

test('case 4: If-Match: * proceeds when the resource exists; on a PUT that creates, 412 when it does not (RFC 9110 13.1.1)', async (t) => {
  const h = await harness()
  t.equal((await send(h, 'PUT', '/a/1', { 'if-match': '*' }, {})).statusCode, 200)
  const res = await send(h, 'PUT', '/a/missing', { 'if-match': '*' }, {})
  assertEnvelope(t, res, 'If-Match')
  t.match(res.json(), { errors: [{ message: 'the resource does not exist' }] })
  t.equal(h.runs.PUT, 1, 'the PUT to a missing resource never ran')
  t.notOk(h.store.rows.has('missing'), 'nothing was created')
})

test('RFC 9110 13.2.1: on a missing resource of a route that does not create it, If-Match: * is the route\'s 404, as If-Match "x" and If-Unmodified-Since are', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    for (const method of ['GET', 'HEAD', 'PATCH', 'DELETE', 'POST']) {
      const body = method === 'GET' || method === 'HEAD' ? undefined : {}
      const answers = []
      for (const headers of [{ 'if-match': '*' }, { 'if-match': '"x"' }, { 'if-unmodified-since': HTTP_T }] as Headers[]) {
        const res = await send(h, method, '/a/missing', headers, body)
        answers.push(res.statusCode)
      }
      t.same(answers, [404, 404, 404], `${profile} ${method}: If-Match: *, If-Match "x", If-Unmodified-Since`)
    }
    t.equal(h.store.rows.has('missing'), false)
  }
})

test('case 5: PUT If-None-Match: * is 412 when the resource exists and creates it when it does not', async (t) => {
  const h = await harness()
  const exists = await send(h, 'PUT', '/a/1', { 'if-none-match': '*' }, {})
  assertEnvelope(t, exists, 'If-None-Match', '"v2"')
  t.equal(h.runs.PUT, undefined)
  const created = await send(h, 'PUT', '/a/new', { 'if-none-match': '*' }, {})
  t.equal(created.statusCode, 201)
  t.ok(h.store.rows.has('new'))
  t.equal(h.seen[0]?.expectedEtag, null, 'a create compares no ETag: insert only')
})

test('case 6: GET If-None-Match "v2" is 412 in the spec profile and 304 in rfc9110', async (t) => {
  const spec = await harness()
  const r412 = await send(spec, 'GET', '/a/1', { 'if-none-match': '"v2"' })
  assertEnvelope(t, r412, 'If-None-Match', '"v2"')
  t.equal(spec.runs.GET, undefined, 'spec 412 is decided before the handler')

  const rfc = await harness({ profile: 'rfc9110' })
  const full = await send(rfc, 'GET', '/a/1')
  const r304 = await send(rfc, 'GET', '/a/1', { 'if-none-match': '"v2"' })
  t.equal(r304.statusCode, 304)
  t.equal(r304.body, '', 'no body')
  t.equal(r304.headers['content-type'], undefined, 'no Content-Type')
  t.equal(r304.headers['content-length'], undefined, 'no Content-Length')
  for (const name of ['etag', 'cache-control', 'vary', 'expires', 'content-location']) {
    t.equal(r304.headers[name], full.headers[name], `${name} kept as the 200 has it`)
  }
  t.ok(r304.headers.date, 'Date kept')
  t.equal(r304.headers['last-modified'], undefined, 'RFC 9110 15.4.5: no Last-Modified next to an ETag')
})

test('case 6 over a real socket: a 304 has no body, no Content-Length and no Content-Type', async (t) => {
  const h = await harness({ profile: 'rfc9110' })
  const port = await listen(h.app)
  t.teardown(() => h.app.close())
  for (const method of ['GET', 'HEAD']) {
    // Two requests on one connection: any stray body byte would corrupt the second response.
    const req = `${method} /a/1 HTTP/1.1\r\nHost: x\r\nIf-None-Match: "v2"\r\n\r\n`
    const res = await rawRequest(port, req + 'GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', { responses: 2 })
    t.equal(res.status, 304, method)
    t.equal(res.headers['content-length'], undefined)
    t.equal(res.headers['content-type'], undefined)
    t.equal(res.headers['transfer-encoding'], undefined)
    t.equal(res.headers.etag, '"v2"')
    t.equal(res.body, '')
    t.match(res.raw, /\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'the next response follows the 304 head directly')
    t.match(res.raw, /\{"plain":true\}$/)
  }
})

test('case 7: GET If-None-Match uses weak comparison; "V2" and w/"v2" do not match', async (t) => {
  const h = await harness({ profile: 'rfc9110' })
  t.equal((await send(h, 'GET', '/a/1', { 'if-none-match': 'W/"v2"' })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/weak', { 'if-none-match': '"v2"' })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/weak', { 'if-none-match': 'W/"v2"' })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/1', { 'if-none-match': '"V2"' })).statusCode, 200)
  t.equal((await send(h, 'GET', '/a/1', { 'if-none-match': 'w/"v2"' })).statusCode, 200, 'w/ is not a weak prefix: the field is invalid and a full 200 is the safe answer')
})

test('case 8: PUT/POST/DELETE If-None-Match "v2" is 412, never 304 (both profiles)', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    for (const method of ['PUT', 'POST', 'DELETE', 'PATCH']) {
      const res = await send(h, method, '/a/1', { 'if-none-match': '"v2"' }, {})
      assertEnvelope(t, res, 'If-None-Match', '"v2"')
      t.equal(h.runs[method], undefined, `${profile} ${method}`)
    }
  }
})

test('case 9: HEAD has the same status and headers as GET, and no body', async (t) => {
  const cases: Headers[] = [{}, { 'if-none-match': '"v2"' }, { 'if-match': '"v1"' }, { 'if-modified-since': HTTP_T }, { 'if-none-match': '"zz"' }]
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    for (const url of ['/a/1', '/a/missing', '/hashed', '/hashed-dated']) {
      for (const headers of cases) {
        const get = await send(h, 'GET', url, headers)
        const head = await send(h, 'HEAD', url, headers)
        const label = `${profile} ${url} ${JSON.stringify(headers)}`
        t.equal(head.statusCode, get.statusCode, label)
        t.equal(head.body, '', `${label}: no body`)
        const strip = (hs: Record<string, unknown>) => { const { date: _d, ...rest } = hs; return rest }
        t.same(strip(head.headers), strip(get.headers), `${label}: same headers`)
      }
    }
  }
})

test('case 10: If-Match "v2" with a stale If-Unmodified-Since proceeds (ignored next to If-Match)', async (t) => {
  const h = await harness()
  const res = await send(h, 'PUT', '/a/1', { 'if-match': '"v2"', 'if-unmodified-since': HTTP_T_MINUS_1 }, {})
  t.equal(res.statusCode, 200)
})

test('case 11: If-Unmodified-Since T proceeds; T - 1s is 412', async (t) => {
  const h = await harness()
  assertEnvelope(t, await send(h, 'PUT', '/a/1', { 'if-unmodified-since': HTTP_T_MINUS_1 }, {}), 'If-Unmodified-Since', '"v2"')
  t.equal(h.runs.PUT, undefined)
  t.equal((await send(h, 'PUT', '/a/1', { 'if-unmodified-since': HTTP_T }, {})).statusCode, 200)
})

test('case 12: If-Unmodified-Since invalid, a list of dates, or on a resource without a date is ignored', async (t) => {
  const h = await harness()
  for (const value of ['garbage', `${HTTP_T_MINUS_1}, ${HTTP_T_MINUS_1}`, '', 'Mon, 32 Jan 2024 12:45:26 GMT']) {
    h.store.reset()
    t.equal((await send(h, 'PUT', '/a/1', { 'if-unmodified-since': value }, {})).statusCode, 200, JSON.stringify(value))
  }
  t.equal((await send(h, 'PUT', '/a/undated', { 'if-unmodified-since': HTTP_T_MINUS_1 }, {})).statusCode, 200, 'no modification date')
})

test('case 12 over a real socket: two If-Unmodified-Since lines are ignored (Node keeps only the first)', async (t) => {
  const h = await harness()
  const port = await listen(h.app)
  t.teardown(() => h.app.close())
  const res = await rawRequest(port, `DELETE /a/1 HTTP/1.1\r\nHost: x\r\nIf-Unmodified-Since: ${HTTP_T_MINUS_1}\r\nIf-Unmodified-Since: ${HTTP_T_MINUS_1}\r\nConnection: close\r\n\r\n`)
  t.equal(res.status, 200)
  const one = await rawRequest(port, `DELETE /a/1 HTTP/1.1\r\nHost: x\r\nIf-Unmodified-Since: ${HTTP_T_MINUS_1}\r\nConnection: close\r\n\r\n`)
  t.equal(one.status, 412, 'one line is evaluated (and the resource changed since)')
})

test('case 13: GET with a non-matching If-None-Match and If-Modified-Since T is 200 (IMS ignored)', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    t.equal((await send(h, 'GET', '/a/1', { 'if-none-match': '"v1"', 'if-modified-since': HTTP_T })).statusCode, 200)
    t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': HTTP_T })).statusCode, profile === 'spec' ? 412 : 304, 'alone it says not modified')
  }
})

test('case 14: PUT If-Modified-Since T is ignored (GET/HEAD only)', async (t) => {
  const h = await harness()
  t.equal((await send(h, 'PUT', '/a/1', { 'if-modified-since': HTTP_T }, {})).statusCode, 200)
})

test('case 15: one-second granularity, and Last-Modified is an IMF-fixdate', async (t) => {
  const h = await harness({ profile: 'rfc9110' })
  const full = await send(h, 'GET', '/a/1')
  t.equal(full.headers['last-modified'], 'Mon, 15 Jan 2024 12:45:26 GMT')
  t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': 'Mon, 15 Jan 2024 12:45:26 GMT' })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': HTTP_T_MINUS_1 })).statusCode, 200)
  t.equal((await send(h, 'PUT', '/a/1', { 'if-unmodified-since': 'Mon, 15 Jan 2024 12:45:26 GMT' }, {})).statusCode, 200)
  const spec = await harness()
  assertEnvelope(t, await send(spec, 'GET', '/a/1', { 'if-modified-since': HTTP_T }), 'If-Modified-Since', '"v2"')
})

test('case 16: RFC 850 and asctime dates are accepted; garbage is ignored', async (t) => {
  const h = await harness({ profile: 'rfc9110' })
  t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': RFC850_T })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': ASCTIME_T })).statusCode, 304)
  t.equal((await send(h, 'GET', '/a/1', { 'if-modified-since': 'garbage' })).statusCode, 200)
  assertEnvelope(t, await send(h, 'PUT', '/a/1', { 'if-unmodified-since': 'Monday, 15-Jan-24 12:45:25 GMT' }, {}), 'If-Unmodified-Since', '"v2"')
  assertEnvelope(t, await send(h, 'PUT', '/a/1', { 'if-unmodified-since': 'Mon Jan 15 12:45:25 2024' }, {}), 'If-Unmodified-Since', '"v2"')
})

test('case 17: a missing resource is 404 and missing credentials 401, before any precondition', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    t.equal((await send(h, 'GET', '/a/missing', { 'if-none-match': '"v2"' })).statusCode, 404)
    t.equal((await send(h, 'GET', '/a/missing', { 'if-none-match': '*' })).statusCode, 404)
    t.equal((await send(h, 'GET', '/a/missing', { 'if-match': '"v2"' })).statusCode, 404, '404 wins over If-Match on a route that does not create')
    t.equal((await send(h, 'DELETE', '/a/missing', { 'if-match': '"v2"' })).statusCode, 404)
    const r401 = await send(h, 'PUT', '/secure/1', { 'if-match': '"v1"' }, {})
    t.equal(r401.statusCode, 401)
    t.ok(r401.headers['www-authenticate'])
    assertEnvelope(t, await send(h, 'PUT', '/secure/1', { 'if-match': '"v1"', authorization: 'Basic eDp5' }, {}), 'If-Match', '"v2"')
  }
})

test('case 17: on a PUT that creates, If-Match on a missing resource is 412 (never a create)', async (t) => {
  const h = await harness()
  assertEnvelope(t, await send(h, 'PUT', '/a/new', { 'if-match': '"v2"' }, {}), 'If-Match')
  t.notOk(h.store.rows.has('new'))
})

test('case 18: an unquoted If-Match never lets the method run: 412 on every method', async (t) => {
  const h = await harness()
  for (const method of ['PUT', 'PATCH', 'DELETE', 'POST', 'GET']) {
    const res = await send(h, method, '/a/1', { 'if-match': 'v2' }, method === 'GET' ? undefined : {})
    assertEnvelope(t, res, 'If-Match', '"v2"')
    t.match(res.json(), { errors: [{ message: /not a valid entity-tag list/ }] })
  }
  assertEnvelope(t, await send(h, 'GET', '/hashed', { 'if-match': 'v2' }), 'If-Match')
  assertEnvelope(t, await send(h, 'PUT', '/a/missing', { 'if-match': 'v2' }, {}), 'If-Match')
  t.same(h.runs, {}, 'no handler ran')
})

test('case 19: GET If-Match "v1" is 412', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    assertEnvelope(t, await send(h, 'GET', '/a/1', { 'if-match': '"v1"' }), 'If-Match', '"v2"')
    t.equal((await send(h, 'GET', '/a/1', { 'if-match': '"v2"' })).statusCode, 200)
  }
})

test('case 20: 428 mode: PUT/PATCH/DELETE without If-Match or If-Unmodified-Since are 428, not cacheable, with how to retry', async (t) => {
  const h = await harness({}, { requirePrecondition: true })
  for (const method of ['PUT', 'PATCH', 'DELETE']) {
    for (const headers of [{}, { 'if-none-match': '"zz"' }, { 'if-modified-since': HTTP_T }] as Headers[]) {
      const res = await send(h, method, '/a/1', headers, {})
      t.equal(res.statusCode, 428, `${method} ${JSON.stringify(headers)}`)
      t.equal(res.headers['cache-control'], 'no-store')
      t.match(res.headers['content-type'], /^application\/json/)
      t.match(res.json(), { errors: [{ field: 'If-Match', message: /GET the resource, then repeat this request with If-Match set to its ETag/ }] })
    }
  }
  t.equal((await send(h, 'PUT', '/a/1', { 'if-match': '"v2"' }, {})).statusCode, 200)
  t.equal((await send(h, 'PATCH', '/a/1', { 'if-unmodified-since': formatHttpDate(Date.now() + 5000) }, {})).statusCode, 200)
  t.equal((await send(h, 'POST', '/a/1', {}, {})).statusCode, 200, 'POST is not in the default methods')
  t.equal((await send(h, 'GET', '/a/1')).statusCode, 200)
  t.equal((await send(h, 'DELETE', '/a/missing', {}, {})).statusCode, 404, 'a missing resource is 404, not 428')
  assertEnvelope(t, await send(h, 'PUT', '/a/1', { 'if-match': 'junk' }, {}), 'If-Match', `"${h.store.rows.get('1')?.etag}"`)
})

test('428 is per route and its methods are configurable', async (t) => {
  const app = await buildApp({ conditional: { requirePreconditionMethods: ['post'] } })
  const v = () => ({ etag: 'v1' })
  app.post('/p', { config: { conditional: { validators: v, requirePrecondition: true } } }, async () => 'ok')
  app.put('/p', { config: { conditional: { validators: v, requirePrecondition: true } } }, async () => 'ok')
  app.post('/off', { config: { conditional: { validators: v } } }, async () => 'ok')
  t.equal((await app.inject({ method: 'POST', url: '/p', payload: {} })).statusCode, 428)
  t.equal((await app.inject({ method: 'PUT', url: '/p', payload: {} })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/off', payload: {} })).statusCode, 200)
  const global = await buildApp({ conditional: { requirePrecondition: true } })
  global.delete('/x', { config: { conditional: { validators: v, requirePrecondition: false } } }, async () => 'ok')
  t.equal((await global.inject({ method: 'DELETE', url: '/x' })).statusCode, 200)
})

test('provider-given ETag: a bare value is sent quoted, Last-Modified as an IMF-fixdate; sync and async providers', async (t) => {
  const h = await harness()
  const res = await send(h, 'GET', '/a/1')
  t.equal(res.statusCode, 200)
  t.equal(res.headers.etag, '"v2"')
  t.equal(res.headers['last-modified'], HTTP_T)
  const sync = await send(h, 'GET', '/sync/1')
  t.equal(sync.headers.etag, '"v2"')
  assertEnvelope(t, await send(h, 'GET', '/sync/1', { 'if-none-match': '"v2"' }), 'If-None-Match', '"v2"')
  t.equal((await send(h, 'GET', '/a/undated')).headers['last-modified'], undefined, 'no date, no Last-Modified')
  const missing = await send(h, 'GET', '/a/missing')
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.etag, undefined, 'a 404 carries no validator')
  const put = await send(h, 'PUT', '/a/1', { 'if-match': '"v2"' }, {})
  t.equal(put.headers.etag, '"v3"', 'RFC 9110 8.8.3, 9.3.4: a write\'s answer carries the validators of the state it stored, never the old ones')
})

test('provider-given ETag: a Date, a weak tag, the handler\'s own ETag wins on the 200', async (t) => {
  const app = await buildApp({ profile: 'rfc9110' })
  app.get('/d', { config: { conditional: { validators: () => ({ etag: 'W/"w1"', lastModified: new Date(STORED) }) } } }, async () => 'd')
  app.get('/own', { config: { conditional: { validators: () => ({ etag: '"p"' }) } } }, async (_req, reply) => { reply.header('etag', '"h"').header('last-modified', HTTP_T_MINUS_1); return 'o' })
  app.get('/none', { config: { conditional: { validators: () => ({}) } } }, async () => 'n')
  const d = await app.inject('/d')
  t.equal(d.headers.etag, 'W/"w1"')
  t.equal(d.headers['last-modified'], HTTP_T)
  const notMod = await app.inject({ url: '/d', headers: { 'if-modified-since': HTTP_T, 'if-none-match': '"w1"' } })
  t.equal(notMod.statusCode, 304)
  t.equal(notMod.headers['last-modified'], undefined)
  const own = await app.inject('/own')
  t.equal(own.headers.etag, '"h"')
  t.equal(own.headers['last-modified'], HTTP_T_MINUS_1)
  const none = await app.inject({ url: '/none', headers: { 'if-match': '"x"' } })
  t.equal(none.statusCode, 412, 'a resource without an ETag matches no If-Match tag')
  t.equal(none.headers.etag, undefined)
  t.equal((await app.inject({ url: '/none', headers: { 'if-match': '*' } })).statusCode, 200)
})

test('RFC 9110 15.4.5: a 304 without an ETag keeps Last-Modified', async (t) => {
  const app = await buildApp({ profile: 'rfc9110' })
  app.get('/d', { config: { conditional: { validators: () => ({ lastModified: STORED }) } } }, async () => 'd')
  const res = await app.inject({ url: '/d', headers: { 'if-modified-since': HTTP_T } })
  t.equal(res.statusCode, 304)
  t.equal(res.headers['last-modified'], HTTP_T)
  t.equal(res.headers.etag, undefined)
})

test('a provider that throws, rejects or answers nonsense is the route\'s error (500), not a 412', async (t) => {
  const app = await buildApp()
  const boom = (): never => { throw new Error('db down') }
  app.get('/throws', { config: { conditional: { validators: boom } } }, async () => 'x')
  app.get('/rejects', { config: { conditional: { validators: async () => boom() } } }, async () => 'x')
  app.get('/bad-etag', { config: { conditional: { validators: () => ({ etag: 'has space' }) } } }, async () => 'x')
  app.get('/bad-date', { config: { conditional: { validators: () => ({ lastModified: new Date('nope') }) } } }, async () => 'x')
  app.get('/bad-shape', { config: { conditional: { validators: () => 'v2' as unknown as ProvidedValidators } } }, async () => 'x')
  for (const url of ['/throws', '/rejects', '/bad-etag', '/bad-date', '/bad-shape']) {
    const res = await app.inject({ url, headers: { 'if-match': '"v2"' } })
    t.equal(res.statusCode, 500, url)
  }
  t.equal((await app.inject('/throws')).json().message, 'db down', 'the app\'s error, as the app\'s handlers answer it')
})

test('payload-hashed ETag: computed from the payload on routes that opt in; the plugin decides 412/304 on it', async (t) => {
  const spec = await harness()
  const full = await send(spec, 'GET', '/hashed')
  t.equal(full.statusCode, 200)
  t.equal(full.headers.etag, sha1(full.body), 'sha1 of the payload, base64, strong')
  assertEnvelope(t, await send(spec, 'GET', '/hashed', { 'if-none-match': full.headers.etag as string }), 'If-None-Match', full.headers.etag as string)
  t.equal((await send(spec, 'GET', '/hashed', { 'if-match': full.headers.etag as string })).statusCode, 200)
  assertEnvelope(t, await send(spec, 'GET', '/hashed', { 'if-match': '"other"' }), 'If-Match', full.headers.etag as string)
  t.equal((await send(spec, 'GET', '/hashed', { 'if-none-match': '"other"' })).statusCode, 200)
  t.equal((await send(spec, 'GET', '/hashed', { 'if-modified-since': HTTP_T })).statusCode, 200, 'no date known: IMS ignored')
  t.equal((await send(spec, 'GET', '/plain', { 'if-none-match': '*' })).headers.etag, undefined, 'routes that do not opt in get no ETag')

  const rfc = await harness({ profile: 'rfc9110' })
  const r304 = await send(rfc, 'GET', '/hashed', { 'if-none-match': `"x", ${full.headers.etag as string}` })
  t.equal(r304.statusCode, 304)
  t.equal(r304.headers.etag, full.headers.etag)
  t.equal(r304.body, '')
  t.equal(r304.headers['content-type'], undefined)
  const dated = await send(rfc, 'GET', '/hashed-dated', { 'if-modified-since': HTTP_T })
  t.equal(dated.statusCode, 304, 'the handler\'s own Last-Modified is evaluated')
  t.equal((await send(rfc, 'GET', '/hashed-dated', { 'if-modified-since': HTTP_T_MINUS_1 })).statusCode, 200)
  const own = await send(rfc, 'GET', '/own-etag', { 'if-none-match': '"mine"' })
  t.equal(own.statusCode, 304, 'a handler\'s own ETag is not replaced by a hash')
  t.equal(own.headers.etag, '"mine"')
  t.equal((await send(rfc, 'GET', '/bad-own-etag', { 'if-none-match': '"x"' })).statusCode, 500, 'a handler\'s malformed ETag is its bug')
  const stream = await send(rfc, 'GET', '/stream', { 'if-none-match': '*' })
  t.equal(stream.statusCode, 304, 'a stream is not hashed; * matches any existing representation')
  t.equal((await send(rfc, 'GET', '/stream', { 'if-match': '"x"' })).statusCode, 412)
})

test('payload-hashed ETag: the same values as @fastify/etag, for its default and for weak md5', async (t) => {
  for (const etag of [{}, { weak: true, algorithm: 'md5' }]) {
    const ours = await buildApp({ conditional: { etag } })
    ours.get('/w', { config: { conditional: true } }, async () => 'body')
    const peer = Fastify()
    await peer.register(fastifyEtag, { ...etag, replyWith304: false })
    peer.get('/w', async () => 'body')
    t.equal((await ours.inject('/w')).headers.etag, (await peer.inject('/w')).headers.etag, JSON.stringify(etag))
    await ours.close()
    await peer.close()
  }
})

test('payload-hashed ETag: weak and algorithm options', async (t) => {
  const app = await buildApp({ conditional: { etag: { weak: true, algorithm: 'md5' } } })
  app.get('/w', { config: { conditional: true } }, async () => 'body')
  const res = await app.inject('/w')
  t.equal(res.headers.etag, 'W/"' + createHash('md5').update('body').digest('base64') + '"')
  t.equal((await app.inject({ url: '/w', headers: { 'if-match': res.headers.etag as string } })).statusCode, 412, 'a weak ETag never satisfies If-Match')
  t.equal((await app.inject({ url: '/w', headers: { 'if-none-match': res.headers.etag as string } })).statusCode, 412)
})

test('the handler receives the parsed conditions and the validators they were evaluated against', async (t) => {
  const h = await harness()
  await send(h, 'PUT', '/a/1', { 'if-match': '"x", W/"y", "v2"', 'if-unmodified-since': HTTP_T, 'if-modified-since': HTTP_T }, {})
  const p = h.seen[0]
  if (p === null || p === undefined) throw new Error('no preconditions')
  t.same(p.conditions.ifMatch, [{ weak: false, opaque: 'x' }, { weak: true, opaque: 'y' }, { weak: false, opaque: 'v2' }])
  t.equal(p.conditions.ifUnmodifiedSince, T)
  t.equal(p.conditions.ifModifiedSince, T)
  t.same(p.validators, { exists: true, etag: '"v2"', lastModified: STORED })
  t.equal(p.etag, 'v2', 'as the store keeps it')
  t.equal(p.expectedEtag, 'v2')
  t.equal(p.conditional, true)
  t.equal(p.holds({ etag: 'v2' }), true)
  t.equal(p.holds({ etag: 'v3' }), false)
  t.equal(p.holds(null), false)
  t.throws(() => p.assert({ etag: '"v3"' }), { statusCode: 412, errors: [{ field: 'If-Match' }], headers: { etag: '"v3"' } })
  t.doesNotThrow(() => p.assert({ etag: 'v2' }))

  await send(h, 'DELETE', '/a/1', {}, {})
  const plain = h.seen[1]
  t.equal(plain?.conditional, false)
  t.equal(plain?.expectedEtag, null, 'an unconditional write compares nothing')
  t.same(plain?.conditions, {})

  await send(h, 'GET', '/a/1', { 'if-modified-since': HTTP_T_MINUS_1 })
  t.equal(h.seen[2]?.expectedEtag, null, 'If-Modified-Since alone is not a condition on the written state')
  t.equal(h.seen[2]?.conditional, true)
})

test('request.preconditions is null on routes that do not opt in, and on config.conditional: false', async (t) => {
  const app = await buildApp()
  let seen: unknown = 'unset'
  app.get('/off', { config: { conditional: false } }, async (req) => { seen = req.preconditions; return 'x' })
  const res = await app.inject({ url: '/off', headers: { 'if-match': 'garbage' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.etag, undefined)
  t.equal(seen, null)
})

test('a lost race (the ETag changed between check and write) is 412 through the error handler; no update is lost', async (t) => {
  const h = await harness()
  h.race.before = () => { h.store.compareAndSet('1', 'v2', 'concurrent') }
  const res = await send(h, 'PUT', '/a/1', { 'if-match': '"v2"' }, { title: 'mine' })
  assertEnvelope(t, res, 'If-Match')
  t.match(res.json(), { errors: [{ message: /changed while this request was processed/ }] })
  t.equal(h.store.rows.get('1')?.title, 'concurrent', 'the concurrent write survives')
  h.race.before = undefined

  h.store.reset()
  h.race.before = () => { h.store.compareAndSet('1', 'v2', 'concurrent') }
  assertEnvelope(t, await send(h, 'DELETE', '/a/1', { 'if-unmodified-since': HTTP_T }, {}), 'If-Unmodified-Since')
  h.race.before = () => { h.store.insert('raced', 'first') }
  assertEnvelope(t, await send(h, 'PUT', '/a/raced', { 'if-none-match': '*' }, {}), 'If-None-Match')
  h.race.before = undefined

  // Many interleaved read-modify-write clients: every 2xx is one applied update.
  h.store.reset()
  let ok = 0
  let failed = 0
  await Promise.all(Array.from({ length: 40 }, async () => {
    const get = await send(h, 'GET', '/a/1')
    const put = await send(h, 'PUT', '/a/1', { 'if-match': get.headers.etag as string }, {})
    if (put.statusCode === 200) ok++
    else if (put.statusCode === 412) failed++
  }))
  t.equal(ok + failed, 40)
  t.equal(h.store.version - 2, ok, 'the number of applied writes equals the number of 2xx answers')
})

test('failed() names the header the request was conditional on and may carry the current ETag', async (t) => {
  const app = await buildApp()
  const out: Array<ReturnType<NonNullable<FastifyRequest['preconditions']>['failed']>> = []
  app.post('/f', { config: { conditional: { validators: () => ({ etag: 'v1' }) } } }, async (req) => {
    out.push((req.preconditions as NonNullable<FastifyRequest['preconditions']>).failed('custom', 'v9'))
    return 'x'
  })
  await app.inject({ method: 'POST', url: '/f', payload: {} })
  await app.inject({ method: 'POST', url: '/f', payload: {}, headers: { 'if-none-match': '"zz"' } })
  t.match(out[0], { errors: [{ field: 'If-Match', message: 'custom' }], headers: { etag: '"v9"' } })
  t.match(out[1], { errors: [{ field: 'If-None-Match' }] })
})

test('bad input is never a 5xx and a bad If-Match never runs the handler', async (t) => {
  const long = Array.from({ length: 5000 }, (_, i) => `"t${i}"`).join(', ')
  const manyCommas = ','.repeat(20000)
  const values = [
    'v2', '"v2', 'v2"', '"v"2"', 'W/v2', 'w/"v2"', '* , "v2"', '"v2", *', '**', '*"v2"', '"a" "b"', '"a";"b"',
    '"\u0000"', '"a\tb"', long, manyCommas, '"' + 'a'.repeat(100000) + '"', 'W/', '"', 'W/"v2" x', '"\u0100"'
  ]
  const dates = ['garbage', 'Mon, 15 Jan 2024 25:61:61 GMT', '0', '-1', '99999999999999', 'Mon, 15 Jan 2024 12:45:26 GMT, x', '\u00e9t\u00e9', 'x'.repeat(10000)]
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await harness({ profile })
    for (const v of values) {
      const put = await send(h, 'PUT', '/a/1', { 'if-match': v }, {})
      t.equal(put.statusCode, 412, `PUT If-Match ${JSON.stringify(v.slice(0, 20))}`)
      const before = h.runs.hashed ?? 0
      const get = await send(h, 'GET', '/hashed', { 'if-match': v })
      t.equal(get.statusCode, 412)
      t.equal(h.runs.hashed ?? 0, before, 'a malformed If-Match does not run even a GET handler')
      for (const url of ['/a/1', '/hashed']) {
        const inm = await send(h, 'GET', url, { 'if-none-match': v })
        t.ok(inm.statusCode < 500, `GET If-None-Match ${JSON.stringify(v.slice(0, 20))}`)
      }
      const putInm = await send(h, 'PUT', '/a/1', { 'if-none-match': v }, {})
      t.equal(putInm.statusCode, 412, 'a malformed If-None-Match never lets a write run')
    }
    t.equal(h.runs.PUT, undefined, 'no PUT handler ran')
    // Odd but well-formed: an empty list (holds for If-None-Match, fails If-Match) and an obs-text tag.
    for (const v of [' ', ',', '"\u00ff"']) {
      h.store.reset()
      t.equal((await send(h, 'PUT', '/a/1', { 'if-match': v }, {})).statusCode, 412, JSON.stringify(v))
      t.equal((await send(h, 'PUT', '/a/1', { 'if-none-match': v }, {})).statusCode, 200, JSON.stringify(v))
    }
    for (const d of dates) {
      for (const name of ['if-modified-since', 'if-unmodified-since']) {
        h.store.reset()
        const get = await send(h, 'GET', '/a/1', { [name]: d })
        const put = await send(h, 'PUT', '/a/1', { [name]: d }, {})
        t.equal(get.statusCode, 200, `${name} ${JSON.stringify(d.slice(0, 20))} ignored`)
        t.equal(put.statusCode, 200)
      }
    }
  }
})

test('fresh as an oracle: If-None-Match / If-Modified-Since agree with npm fresh in the rfc9110 profile', async (t) => {
  const app = await buildApp({ profile: 'rfc9110' })
  const current = ['"v2"', 'W/"v2"', '"abc"']
  let etag = current[0]
  app.get('/o', { config: { conditional: { validators: () => ({ etag, lastModified: STORED }) } } }, async () => 'body')
  const tags = ['"v2"', 'W/"v2"', '"abc"', 'W/"abc"', '"V2"', '"x"', 'W/"x"']
  const seps = [', ', ',', ' , ', ' ,']
  let seed = 7
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n }
  const dates = [HTTP_T_MINUS_1, HTTP_T, HTTP_T_PLUS_1, undefined]
  let compared = 0
  for (let i = 0; i < 400; i++) {
    etag = current[rnd(current.length)]
    const n = rnd(4)
    let inm: string | undefined
    if (n === 0) inm = rnd(3) === 0 ? '*' : undefined
    else inm = Array.from({ length: n }, () => tags[rnd(tags.length)]).reduce((acc, tag) => acc + seps[rnd(seps.length)] + tag)
    const ims = dates[rnd(dates.length)]
    const headers: Record<string, string> = {}
    if (inm !== undefined) headers['if-none-match'] = inm
    if (ims !== undefined) headers['if-modified-since'] = ims
    const res = await app.inject({ url: '/o', headers })
    const oracle = fresh(headers, { etag, 'last-modified': HTTP_T })
    t.equal(res.statusCode === 304, oracle, `${JSON.stringify(headers)} against ${etag}`)
    t.ok(res.statusCode === 304 || res.statusCode === 200)
    compared++
  }
  t.equal(compared, 400)
})

test('options are validated at registration: a typo throws FST_HTTP_CONVENTIONS_INVALID_OPTION', async (t) => {
  const bad: unknown[] = [
    { notModifedStatus: 304 }, { notModifiedStatus: 200 }, { requirePrecondition: 'yes' }, { requirePreconditionMethods: 'PUT' },
    { requirePreconditionMethods: [''] }, { etag: 'sha1' }, { etag: { weak: 'no' } }, { etag: { algo: 'sha1' } }, { etag: { algorithm: 1 } },
    { etag: { algorithm: 'no-such-hash' } }, { profile: 'strict' }
  ]
  for (const opts of bad) {
    const app = Fastify()
    app.register(httpConventionsConditional, opts as ConditionalOptions)
    await t.rejects(boot(app.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(opts))
  }
  const umbrella = Fastify()
  umbrella.register(httpConventions, { conditional: { requirePrecondtion: true } as ConditionalOptions })
  await t.rejects(boot(umbrella.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
})

test('route config is validated when the route is added', async (t) => {
  const bad: Array<[string, unknown]> = [
    ['GET', 'yes'], ['GET', { validator: () => null }], ['GET', { validators: 'v2' }], ['GET', { requirePrecondition: 1 }],
    ['GET', { creates: 'no' }], ['PUT', true], ['DELETE', {}], ['POST', { requirePrecondition: true }]
  ]
  for (const [method, conditional] of bad) {
    const app = await buildApp()
    t.throws(() => app.route({ method: method as 'GET', url: '/x', config: { conditional } as RouteOptions['config'], handler: async () => 'x' }),
      { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, `${method} ${JSON.stringify(conditional)}`)
  }
})

test('notModifiedStatus overrides the profile, and the option works on the plugin alone', async (t) => {
  const a = Fastify(serverOptions)
  await a.register(httpConventionsConditional, { notModifiedStatus: 304 })
  let calls = 0
  a.get('/x', { config: { conditional: { validators: () => { calls++; return { etag: 'v2' } } } } }, async () => 'x')
  const r = await a.inject({ url: '/x', headers: { 'if-none-match': '"v2"' } })
  t.equal(r.statusCode, 304, 'spec profile with notModifiedStatus 304')
  t.equal(calls, 1, 'the provider is read once per request')
  const b = await buildApp({ profile: 'rfc9110', conditional: { notModifiedStatus: 412 } })
  b.get('/x', { config: { conditional: { validators: () => ({ etag: 'v2' }) } } }, async () => 'x')
  t.equal((await b.inject({ url: '/x', headers: { 'if-none-match': '"v2"' } })).statusCode, 412)
  const c = Fastify(serverOptions)
  await c.register(httpConventionsConditional, { profile: 'rfc9110' })
  c.get('/x', { config: { conditional: { validators: () => ({ etag: 'v2' }) } } }, async () => 'x')
  t.equal((await c.inject({ url: '/x', headers: { 'if-none-match': '"v2"' } })).statusCode, 304)
})

test('conditional: false in the umbrella, and a route asking for it: ready() rejects naming the route (fail closed)', async (t) => {
  const app = await buildApp({ conditional: false })
  app.get('/x', { config: { conditional: { validators: () => ({ etag: 'v2' }) } } }, async () => 'x')
  app.get('/y', async () => 'y')
  await t.rejects(boot(app.ready()), /route GET \/x asks for conditional/)
})

test('OpenAPI: the route records 412, and 304 / 428 where they apply', async (t) => {
  const app = await buildApp({ profile: 'rfc9110', conditional: { requirePrecondition: true } })
  const routes: Record<string, RouteOptions> = {}
  app.addHook('onRoute', (r) => { routes[`${String(r.method)} ${r.url}`] = r })
  const v = () => ({ etag: 'v1' })
  app.get('/g', { config: { conditional: { validators: v } } }, async () => 'x')
  app.put('/g', { config: { conditional: { validators: v } } }, async () => 'x')
  await app.ready()
  t.same(Object.keys(conventionResponses(routes['GET /g'])).sort(), ['304', '412'])
  t.same(Object.keys(conventionResponses(routes['PUT /g'])).filter((s) => ['304', '412', '428'].includes(s)).sort(), ['412', '428'], 'no 304 on a write')
  t.match(conventionResponses(routes['PUT /g'])['412'], { body: 'envelope', headers: ['ETag'] })
})

test('request.preconditions.expectedLastModified: the date the client held when If-Unmodified-Since governs the write, else null', async (t) => {
  const app = await buildApp()
  const lastModified = Date.UTC(2026, 0, 1, 12, 0, 0)
  app.put('/x', { config: { conditional: { validators: () => ({ etag: '"v1"', lastModified }) } } }, async (request) => ({ expected: request.preconditions?.expectedLastModified ?? null }))
  const put = async (headers: Record<string, string>): Promise<unknown> => (await app.inject({ method: 'PUT', url: '/x', headers: { 'content-type': 'application/json', ...headers }, payload: '{}' })).json()
  const date = new Date(lastModified).toUTCString()
  t.same(await put({ 'if-unmodified-since': date }), { expected: lastModified })
  t.same(await put({ 'if-unmodified-since': date, 'if-match': '"v1"' }), { expected: null }, 'If-Match governs: compare the ETag instead (RFC 9110 13.2.2)')
  t.same(await put({}), { expected: null })
})

test('RFC 9110 8.8.2.1: a provider\'s Last-Modified later than now is sent as the answer\'s Date, never later', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  const future = Date.now() + 3_600_000
  app.get('/future', { config: { conditional: { validators: () => ({ etag: '"f"', lastModified: future }) } } }, async () => 'x')
  app.get('/past', { config: { conditional: { validators: () => ({ etag: '"p"', lastModified: Date.UTC(2020, 0, 1) }) } } }, async () => 'x')
  const res = await app.inject('/future')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['last-modified'], res.headers.date, 'clamped to Date')
  t.ok(Date.parse(String(res.headers['last-modified'])) <= Date.now())
  t.equal((await app.inject('/past')).headers['last-modified'], 'Wed, 01 Jan 2020 00:00:00 GMT', 'a past date is sent as it is')
})
