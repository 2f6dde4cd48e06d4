import { test } from 'tap'
import { buildApp } from '../helpers/app'
import { type FastifyInstance } from 'fastify'

/** One article behind a conditional PUT: a version (ETag) and a date per write. */
function articles (): { app: () => Promise<FastifyInstance>, row: { etag: string, title: string, at: number } } {
  const row = { etag: 'v1', title: 'one', at: Date.UTC(2024, 0, 15, 12, 0, 0) }
  let version = 1
  async function app (): Promise<FastifyInstance> {
    const a = await buildApp()
    const validators = (): { etag: string, lastModified: number } => ({ etag: row.etag, lastModified: row.at })
    a.put<{ Body: { title: string } }>('/articles/1', { config: { conditional: { validators } } }, async (request, reply) => {
      row.title = request.body.title
      row.etag = `v${++version}`
      row.at += 60_000
      return reply.code(200).send({ title: row.title })
    })
    a.put('/async/1', { config: { conditional: { validators: async () => ({ etag: row.etag }) } } }, async () => {
      row.etag = `v${++version}`
      return { ok: true }
    })
    a.put('/own/1', { config: { conditional: { validators } } }, async (_request, reply) => reply.header('etag', '"mine"').send({ ok: true }))
    a.put('/failing/1', { config: { conditional: { validators: () => { if (row.title === 'broken') throw new Error('store down'); return { etag: row.etag } } } } }, async (request) => {
      row.title = (request.body as { title: string }).title
      return { ok: true }
    })
    a.put('/refused/1', { config: { conditional: { validators } } }, async (_request, reply) => reply.code(409).send({ errors: [{ message: 'no' }] }))
    a.put('/nonsense/1', { config: { conditional: { validators: () => (row.title === 'nonsense' ? { etag: 'two words' } : { etag: row.etag }) } } }, async (request) => {
      row.title = (request.body as { title: string }).title
      return { ok: true }
    })
    return a
  }
  return { app, row }
}

test('RFC 9110 8.8.3: a successful PUT through a route with validators carries the new ETag and Last-Modified, not the replaced ones', async (t) => {
  const { app, row } = articles()
  const a = await app()
  t.teardown(() => a.close())
  const res = await a.inject({ method: 'PUT', url: '/articles/1', headers: { 'if-match': '"v1"' }, payload: { title: 'two' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.etag, '"v2"', 'the ETag of the state the PUT wrote')
  t.equal(res.headers['last-modified'], new Date(row.at).toUTCString())
  // The next write is conditional on the ETag the PUT answered, without a GET in between.
  const next = await a.inject({ method: 'PUT', url: '/articles/1', headers: { 'if-match': res.headers.etag as string }, payload: { title: 'three' } })
  t.equal(next.statusCode, 200)
  t.equal(next.headers.etag, '"v3"')
  const async = await a.inject({ method: 'PUT', url: '/async/1', payload: {} })
  t.equal(async.headers.etag, '"v4"', 'an async provider is read after the handler too')
})

test('the handler\'s own ETag on a write wins; an error answer gets none; a provider failing after the write leaves the 200 without one', async (t) => {
  const { app, row } = articles()
  const a = await app()
  t.teardown(() => a.close())
  const own = await a.inject({ method: 'PUT', url: '/own/1', payload: {} })
  t.equal(own.headers.etag, '"mine"')
  const refused = await a.inject({ method: 'PUT', url: '/refused/1', payload: {} })
  t.equal(refused.statusCode, 409)
  t.equal(refused.headers.etag, undefined)
  const broken = await a.inject({ method: 'PUT', url: '/failing/1', payload: { title: 'broken' } })
  t.equal(broken.statusCode, 200, 'the write is stored: never a 500 a client would retry')
  t.equal(broken.headers.etag, undefined)
  t.equal(row.title, 'broken')
  row.title = 'one'
  const nonsense = await a.inject({ method: 'PUT', url: '/nonsense/1', payload: { title: 'nonsense' } })
  t.equal(nonsense.statusCode, 200, 'a provider answering nonsense after the write: the 200 stands')
  t.equal(nonsense.headers.etag, undefined)
})

test('RFC 9110 8.8.3: a PATCH answers with the ETag of the resource as save stored it, read without loading it again', async (t) => {
  const a = await buildApp()
  t.teardown(() => a.close())
  let stored = { document: { title: 'one' }, etag: '"v1"' }
  let loads = 0
  a.patch('/notes/1', {
    config: {
      patch: {
        schema: { type: 'object', properties: { title: { type: 'string' } } },
        load: () => { loads++; return stored },
        save: (_request, document) => (stored = { document: document as { title: string }, etag: '"v2"' })
      }
    }
  }, async (request) => request.patched?.document)
  const res = await a.inject({ method: 'PATCH', url: '/notes/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: { title: 'two' } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { title: 'two' })
  t.equal(res.headers.etag, '"v2"')
  t.equal(loads, 1)
})
