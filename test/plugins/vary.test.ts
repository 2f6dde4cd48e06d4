/**
 * RFC 9110 12.5.5: an answer chosen by a request field says so in Vary, merged with what the
 * app put there. A route that answers JSON or XML by Accept (docs/plugins.md (Content-Type))
 * says `Vary: Accept` on every answer that is its representation or names it by its ETag,
 * errors included; an error that names none does not.
 */
import { test } from 'tap'
import { buildApp } from '../helpers/app'
import { negotiatedApp } from '../helpers/negotiated-app'

const XML = 'application/xml'

/** The field names of an answer's Vary, lower-case. */
function varies (vary: unknown): string[] {
  return typeof vary === 'string' ? vary.split(',').map((n) => n.trim().toLowerCase()) : []
}
const WRITE = { 'content-type': 'application/json' }
const BODY = JSON.stringify({ title: 'new', body: 'b', tags: [] })

test('RFC 9110 12.5.5: the spec profile\'s "not modified" 412 carries the XML representation\'s ETag, and Vary: Accept', async (t) => {
  const { app } = await negotiatedApp('spec')
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/articles/1', headers: { accept: XML, 'if-none-match': '"v2.xml"' } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers.etag, '"v2.xml"')
  t.equal(res.headers.vary, 'Accept')
  const json = await app.inject({ url: '/articles/1', headers: { 'if-none-match': '"v2.xml"' } })
  t.equal(json.statusCode, 200, 'the same request asking for JSON gets the JSON representation')
  t.equal(json.headers.vary, 'Accept')
})

test('RFC 9110 12.5.5: a failed If-Match of a write carries the current ETag of the representation Accept selects, and Vary: Accept', async (t) => {
  const { app } = await negotiatedApp('spec')
  t.teardown(() => app.close())
  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const patch = method === 'PATCH'
    const res = await app.inject({
      method,
      url: '/articles/1',
      headers: { accept: XML, 'if-match': '"v2"', ...(method === 'DELETE' ? {} : { 'content-type': patch ? 'application/merge-patch+json' : 'application/json' }) },
      payload: method === 'DELETE' ? undefined : patch ? '{"title":"x"}' : BODY
    })
    t.equal(res.statusCode, 412, method)
    t.equal(res.headers.etag, '"v2.xml"', method)
    t.ok(varies(res.headers.vary).includes('accept'), `${method}: Vary ${String(res.headers.vary)}`)
  }
})

test('RFC 9110 15.4.5: the 304 of the rfc9110 profile keeps the Vary: Accept of the 200 it stands for', async (t) => {
  const { app } = await negotiatedApp('rfc9110')
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/articles/1', headers: { accept: XML, 'if-none-match': '"v2.xml"' } })
  t.equal(res.statusCode, 304)
  t.equal(res.headers.vary, 'Accept')
})

test('conventions (errors): under the spec profile, a 422 or 415 of such a route names no representation and adds no Vary: Accept', async (t) => {
  const { app } = await negotiatedApp('spec')
  t.teardown(() => app.close())
  const invalid = await app.inject({ method: 'POST', url: '/articles', headers: { ...WRITE, accept: XML }, payload: '{}' })
  t.equal(invalid.statusCode, 422)
  t.equal(invalid.headers['content-type'], 'application/json')
  t.notOk(varies(invalid.headers.vary).includes('accept'), 'no Accept in Vary')
  const unsupported = await app.inject({ method: 'POST', url: '/articles', headers: { 'content-type': 'text/csv', accept: XML }, payload: 'a,b' })
  t.equal(unsupported.statusCode, 415)
  t.notOk(varies(unsupported.headers.vary).includes('accept'), 'no Accept in Vary')
})

test('RFC 9110 12.5.5: Vary: Accept joins the Vary the app set on a route that answers XML, never replacing it, never beside *', async (t) => {
  const app = await buildApp()
  const xml = { xml: { root: 'thing' } }
  app.get('/origin', { config: { contentType: xml } }, async (_request, reply) => reply.header('vary', 'Origin').send({ a: 1 }))
  app.get('/star', { config: { contentType: xml } }, async (_request, reply) => reply.header('vary', '*').send({ a: 1 }))
  app.get('/already', { config: { contentType: xml } }, async (_request, reply) => reply.header('vary', 'accept').send({ a: 1 }))
  t.teardown(() => app.close())
  t.equal((await app.inject('/origin')).headers.vary, 'Origin, Accept')
  t.equal((await app.inject('/star')).headers.vary, '*')
  t.equal((await app.inject('/already')).headers.vary, 'accept')
})

test('RFC 9110 8.8.3: a PATCH answer carries the representation its ETag names (XML with the XML ETag)', async (t) => {
  const { app } = await negotiatedApp('spec')
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/articles/1', headers: { accept: XML, 'content-type': 'application/merge-patch+json', 'if-match': '"v2.xml"' }, payload: '{"title":"patched"}' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/xml/)
  t.equal(res.headers.etag, '"v3.xml"')
  t.match(res.body, /<title>patched<\/title>/)
  t.equal(res.headers.vary, 'Accept, Prefer')
})
