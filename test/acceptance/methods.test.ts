/**
 * The reference service's methods, over real HTTP (docs/reference-service.md, Routes):
 * OPTIONS on any path is 204 with Allow (and Accept-Patch where PATCH is served), a method a
 * path does not serve is 405 with Allow (RFC 9110 15.5.6), not 404.
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'
import { rawRequest } from '../helpers/raw'

let svc: RunningService

test('start the service', async (t) => {
  svc = await startService()
  t.ok(svc.port > 0)
})

const ARTICLE = 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'

test('RFC 9110 9.3.7: OPTIONS /articles/{id} is 204 with Allow and Accept-Patch, no body', async (t) => {
  const res = await rawRequest(svc.port, 'OPTIONS /articles/any-id HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
  t.equal(res.status, 204)
  t.equal(res.headers.allow, ARTICLE)
  t.equal(res.headers['accept-patch'], 'application/json-patch+json, application/merge-patch+json')
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
  t.equal(res.body, '')
  t.equal(res.headers['content-length'], undefined, 'RFC 9110 8.6: no Content-Length on a 204')
})

test('RFC 9110 9.3.7: OPTIONS on every other path of the service is 204 with Allow', async (t) => {
  const expected: Record<string, string> = { '/': 'GET, HEAD, OPTIONS', '/articles': 'GET, HEAD, POST, OPTIONS', '/openapi.json': 'GET, HEAD, OPTIONS', '/public/logo.svg': 'GET, HEAD, OPTIONS' }
  for (const [path, allow] of Object.entries(expected)) {
    const res = await request(`${svc.url}${path}`, { method: 'OPTIONS' })
    t.equal(res.statusCode, 204, path)
    t.equal(res.headers.allow, allow, path)
    t.equal(res.headers['accept-patch'], undefined, `${path}: no PATCH there`)
    t.equal(await res.body.text(), '')
  }
})

test('RFC 9110 15.5.6: POST /articles/{id} is 405 with Allow, in the errors[] envelope, with the resource policy', async (t) => {
  const res = await request(`${svc.url}/articles/any-id`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, ARTICLE)
  t.equal(res.headers['content-type'], 'application/json')
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
  t.same(await res.body.json(), { errors: [{ message: `POST is not allowed here; this resource serves ${ARTICLE}` }] })
})

test('RFC 9110 15.5.6: TRACE, PUT and DELETE where the path does not serve them are 405; problem details on request under rfc9110, application/json under spec', async (t) => {
  const rfc = await startService({ CONVENTIONS_PROFILE: 'rfc9110' })
  t.teardown(() => rfc.stop())
  for (const [method, path, allow] of [['TRACE', '/articles', 'GET, HEAD, POST, OPTIONS'], ['PUT', '/articles', 'GET, HEAD, POST, OPTIONS'], ['DELETE', '/', 'GET, HEAD, OPTIONS'], ['TRACE', '/articles/x', ARTICLE]]) {
    const raw = `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAccept: application/problem+json\r\nConnection: close\r\n\r\n`
    const res = await rawRequest(rfc.port, raw)
    t.equal(res.status, 405, `${method} ${path}`)
    t.equal(res.headers.allow, allow)
    t.equal(res.headers['content-type'], 'application/problem+json')
    t.match(res.headers.vary, /Accept/i, 'RFC 9110 12.5.5: chosen by Accept')
    t.match(JSON.parse(res.body), { status: 405, title: 'Method Not Allowed', instance: path })
    const spec = await rawRequest(svc.port, raw)
    t.equal(spec.status, 405)
    t.equal(spec.headers['content-type'], 'application/json', 'the spec profile: application/json whatever Accept asks')
    t.same(JSON.parse(spec.body), { errors: [{ message: `${method} is not allowed here; this resource serves ${allow}` }] })
  }
})

test('a path no route serves stays the service\'s 404, and /v1/ answers every method with 307', async (t) => {
  const missing = await request(`${svc.url}/nothing/here`, { method: 'DELETE' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.allow, undefined)
  t.same(await missing.body.json(), { errors: [{ message: 'Route DELETE:/nothing/here not found' }] })
  const unknown = await request(`${svc.url}/articles/no-such-id`)
  t.equal(unknown.statusCode, 404, 'an unknown id of a served path is the article 404')
  t.same(await unknown.body.json(), { errors: [{ message: 'article not found', code: 'ARTICLE_NOT_FOUND' }] })
  for (const method of ['TRACE', 'OPTIONS', 'POST']) {
    const moved = await request(`${svc.url}/v1/articles/x`, { method })
    t.equal(moved.statusCode, 307, method)
    t.equal(moved.headers.location, '/articles/x')
    await moved.body.dump()
  }
})

test('SIGTERM shuts the service down cleanly', async (t) => {
  t.equal(await svc.stop(), 0)
})
