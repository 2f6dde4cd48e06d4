import { test } from 'tap'
import Fastify from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { httpConventions, httpConventionsValidation, serverOptions } from '../../plugins/index'
import { probeValidator } from '../../plugins/conventions/validation'

const body = {
  type: 'object',
  required: ['title', 'author'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1 },
    author: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' }, 'e/mail': { type: 'string', format: 'email' } } },
    tags: { type: 'array', items: { type: 'string', maxLength: 3 } }
  }
} as const

async function app () {
  const a = await buildApp()
  a.post('/things/:id', {
    schema: {
      body,
      params: { type: 'object', properties: { id: { type: 'integer' } } },
      querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } },
      headers: { type: 'object', required: ['x-request-tag'], properties: { 'x-request-tag': { type: 'string', pattern: '^[a-z]+$' } } }
    }
  }, async (req) => ({ body: req.body, query: req.query, params: req.params }))
  return a
}

const okHeaders = { 'x-request-tag': 'abc' }

test('conventions (Validation errors), 422: one errors[] entry per problem, with dotted paths', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/things/1', headers: okHeaders, payload: { title: '', author: { name: 5, extra: true }, tags: ['ok', 'toolong', 7], zzz: 1 } })
  t.equal(res.statusCode, 422)
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body))
  t.same(res.json().errors.sort((x: { field: string }, y: { field: string }) => x.field.localeCompare(y.field)), [
    { field: 'author.extra', message: 'is not allowed' },
    { field: 'author.name', message: 'must be string' },
    { field: 'tags.1', message: 'must NOT have more than 3 characters' },
    { field: 'tags.2', message: 'must be string' },
    { field: 'title', message: 'must NOT have fewer than 1 characters' },
    { field: 'zzz', message: 'is not allowed' }
  ])
})

test('a missing required property is named by its own path', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/things/1', headers: okHeaders, payload: { author: {} } })
  t.same(res.json().errors, [{ field: 'title', message: 'is required' }, { field: 'author.name', message: 'is required' }])
})

test('bodies are not type-coerced: a number is not a string', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/things/1', headers: okHeaders, payload: { title: 1, author: { name: 'x' } } })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, [{ field: 'title', message: 'must be string' }])
})

test('querystring, params and headers problems are 422 naming the parameter; those parts are coerced', async (t) => {
  const a = await app()
  const good = await a.inject({ method: 'POST', url: '/things/7?limit=5', headers: okHeaders, payload: { title: 't', author: { name: 'n' } } })
  t.equal(good.statusCode, 200)
  t.same(good.json().query, { limit: 5 })
  t.same(good.json().params, { id: 7 })
  const q = await a.inject({ method: 'POST', url: '/things/1?limit=500', headers: okHeaders, payload: { title: 't', author: { name: 'n' } } })
  t.same(q.json(), { errors: [{ field: 'query:limit', message: 'must be <= 100' }] })
  const p = await a.inject({ method: 'POST', url: '/things/abc', headers: okHeaders, payload: { title: 't', author: { name: 'n' } } })
  t.same(p.json(), { errors: [{ field: 'path:id', message: 'must be integer' }] })
  const h = await a.inject({ method: 'POST', url: '/things/1', headers: { 'x-request-tag': 'ABC' }, payload: { title: 't', author: { name: 'n' } } })
  t.same(h.json(), { errors: [{ field: 'header:x-request-tag', message: 'must match pattern "^[a-z]+$"' }] })
  const missing = await a.inject({ method: 'POST', url: '/things/1', payload: { title: 't', author: { name: 'n' } } })
  t.same(missing.json(), { errors: [{ field: 'header:x-request-tag', message: 'is required' }] })
})

test('conventions (Validation errors): params, querystring, headers and body are validated together, one entry per problem', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/things/abc?limit=500', headers: { 'x-request-tag': 'ABC' }, payload: { title: 1, zzz: true } })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors, [
    { field: 'path:id', message: 'must be integer' },
    { field: 'query:limit', message: 'must be <= 100' },
    { field: 'header:x-request-tag', message: 'must match pattern "^[a-z]+$"' },
    { field: 'author', message: 'is required' },
    { field: 'zzz', message: 'is not allowed' },
    { field: 'title', message: 'must be string' }
  ])
  const later = await a.inject({ method: 'POST', url: '/things/1?limit=500', headers: { 'x-request-tag': 'ABC' }, payload: { title: 't', author: { name: 'n' } } })
  t.same(later.json().errors.map((e: { field: string }) => e.field), ['query:limit', 'header:x-request-tag'], 'parts after the first that failed are validated too')
})

test('a body that is not an object at all is named "body"', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/things/1', headers: { ...okHeaders, 'content-type': 'application/json' }, payload: '[1]' })
  t.same(res.json(), { errors: [{ field: 'body', message: 'must be object' }] })
})

test('boot fails clearly when the server options would lose problems', async (t) => {
  for (const server of [{}, { ajv: { customOptions: { allErrors: true } } }, { ajv: { customOptions: { allErrors: true, removeAdditional: false } } }]) {
    const a = Fastify(server)
    await a.register(httpConventions)
    a.post('/', { schema: { body } }, async () => 'x')
    await t.rejects(boot(a.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /Pass the exported serverOptions/ }, JSON.stringify(server))
  }
  const ok = Fastify({ ...serverOptions })
  await ok.register(httpConventions)
  ok.post('/', { schema: { body } }, async () => 'x')
  await t.resolves(boot(ok.ready()))
})

test('checkServerOptions: warn logs once, ignore stays silent; with serverOptions no schema route is needed', async (t) => {
  const lines: string[] = []
  const warn = Fastify({ logger: { level: 'warn', stream: { write: (l: string) => { lines.push(l) } } } })
  await warn.register(httpConventions, { validation: { checkServerOptions: 'warn' } })
  warn.post('/', { schema: { body } }, async () => 'x')
  await warn.ready()
  t.equal(lines.length, 1)
  t.match(lines[0], /allErrors is not true/)
  const ignore = Fastify()
  await ignore.register(httpConventionsValidation, { checkServerOptions: 'ignore' })
  ignore.post('/', { schema: { body } }, async () => 'x')
  await t.resolves(boot(ignore.ready()))
  const none = Fastify({ ...serverOptions })
  await none.register(httpConventionsValidation)
  none.get('/', async () => 'x')
  await t.resolves(boot(none.ready()))
  await t.rejects(boot(Fastify().register(httpConventionsValidation, { checkServerOptions: 'maybe' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  await t.rejects(boot(Fastify().register(httpConventionsValidation, { profile: 'x' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
})

test('probeValidator reports each lost behaviour', async (t) => {
  const lenient = () => Object.assign(() => true, { errors: [] })
  t.match(probeValidator(lenient), /allErrors.*removeAdditional.*coerced/)
})

// Ajv instances the server options build, seen through Ajv's own onCreate hook. Each test
// passes its own shared schema, so the pool of instances cannot hand out an earlier one.
type Watched = { opts: { validateSchema?: unknown } }
function watchedServer (id: string, customOptions: Record<string, unknown> = {}) {
  const created: Watched[] = []
  const ajv = { customOptions: { ...serverOptions.ajv.customOptions, ...customOptions }, onCreate: (a: unknown) => { created.push(a as Watched) } }
  const app = Fastify({ ...serverOptions, ajv })
  app.addSchema({ $id: id, type: 'string' })
  return { app, created }
}

test('one Ajv instance per app checks schemas against the meta-schema, the others hand it theirs; bodies stay strict and query strings coerced', async (t) => {
  const { app, created } = watchedServer('watch-one', { logger: false })
  await app.register(httpConventions)
  app.post('/b', { schema: { body: { type: 'object', properties: { s: { $ref: 'watch-one#' } } } } }, async (req) => req.body)
  app.get('/q', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (req) => req.query)
  // A child context with a schema of its own: Fastify builds its validators again.
  await app.register(async (child) => {
    child.addSchema({ $id: 'watch-one-child', type: 'integer' })
    child.get('/c', { schema: { querystring: { type: 'object', properties: { n: { $ref: 'watch-one-child#' } } } } }, async (req) => req.query)
  })
  await app.ready()
  t.ok(created.length >= 3, `body and query-string instances, and the child's: ${created.length}`)
  t.equal(created.filter((a) => a.opts.validateSchema !== false).length, 1, 'one checks schemas')
  t.equal((await app.inject({ method: 'POST', url: '/b', payload: { s: 1 } })).statusCode, 422)
  t.same((await app.inject('/q?n=5')).json(), { n: 5 })
  t.same((await app.inject('/c?n=7')).json(), { n: 7 })
  t.equal((await app.inject('/c?n=x')).statusCode, 422)
})

test('a schema that breaks the meta-schema fails the boot: body, query string, shared or PATCH resource schema', async (t) => {
  const bad = { type: 'object', properties: { n: { type: 'integr' } } }
  const fine = { type: 'object', properties: { n: { type: 'integer' } } }
  const cases: Record<string, (app: ReturnType<typeof Fastify>) => void> = {
    body: (app) => {
      app.get('/q', { schema: { querystring: fine } }, async () => 'x')
      app.post('/b', { schema: { body: bad } }, async () => 'x')
    },
    'query string': (app) => {
      app.post('/b', { schema: { body: fine } }, async () => 'x')
      app.get('/q', { schema: { querystring: bad } }, async () => 'x')
    },
    shared: (app) => {
      app.addSchema({ $id: 'watch-bad-shared-schema', ...bad })
      app.get('/q', { schema: { querystring: { $ref: 'watch-bad-shared-schema#' } } }, async () => 'x')
    },
    'PATCH resource': (app) => {
      app.patch('/p', { config: { patch: { schema: bad, load: () => null, save: () => false } } }, async () => 'x')
    }
  }
  for (const [name, declare] of Object.entries(cases)) {
    const { app } = watchedServer(`watch-bad-${name}`)
    await app.register(httpConventions)
    await t.rejects(boot((async () => { declare(app); await app.ready() })()), { message: /schema is invalid: data\/properties\/n\/type/ }, name)
  }
})

test('validateSchema: false in the server options is honoured', async (t) => {
  const { app, created } = watchedServer('watch-off', { validateSchema: false })
  await app.register(httpConventions)
  app.post('/b', { schema: { body: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (req) => req.body)
  app.get('/q', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (req) => req.query)
  await app.ready()
  t.ok(created.length >= 2)
  t.same(created.filter((a) => a.opts.validateSchema !== false), [])
  t.same((await app.inject('/q?n=5')).json(), { n: 5 })
  t.equal((await app.inject({ method: 'POST', url: '/b', payload: { n: '5' } })).statusCode, 422)
})

test('options: an unknown key throws at registration; config.validation is refused when the route is added, with what to do instead', async (t) => {
  const bad = Fastify(serverOptions)
  bad.register(httpConventions, { validation: { checkserveroptions: 'warn' } as never })
  await t.rejects(Promise.resolve(bad.ready()), /unknown option "checkserveroptions"/)
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  t.throws(() => app.post('/x', { config: { validation: false } as never, schema: { body: { type: 'object' } } }, async () => 'x'), /config\.validation is not an option.*attachValidation/)
})
