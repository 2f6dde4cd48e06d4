import { test } from 'tap'
import Fastify from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { httpConventionsPatch, type PatchableResource } from '../../plugins/index'

interface Doc { id: string, title: string, tags: string[], author?: { name: string } }

const schema = {
  type: 'object',
  required: ['id', 'title', 'tags'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', readOnly: true },
    title: { type: 'string', minLength: 1 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
    author: { type: 'object', additionalProperties: false, properties: { name: { type: 'string' } } }
  }
}

/** An in-memory store with a version per document: save is a compare-and-set on the ETag. */
function memoryStore () {
  const docs = new Map<string, { doc: Doc, version: number }>([['1', { doc: { id: '1', title: 'Hello', tags: ['a'] }, version: 1 }]])
  const store = {
    docs,
    saves: 0,
    beforeSave: null as null | (() => void),
    load (id: string): PatchableResource<Doc> | null {
      const e = docs.get(id)
      return e === undefined ? null : { document: structuredClone(e.doc), etag: `"v${e.version}"` }
    },
    save (id: string, doc: Doc, expected: string | undefined): PatchableResource<Doc> | false {
      store.beforeSave?.()
      const e = docs.get(id)
      if (e === undefined || `"v${e.version}"` !== expected) return false
      store.saves++
      docs.set(id, { doc, version: e.version + 1 })
      return { document: doc, etag: `"v${e.version + 1}"` }
    }
  }
  return store
}

async function app (formats?: Array<'json-patch' | 'merge-patch'>) {
  const store = memoryStore()
  const a = await buildApp()
  const id = (r: { params: unknown }) => (r.params as { id: string }).id
  a.get('/docs/:id', { config: { conditional: { validators: (r) => { const d = store.load(id(r)); return d && { etag: d.etag } } } } }, async (r, reply) => {
    const d = store.load(id(r))
    return d === null ? reply.callNotFound() : d.document
  })
  a.put('/docs/:id', { config: { conditional: { validators: (r) => { const d = store.load(id(r)); return d && { etag: d.etag } } } } }, async () => ({ ok: true }))
  a.patch('/docs/:id', {
    config: { patch: { schema, formats, load: (r) => store.load(id(r)), save: (r, doc, expected) => store.save(id(r), doc as Doc, expected) } }
  }, async (request, reply) => reply.header('etag', request.patched?.etag).send(request.patched?.document))
  a.get('/other', async () => ({ ok: true }))
  return { a, store }
}

const JP = { 'content-type': 'application/json-patch+json' }
const MP = { 'content-type': 'application/merge-patch+json' }

test('RFC 6902: all six operations apply, and the result is stored', async (t) => {
  const { a, store } = await app()
  const res = await a.inject({
    method: 'PATCH',
    url: '/docs/1',
    headers: JP,
    payload: [
      { op: 'test', path: '/title', value: 'Hello' },
      { op: 'replace', path: '/title', value: 'Bye' },
      { op: 'add', path: '/tags/-', value: 'b' },
      { op: 'copy', from: '/tags/0', path: '/tags/-' },
      { op: 'remove', path: '/tags/2' },
      { op: 'add', path: '/author', value: { name: 'x' } },
      { op: 'move', from: '/author/name', path: '/author/name' }
    ]
  })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { id: '1', title: 'Bye', tags: ['a', 'b'], author: { name: 'x' } })
  t.equal(res.headers.etag, '"v2"')
  t.same(store.docs.get('1')?.doc, { id: '1', title: 'Bye', tags: ['a', 'b'], author: { name: 'x' } })
})

test('RFC 7396: merge patch (null removes), then the same validation', async (t) => {
  const { a } = await app()
  await a.inject({ method: 'PATCH', url: '/docs/1', headers: MP, payload: { author: { name: 'n' } } })
  const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { 'content-type': 'application/merge-patch+json; charset=UTF-8' }, payload: { title: 'T', author: null } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { id: '1', title: 'T', tags: ['a'] })
  const bad = await a.inject({ method: 'PATCH', url: '/docs/1', headers: MP, payload: { title: '', tags: 'x', zzz: 1 } })
  t.equal(bad.statusCode, 422)
  t.same(bad.json().errors.map((e: { field: string }) => e.field).sort(), ['tags', 'title', 'zzz'])
})

test('conventions (PATCH and Accept-Patch): a PATCH body of another media type is 415 with Accept-Patch and the envelope', async (t) => {
  const { a } = await app()
  for (const ct of ['application/json', 'text/plain', 'application/xml']) {
    const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { 'content-type': ct }, payload: '[]' })
    t.equal(res.statusCode, 415, ct)
    t.equal(res.headers['accept-patch'], 'application/json-patch+json, application/merge-patch+json')
    t.same(res.json().errors[0].field, 'Content-Type')
  }
  const latin = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { 'content-type': 'application/json-patch+json; charset=latin1' }, payload: '[]' })
  t.equal(latin.statusCode, 415)
})

test('RFC 5789 3.1: Accept-Patch on 2xx of GET, HEAD, PUT and PATCH of the resource; not elsewhere or on errors', async (t) => {
  const { a } = await app(['json-patch'])
  for (const [method, payload] of [['GET'], ['HEAD'], ['PUT', { x: 1 }]] as Array<[string, unknown?]>) {
    const res = await a.inject({ method: method as 'GET', url: '/docs/1', payload: payload as object })
    t.equal(res.headers['accept-patch'], 'application/json-patch+json', method)
  }
  t.equal((await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: [] })).headers['accept-patch'], 'application/json-patch+json')
  t.equal((await a.inject('/docs/404')).headers['accept-patch'], undefined, 'not on a 404')
  t.equal((await a.inject('/other')).headers['accept-patch'], undefined)
  const merge = await a.inject({ method: 'PATCH', url: '/docs/1', headers: MP, payload: {} })
  t.equal(merge.statusCode, 415, 'a format the route does not list')
})

test('failing test, unresolvable path and invalid patch documents are 422 naming the operation\'s path', async (t) => {
  const { a, store } = await app()
  const cases: Array<[unknown, string]> = [
    [[{ op: 'test', path: '/title', value: 'nope' }], 'title'],
    [[{ op: 'replace', path: '/missing/deep', value: 1 }], 'missing.deep'],
    [{ op: 'replace' }, 'body'],
    [[{ op: 'frobnicate', path: '/title' }], 'title'],
    [[{ op: 'add', path: '/title' }], 'title'],
    [[{ op: 'move', path: '/title' }], 'title'],
    [[{ op: 'replace', path: '/tags/01', value: 'z' }], 'tags.01'],
    [[{ op: 'add', path: '/__proto__/polluted', value: 1 }], '__proto__.polluted'],
    [[{ op: 'add', path: '/constructor/prototype/polluted', value: 1 }], 'constructor.prototype.polluted']
  ]
  for (const [payload, field] of cases) {
    const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: JSON.stringify(payload) })
    t.equal(res.statusCode, 422, JSON.stringify(payload))
    t.equal(res.json().errors[0].field, field)
  }
  t.equal(store.saves, 0, 'nothing was stored')
  t.same(store.docs.get('1')?.doc, { id: '1', title: 'Hello', tags: ['a'] })
})

test('the patched document is validated against the resource schema; read-only fields cannot change', async (t) => {
  const { a, store } = await app()
  const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: [{ op: 'add', path: '/tags/-', value: 1 }, { op: 'add', path: '/extra', value: true }] })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors.map((e: { field: string }) => e.field).sort(), ['extra', 'tags.1'])
  const ro = await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: [{ op: 'replace', path: '/id', value: '2' }] })
  t.equal(ro.statusCode, 422)
  t.same(ro.json(), { errors: [{ field: 'id', message: 'is read-only' }] })
  t.equal(store.saves, 0)
})

test('prototype poisoning in a patch body is refused (400) and bad JSON is 400 field body', async (t) => {
  const { a } = await app()
  const proto = await a.inject({ method: 'PATCH', url: '/docs/1', headers: MP, payload: '{"__proto__":{"x":1}}' })
  t.equal(proto.statusCode, 400)
  const bad = await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: '[{' })
  t.same(bad.json(), { errors: [{ field: 'body', message: 'body is not well-formed JSON' }] })
})

test('conditional like PUT: If-Match must hold, a stale one is 412 and nothing is stored', async (t) => {
  const { a, store } = await app()
  const stale = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { ...JP, 'if-match': '"v0"' }, payload: [{ op: 'replace', path: '/title', value: 'x' }] })
  t.equal(stale.statusCode, 412)
  t.equal(stale.headers.etag, '"v1"')
  t.equal(stale.json().errors[0].field, 'If-Match')
  const fresh = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { ...JP, 'if-match': '"v1"' }, payload: [{ op: 'replace', path: '/title', value: 'x' }] })
  t.equal(fresh.statusCode, 200)
  t.equal(store.saves, 1)
  const missing = await a.inject({ method: 'PATCH', url: '/docs/9', headers: JP, payload: [] })
  t.equal(missing.statusCode, 404)
})

test('a conditional PATCH that loses a race to another write is 412; nothing is overwritten', async (t) => {
  const { a, store } = await app()
  store.beforeSave = () => { store.beforeSave = null; store.docs.set('1', { doc: { id: '1', title: 'Other', tags: [] }, version: 7 }) }
  const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: { ...JP, 'if-match': '"v1"' }, payload: [{ op: 'replace', path: '/title', value: 'Mine' }] })
  t.equal(res.statusCode, 412)
  t.equal(store.docs.get('1')?.doc.title, 'Other')
})

test('an unconditional PATCH that loses a race is re-applied to the new state: no update is lost', async (t) => {
  const { a, store } = await app()
  store.beforeSave = () => { store.beforeSave = null; store.docs.set('1', { doc: { id: '1', title: 'Other', tags: ['z'] }, version: 7 }) }
  const res = await a.inject({ method: 'PATCH', url: '/docs/1', headers: JP, payload: [{ op: 'add', path: '/tags/-', value: 'mine' }] })
  t.equal(res.statusCode, 200)
  t.same(store.docs.get('1')?.doc, { id: '1', title: 'Other', tags: ['z', 'mine'] }, 'both writes survive')
  t.equal(res.headers.etag, '"v8"')
})

test('a resource that keeps changing ends in 412 after maxRetries', async (t) => {
  const store = memoryStore()
  const a = Fastify()
  await a.register(httpConventionsPatch, { maxRetries: 1 })
  a.patch('/d', { config: { patch: { schema, load: () => store.load('1'), save: () => false } } }, async () => 'never')
  const res = await a.inject({ method: 'PATCH', url: '/d', headers: JP, payload: [] })
  t.equal(res.statusCode, 412)
  t.match(res.json().errors[0].message, /kept changing while the patch was applied \(2 attempts\)/)
  const gone = Fastify()
  await gone.register(httpConventionsPatch)
  let n = 0
  gone.patch('/d', { config: { patch: { schema, load: () => (n++ === 0 ? store.load('1') : null), save: () => false } } }, async () => 'never')
  t.equal((await gone.inject({ method: 'PATCH', url: '/d', headers: JP, payload: [] })).statusCode, 404, 'deleted during the patch: 404')
})

test('options and route config are checked at boot', async (t) => {
  for (const bad of [{ maxRetries: -1 }, { profile: 'x' }, { nope: 1 }]) {
    await t.rejects(boot(Fastify().register(httpConventionsPatch, bad as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(bad))
  }
  const a = Fastify()
  await a.register(httpConventionsPatch)
  const load = () => null
  const save = () => false as const
  for (const patch of [1, { schema, load }, { schema, save }, { load, save }, { schema, load, save, formats: ['yaml'] }, { schema, load, save, formats: [] }, { schema, load, save, extra: 1 }]) {
    t.throws(() => a.patch('/x' + Math.random(), { config: { patch: patch as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(patch))
  }
  t.throws(() => a.put('/put', { config: { patch: { schema, load, save } } }, async () => 'x'), { message: /belongs on a PATCH route/ })
})

test('RFC 6902 4: a JSON Patch changes only the members it names, whatever characters the others\' names hold', async (t) => {
  // Node 24's JSON.parse can read a member name it must unescape as another it saw before (a
  // "\\" member, then a quote read as a backslash): a copy of the resource through JSON would
  // rename members the patch never named.
  const docs: Record<string, object> = { a: { h: [], '\\': 0 }, b: { h: 1, '"': 2 } }
  const saved: Record<string, unknown> = {}
  const a = Fastify()
  await a.register(httpConventionsPatch)
  a.patch('/r/:id', {
    config: {
      patch: {
        schema: { type: 'object' },
        load: (r) => ({ document: docs[(r.params as { id: string }).id], etag: '"1"' }),
        save: (r, document) => { saved[(r.params as { id: string }).id] = document; return { document, etag: '"2"' } }
      }
    }
  }, async (request, reply) => reply.send(request.patched?.document))
  t.equal((await a.inject({ method: 'PATCH', url: '/r/a', headers: JP, payload: [{ op: 'add', path: '/n', value: 1 }] })).statusCode, 200)
  const res = await a.inject({ method: 'PATCH', url: '/r/b', headers: JP, payload: [{ op: 'add', path: '/n', value: 1 }] })
  t.equal(res.statusCode, 200)
  t.same(Object.keys(saved.b as object), ['h', '"', 'n'], 'the stored document keeps every member name')
  t.equal(res.payload, '{"h":1,"\\"":2,"n":1}', 'and so does the answer')
})
