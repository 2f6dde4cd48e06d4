/**
 * Composing with the app's own error handler (docs/plugins.md): the app's handlers see the
 * suite's errors, nearest first, as Fastify chains them (the route's `errorHandler`, then
 * the context's `setErrorHandler` handlers up to the root). A handler that passes the error
 * on (rethrows it, or `reply.send(err)`) still gets the suite's answer, byte for byte; a
 * handler that answers in its own shape keeps its own answer.
 */
import { test } from 'tap'
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { httpConventions, httpConventionsValidation, isConventionError, sendConventionError, serverOptions, unprocessable } from '../../plugins/index'
import { listen } from '../helpers/app'

type Placement = 'root' | 'child' | 'route'
type Behaviour = 'rethrow' | 'send' | 'own' | 'none'

interface Seen { handler: string, code: string, statusCode: number | undefined, convention: boolean, validation: boolean }

const BASIC = 'Basic ' + Buffer.from('demo:demo-pass').toString('base64')

/** The same five routes, each answering with one kind of suite error. */
function routes (scope: FastifyInstance, routeOpts: { errorHandler?: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => unknown }): void {
  const schema = { body: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } }
  scope.post('/validation', { ...routeOpts, schema }, async () => 'ok')
  scope.get('/auth', { ...routeOpts, config: { auth: true } }, async () => 'ok')
  scope.get('/precondition', { ...routeOpts, config: { conditional: { validators: () => ({ etag: '"v2"' }) } } }, async () => ({ ok: true }))
  scope.get('/thrown', routeOpts, async () => { throw unprocessable({ field: 'slug', message: 'is already taken' }) })
}

/** The requests, one per kind: a 422 from validation, a 401, a 415, a 412, a 422 thrown by a handler, a 400 for a body that is not JSON. */
const REQUESTS = {
  validation: { method: 'POST', url: '/validation', headers: { 'content-type': 'application/json' }, payload: '{}' },
  auth: { method: 'GET', url: '/auth' },
  mediaType: { method: 'POST', url: '/validation', headers: { 'content-type': 'image/png' }, payload: 'x' },
  precondition: { method: 'GET', url: '/precondition', headers: { 'if-match': '"v1"' } },
  thrown: { method: 'GET', url: '/thrown' },
  badJson: { method: 'POST', url: '/validation', headers: { 'content-type': 'application/json' }, payload: '{"title": ' }
} as const

const EXPECTED_CODES: Record<keyof typeof REQUESTS, string> = {
  validation: 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY',
  auth: 'FST_HTTP_CONVENTIONS_UNAUTHORIZED',
  mediaType: 'FST_HTTP_CONVENTIONS_UNSUPPORTED_MEDIA_TYPE',
  precondition: 'FST_HTTP_CONVENTIONS_PRECONDITION_FAILED',
  thrown: 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY',
  badJson: 'FST_HTTP_CONVENTIONS_MALFORMED_BODY'
}

function handlerFor (name: string, behaviour: Behaviour, seen: Seen[]) {
  return function appErrorHandler (err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
    seen.push({ handler: name, code: err.code, statusCode: err.statusCode, convention: isConventionError(err), validation: Array.isArray(err.validation) })
    if (behaviour === 'rethrow') throw err
    if (behaviour === 'send') reply.send(err)
    if (behaviour === 'own') reply.code(418).send({ mine: err.code })
  }
}

async function appWith (placement: Placement | 'none', behaviour: Behaviour, seen: Seen[]): Promise<FastifyInstance> {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { auth: { realm: 'test', basic: { users: { demo: 'demo-pass' } } } })
  const handler = handlerFor(placement, behaviour, seen)
  if (placement === 'root') app.setErrorHandler(handler)
  if (placement === 'child') {
    await app.register(async (child) => {
      child.setErrorHandler(handler)
      routes(child, {})
    })
  } else {
    routes(app, placement === 'route' ? { errorHandler: handler } : {})
  }
  return app
}

interface Answer { status: number, type: string | undefined, body: string, wwwAuthenticate: unknown, etag: unknown, length: string | undefined }

async function answers (app: FastifyInstance): Promise<Record<keyof typeof REQUESTS, Answer>> {
  const out = {} as Record<keyof typeof REQUESTS, Answer>
  for (const [name, req] of Object.entries(REQUESTS) as Array<[keyof typeof REQUESTS, (typeof REQUESTS)[keyof typeof REQUESTS]]>) {
    const res = await app.inject(req as never)
    out[name] = {
      status: res.statusCode,
      type: res.headers['content-type'] as string | undefined,
      body: res.body,
      wwwAuthenticate: res.headers['www-authenticate'],
      etag: res.headers.etag,
      length: res.headers['content-length'] as string | undefined
    }
  }
  return out
}

test('without a handler of the app\'s, the suite answers: the answers every case below is compared with', async (t) => {
  const app = await appWith('none', 'none', [])
  t.teardown(() => app.close())
  const base = await answers(app)
  t.same(Object.values(base).map((a) => a.status), [422, 401, 415, 412, 422, 400])
  t.same(JSON.parse(base.badJson.body), { errors: [{ field: 'body', message: 'body is not well-formed JSON' }] })
  t.same(JSON.parse(base.validation.body), { errors: [{ field: 'title', message: 'is required' }] })
  t.equal(base.auth.type, 'text/html; charset=UTF-8')
  t.same(base.auth.wwwAuthenticate, ['Basic realm="test", charset="UTF-8"'])
  t.equal(base.precondition.etag, '"v2"')
  t.same(JSON.parse(base.mediaType.body).errors[0].field, 'Content-Type')
})

for (const placement of ['root', 'child', 'route'] as const) {
  for (const behaviour of ['rethrow', 'send'] as const) {
    test(`a ${placement} handler that ${behaviour === 'rethrow' ? 'rethrows the error' : 'calls reply.send(err)'} sees each suite error, and the client gets the suite's answer unchanged`, async (t) => {
      const seen: Seen[] = []
      const app = await appWith(placement, behaviour, seen)
      const baseline = await appWith('none', 'none', [])
      t.teardown(() => Promise.all([app.close(), baseline.close()]))
      const got = await answers(app)
      const want = await answers(baseline)
      t.same(got, want, 'status, Content-Type, body, WWW-Authenticate, ETag and Content-Length as without the handler')
      t.same(seen.map((s) => s.code), Object.values(EXPECTED_CODES), 'the handler saw every error, as the ConventionError the client gets')
      t.ok(seen.every((s) => s.convention && s.handler === placement), 'isConventionError(err) holds for each')
      t.same(seen.map((s) => s.statusCode), [422, 401, 415, 412, 422, 400], 'err.statusCode is the status of the answer')
      t.same(seen.map((s) => s.validation), [true, false, false, false, false, false], 'a validation error keeps Fastify\'s err.validation')
    })
  }
  test(`a ${placement} handler that answers in its own shape keeps its own answer for every suite error`, async (t) => {
    const seen: Seen[] = []
    const app = await appWith(placement, 'own', seen)
    t.teardown(() => app.close())
    const got = await answers(app)
    for (const [name, code] of Object.entries(EXPECTED_CODES) as Array<[keyof typeof REQUESTS, string]>) {
      t.equal(got[name].status, 418, name)
      t.same(JSON.parse(got[name].body), { mine: code }, name)
    }
    t.equal(seen.length, 6)
  })
}

test('nearest first: the route\'s errorHandler, then the child context\'s handler, then the root\'s; the first that answers wins', async (t) => {
  const order: string[] = []
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.setErrorHandler((err, _request, reply) => { order.push('root'); if (isConventionError(err)) return sendConventionError(reply, err); throw err })
  await app.register(async (child) => {
    child.setErrorHandler((err) => { order.push('child'); throw err })
    child.get('/x', { errorHandler: (err) => { order.push('route'); throw err } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
    child.get('/stop', { errorHandler: (_err, _request, reply) => { order.push('route'); reply.code(409).send({ stopped: true }) } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  })
  t.teardown(() => app.close())
  const res = await app.inject('/x')
  t.same(order, ['route', 'child', 'root'])
  t.equal(res.statusCode, 422)
  t.same(res.json(), { errors: [{ field: 'a', message: 'b' }] }, 'sendConventionError in the root handler writes the envelope')
  order.length = 0
  const stop = await app.inject('/stop')
  t.same(order, ['route'], 'a route handler that answers ends the chain')
  t.same(stop.json(), { stopped: true })
})

test('a handler that passes an error on keeps RFC 9457 problem details when the request prefers them (rfc9110 profile)', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { profile: 'rfc9110' })
  app.setErrorHandler((err) => { throw err })
  app.get('/thrown', async () => { throw unprocessable({ field: 'slug', message: 'is already taken' }) })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/thrown', headers: { accept: 'application/problem+json' } })
  t.equal(res.statusCode, 422)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.equal(res.headers.vary, 'Accept')
  t.match(res.json(), { status: 422, errors: [{ field: 'slug', message: 'is already taken' }] })
})

test('a handler that answers a suite error with another error, or in Fastify\'s shape with its own message, is not mistaken for passing it on', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.get('/other', { errorHandler: () => { throw new Error('replaced') } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/shape', { errorHandler: (err, _request, reply) => { reply.code(422).send({ statusCode: 422, code: err.code, error: 'Unprocessable Entity', message: 'mine' }) } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/text', { errorHandler: (_err, _request, reply) => { reply.code(422).type('application/json').send('not JSON at all') } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  t.teardown(() => app.close())
  t.equal((await app.inject('/text')).body, 'not JSON at all', 'a body of the handler\'s own that is not JSON is left alone')
  const other = await app.inject('/other')
  t.equal(other.statusCode, 500)
  t.match(other.json(), { statusCode: 500, message: 'replaced' }, 'the new error is the app\'s, answered by Fastify')
  const shape = await app.inject('/shape')
  t.same(shape.json(), { statusCode: 422, code: 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY', error: 'Unprocessable Entity', message: 'mine' }, 'the handler\'s own body, not the suite\'s entries')
})

test('over a real socket: a root handler that rethrows a 401 gives the suite\'s 401 with a correct Content-Length, and the connection stays usable', async (t) => {
  const seen: Seen[] = []
  const app = await appWith('root', 'rethrow', seen)
  const port = await listen(app)
  t.teardown(() => app.close())
  const first = await fetch(`http://127.0.0.1:${port}/auth`)
  const body = await first.text()
  t.equal(first.status, 401)
  t.equal(first.headers.get('content-type'), 'text/html; charset=UTF-8')
  t.equal(Number(first.headers.get('content-length')), Buffer.byteLength(body))
  t.match(body, /<h1>401 Unauthorized<\/h1>/)
  const ok = await fetch(`http://127.0.0.1:${port}/auth`, { headers: { authorization: BASIC } })
  t.equal(ok.status, 200)
  t.equal(await ok.text(), 'ok')
  t.same(seen.map((s) => s.code), ['FST_HTTP_CONVENTIONS_UNAUTHORIZED'])
})

test('the umbrella, and a convention plugin registered alone: a rethrown suite error still gets the suite\'s answer', async (t) => {
  for (const register of [(a: FastifyInstance) => a.register(httpConventions), (a: FastifyInstance) => a.register(httpConventionsValidation)]) {
    const app = Fastify(serverOptions)
    t.teardown(() => app.close())
    await register(app)
    app.setErrorHandler((err) => { throw err })
    app.post('/v', { schema: { body: { type: 'object', required: ['a'] } } }, async () => 'ok')
    t.same((await app.inject({ method: 'POST', url: '/v', payload: {} })).json(), { errors: [{ field: 'a', message: 'is required' }] })
  }
})
