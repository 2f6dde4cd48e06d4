/**
 * The reference service over real sockets (docs/reference-service.md): what a client that
 * negotiates sees. `If-Match: *` on an unknown article is the 404 that `If-Match: "x"` and
 * If-Unmodified-Since get (RFC 9110 13.2.1); under the spec profile every error is
 * `application/json`, whatever Accept asks (docs/plugins.md, "The media type of an error");
 * an answer naming the XML representation says `Vary: Accept` (RFC 9110 12.5.5).
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'

let svc: RunningService
let rfc: RunningService
const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const JSON_BODY = JSON.stringify({ slug: 'neg', title: 't', body: 'b', tags: ['x'] })

test('start the service in both profiles', async () => {
  svc = await startService()
  rfc = await startService({ CONVENTIONS_PROFILE: 'rfc9110' })
})

function varies (vary: unknown): string[] {
  return typeof vary === 'string' ? vary.split(',').map((n) => n.trim().toLowerCase()) : []
}

test('RFC 9110 13.2.1: If-Match: * on an unknown article is 404 on GET, HEAD, PUT, PATCH and DELETE, as If-Match "x" and If-Unmodified-Since are', async (t) => {
  const writes = {
    GET: {},
    HEAD: {},
    PUT: { body: JSON_BODY, headers: { 'content-type': 'application/json' } },
    PATCH: { body: '{"title":"x"}', headers: { 'content-type': 'application/merge-patch+json' } },
    DELETE: {}
  } as const
  for (const base of [svc, rfc]) {
    for (const [method, extra] of Object.entries(writes) as Array<[keyof typeof writes, { body?: string, headers?: Record<string, string> }]>) {
      const statuses = []
      for (const precondition of [{ 'if-match': '*' }, { 'if-match': '"x"' }, { 'if-unmodified-since': 'Mon, 15 Jan 2024 12:45:26 GMT' }]) {
        const res = await request(`${base.url}/articles/no-such-id`, { method, body: extra.body, headers: { authorization: AUTH, ...extra.headers, ...precondition } })
        await res.body.dump()
        statuses.push(res.statusCode)
      }
      t.same(statuses, [404, 404, 404], `${base === svc ? 'spec' : 'rfc9110'} ${method}: If-Match: *, If-Match "x", If-Unmodified-Since`)
    }
  }
})

test('conventions (errors): under the spec profile a 412 and a 422 are application/json to a client that asks for problem details, with no Vary: Accept from it', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', body: JSON_BODY, headers: { 'content-type': 'application/json', authorization: AUTH } })
  const { id } = await created.body.json() as { id: string }
  const stale = await request(`${svc.url}/articles/${id}`, { method: 'PUT', body: JSON_BODY, headers: { 'content-type': 'application/json', authorization: AUTH, accept: 'application/problem+json', 'if-match': '"stale"' } })
  t.equal(stale.statusCode, 412)
  t.equal(stale.headers['content-type'], 'application/json')
  t.match(await stale.body.json(), { errors: [{ field: 'If-Match' }] })
  const invalid = await request(`${svc.url}/articles`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: AUTH, accept: 'application/problem+json' } })
  t.equal(invalid.statusCode, 422)
  t.equal(invalid.headers['content-type'], 'application/json')
  t.notOk(varies(invalid.headers.vary).includes('accept'), 'its media type did not depend on Accept')
  t.match(await invalid.body.json(), { errors: [] })
})

test('RFC 9457 3: under the rfc9110 profile a client preferring problem details gets them, and every such error says Vary: Accept', async (t) => {
  for (const accept of ['application/problem+json', 'application/json']) {
    const invalid = await request(`${rfc.url}/articles`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: AUTH, accept } })
    t.equal(invalid.statusCode, 422)
    t.equal(invalid.headers['content-type'], accept)
    t.ok(varies(invalid.headers.vary).includes('accept'), `Accept: ${accept}`)
    await invalid.body.dump()
  }
})

test('RFC 9110 12.5.5: the spec profile\'s "not modified" 412 for the XML representation carries its ETag and Vary: Accept', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug: 'neg-xml', title: 't', body: 'b', tags: [] }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  const { id } = await created.body.json() as { id: string }
  const xml = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml' } })
  const etag = xml.headers.etag as string
  await xml.body.dump()
  t.match(etag, /\.xml"$/)
  const res = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml', 'if-none-match': etag } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers.etag, etag)
  t.ok(varies(res.headers.vary).includes('accept'), `Vary: ${String(res.headers.vary)}`)
  await res.body.dump()
})

test('stop the services', async () => {
  await svc.stop()
  await rfc.stop()
})
