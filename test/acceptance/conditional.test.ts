/**
 * Conditional requests and PATCH against the running reference service (docs/reference-service.md),
 * over real HTTP, including 50 concurrent read-modify-write clients.
 */
import { test } from 'tap'
import { request, Agent } from 'undici'
import { startService, type RunningService } from '../helpers/service'
import { rawRequest } from '../helpers/raw'

let svc: RunningService
let rfc: RunningService
// Writes need credentials (docs/reference-service.md): the default user demo:demo-password
const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

test('start the service in both profiles', async () => {
  svc = await startService()
  rfc = await startService({ CONVENTIONS_PROFILE: 'rfc9110' })
})

async function create (base: RunningService, slug: string): Promise<{ id: string, etag: string, lastModified: string }> {
  const res = await request(`${base.url}/articles`, { method: 'POST', body: JSON.stringify({ slug, title: 'count 0', body: 'b', tags: ['t'] }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  const a = await res.body.json() as { id: string }
  return { id: a.id, etag: res.headers.etag as string, lastModified: res.headers['last-modified'] as string }
}

test('GET/HEAD carry ETag, Last-Modified and Accept-Patch; If-None-Match match is 412 (spec), 304 (rfc9110)', async (t) => {
  for (const [base, status] of [[svc, 412], [rfc, 304]] as const) {
    const a = await create(base, `cond-${status}`)
    const get = await request(`${base.url}/articles/${a.id}`)
    await get.body.dump()
    t.equal(get.headers.etag, a.etag)
    t.equal(get.headers['last-modified'], a.lastModified)
    t.equal(get.headers['accept-patch'], 'application/json-patch+json, application/merge-patch+json')
    const head = await request(`${base.url}/articles/${a.id}`, { method: 'HEAD' })
    t.equal(head.statusCode, 200)
    t.equal(head.headers.etag, a.etag)
    const nm = await request(`${base.url}/articles/${a.id}`, { headers: { 'if-none-match': a.etag } })
    t.equal(nm.statusCode, status)
    const text = await nm.body.text()
    if (status === 412) {
      t.match(nm.headers['content-type'], /^application\/json/)
      t.same(JSON.parse(text).errors[0].field, 'If-None-Match')
    } else {
      t.equal(text, '', '304 has no body')
      t.equal(nm.headers.etag, a.etag)
      t.equal(nm.headers['content-type'], undefined)
    }
    const ims = await request(`${base.url}/articles/${a.id}`, { headers: { 'if-modified-since': a.lastModified } })
    t.equal(ims.statusCode, status, 'If-Modified-Since not newer')
    await ims.body.dump()
  }
})

test('PUT and DELETE with a stale If-Match are 412 and change nothing; a missing article is 404 before 412', async (t) => {
  const a = await create(svc, 'cond-put')
  const put = (headers: Record<string, string>) => request(`${svc.url}/articles/${a.id}`, { method: 'PUT', body: JSON.stringify({ slug: 'cond-put', title: 'changed', body: 'b' }), headers: { 'content-type': 'application/json', authorization: AUTH, ...headers } })
  const stale = await put({ 'if-match': '"stale"' })
  t.equal(stale.statusCode, 412)
  t.equal(stale.headers.etag, a.etag, 'the current ETag is sent')
  t.same(await stale.body.json(), { errors: [{ field: 'If-Match', message: 'the current entity-tag of the resource does not match If-Match' }] })
  const garbage = await put({ 'if-match': 'unquoted' })
  t.equal(garbage.statusCode, 412, 'If-Match garbage never lets the method run')
  await garbage.body.dump()
  const old = await put({ 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })
  t.equal(old.statusCode, 412)
  await old.body.dump()
  t.equal(((await (await request(`${svc.url}/articles/${a.id}`)).body.json()) as { title: string }).title, 'count 0', 'nothing changed')
  const ok = await put({ 'if-match': a.etag })
  t.equal(ok.statusCode, 200)
  t.not(ok.headers.etag, a.etag, 'a new ETag')
  await ok.body.dump()
  const del = await request(`${svc.url}/articles/${a.id}`, { method: 'DELETE', headers: { 'if-match': a.etag, authorization: AUTH } })
  t.equal(del.statusCode, 412)
  await del.body.dump()
  const missing = await request(`${svc.url}/articles/none`, { headers: { 'if-none-match': '"x"' } })
  t.equal(missing.statusCode, 404)
  await missing.body.dump()
})

test('PATCH: JSON Patch and merge patch, 415 with Accept-Patch, 422 naming the field, If-Match', async (t) => {
  const a = await create(svc, 'cond-patch')
  const patch = (body: string, type: string, headers: Record<string, string> = {}) => request(`${svc.url}/articles/${a.id}`, { method: 'PATCH', body, headers: { 'content-type': type, authorization: AUTH, ...headers } })
  const jp = await patch(JSON.stringify([{ op: 'replace', path: '/title', value: 'patched' }, { op: 'add', path: '/tags/-', value: 'new' }]), 'application/json-patch+json', { 'if-match': a.etag })
  t.equal(jp.statusCode, 200)
  const after = await jp.body.json() as { title: string, tags: string[] }
  t.equal(after.title, 'patched')
  t.same(after.tags, ['t', 'new'])
  const mp = await patch(JSON.stringify({ published: true, tags: null }), 'application/merge-patch+json')
  t.equal(mp.statusCode, 422, 'tags: null removes a property the schema requires')
  t.same(((await mp.body.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field), ['tags'])
  const mp2 = await patch(JSON.stringify({ published: true }), 'application/merge-patch+json')
  t.equal(((await mp2.body.json()) as { published: boolean }).published, true)
  const wrong = await patch('{}', 'application/json')
  t.equal(wrong.statusCode, 415)
  t.equal(wrong.headers['accept-patch'], 'application/json-patch+json, application/merge-patch+json')
  await wrong.body.dump()
  const failing = await patch(JSON.stringify([{ op: 'test', path: '/title', value: 'other' }]), 'application/json-patch+json')
  t.equal(failing.statusCode, 422)
  t.same(((await failing.body.json()) as { errors: Array<{ field: string }> }).errors[0].field, 'title')
  const ro = await patch(JSON.stringify([{ op: 'replace', path: '/id', value: 'x' }]), 'application/json-patch+json')
  t.same(await ro.body.json(), { errors: [{ field: 'id', message: 'is read-only' }] })
  const stale = await patch('[]', 'application/json-patch+json', { 'if-match': a.etag })
  t.equal(stale.statusCode, 412)
  await stale.body.dump()
  const raw = await rawRequest(svc.port, `PATCH /articles/${a.id} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json-patch+json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n`)
  t.equal(raw.status, 411, 'PATCH needs Content-Length too')
})

test('50 concurrent read-modify-write clients with If-Match: no lost update, every other answer 412', async (t) => {
  const a = await create(svc, 'race')
  const agent = new Agent({ connections: 50 })
  t.teardown(() => agent.close())
  const until = Date.now() + 3000
  let ok = 0
  let failed = 0
  let other = 0
  async function client (): Promise<void> {
    while (Date.now() < until) {
      const get = await request(`${svc.url}/articles/${a.id}`, { dispatcher: agent })
      const article = await get.body.json() as { slug: string, title: string, body: string, tags: string[] }
      const n = Number(article.title.split(' ')[1])
      const put = await request(`${svc.url}/articles/${a.id}`, {
        dispatcher: agent,
        method: 'PUT',
        body: JSON.stringify({ ...article, id: undefined, createdAt: undefined, updatedAt: undefined, title: `count ${n + 1}` }),
        headers: { 'content-type': 'application/json', 'if-match': get.headers.etag as string, authorization: AUTH }
      })
      await put.body.dump()
      if (put.statusCode === 200) ok++
      else if (put.statusCode === 412) failed++
      else other++
    }
  }
  await Promise.all(Array.from({ length: 50 }, client))
  const final = await (await request(`${svc.url}/articles/${a.id}`)).body.json() as { title: string }
  t.equal(other, 0, 'every answer is 200 or 412')
  t.ok(ok > 0 && failed > 0, `both outcomes happened (${ok} writes, ${failed} refusals)`)
  t.equal(final.title, `count ${ok}`, 'the final count equals the number of successful writes')
})

test('stop', async (t) => {
  t.equal(await svc.stop(), 0)
  t.equal(await rfc.stop(), 0)
})
