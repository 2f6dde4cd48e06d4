import { test } from 'tap'
import type { Test } from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import helmet from '@fastify/helmet'
import { boot, buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import { httpConventions, httpConventionsResourcePolicy, serverOptions, type HttpConventionsOptions } from '../../plugins/index'

const CORP = 'cross-origin-resource-policy'
const AUTH = 'Basic ' + Buffer.from('u:p').toString('base64')

interface Doc { etag: string, text: string }

/** Routes that answer every status the suite produces. */
async function policyServer (t: Test, opts: HttpConventionsOptions = {}): Promise<{ app: FastifyInstance, port: number, doc: Doc }> {
  const app = await buildApp({ auth: { basic: { users: { u: 'p' } } }, redirect: { rules: [{ from: '/v1/', to: '/' }] }, ...opts }, { bodyLimit: 1000 })
  const doc: Doc = { etag: 'v1', text: 'first version of the document, long enough to be worth a delta. '.repeat(20) }
  app.get('/plain', async () => 'plain')
  app.get('/logo', { config: { resourcePolicy: 'cross-origin' } }, async (_req, reply) => reply.type('image/svg+xml').send('<svg xmlns="http://www.w3.org/2000/svg"/>'))
  app.get('/site', { config: { resourcePolicy: 'same-site' } }, async () => 'site')
  app.get('/none', { config: { resourcePolicy: false } }, async () => 'none')
  app.get('/own', { config: { resourcePolicy: 'same-site' } }, async (_req, reply) => reply.header(CORP, 'cross-origin').send('own'))
  app.get('/secret', { config: { auth: true } }, async () => 'secret')
  app.get('/secret-logo', { config: { auth: true, resourcePolicy: 'cross-origin' } }, async () => 'secret')
  app.post('/items', {
    config: { contentType: { accept: ['application/json'] } },
    schema: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } }
  }, async () => ({ ok: true }))
  app.get('/missing', async (_req, reply) => reply.callNotFound())
  app.get('/boom', async () => { throw new Error('boom') })
  app.get('/hashed', { config: { conditional: true } }, async () => 'hashed')
  app.get('/doc', { config: { conditional: { validators: () => ({ etag: doc.etag }) }, deltaEncoding: true } }, async (_req, reply) => reply.type('text/plain').send(doc.text))
  const port = await listen(app)
  t.teardown(() => app.close())
  return { app, port, doc }
}

test('Fetch CORP: the default policy is same-origin; a route sets its own; false sends none', async (t) => {
  const { app } = await policyServer(t)
  t.equal((await app.inject('/plain')).headers[CORP], 'same-origin')
  t.equal((await app.inject('/logo')).headers[CORP], 'cross-origin')
  t.equal((await app.inject('/site')).headers[CORP], 'same-site')
  t.equal((await app.inject('/none')).headers[CORP], undefined)
  t.equal((await app.inject('/own')).headers[CORP], 'cross-origin', 'a value the handler set wins')
  t.equal((await app.inject({ method: 'HEAD', url: '/logo' })).headers[CORP], 'cross-origin', 'HEAD like GET')
})

test('Fetch CORP: the option sets the default policy, or none', async (t) => {
  const cross = await buildApp({ resourcePolicy: { policy: 'cross-origin' } })
  cross.get('/a', async () => 'a')
  cross.get('/b', { config: { resourcePolicy: 'same-origin' } }, async () => 'b')
  t.equal((await cross.inject('/a')).headers[CORP], 'cross-origin')
  t.equal((await cross.inject('/b')).headers[CORP], 'same-origin')
  const none = await buildApp({ resourcePolicy: { policy: false } })
  none.get('/a', async () => 'a')
  none.get('/b', { config: { resourcePolicy: 'same-site' } }, async () => 'b')
  t.equal((await none.inject('/a')).headers[CORP], undefined)
  t.equal((await none.inject('/b')).headers[CORP], 'same-site')
  const off = await buildApp({ resourcePolicy: false })
  off.get('/a', async () => 'a')
  t.equal((await off.inject('/a')).headers[CORP], undefined, 'resourcePolicy: false leaves the plugin out')
})

test('conventions (Cross-Origin-Resource-Policy): 401 from auth carries the route\'s policy, next to WWW-Authenticate', async (t) => {
  const { app } = await policyServer(t)
  const res = await app.inject('/secret')
  t.equal(res.statusCode, 401)
  t.ok(res.headers['www-authenticate'])
  t.equal(res.headers[CORP], 'same-origin')
  const logo = await app.inject('/secret-logo')
  t.equal(logo.statusCode, 401)
  t.equal(logo.headers[CORP], 'cross-origin', 'the route\'s own policy applies to its errors')
  t.equal((await app.inject({ url: '/secret', headers: { authorization: AUTH } })).headers[CORP], 'same-origin')
})

test('conventions (Cross-Origin-Resource-Policy): 4xx and 5xx from other plugins and from handlers carry the policy (415, 422, 400, 500)', async (t) => {
  const { app } = await policyServer(t)
  const cases: Array<[number, InjectOptions]> = [
    [415, { method: 'POST', url: '/items', headers: { 'content-type': 'text/plain' }, payload: 'x' }],
    [422, { method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{}' }],
    [400, { method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{' }],
    [500, { url: '/boom' }]
  ]
  for (const [status, req] of cases) {
    const res = await app.inject(req)
    t.equal(res.statusCode, status)
    t.equal(res.headers[CORP], 'same-origin', `${status}`)
  }
})

test('conventions (Cross-Origin-Resource-Policy): a route that answers reply.callNotFound() keeps its policy; Fastify\'s 404 for a URL no route serves carries it too', async (t) => {
  const { app } = await policyServer(t)
  const missing = await app.inject('/missing')
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers[CORP], 'same-origin', 'the route ran its steps before handing over to the not-found handler')
  const nowhere = await app.inject('/nowhere')
  t.equal(nowhere.statusCode, 404)
  t.equal(nowhere.headers[CORP], 'same-origin', 'the context\'s step for requests no route serves gives Fastify\'s 404 the policy')
})

test('conventions (Cross-Origin-Resource-Policy): 411 answered from the content-length hooks, over a real socket, carries the policy', async (t) => {
  const { port } = await policyServer(t)
  const noLength = await rawRequest(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n', { waitMs: 1000 })
  t.equal(noLength.status, 411)
  t.equal(noLength.headers[CORP], 'same-origin')
  const chunked = await rawRequest(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n', { waitMs: 1000 })
  t.equal(chunked.status, 411)
  t.equal(chunked.headers[CORP], 'same-origin')
  const over = await rawRequest(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n', { waitMs: 1000 })
  t.equal(over.status, 411)
  t.equal(over.headers[CORP], 'same-origin')
})

test('conventions (Cross-Origin-Resource-Policy): a 411 for a request Node\'s parser refused, written on the raw socket outside Fastify, carries the default policy too', async (t) => {
  const { port } = await policyServer(t)
  const res = await rawRequest(port, 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', { waitMs: 1000 })
  t.equal(res.status, 411)
  t.equal(res.headers[CORP], 'same-origin')
})

test('conventions (Cross-Origin-Resource-Policy): 412 (spec profile) and 304 (rfc9110 profile) carry the policy', async (t) => {
  const { app } = await policyServer(t)
  const first = await app.inject('/hashed')
  t.equal(first.headers[CORP], 'same-origin')
  const failed = await app.inject({ url: '/hashed', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(failed.statusCode, 412)
  t.equal(failed.headers[CORP], 'same-origin')
  const provided = await app.inject({ url: '/doc', headers: { 'if-none-match': '"v1"' } })
  t.equal(provided.statusCode, 412)
  t.equal(provided.headers[CORP], 'same-origin')

  const rfc = await policyServer(t, { profile: 'rfc9110' })
  const notModified = await rfc.app.inject({ url: '/hashed', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.headers[CORP], 'same-origin')
  const head = await rfc.app.inject({ method: 'HEAD', url: '/doc', headers: { 'if-none-match': '"v1"' } })
  t.equal(head.statusCode, 304)
  t.equal(head.headers[CORP], 'same-origin')
})

test('conventions (Cross-Origin-Resource-Policy): a 226 delta carries the policy', async (t) => {
  const { app, doc } = await policyServer(t)
  t.equal((await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff' } })).statusCode, 200, 'the first instance, served to a delta client, is kept as a base')
  doc.etag = 'v2'
  doc.text = doc.text.replace('first', 'second')
  const res = await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  t.equal(res.statusCode, 226)
  t.equal(res.headers.im, 'vcdiff')
  t.equal(res.headers[CORP], 'same-origin')
})

test('conventions (Cross-Origin-Resource-Policy): a 307 from the redirect rules carries the policy', async (t) => {
  const { app } = await policyServer(t)
  const res = await app.inject('/v1/plain')
  t.equal(res.statusCode, 307)
  t.equal(res.headers[CORP], 'same-origin')
})

test('registered again in a child context: the child\'s routes get its policy, one header line each, the parent keeps its own', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions)
  await app.register(async (child) => {
    await child.register(httpConventionsResourcePolicy, { policy: 'cross-origin' })
    child.get('/child', async () => 'c')
  })
  app.get('/a', async () => 'a')
  const port = await listen(app)
  t.teardown(() => app.close())
  const res = await rawRequest(port, 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 1000 })
  t.same(res.headerLines.filter(([n]) => n === CORP), [[CORP, 'same-origin']], 'the parent\'s policy')
  const child = await rawRequest(port, 'GET /child HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 1000 })
  t.same(child.headerLines.filter(([n]) => n === CORP), [[CORP, 'cross-origin']], 'the child\'s policy, once')
  const twice = Fastify()
  await twice.register(httpConventions)
  twice.register(httpConventionsResourcePolicy, { policy: 'cross-origin' })
  await t.rejects(boot(twice.ready()), /already registered in this context/, 'twice in one context: a boot error')
})

test('values are checked at registration: a typo throws at boot, a route config typo when the route is added', async (t) => {
  for (const opts of [{ policy: 'same_origin' }, { policy: 'Same-Origin' }, { policy: true }, { policy: null }, { polciy: 'same-site' }]) {
    await t.rejects(boot(Fastify().register(httpConventionsResourcePolicy, opts as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(opts))
    await t.rejects(boot(Fastify().register(httpConventions, { resourcePolicy: opts as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  }
  await t.rejects(boot(Fastify().register(httpConventions, { resourcePolicy: 'same-site' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  const app = await buildApp()
  for (const resourcePolicy of ['cross_origin', 'none', true, 0]) {
    t.throws(() => app.get('/x' + String(resourcePolicy), { config: { resourcePolicy: resourcePolicy as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(resourcePolicy))
  }
})

test('Fetch CORP beside the app\'s own @fastify/helmet: the app\'s policy is kept; a route where the app turns helmet off, and the not-found handler, still carry one', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(helmet, { crossOriginResourcePolicy: { policy: 'same-site' } })
  await app.register(httpConventions)
  app.get('/a', async () => 'a')
  app.get('/no-helmet', { helmet: false }, async () => 'no helmet')
  app.get('/logo', { config: { resourcePolicy: 'cross-origin' } }, async () => 'logo')
  const port = await listen(app)
  t.teardown(() => app.close())
  const get = async (path: string): Promise<Response> => await fetch(`http://127.0.0.1:${port}${path}`)
  const a = await get('/a')
  t.equal(a.headers.get(CORP), 'same-site', 'the policy helmet set is kept (the suite\'s default does not replace it)')
  t.equal(a.headers.get('x-frame-options'), 'SAMEORIGIN', 'helmet\'s other headers are there')
  const off = await get('/no-helmet')
  t.equal(off.headers.get(CORP), 'same-origin', 'helmet off on a route: the convention\'s default policy still')
  t.equal(off.headers.get('x-frame-options'), null)
  t.equal((await get('/logo')).headers.get(CORP), 'cross-origin', 'a route\'s own policy wins')
  const missing = await get('/nowhere')
  t.equal(missing.status, 404)
  t.equal(missing.headers.get(CORP), 'same-site')
})
