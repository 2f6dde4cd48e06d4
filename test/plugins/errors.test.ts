import { test } from 'tap'
import Fastify from 'fastify'
import { boot, buildApp } from '../helpers/app'
import {
  httpConventions, httpConventionsErrors, unprocessable, preconditionFailed, preconditionRequired, unauthorized, forbidden, sendConventionError, isConventionError, ERRORS_SCHEMA_ID, serverOptions
} from '../../plugins/index'
import { fromFastifyError } from '../../plugins/services/errors'
import { recordResponse, conventionResponses, conventionsOpenApiTransform } from '../../plugins/entries/openapi'

test('conventions (Validation errors): a service raises its own 422 through the envelope with one call', async (t) => {
  const app = await buildApp()
  app.post('/articles', async () => { throw unprocessable({ field: 'slug', message: 'is already taken' }) })
  app.post('/many', async () => { throw unprocessable([{ field: 'slug', message: 'is already taken' }, { field: 'title', message: 'conflicts with slug' }]) })
  const res = await app.inject({ method: 'POST', url: '/articles', payload: {} })
  t.equal(res.statusCode, 422)
  t.equal(res.headers['content-type'], 'application/json', 'conventions (Validation errors): Content-Type application/json')
  t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), '422 has a correct Content-Length')
  t.same(res.json(), { errors: [{ field: 'slug', message: 'is already taken' }] })
  const many = await app.inject({ method: 'POST', url: '/many', payload: {} })
  t.same(many.json().errors.length, 2)
})

test('unprocessable() refuses entries that are not { field, message }', async (t) => {
  t.throws(() => unprocessable([]), TypeError)
  t.throws(() => unprocessable({ field: 1 } as never), TypeError)
})

test('the envelope schema is registered with addSchema under its $id, usable in route schemas', async (t) => {
  const app = await buildApp()
  t.equal((app.getSchema(ERRORS_SCHEMA_ID) as { $id?: string } | undefined)?.$id, ERRORS_SCHEMA_ID)
  app.get('/x', { schema: { response: { 422: { $ref: `${ERRORS_SCHEMA_ID}#` } } } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  const res = await app.inject('/x')
  t.same(res.json(), { errors: [{ field: 'a', message: 'b' }] })
})

test('the envelope serializer writes only field and message (nothing else leaks)', async (t) => {
  const app = await buildApp()
  app.get('/x', async () => {
    const err = unprocessable({ field: 'a', message: 'b' })
    ;(err.errors[0] as unknown as Record<string, string>).secret = 'hunter2'
    throw err
  })
  const res = await app.inject('/x')
  t.equal(res.body, '{"errors":[{"field":"a","message":"b"}]}')
})

test('the error table: 412, 428, 401 and 403 render with their bodies and headers', async (t) => {
  const app = await buildApp()
  app.get('/412', async () => { throw preconditionFailed('If-Match', 'does not match', '"v2"') })
  app.get('/428', async () => { throw preconditionRequired('send If-Match with the current ETag') })
  app.get('/401', async () => { throw unauthorized('credentials are <missing>', ['Basic realm="a"', 'Bearer realm="a"']) })
  app.get('/403', async () => { throw forbidden('insufficient scope', ['Bearer error="insufficient_scope"']) })
  app.get('/403-plain', async () => { throw forbidden('no') })
  const r412 = await app.inject('/412')
  t.equal(r412.statusCode, 412)
  t.equal(r412.headers.etag, '"v2"')
  t.same(r412.json(), { errors: [{ field: 'If-Match', message: 'does not match' }] })
  const r428 = await app.inject('/428')
  t.equal(r428.statusCode, 428)
  t.equal(r428.headers['cache-control'], 'no-store')
  const r401 = await app.inject('/401')
  t.equal(r401.statusCode, 401)
  t.equal(r401.headers['content-type'], 'text/html; charset=UTF-8')
  t.same(r401.headers['www-authenticate'], ['Basic realm="a"', 'Bearer realm="a"'], 'one WWW-Authenticate line per challenge')
  t.equal(r401.headers['cache-control'], 'no-store')
  t.match(r401.body, /credentials are &lt;missing&gt;/, 'HTML is escaped')
  const r403 = await app.inject('/403')
  t.equal(r403.statusCode, 403)
  t.ok(r403.headers['www-authenticate'])
  t.equal((await app.inject('/403-plain')).headers['www-authenticate'], undefined)
})

test('errors the suite does not own go to the parent (Fastify default) handler', async (t) => {
  const app = await buildApp()
  app.get('/boom', async () => { throw new Error('boom') })
  app.get('/teapot', async () => { const e = new Error('short and stout') as Error & { statusCode: number }; e.statusCode = 418; throw e })
  const boom = await app.inject('/boom')
  t.equal(boom.statusCode, 500)
  t.match(boom.json(), { statusCode: 500, message: 'boom' }, 'rendered by Fastify\'s handler, left as it is')
  const teapot = await app.inject('/teapot')
  t.equal(teapot.statusCode, 418)
})

test('the errorHandler option handles errors the suite does not own; the suite keeps its own', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions, {
    errorHandler (error, _request, reply) { reply.code(503).send({ mine: error.message }) }
  })
  app.get('/boom', async () => { throw new Error('boom') })
  app.get('/422', async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  t.same((await app.inject('/boom')).json(), { mine: 'boom' })
  t.equal((await app.inject('/422')).statusCode, 422)
})

test('a service\'s own setErrorHandler in a child scope gets every error, the suite\'s too; one it rethrows the suite renders', async (t) => {
  const app = await buildApp()
  const seen: string[] = []
  await app.register(async (child) => {
    child.setErrorHandler((error, _request, reply) => {
      seen.push((error as Error).message)
      if (isConventionError(error)) throw error
      reply.code(500).send({ custom: true })
    })
    child.get('/mine', async () => { throw new Error('mine') })
    child.get('/suite', async () => { throw unprocessable({ field: 'x', message: 'y' }) })
  })
  t.same((await app.inject('/mine')).json(), { custom: true })
  const suite = await app.inject('/suite')
  t.equal(suite.statusCode, 422)
  t.same(suite.json(), { errors: [{ field: 'x', message: 'y' }] })
  t.same(seen, ['mine', 'x: y'], 'the context\'s handler sees the suite\'s error before it is rendered')
})

test('sendConventionError renders a suite error from a service\'s own root handler', async (t) => {
  const app = Fastify()
  app.setErrorHandler((error, _request, reply) => {
    if (isConventionError(error)) return sendConventionError(reply, error)
    reply.code(500).send('custom')
  })
  app.get('/x', async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/y', async () => { throw new Error('y') })
  t.equal((await app.inject('/x')).statusCode, 422)
  t.equal((await app.inject('/y')).body, 'custom')
})

test('httpConventionsErrors alone: the context\'s errors in the envelope; others go to its errorHandler option, else on to Fastify\'s handler', async (t) => {
  const own = Fastify()
  await own.register(httpConventionsErrors, { errorHandler: (error, _request, reply) => { reply.code(503).send({ own: (error as Error).message }) } })
  own.get('/suite', async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  own.get('/other', async () => { throw new Error('other') })
  t.same((await own.inject('/suite')).json(), { errors: [{ field: 'a', message: 'b' }] })
  const other = await own.inject('/other')
  t.equal(other.statusCode, 503)
  t.same(other.json(), { own: 'other' }, 'the errorHandler option answers errors the suite does not own')

  const plain = Fastify()
  await plain.register(httpConventionsErrors)
  plain.get('/other', async () => { const e = new Error('teapot') as Error & { statusCode: number }; e.statusCode = 418; throw e })
  const res = await plain.inject('/other')
  t.equal(res.statusCode, 418)
  t.match(res.json(), { statusCode: 418, message: 'teapot' }, 'without one, Fastify\'s own handler answers')
})

test('registering twice keeps one handler and one schema; bad options throw at boot', async (t) => {
  const app = Fastify()
  await app.register(httpConventionsErrors)
  await app.register(httpConventionsErrors)
  app.get('/x', async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  await app.ready()
  t.equal((app.getSchema(ERRORS_SCHEMA_ID) as { $id?: string } | undefined)?.$id, ERRORS_SCHEMA_ID, 'one schema, no duplicate-schema error')
  t.equal((await app.inject('/x')).statusCode, 422)
  await t.rejects(boot(Fastify().register(httpConventionsErrors, { profile: 'nope' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  await t.rejects(boot(Fastify().register(httpConventionsErrors, { errorHandler: 'x' as never }).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  for (const bad of [{ nope: 1 }, { profile: 'x' }, { contentType: 3 }]) {
    await t.rejects(boot(Fastify().register(httpConventions, bad as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(bad))
  }
})

test('Fastify\'s own body errors map to the catalogue (when the suite\'s parsers are not in front)', async (t) => {
  const req = { headers: { 'content-type': 'application/foo' }, getValidationFunction: () => undefined } as never
  const spec = { limitStatus: 411 as const, mismatchStatus: 411 as const }
  const rfc = { limitStatus: 413 as const, mismatchStatus: 400 as const }
  const err = (code: string) => Object.assign(new Error(code), { code }) as never
  t.match(fromFastifyError(err('FST_ERR_CTP_INVALID_MEDIA_TYPE'), req, spec), { statusCode: 415, errors: [{ field: 'Content-Type' }] })
  t.match(fromFastifyError(err('FST_ERR_CTP_EMPTY_JSON_BODY'), req, spec), { statusCode: 400, errors: [{ field: 'body' }] })
  t.match(fromFastifyError(err('FST_ERR_CTP_INVALID_JSON_BODY'), req, spec), { statusCode: 400, errors: [{ field: 'body' }] })
  t.match(fromFastifyError(err('FST_ERR_CTP_BODY_TOO_LARGE'), req, spec), { statusCode: 411, closeConnection: true })
  t.match(fromFastifyError(err('FST_ERR_CTP_BODY_TOO_LARGE'), req, rfc), { statusCode: 413 })
  t.match(fromFastifyError(err('FST_ERR_CTP_INVALID_CONTENT_LENGTH'), req, spec), { statusCode: 411 })
  t.match(fromFastifyError(err('FST_ERR_CTP_INVALID_CONTENT_LENGTH'), req, rfc), { statusCode: 400, rendering: 'text' })
  t.equal(fromFastifyError(err('SOMETHING_ELSE'), req, spec), null)
  const validation = Object.assign(new Error('bad'), { validation: [], validationContext: 'querystring' }) as never
  t.same(fromFastifyError(validation, req, spec)?.errors, [{ field: 'query:', message: 'bad' }], 'a problem of the whole query string, named by its part')
})

test('OpenAPI: recorded responses become documented responses; the route\'s own win', async (t) => {
  const route = { config: {} } as never
  recordResponse(route, 401, { description: 'auth', body: 'html', headers: ['WWW-Authenticate'] })
  recordResponse(route, 411, { description: 'length', body: 'text' })
  recordResponse(route, 422, { description: 'mine wins', body: 'envelope' })
  recordResponse(route, 304, { description: 'not modified', body: 'none' })
  recordResponse(route, 411, { description: 'first one wins', body: 'envelope' })
  const out = conventionsOpenApiTransform({ schema: { response: { 422: { description: 'the route\'s own' } } }, url: '/x', route }).schema.response as Record<string, Record<string, unknown>>
  t.same(Object.keys(conventionResponses(route)).sort(), ['304', '401', '411', '422'])
  t.match(out['401'], { description: 'auth', content: { 'text/html': {} }, headers: { 'WWW-Authenticate': {} } })
  t.match(out['411'], { description: 'length', content: { 'text/plain': {} } })
  t.same(out['304'], { description: 'not modified', type: 'null' }, 'no body: @fastify/swagger documents no content')
  t.same(out['422'], { description: 'the route\'s own' })
  t.same(conventionsOpenApiTransform({ url: '/y', route: {} }).schema, {}, 'nothing recorded: the schema is untouched')
})
