import { test, type Test } from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import fastifyStatic from '@fastify/static'
import { request } from 'undici'
import { boot, listen } from '../helpers/app'
import { rawExchange, rawRequest } from '../helpers/raw'
import { httpConventions, httpConventionsMethods, serverOptions, type HttpConventionsOptions } from '../../plugins/index'

const handler = async (): Promise<object> => ({ ok: true })
const patchConfig = { schema: { type: 'object' }, load: async () => ({ document: {}, etag: '"1"' }), save: async () => false as const }

/** An app with the suite and an items resource: GET and PUT and DELETE /items/:id, GET and POST /items. */
async function build (t: Test, opts: HttpConventionsOptions = {}, server: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions, ...server })
  t.teardown(() => app.close())
  await app.register(httpConventions, opts)
  app.get('/items', handler)
  app.post('/items', handler)
  app.get('/items/:id', handler)
  app.put('/items/:id', handler)
  app.delete('/items/:id', handler)
  return app
}

test('RFC 9110 15.5.6: a method no route of a served path serves is 405 with Allow listing the methods it serves', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/items/1' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS')
  t.equal(res.headers['content-type'], 'application/json')
  t.same(res.json(), { errors: [{ message: 'POST is not allowed here; this resource serves GET, HEAD, PUT, DELETE, OPTIONS' }] })
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', 'it carries the policy of every answer')
  const list = await app.inject({ method: 'DELETE', url: '/items?x=1' })
  t.equal(list.statusCode, 405)
  t.equal(list.headers.allow, 'GET, HEAD, POST, OPTIONS', 'the query string is not part of the path')
})

test('RFC 9110 15.5.6: the 405 is problem details under rfc9110 to a client that prefers them, and with errorFormat problem; application/json under spec', async (t) => {
  const app = await build(t, { profile: 'rfc9110' })
  const res = await app.inject({ method: 'PATCH', url: '/items/1', headers: { accept: 'application/problem+json' } })
  t.equal(res.statusCode, 405)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.match(res.headers.vary, /Accept/i)
  t.match(res.json(), { type: 'about:blank', title: 'Method Not Allowed', status: 405, instance: '/items/1' })
  const spec = await build(t)
  const s = await spec.inject({ method: 'PATCH', url: '/items/1', headers: { accept: 'application/problem+json' } })
  t.equal(s.headers['content-type'], 'application/json', 'the spec profile: application/json whatever Accept asks')
  t.equal(s.headers.vary, undefined)
  const problem = await build(t, { errorFormat: 'problem' })
  const p = await problem.inject({ method: 'PATCH', url: '/items/1' })
  t.equal(p.headers['content-type'], 'application/problem+json')
  t.equal(p.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS')
})

test('RFC 9110 9.3.7: OPTIONS on a served path is 204 with Allow, no body, and the resource policy', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  const res = await rawRequest(port, 'OPTIONS /items/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(res.status, 204)
  t.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS')
  t.equal(res.body, '')
  t.equal(res.headers['content-length'], undefined, 'RFC 9110 8.6: no Content-Length on a 204')
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
  t.equal(res.headers['accept-patch'], undefined, 'no PATCH here, no Accept-Patch')
})

test('RFC 5789 3.1: OPTIONS where the suite\'s PATCH is served says Accept-Patch, the types its 415 lists', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/docs/:id', handler)
  app.patch('/docs/:id', { config: { patch: { ...patchConfig, formats: ['merge-patch' as const] } } }, handler)
  app.patch('/own/:id', handler)
  const res = await app.inject({ method: 'OPTIONS', url: '/docs/1' })
  t.equal(res.statusCode, 204)
  t.equal(res.headers.allow, 'GET, HEAD, PATCH, OPTIONS')
  t.equal(res.headers['accept-patch'], 'application/merge-patch+json')
  const refused = await app.inject({ method: 'PATCH', url: '/docs/1', headers: { 'content-type': 'application/json-patch+json' }, payload: '[]' })
  t.equal(refused.statusCode, 415)
  t.equal(refused.headers['accept-patch'], res.headers['accept-patch'], 'the same types as the 415')
  const own = await app.inject({ method: 'OPTIONS', url: '/own/1' })
  t.equal(own.headers.allow, 'PATCH, OPTIONS')
  t.equal(own.headers['accept-patch'], undefined, 'a PATCH route of the app\'s own: its types are not the suite\'s to say')
})

test('RFC 9110 9.3.7: an OPTIONS route of the app\'s own answers for its path', async (t) => {
  const app = await build(t)
  app.options('/items/:id', async (_request, reply) => reply.code(200).header('allow', 'mine').send('own'))
  const res = await app.inject({ method: 'OPTIONS', url: '/items/1' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'own')
  const other = await app.inject({ method: 'POST', url: '/items/1' })
  t.equal(other.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS', 'its OPTIONS is in the Allow of the path')
})

test('a path no route matches is the app\'s 404, from its not-found handler set before or after the suite', async (t) => {
  for (const when of ['before', 'after']) {
    const app = Fastify(serverOptions)
    t.teardown(() => app.close())
    const notFound = async (_request: unknown, reply: { code: (n: number) => { send: (b: string) => unknown } }) => reply.code(404).send('mine')
    if (when === 'before') app.setNotFoundHandler(notFound as never)
    await app.register(httpConventions)
    if (when === 'after') app.setNotFoundHandler(notFound as never)
    app.get('/items/:id', handler)
    for (const [method, url] of [['GET', '/nothing'], ['POST', '/items'], ['POST', '/items/1/deeper'], ['OPTIONS', '/nothing']]) {
      const res = await app.inject({ method: method as 'GET', url })
      t.equal(res.statusCode, 404, `${when}: ${method} ${url}`)
      t.equal(res.body, 'mine')
      t.equal(res.headers.allow, undefined)
    }
    t.equal((await app.inject({ method: 'POST', url: '/items/1' })).statusCode, 405, when)
  }
})

test('a not-found handler of an encapsulated context, prefixed or not, still answers the paths no route matches', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.register(async (api) => {
    api.setNotFoundHandler(async (_request, reply) => reply.code(404).send('api 404'))
    api.get('/things/:id', handler)
  }, { prefix: '/api' })
  const res = await app.inject({ method: 'GET', url: '/api/nope' })
  t.equal(res.body, 'api 404')
  const other = await app.inject({ method: 'POST', url: '/api/things/1/x' })
  t.equal(other.body, 'api 404')
  const refused = await app.inject({ method: 'POST', url: '/api/things/1' })
  t.equal(refused.statusCode, 405)
  t.equal(refused.headers.allow, 'GET, HEAD, OPTIONS')
  const root = await app.inject({ method: 'GET', url: '/nope' })
  t.equal(root.statusCode, 404)
  t.match(root.json(), { message: 'Route GET:/nope not found' }, 'Fastify\'s own 404 outside the prefix')
})

test('a callNotFound of a route (an unknown id) stays the app\'s 404, whatever the method', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send('no such item'))
  app.get('/items/:id', async (_request, reply) => reply.callNotFound())
  const res = await app.inject({ method: 'GET', url: '/items/1' })
  t.equal(res.statusCode, 404)
  t.equal(res.body, 'no such item')
  t.equal(res.headers.allow, undefined)
})

test('methods: false leaves it out: a method a path does not serve is the 404 it was', async (t) => {
  const app = await build(t, { methods: false })
  t.equal((await app.inject({ method: 'POST', url: '/items/1' })).statusCode, 404)
  t.equal((await app.inject({ method: 'OPTIONS', url: '/items/1' })).statusCode, 404)
})

test('config.methods: false leaves a route\'s path out, unless another route of the path is covered', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/legacy', { config: { methods: false } }, handler)
  app.get('/mixed', { config: { methods: false } }, handler)
  app.post('/mixed', handler)
  t.throws(() => app.get('/bad', { config: { methods: true as never } }, handler), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /config.methods can only be false/ })
  t.equal((await app.inject({ method: 'POST', url: '/legacy' })).statusCode, 404)
  t.equal((await app.inject({ method: 'OPTIONS', url: '/legacy' })).statusCode, 404)
  const mixed = await app.inject({ method: 'DELETE', url: '/mixed' })
  t.equal(mixed.statusCode, 405)
  t.equal(mixed.headers.allow, 'GET, HEAD, POST, OPTIONS', 'every method the path serves, the opted-out route\'s too')
})

test('options are checked at registration: the plugin takes none', async (t) => {
  await t.rejects(boot(Fastify().register(httpConventionsMethods, { bogus: 1 } as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /unknown option "bogus"/ })
  await t.rejects(boot(Fastify().register(httpConventions, { methods: 'on' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
})

test('constraints: a served method whose version does not match stays the app\'s 404; another method is 405', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/v', { constraints: { version: '1.0.0' } }, handler)
  app.get('/v', { constraints: { version: '2.0.0' } }, handler)
  t.equal((await app.inject({ method: 'GET', url: '/v', headers: { 'accept-version': '2.x' } })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/v', headers: { 'accept-version': '3.x' } })).statusCode, 404)
  const post = await app.inject({ method: 'POST', url: '/v', headers: { 'accept-version': '1.x' } })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
})

test('prefixes and trailing slashes: paths are matched as Fastify matches them', async (t) => {
  const app = Fastify({ ...serverOptions, routerOptions: { ignoreTrailingSlash: true, caseSensitive: false } })
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.register(async (c) => {
    c.get('/', handler)
    c.get('/Things/:id', handler)
  }, { prefix: '/api' })
  for (const url of ['/api', '/api/', '/API/things/1', '/api/things/1/']) {
    const res = await app.inject({ method: 'POST', url })
    t.equal(res.statusCode, 405, url)
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS', url)
  }
  t.equal((await app.inject({ method: 'GET', url: '/API/THINGS/1/' })).statusCode, 200)
})

test('a prefixed "/" route answers both with and without the trailing slash (prefixTrailingSlash both)', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.register(async (c) => { c.get('/', handler) }, { prefix: '/api' })
  await app.register(async (c) => { c.get('/', { prefixTrailingSlash: 'no-slash' }, handler) }, { prefix: '/only' })
  for (const url of ['/api', '/api/']) t.equal((await app.inject({ method: 'PUT', url })).statusCode, 405, url)
  t.equal((await app.inject({ method: 'PUT', url: '/only' })).statusCode, 405)
  t.equal((await app.inject({ method: 'PUT', url: '/only/' })).statusCode, 404, 'Fastify serves no /only/')
})

test('exposeHeadRoutes: false: Allow says what is served, and HEAD is 405', async (t) => {
  const app = Fastify({ ...serverOptions, exposeHeadRoutes: false })
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/x', handler)
  const res = await app.inject({ method: 'HEAD', url: '/x' })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, OPTIONS')
})

test('RFC 9110 15.5.6: methods Node knows but no route of the app serves (TRACE, PROPFIND) are 405 over a socket', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  for (const method of ['TRACE', 'PROPFIND', 'MKCOL']) {
    const res = await rawRequest(port, `${method} /items HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    t.equal(res.status, 405, method)
    t.equal(res.headers.allow, 'GET, HEAD, POST, OPTIONS', method)
    t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
  }
})

test('RFC 9110 15.6.2: a method token Node does not know (FOO) is refused by its parser before any route: 400', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  const { responses, closed } = await rawExchange(port, 'FOO /items HTTP/1.1\r\nHost: x\r\n\r\nGET /items HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 5000 })
  t.equal(responses.length, 1, 'nothing after it on the connection is served')
  t.equal(responses[0].status, 400)
  t.equal(responses[0].headers.allow, undefined)
  t.ok(closed, 'the connection closes')
})

test('RFC 9112 9.6: a 405 to a request with a body closes the connection without reading the body', async (t) => {
  const app = await build(t)
  const port = await listen(app)
  const { responses, closed } = await rawExchange(port, 'POST /items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"a":1}\r\nGET /items HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 5000 })
  t.equal(responses.length, 1, 'the request pipelined behind the unread body never runs')
  t.equal(responses[0].status, 405)
  t.equal(responses[0].headers.connection, 'close')
  t.ok(closed)
  const undiciRes = await request(`http://127.0.0.1:${port}/items/1`, { method: 'PATCH', body: '{}' })
  t.equal(undiciRes.statusCode, 405)
  t.equal(undiciRes.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS')
  await undiciRes.body.dump()
})

test('an app\'s onRequest hooks see a request the suite answers 405 (a rate limiter counts it)', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  let seen = 0
  app.addHook('onRequest', async () => { seen++ })
  await app.register(httpConventions)
  app.get('/x', handler)
  t.equal((await app.inject({ method: 'POST', url: '/x' })).statusCode, 405)
  t.equal(seen, 1)
})

test('@fastify/static\'s wildcard route: its files are served, another method under it is 405, a missing file is the app\'s 404', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'methods-static-'))
  writeFileSync(join(dir, 'a.txt'), 'hello')
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send('app 404'))
  await app.register(fastifyStatic, { root: dir, prefix: '/public/' })
  const file = await app.inject({ method: 'GET', url: '/public/a.txt' })
  t.equal(file.statusCode, 200)
  t.equal(file.body, 'hello')
  const post = await app.inject({ method: 'POST', url: '/public/a.txt' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
  const missing = await app.inject({ method: 'GET', url: '/public/missing.txt' })
  t.equal(missing.statusCode, 404)
  t.equal(missing.body, 'app 404', 'the wildcard route\'s own callNotFound reaches the app\'s handler')
  const outside = await app.inject({ method: 'POST', url: '/elsewhere' })
  t.equal(outside.body, 'app 404')
})

// Shrunk counterexample of the property test: an app's own catch-all OPTIONS route was taken for @fastify/cors's.
test('RFC 9110 9.3.7: an OPTIONS wildcard route of the app\'s own answers OPTIONS on every path under it', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/', handler)
  app.route({ method: ['OPTIONS', 'GET'], url: '/*', handler: async () => 'wildcard' })
  const res = await app.inject({ method: 'OPTIONS', url: '/' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'wildcard')
  const post = await app.inject({ method: 'POST', url: '/' })
  t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
})
