import { test } from 'tap'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { boot } from '../helpers/app'
import {
  httpConventions, httpConventionsAuth, httpConventionsConditional, httpConventionsDeltaEncoding, httpConventionsPatch,
  httpConventionsContentType, httpConventionsContentLength, httpConventionsValidation, httpConventionsRedirect, httpConventionsResourcePolicy,
  serverOptions, type AuthOptions
} from '../../plugins/index'

const AUTH: AuthOptions = { realm: 'r', basic: { users: { alice: 'secret' } } }
const ALICE = 'Basic ' + Buffer.from('alice:secret').toString('base64')

test('fail closed: a convention registered in the context after its route makes ready() reject', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.put('/x', { config: { auth: true } }, async () => 'x')
  await app.register(httpConventionsAuth, AUTH)
  await t.rejects(boot(app.ready()), /route PUT \/x asks for auth/)
})

test('fail closed: a convention turned off in the umbrella and asked for by a route: ready() rejects', async (t) => {
  for (const [option, config] of [['patch', { patch: { schema: {}, load: () => null, save: () => false } }], ['deltaEncoding', { deltaEncoding: true }], ['contentType', { contentType: { accept: ['application/json'] } }]] as const) {
    const app = Fastify(serverOptions)
    await app.register(httpConventions, { [option]: false })
    app.route({ method: option === 'patch' ? 'PATCH' : 'GET', url: '/x', config: config as RouteOptions['config'], handler: async () => 'x' })
    await t.rejects(boot(app.ready()), /asks for/, option)
  }
})

test('every registration style compiles the route: awaited, after(), fastify.route(), routes added by another plugin', async (t) => {
  const app = Fastify(serverOptions)
  app.register(httpConventions, { auth: AUTH })
  app.after(() => {
    app.delete('/after', { config: { auth: true } }, async () => 'x')
    app.route({ method: 'PUT', url: '/route', config: { auth: true }, handler: async () => 'x' })
  })
  app.register(fp(async (other: FastifyInstance) => {
    other.post('/other', { config: { auth: true } }, async () => 'x')
  }))
  await app.register(async (child) => {
    child.delete('/child', { config: { auth: true } }, async () => 'x')
  })
  t.teardown(() => app.close())
  for (const [method, url] of [['DELETE', '/after'], ['PUT', '/route'], ['POST', '/other'], ['DELETE', '/child']] as const) {
    const res = await app.inject({ method, url, headers: method === 'DELETE' ? {} : { 'content-type': 'application/json' }, payload: method === 'DELETE' ? undefined : '{}' })
    t.equal(res.statusCode, 401, `${method} ${url}: 401`)
    t.ok(res.headers['www-authenticate'])
    t.equal((await app.inject({ method, url, headers: method === 'DELETE' ? { authorization: ALICE } : { authorization: ALICE, 'content-type': 'application/json' }, payload: method === 'DELETE' ? undefined : '{}' })).statusCode, 200)
  }
})

test('encapsulation: a child context registers conditional again with notModifiedStatus 304; its routes answer 304, the parent\'s and siblings\' 412', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  const validators = () => ({ etag: '"v2"' })
  app.get('/root', { config: { conditional: { validators } } }, async () => 'x')
  await app.register(async (child) => {
    await child.register(httpConventionsConditional, { notModifiedStatus: 304 })
    child.get('/child', { config: { conditional: { validators } } }, async () => 'x')
    await child.register(async (grandchild) => {
      grandchild.get('/grandchild', { config: { conditional: { validators } } }, async () => 'x')
    })
  })
  await app.register(async (sibling) => {
    sibling.get('/sibling', { config: { conditional: { validators } } }, async () => 'x')
  })
  t.teardown(() => app.close())
  const status = async (url: string): Promise<number> => (await app.inject({ url, headers: { 'if-none-match': '"v2"' } })).statusCode
  t.equal(await status('/child'), 304, 'the child\'s options')
  t.equal(await status('/grandchild'), 304, 'and its children\'s')
  t.equal(await status('/root'), 412, 'the parent keeps the spec profile')
  t.equal(await status('/sibling'), 412, 'a sibling is unaffected')
})

test('encapsulation: auth, patch, delta encoding and content type registered in a child context apply to its routes only', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.get('/open', async () => 'open')
  await app.register(async (child) => {
    await child.register(httpConventionsAuth, AUTH)
    child.get('/secret', { config: { auth: true } }, async () => 'secret')
  })
  await app.register(async (child) => {
    await child.register(httpConventionsAuth, { ...AUTH, realm: 'other' })
    child.get('/other', { config: { auth: true } }, async () => 'other')
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/open')).statusCode, 200)
  const secret = await app.inject('/secret')
  t.equal(secret.statusCode, 401)
  t.match(String(secret.headers['www-authenticate']), /realm="r"/)
  t.match(String((await app.inject('/other')).headers['www-authenticate']), /realm="other"/, 'each child has its own options')
  t.equal((await app.inject({ url: '/secret', headers: { authorization: ALICE } })).body, 'secret')

  const solo = Fastify(serverOptions)
  // Only the resource policy at the root (the suite is installed there), the rest in a child.
  await solo.register(httpConventionsResourcePolicy)
  await solo.register(async (child) => {
    await child.register(httpConventionsPatch)
    await child.register(httpConventionsDeltaEncoding)
    await child.register(httpConventionsContentType)
    let doc: Record<string, unknown> = { a: 1, text: 'x'.repeat(2000) }
    child.patch('/doc', {
      config: { patch: { schema: { type: 'object' }, load: () => ({ document: doc, etag: '"1"' }), save: (_r, d) => { doc = d as typeof doc; return { document: doc, etag: '"2"' } } } }
    }, async (request) => request.patched?.document)
    child.get('/doc', { config: { deltaEncoding: true } }, async (_req, reply) => { reply.header('etag', '"1"'); return doc })
  })
  t.teardown(() => solo.close())
  const patched = await solo.inject({ method: 'PATCH', url: '/doc', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"b":2}' })
  t.match(patched.json(), { a: 1, b: 2 }, 'PATCH alone in a child context')
  const stale = await solo.inject({ method: 'PATCH', url: '/doc', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '"nope"' }, payload: '{"c":3}' })
  t.equal(stale.statusCode, 412, 'PATCH honours If-Match without the conditional plugin registered')
  t.equal((await solo.inject({ url: '/doc', headers: { 'a-im': 'gzip' } })).statusCode, 226, 'delta encoding in a child context')
})

test('one policy for re-registration: the same convention twice in one context is a boot error that says how to do it', async (t) => {
  const cases: Array<(app: FastifyInstance) => void> = [
    (app) => { app.register(httpConventionsConditional); app.register(httpConventionsConditional) },
    (app) => { app.register(httpConventions); app.register(httpConventionsConditional, { notModifiedStatus: 304 }) },
    (app) => { app.register(httpConventions, { auth: AUTH }); app.register(httpConventionsAuth, AUTH) },
    (app) => { app.register(httpConventions); app.register(httpConventions) },
    ...[httpConventionsContentType, httpConventionsContentLength, httpConventionsValidation, httpConventionsRedirect, httpConventionsResourcePolicy, httpConventionsPatch, httpConventionsDeltaEncoding]
      .map((plugin) => (app: FastifyInstance) => { app.register(plugin as never); app.register(plugin as never) })
  ]
  for (const setup of cases) {
    const app = Fastify(serverOptions)
    setup(app)
    await t.rejects(boot(app.ready()), /already registered in this context.*child context/)
  }
})

test('compiled per route: a route that turns off the conventions that apply by default gets no hook of its own (only the context\'s first hook); a default route and a route asking for many get at most one per phase', async (t) => {
  const app = Fastify(serverOptions)
  // Every plugin registered: steps such as Accept-Patch and other plugins' 401s ride along with a route's other steps.
  await app.register(httpConventions, { auth: AUTH })
  const seen = new Map<string, RouteOptions>()
  app.addHook('onRoute', (route) => { seen.set(`${String(route.method)} ${route.url}`, route) })
  // Resource policy, Content-Length, Content-Type and "not modified" apply to every route by default.
  app.get('/plain', { config: { resourcePolicy: false, contentLength: false, contentType: false, conditional: false } }, async () => 'x')
  app.get('/default', async () => 'x')
  app.put('/busy', {
    config: { auth: true, conditional: { validators: () => ({ etag: '"1"' }) }, contentType: { accept: ['application/json'] }, resourcePolicy: 'same-site' }
  }, async () => 'x')
  await app.ready()
  const tree = app.printRoutes({ includeHooks: true, commonPrefix: false })
  // The context's one hook for requests no route serves (preParsing, returning at once for a
  // routed request; the methods convention's step) is the only hook the route runs; with
  // `methods: false`, no resource policy for the not-found handler and no redirect rules it
  // has no step for such requests, but the hook stays: it also runs a route's refusals first
  // for a request that declares a body (below).
  t.match(tree, /\/plain \(GET\)\n\S*\s*• \(preParsing\) \["httpConventionsFirst\(\)"\]\n\S*\s*\/plain \(HEAD\)/, 'GET /plain runs only the context\'s hook for requests no route serves')
  const bare = Fastify(serverOptions)
  t.teardown(() => bare.close())
  await bare.register(httpConventions, { auth: AUTH, methods: false, resourcePolicy: { policy: false } })
  bare.get('/plain', { config: { resourcePolicy: false, contentLength: false, contentType: false, conditional: false } }, async () => 'x')
  await bare.ready()
  t.match(bare.printRoutes({ includeHooks: true, commonPrefix: false }), /\/plain \(GET\)\n\S*\s*• \(preParsing\) \["httpConventionsFirst\(\)"\]\n\S*\s*\/plain \(HEAD\)/, 'with methods: false and no default resource policy, GET /plain runs only the context\'s first hook (for a request that declares a body, the route\'s refusals before anyone reads it), no hook of its own')
  const plain = seen.get('GET /plain') as RouteOptions
  for (const phase of ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend'] as const) {
    t.equal(plain[phase], undefined, `GET /plain: no ${phase} hook`)
  }
  for (const name of ['GET /default', 'PUT /busy']) {
    const route = seen.get(name) as RouteOptions
    for (const phase of ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend'] as const) {
      const hooks = route[phase] === undefined ? [] : ([] as unknown[]).concat(route[phase])
      t.ok(hooks.length <= 1, `${name}: ${hooks.length} ${phase} hook(s)`)
    }
  }
  const busy = seen.get('PUT /busy') as RouteOptions
  t.equal(([] as unknown[]).concat(busy.preParsing).length, 1, 'auth, content length, content type and the body reader share one preParsing hook')
})

test('plugin names follow the package, so other plugins can declare dependencies on them', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { auth: AUTH })
  for (const name of ['fastify-http-conventions', 'fastify-http-conventions-conditional', 'fastify-http-conventions-patch', 'fastify-http-conventions-auth',
    'fastify-http-conventions-content-length', 'fastify-http-conventions-content-type', 'fastify-http-conventions-validation',
    'fastify-http-conventions-delta-encoding', 'fastify-http-conventions-redirect', 'fastify-http-conventions-resource-policy']) {
    t.ok(app.hasPlugin(name), name)
  }
  const dependent = fp(async () => {}, { name: 'needs-conditional', dependencies: ['fastify-http-conventions-conditional'] })
  await t.resolves(Promise.resolve(app.register(dependent)), 'a plugin depending on the conditional convention loads')
  await app.close()
})

test('the suite never overrides the app\'s error handler: no FSTWRN004, and allowErrorHandlerOverride: false boots', async (t) => {
  const warnings: string[] = []
  const onWarning = (w: Error & { code?: string }): void => { warnings.push(String(w.code)) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const app = Fastify({ ...serverOptions, allowErrorHandlerOverride: false } as never)
  app.setErrorHandler((error, _request, reply) => { reply.code(599).send({ mine: (error as Error).message }) })
  await app.register(httpConventions, { auth: AUTH })
  app.get('/boom', async () => { throw new Error('boom') })
  app.post('/v', { schema: { body: { type: 'object', required: ['a'] } } }, async () => 'ok')
  await app.ready()
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(warnings.includes('FSTWRN004'), 'no warning about overriding an error handler')
  t.same((await app.inject('/boom')).json(), { mine: 'boom' }, 'the app\'s handler gets errors the suite does not own')
  const invalid = await app.inject({ method: 'POST', url: '/v', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(invalid.statusCode, 599, 'the app\'s handler sees the suite\'s 422 too, and answers it in its own shape')
  t.same(invalid.json(), { mine: 'a: is required' })
  await app.close()
})

test('resourcePolicy: false asks for no policy: fine where the convention is not registered', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { resourcePolicy: false })
  app.get('/plain', { config: { resourcePolicy: false } }, async () => 'x')
  app.get('/logo', { config: { resourcePolicy: 'cross-origin' } }, async () => 'x')
  await t.rejects(boot(app.ready()), /route GET \/logo asks for resource-policy/, 'a policy asked for where none is registered is refused; false is not')
})
