/**
 * The reference service's own answers over real sockets: its 404 follows the profile as the
 * suite's errors do (application/json under spec; negotiated with Vary: Accept under
 * rfc9110), and a PATCH answers in the representation its ETag names (RFC 9110 8.8.3).
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'

let svc: RunningService
let rfc: RunningService
const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

test('start the service in both profiles', async () => {
  svc = await startService()
  rfc = await startService({ CONVENTIONS_PROFILE: 'rfc9110' })
})

function varies (vary: unknown): string[] {
  return typeof vary === 'string' ? vary.split(',').map((n) => n.trim().toLowerCase()) : []
}

test('conventions (errors): the 404 of an unknown article is application/json under spec whatever Accept asks; under rfc9110 it is negotiated and says Vary: Accept', async (t) => {
  const spec = await request(`${svc.url}/articles/no-such-id`, { headers: { accept: 'application/problem+json' } })
  t.equal(spec.statusCode, 404)
  t.equal(spec.headers['content-type'], 'application/json')
  t.notOk(varies(spec.headers.vary).includes('accept'))
  await spec.body.dump()
  for (const accept of ['application/problem+json', 'application/json']) {
    const res = await request(`${rfc.url}/articles/no-such-id`, { headers: { accept } })
    t.equal(res.statusCode, 404)
    t.equal(res.headers['content-type'], accept)
    t.ok(varies(res.headers.vary).includes('accept'), `rfc9110, Accept: ${accept}`)
    await res.body.dump()
  }
})

test('RFC 9110 8.8.3: a PATCH asking for XML gets the patched article in XML with the XML ETag, and Vary: Accept', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug: 'neg-patch', title: 't', body: 'b', tags: [] }), headers: { 'content-type': 'application/json', authorization: AUTH, accept: 'application/xml' } })
  const etag = created.headers.etag as string
  const id = (created.headers.location as string).split('/').pop() as string
  await created.body.dump()
  t.match(etag, /\.xml"$/)
  const res = await request(`${svc.url}/articles/${id}`, { method: 'PATCH', body: '{"title":"patched"}', headers: { 'content-type': 'application/merge-patch+json', authorization: AUTH, accept: 'application/xml', 'if-match': etag } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/xml/)
  t.match(res.headers.etag, /\.xml"$/)
  t.ok(varies(res.headers.vary).includes('accept'))
  t.match(await res.body.text(), /<title>patched<\/title>/)
  const get = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml' } })
  t.equal(get.headers.etag, res.headers.etag, 'the ETag the PATCH sent is the one a GET for XML gives')
  await get.body.dump()
})

test('RFC 9110 12.5.5: a DELETE whose If-Match names the JSON ETag while asking for XML is 412 with the XML ETag, and Vary: Accept', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug: 'neg-del', title: 't', body: 'b', tags: [] }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  const etag = created.headers.etag as string
  const id = (created.headers.location as string).split('/').pop() as string
  await created.body.dump()
  const res = await request(`${svc.url}/articles/${id}`, { method: 'DELETE', headers: { authorization: AUTH, accept: 'application/xml', 'if-match': etag } })
  t.equal(res.statusCode, 412)
  t.match(res.headers.etag, /\.xml"$/)
  t.ok(varies(res.headers.vary).includes('accept'))
  await res.body.dump()
})

test('stop the services', async () => {
  await svc.stop()
  await rfc.stop()
})
