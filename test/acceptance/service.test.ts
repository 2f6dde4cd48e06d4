/**
 * Black-box acceptance tests of the reference service (docs/reference-service.md), over real
 * HTTP against the compiled server that `npm start` runs.
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'
import { rawRequest } from '../helpers/raw'
import { freePort } from '../helpers/redis'

let svc: RunningService

test('start the service', async (t) => {
  svc = await startService({ BODY_LIMIT: '4096' })
  t.match(svc.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'it prints its URL on start')
})

const article = { slug: 'hello-world', title: 'Hello', body: 'First post', tags: ['intro'] }
// Writes need credentials (docs/reference-service.md): the default user demo:demo-password
const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

async function post (body: unknown, headers: Record<string, string> = {}) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  return request(`${svc.url}/articles`, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', authorization: AUTH, ...headers } })
}

test('GET / is an HTML page explaining the API', async (t) => {
  const res = await request(`${svc.url}/`)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8')
  t.match(await res.body.text(), /Articles API/)
})

test('POST /articles creates: 201, Location, ETag, the article', async (t) => {
  const res = await post(article)
  t.equal(res.statusCode, 201)
  const created = await res.body.json() as Record<string, unknown>
  t.equal(res.headers.location, `/articles/${created.id as string}`)
  t.match(res.headers.etag, /^"[^"]+"$/, 'a strong ETag')
  t.match(created, { ...article, published: false })
  t.match(created.createdAt, /^\d{4}-\d\d-\d\dT/)
  const again = await request(`${svc.url}${res.headers.location as string}`)
  t.equal(again.statusCode, 200)
  t.equal(again.headers.etag, res.headers.etag)
  t.match(again.headers['last-modified'], /^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/)
  t.same(await again.body.json(), created)
})

test('a duplicate slug is 422 naming slug', async (t) => {
  const res = await post(article)
  t.equal(res.statusCode, 422)
  t.same(await res.body.json(), { errors: [{ field: 'slug', message: 'is already used by another article' }] })
})

test('validation problems are 422 with one entry per problem, unknown and read-only fields named', async (t) => {
  const res = await post({ slug: 'Bad Slug', title: '', tags: ['a', 'a'], id: 'x', extra: 1 })
  t.equal(res.statusCode, 422)
  t.match(res.headers['content-type'], /^application\/json/)
  const fields = ((await res.body.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field).sort()
  t.same(fields, ['body', 'extra', 'id', 'slug', 'tags', 'title'])
})

test('XML bodies are accepted and XML answers are given when Accept prefers them', async (t) => {
  const xml = '<?xml version="1.0"?><article><slug>xml-post</slug><title>From XML</title><body>b</body><tags><tag>x</tag><tag>y</tag></tags><published>true</published></article>'
  const res = await request(`${svc.url}/articles`, { method: 'POST', body: xml, headers: { 'content-type': 'application/xml', accept: 'application/xml', authorization: AUTH } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers['content-type'], 'application/xml; charset=utf-8')
  const text = await res.body.text()
  t.match(text, /<article><id>[^<]+<\/id><slug>xml-post<\/slug><title>From XML<\/title><body>b<\/body><tags><tag>x<\/tag><tag>y<\/tag><\/tags><published>true<\/published>/)
})

test('GET /articles lists, filters by tag, and refuses a limit outside 1..100 with 422', async (t) => {
  const all = await request(`${svc.url}/articles`)
  t.equal(((await all.body.json()) as unknown[]).length, 2)
  const tagged = await request(`${svc.url}/articles?tag=x`)
  t.same(((await tagged.body.json()) as Array<{ slug: string }>).map((a) => a.slug), ['xml-post'])
  const one = await request(`${svc.url}/articles?limit=1`)
  t.equal(((await one.body.json()) as unknown[]).length, 1)
  for (const limit of ['0', '101', 'abc']) {
    const bad = await request(`${svc.url}/articles?limit=${limit}`)
    t.equal(bad.statusCode, 422, limit)
    t.equal(((await bad.body.json()) as { errors: Array<{ field: string }> }).errors[0].field, 'query:limit')
  }
})

test('PUT replaces, validated like POST; unknown ids are 404; DELETE is 204', async (t) => {
  const created = await (await post({ slug: 'to-replace', title: 'T', body: 'B' })).body.json() as { id: string }
  const put = await request(`${svc.url}/articles/${created.id}`, { method: 'PUT', body: JSON.stringify({ slug: 'replaced', title: 'T2', body: 'B2' }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  t.equal(put.statusCode, 200)
  t.match(await put.body.json(), { id: created.id, slug: 'replaced', title: 'T2', tags: [], published: false })
  const bad = await request(`${svc.url}/articles/${created.id}`, { method: 'PUT', body: JSON.stringify({ slug: 'replaced' }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  t.equal(bad.statusCode, 422)
  const missing = await request(`${svc.url}/articles/nope`, { method: 'PUT', body: JSON.stringify({ slug: 'a', title: 'b', body: 'c' }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  t.equal(missing.statusCode, 404)
  await missing.body.dump()
  const del = await request(`${svc.url}/articles/${created.id}`, { method: 'DELETE', headers: { authorization: AUTH } })
  t.equal(del.statusCode, 204)
  const gone = await request(`${svc.url}/articles/${created.id}`)
  t.equal(gone.statusCode, 404)
  await gone.body.dump()
})

const ARTICLE_NOT_FOUND = { errors: [{ message: 'article not found', code: 'ARTICLE_NOT_FOUND' }] }

test('an unknown article id is the service\'s own 404 "article not found" for every method; an unknown route keeps Fastify\'s', async (t) => {
  const json = { 'content-type': 'application/json', authorization: AUTH }
  const asks: Array<[string, Parameters<typeof request>[1]]> = [
    ['GET', {}],
    ['PUT', { method: 'PUT', body: JSON.stringify({ slug: 'a', title: 'b', body: 'c' }), headers: json }],
    ['PATCH', { method: 'PATCH', body: '{"title":"x"}', headers: { ...json, 'content-type': 'application/merge-patch+json' } }],
    ['DELETE', { method: 'DELETE', headers: { authorization: AUTH } }]
  ]
  for (const [method, options] of asks) {
    const res = await request(`${svc.url}/articles/no-such-id`, options)
    t.equal(res.statusCode, 404, `${method} /articles/no-such-id`)
    t.match(res.headers['content-type'], /^application\/json/)
    t.same(await res.body.json(), ARTICLE_NOT_FOUND, `${method}: the service's envelope, not the route text`)
  }
  const head = await request(`${svc.url}/articles/no-such-id`, { method: 'HEAD' })
  t.equal(head.statusCode, 404, 'HEAD too')
  await head.body.dump()
  const problem = await request(`${svc.url}/articles/no-such-id`, { headers: { accept: 'application/problem+json' } })
  t.equal(problem.headers['content-type'], 'application/json', 'under spec, application/json whatever Accept asks')
  t.same(await problem.body.json(), ARTICLE_NOT_FOUND)
  const route = await request(`${svc.url}/no-such-route`)
  t.equal(route.statusCode, 404)
  t.same(await route.body.json(), { errors: [{ message: 'Route GET:/no-such-route not found' }] }, 'an unknown route is not an unknown article')
  const method = await request(`${svc.url}/articles/no-such-id`, { method: 'POST', body: '{}', headers: json })
  t.equal(method.statusCode, 405, 'a method the article has no route for is 405 (RFC 9110 15.5.6), not an unknown article')
  t.equal(method.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
  await method.body.dump()
})

test('the database out of reach: 503 with Retry-After, never a 404; OpenAPI documents both', async (t) => {
  // RFC 9110 15.6.4: PostgreSQL at an address where nothing listens.
  const down = await startService({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/articles` })
  t.teardown(() => down.stop())
  for (const path of ['/articles', '/articles/no-such-id']) {
    const res = await request(`${down.url}${path}`)
    t.equal(res.statusCode, 503, `GET ${path}`)
    t.match(res.headers['retry-after'], /^\d+$/)
    t.equal(res.headers['cache-control'], 'no-store')
    t.equal(res.headers['content-type'], 'text/html; charset=UTF-8')
    t.match(await res.body.text(), /The articles database is unavailable; try again shortly\./)
  }
  const doc = await (await request(`${svc.url}/openapi.json`)).body.json() as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> }
  for (const method of ['get', 'put', 'patch', 'delete']) {
    const responses = doc.paths['/articles/{id}'][method].responses
    t.match(responses['404'], { description: /no article has this id/ }, `${method} /articles/{id} documents the service's 404`)
    t.match(responses['503'], { description: /database is out of reach/ }, `${method} /articles/{id} documents its 503`)
  }
  t.ok(doc.paths['/articles'].post.responses['503'])
})

test('conventions (Content-Type and Content-Length) over a raw socket: 415 without Content-Type, 411 without Content-Length, 411 over BODY_LIMIT, 400 for bad JSON', async (t) => {
  const body = '{"slug":"a","title":"b","body":"c"}'
  const noType = await rawRequest(svc.port, `POST /articles HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
  t.equal(noType.status, 415)
  t.same(JSON.parse(noType.body).errors[0].field, 'Content-Type')
  const chunked = await rawRequest(svc.port, `POST /articles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`)
  t.equal(chunked.status, 411)
  t.match(chunked.body, /^Length Required\n/)
  const big = await rawRequest(svc.port, 'POST /articles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4097\r\n\r\n')
  t.equal(big.status, 411, 'BODY_LIMIT applies')
  const dup = await rawRequest(svc.port, `POST /articles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
  t.equal(dup.status, 411)
  const badJson = await rawRequest(svc.port, `POST /articles HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{"a":`)
  t.equal(badJson.status, 400)
  t.same(JSON.parse(badJson.body), { errors: [{ field: 'body', message: 'body is not well-formed JSON' }] })
})

test('GET /openapi.json lists, for every route, the error responses the suite can give it', async (t) => {
  const doc = await (await request(`${svc.url}/openapi.json`)).body.json() as { openapi: string, paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }
  t.match(doc.openapi, /^3\./)
  const post = doc.paths['/articles'].post.responses
  for (const status of ['201', '400', '411', '415', '422']) t.ok(post[status], `POST /articles documents ${status}`)
  t.ok(doc.paths['/articles/{id}'].put.responses['411'])
  t.ok(doc.paths['/articles'].get.responses['422'], 'the query string is validated')
  t.notOk(doc.paths['/articles'].get.responses['411'], 'a GET takes no body')
})

test('the logo is an SVG', async (t) => {
  const res = await request(`${svc.url}/public/logo.svg`)
  t.equal(res.headers['content-type'], 'image/svg+xml; charset=utf-8', 'SVG is XML text: it carries charset=utf-8')
  t.match(await res.body.text(), /^<svg/)
})

test('SIGTERM shuts the service down cleanly', async (t) => {
  const code = await svc.stop()
  t.equal(code, 0)
})
