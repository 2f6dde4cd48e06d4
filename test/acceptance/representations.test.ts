/**
 * RFC 9110 8.8.3: a strong ETag names one representation. The reference service's JSON and
 * XML representations of an article have different ETags, and writes select theirs by Accept.
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'

let svc: RunningService
const auth = { authorization: 'Basic ' + Buffer.from('demo:demo-password').toString('base64') }

test('start', async () => { svc = await startService() })

test('JSON and XML of one article carry different strong ETags, each usable in its own preconditions', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug: 'rep', title: 'T', body: 'B' }), headers: { 'content-type': 'application/json', ...auth } })
  const { id } = await created.body.json() as { id: string }
  const json = await request(`${svc.url}/articles/${id}`)
  await json.body.dump()
  const xml = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml' } })
  t.match(await xml.body.text(), /^<\?xml/)
  const jsonTag = json.headers.etag as string
  const xmlTag = xml.headers.etag as string
  t.match(jsonTag, /^"[^"]+"$/)
  t.match(xmlTag, /^"[^"]+"$/)
  t.not(xmlTag, jsonTag, 'two representations, two strong ETags')
  const crossed = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml', 'if-none-match': jsonTag } })
  t.equal(crossed.statusCode, 200, 'the JSON ETag does not match the XML representation')
  await crossed.body.dump()
  const same = await request(`${svc.url}/articles/${id}`, { headers: { accept: 'application/xml', 'if-none-match': xmlTag } })
  t.equal(same.statusCode, 412)
  await same.body.dump()
  const body = '<article><slug>rep</slug><title>From XML</title><body>B</body></article>'
  const put = await request(`${svc.url}/articles/${id}`, { method: 'PUT', body, headers: { 'content-type': 'application/xml', accept: 'application/xml', 'if-match': xmlTag, ...auth } })
  t.equal(put.statusCode, 200, 'a write conditional on the XML ETag, in XML')
  t.match(await put.body.text(), /<title>From XML<\/title>/)
  const newXmlTag = put.headers.etag as string
  t.not(newXmlTag, xmlTag)
  const stale = await request(`${svc.url}/articles/${id}`, { method: 'PUT', body, headers: { 'content-type': 'application/xml', accept: 'application/xml', 'if-match': xmlTag, ...auth } })
  t.equal(stale.statusCode, 412)
  t.equal(stale.headers.etag, newXmlTag, 'the 412 carries the current ETag of the same representation')
  await stale.body.dump()
  const patch = await request(`${svc.url}/articles/${id}`, { method: 'PATCH', body: JSON.stringify([{ op: 'replace', path: '/title', value: 'P' }]), headers: { 'content-type': 'application/json-patch+json', accept: 'application/xml', 'if-match': newXmlTag, ...auth } })
  t.equal(patch.statusCode, 200)
  await patch.body.dump()
  const del = await request(`${svc.url}/articles/${id}`, { method: 'DELETE', headers: { 'if-match': patch.headers.etag as string, accept: 'application/xml', ...auth } })
  t.equal(del.statusCode, 204)
})

test('stop', async (t) => { t.equal(await svc.stop(), 0) })
