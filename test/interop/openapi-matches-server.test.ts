/**
 * The OpenAPI document says what the server does, in each profile: for every status each
 * operation documents, a request over a real socket produces it, and the answer carries every
 * header the document lists for it (docs/plugins.md, OpenAPI). Under `spec` a GET whose copy is
 * current is documented (and answered) 412, under `rfc9110` 304; 200s carry ETag, Last-Modified,
 * Cache-Control and, on a resource that takes PATCH, Accept-Patch (RFC 5789 3.1); PATCH's 415
 * carries Accept-Patch; a 226 its IM, ETag, Delta-Base and Cache-Control (RFC 3229 10.5.3).
 * A documented status with no request below fails the test: the table is the whole document.
 */
import { test } from 'tap'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { request } from 'undici'
import { httpConventions, serverOptions, type Profile } from '../../plugins/index'
import { conventionsOpenApiTransform, conventionsOpenApiTransformObject } from '../../plugins/entries/openapi'
import { listen } from '../helpers/app'

const BASIC = 'Basic ' + Buffer.from('ann:ann-password').toString('base64')
const TEXT = 'A note long enough that a small edit travels as a delta smaller than the note itself. '.repeat(8)

interface Note { id: string, text: string }

async function notesApp (profile: Profile): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions, bodyLimit: 4096 })
  await app.register(swagger, { openapi: { openapi: '3.0.3', info: { title: 'notes', version: '1.0.0' } }, transform: conventionsOpenApiTransform, transformObject: conventionsOpenApiTransformObject })
  await app.register(httpConventions, { profile, auth: { realm: 'notes', basic: { users: { ann: 'ann-password' } } } })
  const notes = new Map<string, { note: Note, version: number, at: number }>([['1', { note: { id: '1', text: TEXT }, version: 1, at: Date.now() - 5000 }]])
  const current = (id: string): { etag: string, lastModified: number } | null => {
    const n = notes.get(id)
    return n === undefined ? null : { etag: `"v${n.version}"`, lastModified: n.at }
  }
  const write = (id: string, text: string): Note => {
    const n = notes.get(id) as { note: Note, version: number }
    notes.set(id, { note: { id, text }, version: n.version + 1, at: Date.now() })
    return { id, text }
  }
  const params = { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } } }
  const body = { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } }
  const noteSchema = { type: 'object', required: ['id', 'text'], additionalProperties: false, properties: { id: { type: 'string', readOnly: true }, text: { type: 'string', minLength: 1 } } }
  const idOf = (r: { params: unknown }): string => (r.params as { id: string }).id
  app.get('/notes/:id', { schema: { params }, config: { conditional: { validators: (r) => current(idOf(r)) }, deltaEncoding: true } }, async (r, reply) => notes.has(idOf(r)) ? notes.get(idOf(r))?.note : reply.callNotFound())
  app.put('/notes/:id', { schema: { params, body }, config: { auth: true, conditional: { validators: (r) => current(idOf(r)), creates: false } } }, async (r) => write(idOf(r), (r.body as { text: string }).text))
  app.patch('/notes/:id', {
    schema: { params },
    config: {
      auth: true,
      patch: {
        schema: noteSchema,
        load: (r) => { const n = notes.get(idOf(r)); return n === undefined ? null : { document: n.note, etag: `"v${n.version}"` } },
        save: (r, doc) => { const note = write(idOf(r), (doc as Note).text); return { document: note, etag: current(note.id)?.etag as string } }
      }
    }
  }, async (r) => r.patched?.document)
  app.post('/notes', { schema: { body, response: { 201: noteSchema } }, config: { auth: true } }, async (r, reply) => reply.code(201).send({ id: '2', text: (r.body as { text: string }).text }))
  return app
}

interface Answer { status: number, headers: Record<string, string | string[] | undefined> }
type Recipe = (send: (method: string, path: string, headers?: Record<string, string>, body?: string | Readable) => Promise<Answer>, etag: () => Promise<string>) => Promise<Answer>

const JSON_BODY = { 'content-type': 'application/json' }
const PATCH_BODY = { 'content-type': 'application/merge-patch+json', authorization: BASIC }
const chunked = (): Readable => Readable.from([Buffer.from('{"text":'), Buffer.from('"x"}')])

/** For each `METHOD status` a document may list, a request that produces it. */
const RECIPES: Record<string, Recipe> = {
  'GET 200': async (send) => await send('GET', '/notes/1'),
  'GET 422': async (send) => await send('GET', '/notes/abc'),
  // If-Match fails on a GET in both profiles; under spec a current copy (If-None-Match) is 412 too.
  'GET 412': async (send) => await send('GET', '/notes/1', { 'if-match': '"v0"' }),
  'GET 304': async (send, etag) => await send('GET', '/notes/1', { 'if-none-match': await etag() }),
  'GET 226': async (send, etag) => {
    const old = await etag()
    await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: TEXT + 'one more line.' }))
    return await send('GET', '/notes/1', { 'a-im': 'vcdiff', 'if-none-match': old })
  },
  'PUT 200': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: TEXT })),
  'PUT 400': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, '{"text":'),
  'PUT 401': async (send) => await send('PUT', '/notes/1', JSON_BODY, JSON.stringify({ text: 'x' })),
  'PUT 411': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, chunked()),
  'PUT 413': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 'x'.repeat(5000) })),
  'PUT 412': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC, 'if-match': '"v0"' }, JSON.stringify({ text: 'x' })),
  'PUT 415': async (send) => await send('PUT', '/notes/1', { 'content-type': 'text/csv', authorization: BASIC }, 'text'),
  'PUT 422': async (send) => await send('PUT', '/notes/1', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 1 })),
  'PATCH 200': async (send) => await send('PATCH', '/notes/1', PATCH_BODY, JSON.stringify({ text: TEXT })),
  'PATCH 400': async (send) => await send('PATCH', '/notes/1', PATCH_BODY, '{"text":'),
  'PATCH 401': async (send) => await send('PATCH', '/notes/1', { 'content-type': 'application/merge-patch+json' }, '{}'),
  'PATCH 404': async (send) => await send('PATCH', '/notes/9', PATCH_BODY, JSON.stringify({ text: 'x' })),
  'PATCH 411': async (send) => await send('PATCH', '/notes/1', PATCH_BODY, chunked()),
  'PATCH 413': async (send) => await send('PATCH', '/notes/1', PATCH_BODY, JSON.stringify({ text: 'x'.repeat(5000) })),
  'PATCH 412': async (send) => await send('PATCH', '/notes/1', { ...PATCH_BODY, 'if-match': '"v0"' }, JSON.stringify({ text: 'x' })),
  'PATCH 415': async (send) => await send('PATCH', '/notes/1', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 'x' })),
  'PATCH 422': async (send) => await send('PATCH', '/notes/1', PATCH_BODY, JSON.stringify({ text: '' })),
  'POST 201': async (send) => await send('POST', '/notes', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 'x' })),
  'POST 400': async (send) => await send('POST', '/notes', { ...JSON_BODY, authorization: BASIC }, '{"text":'),
  'POST 401': async (send) => await send('POST', '/notes', JSON_BODY, JSON.stringify({ text: 'x' })),
  'POST 411': async (send) => await send('POST', '/notes', { ...JSON_BODY, authorization: BASIC }, chunked()),
  'POST 413': async (send) => await send('POST', '/notes', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 'x'.repeat(5000) })),
  'POST 415': async (send) => await send('POST', '/notes', { 'content-type': 'text/csv', authorization: BASIC }, 'text'),
  'POST 422': async (send) => await send('POST', '/notes', { ...JSON_BODY, authorization: BASIC }, JSON.stringify({ text: 1 }))
}

interface Operation { responses: Record<string, { headers?: Record<string, unknown> }>, parameters?: Array<{ in: string, name: string, description?: string }> }

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`${profile}: every status and header the OpenAPI document lists is one the server answers`, async (t) => {
    const app = await notesApp(profile)
    t.teardown(() => app.close())
    const port = await listen(app)
    const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }
    const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string | Readable): Promise<Answer> => {
      const res = await request(`http://127.0.0.1:${port}${path}`, { method: method as 'GET', headers, body })
      await res.body.dump()
      return { status: res.statusCode, headers: res.headers }
    }
    const etag = async (): Promise<string> => String((await send('GET', '/notes/1')).headers.etag)
    let checked = 0
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (method === 'head') continue   // HEAD mirrors GET (Fastify's exposed HEAD route)
        for (const [status, response] of Object.entries(operation.responses)) {
          const recipe = RECIPES[`${method.toUpperCase()} ${status}`]
          if (recipe === undefined) {
            t.fail(`${method.toUpperCase()} ${path} documents ${status}, and no request here produces it`)
            continue
          }
          const answer = await recipe(send, etag)
          t.equal(answer.status, Number(status), `${method.toUpperCase()} ${path} ${status}`)
          for (const header of Object.keys(response.headers ?? {})) {
            t.ok(answer.headers[header.toLowerCase()] !== undefined, `${method.toUpperCase()} ${path} ${status} carries ${header}`)
          }
          checked++
        }
      }
    }
    t.ok(checked >= 25, `${checked} documented answers produced`)
    const get = doc.paths['/notes/{id}'].get
    t.same(Object.keys(get.responses['200'].headers ?? {}).sort(), ['Accept-Patch', 'Cache-Control', 'ETag', 'Last-Modified'])
    t.equal(get.responses['304'] === undefined, profile === 'spec', profile === 'spec' ? 'no 304 under spec' : '304 under rfc9110')
    const ifNoneMatch = get.parameters?.find((p) => p.in === 'header' && p.name === 'If-None-Match')
    t.match(ifNoneMatch?.description, profile === 'spec' ? /answered 412/ : /answered 304/)
    t.ok(doc.paths['/notes/{id}'].patch.responses['415'].headers?.['Accept-Patch'], 'PATCH 415 documents Accept-Patch')
    if (profile === 'spec') t.equal((await send('GET', '/notes/1', { 'if-none-match': await etag() })).status, 412, 'a current copy is the documented 412')
  })
}
