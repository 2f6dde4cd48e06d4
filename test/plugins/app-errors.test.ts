/**
 * One error shape per app: errors that Fastify and other plugins write in Fastify's shape are
 * re-rendered in the suite's format; RFC 9457 problem details by option or by Accept.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import sensible from '@fastify/sensible'
import rateLimit from '@fastify/rate-limit'
import { httpConventions, serverOptions, unprocessable } from '../../plugins/index'

async function app (opts: Parameters<typeof httpConventions>[1] = {}) {
  const a = Fastify(serverOptions)
  await a.register(sensible)
  await a.register(httpConventions, opts)
  await a.register(rateLimit, { global: false })
  a.get('/sensible', async (_req, reply) => reply.unprocessableEntity('the thing is wrong'))
  a.get('/limited', { config: { rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => 'ok')
  a.get('/suite', async () => { throw unprocessable({ field: 'slug', message: 'taken' }) })
  a.get('/custom', async (_req, reply) => reply.code(409).send({ mine: true }))
  return a
}

test('a 404, @fastify/sensible\'s 422 and @fastify/rate-limit\'s 429 come out in the envelope, field absent, Retry-After kept', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const missing = await a.inject('/nope')
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['content-type'], 'application/json')
  t.same(missing.json(), { errors: [{ message: 'Route GET:/nope not found' }] })
  const sensible422 = await a.inject('/sensible')
  t.equal(sensible422.statusCode, 422)
  t.same(sensible422.json(), { errors: [{ message: 'the thing is wrong' }] }, 'one kind of 422 in the app')
  t.equal((await a.inject('/limited')).statusCode, 200)
  const limited = await a.inject('/limited')
  t.equal(limited.statusCode, 429)
  t.ok(limited.headers['retry-after'], 'Retry-After is kept')
  t.match(limited.json(), { errors: [{ message: /Rate limit exceeded/ }] })
  t.same((await a.inject('/custom')).json(), { mine: true }, 'a body in another shape is left alone')
})

test('RFC 9457: problem details when the request prefers application/problem+json, or by option; the entries kept as errors', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const res = await a.inject({ url: '/suite', headers: { accept: 'application/problem+json' } })
  t.equal(res.statusCode, 422)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.same(res.json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'taken', instance: '/suite', errors: [{ field: 'slug', message: 'taken' }] })
  const missing = await a.inject({ url: '/nope?x=1', headers: { accept: 'application/problem+json, application/json;q=0.5' } })
  t.match(missing.json(), { type: 'about:blank', title: 'Not Found', status: 404, instance: '/nope', errors: [{ message: 'Route GET:/nope?x=1 not found' }] })
  t.equal((await a.inject({ url: '/suite', headers: { accept: 'application/json' } })).headers['content-type'], 'application/json', 'the envelope stays the default')
  const b = await app({ errorFormat: 'problem' })
  t.teardown(() => b.close())
  const always = await b.inject('/suite')
  t.equal(always.headers['content-type'], 'application/problem+json', 'errorFormat: problem')
  const off = await app({ appErrors: false })
  t.teardown(() => off.close())
  t.match((await off.inject('/nope')).json(), { statusCode: 404, error: 'Not Found' }, 'appErrors: false leaves Fastify\'s shape')
})

test('an error answer that is not JSON, though it says so, is left as it is', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.get('/broken', async (_request, reply) => reply.code(502).type('application/json').send('{"statusCode": 502, "error": '))
  const res = await app.inject('/broken')
  t.equal(res.statusCode, 502)
  t.equal(res.body, '{"statusCode": 502, "error": ', 'not re-rendered: nothing could be read from it')
})
