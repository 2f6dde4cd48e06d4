import { test } from 'tap'
import type { Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { boot, buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import { httpConventions, httpConventionsMethods, httpConventionsRedirect, serverOptions, type RedirectRule } from '../../plugins/index'
import { conventionsOpenApiTransform } from '../../plugins/entries/openapi'

const V1: RedirectRule[] = [{ from: '/v1/', to: '/' }]

async function ruleServer (t: Test, rules: RedirectRule[] = V1): Promise<{ app: FastifyInstance, port: number, seen: string[] }> {
  const app = await buildApp({ redirect: { rules } }, { bodyLimit: 1000 })
  const seen: string[] = []
  // A parser that records every body it is asked to read: a redirected request must never reach it.
  app.addContentTypeParser('application/x-spy', { parseAs: 'string' }, (_req, body, done) => { seen.push(`parsed:${body as string}`); done(null, body) })
  app.post('/v1/echo', async (req) => { seen.push(`handler:${req.body as string}`); return 'v1' })
  app.post('/echo', async (req) => { seen.push(`handler:${req.body as string}`); return 'ok' })
  app.get('/ping', async () => 'pong')
  app.get('/v1/exempt', { config: { redirect: false } }, async () => 'still here')
  const port = await listen(app)
  t.teardown(() => app.close())
  return { app, port, seen }
}

test('RFC 9110 15.4.8: reply.temporaryRedirect answers 307 with Location and a short text note', async (t) => {
  const app = await buildApp()
  app.get('/go', async (_req, reply) => reply.temporaryRedirect('/there?x=1'))
  app.get('/abs', async (_req, reply) => reply.temporaryRedirect('https://example.com/a b'))
  app.get('/bad', async (_req, reply) => reply.temporaryRedirect('1bad:x'))
  const res = await app.inject('/go')
  t.equal(res.statusCode, 307)
  t.equal(res.headers.location, '/there?x=1')
  t.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(res.body, 'Temporary Redirect\n/there?x=1\n')
  t.equal((await app.inject('/abs')).headers.location, 'https://example.com/a%20b', 'RFC 3986 2.1: characters outside the URI grammar are encoded')
  t.equal((await app.inject('/bad')).statusCode, 500, 'a value that is no URI reference is the handler\'s error')
})

test('conventions (Redirects): a rule redirects every method with 307 to the same path without /v1, query kept', async (t) => {
  const { port } = await ruleServer(t)
  for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS']) {
    const res = await rawRequest(port, `${method} /v1/articles/7?tag=a&limit=2 HTTP/1.1\r\nHost: x\r\n\r\n`, { waitMs: 1000 })
    t.equal(res.status, 307, method)
    t.equal(res.headers.location, '/articles/7?tag=a&limit=2', method)
    t.notOk(res.closed, `${method} without a body keeps the connection`)
  }
})

test('conventions (Redirects): a redirected POST\'s body is never read or parsed, and the connection closes', async (t) => {
  const { port, seen } = await ruleServer(t)
  const res = await rawRequest(port, 'POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-spy\r\nContent-Length: 5\r\n\r\nhello', { waitMs: 1500, responses: undefined })
  t.equal(res.status, 307)
  t.equal(res.headers.location, '/echo')
  t.equal(res.headers.connection, 'close', 'the unread body cannot be followed by another request')
  t.ok(res.closed)
  t.same(seen, [], 'neither the parser nor the handler ran')
  const malformed = await rawRequest(port, 'PUT /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{{{', { waitMs: 1500, responses: undefined })
  t.equal(malformed.status, 307, 'a body that would be 400 is not looked at')
  const chunked = await rawRequest(port, 'POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n', { waitMs: 1500, responses: undefined })
  t.equal(chunked.status, 307, 'redirected before the 411 a chunked body would get')
  t.equal(chunked.headers.connection, 'close')
  const over = await rawRequest(port, 'POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n\r\n', { waitMs: 1500, responses: undefined })
  t.equal(over.status, 307, 'a body over the limit is the target\'s business')
  t.same(seen, [])
  const direct = await rawRequest(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-spy\r\nContent-Length: 5\r\n\r\nhello', { waitMs: 1000 })
  t.equal(direct.status, 200, 'the target serves the repeated request')
  t.same(seen, ['parsed:hello', 'handler:hello'])
})

test('RFC 9110 10.2.2: Location from request data is encoded: no header injection, no fragment, no raw controls', async (t) => {
  const { port } = await ruleServer(t)
  const res = await rawRequest(port, 'GET /v1/a{|}\\^`?q="<>"&r=%0D%0ASet-Cookie:%20a HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 1000 })
  t.equal(res.status, 307)
  t.equal(res.headers.location, '/a%7B%7C%7D%5C%5E%60?q=%22%3C%3E%22&r=%0D%0ASet-Cookie:%20a')
  // RFC 9112 3.2: a fragment is no part of the request-target; the router stops at it, and so do the rules.
  const fragment = await rawRequest(port, 'GET /v1/a#x?q=1 HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 1000 })
  t.equal(fragment.headers.location, '/a', 'the fragment is dropped, not encoded into a path the router would not find')
  t.equal(res.headers['set-cookie'], undefined)
  t.same(res.headerLines.filter(([n]) => n === 'location').length, 1)
})

test('open redirect: /v1//evil.com redirects to the path /evil.com, never to //evil.com', async (t) => {
  const { port } = await ruleServer(t)
  for (const [path, location] of [['/v1//evil.com', '/evil.com'], ['/v1////evil.com/x?y', '/evil.com/x?y'], ['/v1/\\evil.com', '/%5Cevil.com']]) {
    const res = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, { waitMs: 1000 })
    t.equal(res.headers.location, location, path)
    t.equal(new URL(res.headers.location, 'http://service.test/').host, 'service.test', `${path} stays on the host`)
  }
})

test('config.redirect: false exempts a route; other URLs and methods pass through', async (t) => {
  const { app } = await ruleServer(t, [{ from: '/v1/', to: '/', methods: ['GET'] }])
  t.equal((await app.inject('/v1/exempt')).body, 'still here')
  t.equal((await app.inject('/ping')).body, 'pong')
  const post = await app.inject({ method: 'POST', url: '/v1/echo', headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(post.statusCode, 200, 'the rule is for GET (and HEAD) only')
  t.equal((await app.inject('/v1/echo')).statusCode, 307)
})

test('a rule whose function throws is that request\'s error, not a redirect', async (t) => {
  const app = await buildApp({ redirect: { rules: [{ from: '/x/', to: () => { throw new Error('lookup failed') } }, { from: '/y/', to: () => 'ftp://h/' }] } })
  const res = await app.inject('/x/1')
  t.equal(res.statusCode, 500)
  t.equal(res.json().message, 'lookup failed', 'the app\'s error, as the app\'s handlers answer it')
  t.equal((await app.inject('/y/1')).statusCode, 500)
})

test('options are validated at registration: a bad rule throws FST_HTTP_CONVENTIONS_INVALID_OPTION', async (t) => {
  const bad: unknown[] = [
    { rules: 'x' },
    { rules: [{ from: 'v1/', to: '/' }] },
    { rules: [{ from: '/v1/', to: '//evil.com/' }] },
    { rules: [{ from: /^\/(.*)$/, to: '/$3' }] },
    { rules: [{ from: '/v1/', to: '/', methods: [] }] },
    { rule: [] }
  ]
  for (const opts of bad) {
    await t.rejects(boot(Fastify().register(httpConventionsRedirect, opts as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(opts))
    await t.rejects(boot(Fastify().register(httpConventions, { redirect: opts as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  }
  await t.rejects(boot(Fastify().register(httpConventions, { redirect: 'yes' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  const app = await buildApp()
  t.throws(() => app.get('/a', { config: { redirect: true as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, 'a route config typo throws when the route is added')
})

test('registered by the umbrella and again in a child context, the decorator is installed once; redirect: false leaves it out', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions)
  await app.register(async (child) => {
    await child.register(httpConventionsRedirect, { rules: V1 })
    child.get('/a', async (_req, reply) => reply.temporaryRedirect('/b'))
    child.get('/v1/a', async () => 'not redirected')
  })
  app.get('/v1/root', async () => 'the root has no rules')
  t.equal((await app.inject('/a')).headers.location, '/b')
  t.equal((await app.inject('/v1/a')).headers.location, '/a', 'the child\'s rules apply to its routes')
  t.equal((await app.inject('/v1/root')).body, 'the root has no rules', 'the parent is unaffected')
  const off = Fastify({ ...serverOptions })
  await off.register(httpConventions, { redirect: false })
  t.notOk(off.hasReplyDecorator('temporaryRedirect'))
})

test('OpenAPI: routes a rule can redirect document 307 with Location', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(swagger, { openapi: { info: { title: 't', version: '1' } }, transform: conventionsOpenApiTransform })
  await app.register(httpConventions, { redirect: { rules: [{ from: '/v1/', to: '/' }, { from: /^\/old\/[^/]+$/, to: '/new', methods: ['GET'] }] } })
  app.get('/v1/things', async () => [])
  app.put('/old/:id', async () => 'x')
  app.get('/old/:id', async () => 'x')
  app.get('/v1/exempt', { config: { redirect: false } }, async () => 'x')
  app.get('/things', async () => [])
  await app.ready()
  const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>> }).paths
  t.ok(paths['/v1/things'].get.responses['307'].headers, '307 with its Location header')
  t.ok(paths['/old/{id}'].get.responses['307'])
  t.notOk(paths['/old/{id}'].put.responses['307'], 'the rule is for GET only')
  t.notOk(paths['/v1/exempt'].get.responses['307'])
  t.notOk(paths['/things'].get.responses['307'])
})

test('a URL no route serves: the rules answer it after every onRequest hook of the app (a rate limiter\'s 429 comes first)', async (t) => {
  const app = await buildApp({ redirect: { rules: V1 } })
  let counted = 0
  app.addHook('onRequest', async (request, reply) => {
    counted++
    if (request.headers['x-over-limit'] === '1') return reply.code(429).send('slow down')
  })
  app.get('/articles/:id', async () => 'article')
  t.teardown(() => app.close())
  const limited = await app.inject({ url: '/v1/articles/1', headers: { 'x-over-limit': '1' } })
  t.equal(limited.statusCode, 429, 'the app\'s own hook answered first')
  const redirected = await app.inject({ url: '/v1/articles/1' })
  t.equal(redirected.statusCode, 307)
  t.equal(redirected.headers.location, '/articles/1')
  t.equal(counted, 2, 'both requests were counted by the app\'s onRequest hook')
})

test('a URL no route serves, matched by a rule and served by routes of other methods: the rule\'s 307, whatever order the plugins were registered in', async (t) => {
  for (const order of [['redirect', 'methods'], ['methods', 'redirect']] as const) {
    const app = Fastify({ ...serverOptions })
    for (const plugin of order) {
      if (plugin === 'redirect') await app.register(httpConventionsRedirect, { rules: [{ from: '/old/', to: '/new/' }] })
      else await app.register(httpConventionsMethods, {})
    }
    app.get('/old/items', async () => 'still served')
    t.teardown(() => app.close())
    const res = await app.inject({ method: 'DELETE', url: '/old/items' })
    t.equal(res.statusCode, 307, `${order.join(' then ')}: DELETE /old/items is the rule's, not 405`)
    t.equal(res.headers.location, '/new/items', order.join(' then '))
    t.equal((await app.inject({ method: 'DELETE', url: '/elsewhere' })).statusCode, 404, `${order.join(' then ')}: a URL neither knows is the app's 404`)
  }
})

test('rules and 405 add one hook to the app\'s routes, in preParsing, none in onRequest', async (t) => {
  const app = await buildApp({ redirect: { rules: V1 } })
  app.get('/articles/:id', async () => 'article')
  await boot(app.ready())
  t.teardown(() => app.close())
  const tree = app.printRoutes({ includeHooks: true, commonPrefix: false })
  t.notMatch(tree, /\(onRequest\)/, 'no onRequest hook of the suite on any route')
  t.match(tree, /\(preParsing\) \["httpConventionsFirst\(\)"/, 'one preParsing hook of the context, first of its phase (requests no route serves, bodies before anyone reads them)')
  t.notMatch(tree, /methodsUnrouted|redirectUnrouted/, 'not a hook each')
})
