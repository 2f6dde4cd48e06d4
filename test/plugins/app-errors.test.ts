/**
 * The suite's errors in its format (RFC 9457 problem details by option or by Accept); errors
 * that Fastify and other plugins write are theirs, never read or rewritten.
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

test('a good neighbour: a 404, @fastify/sensible\'s 422 and @fastify/rate-limit\'s 429 stay in Fastify\'s shape; the suite\'s own error is in the envelope', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const missing = await a.inject('/nope')
  t.equal(missing.statusCode, 404)
  t.match(missing.json(), { statusCode: 404, error: 'Not Found' }, 'Fastify\'s not-found answer is Fastify\'s')
  t.match((await a.inject('/sensible')).json(), { statusCode: 422, message: 'the thing is wrong' }, 'another plugin\'s body is never read or rewritten')
  t.equal((await a.inject('/limited')).statusCode, 200)
  const limited = await a.inject('/limited')
  t.equal(limited.statusCode, 429)
  t.ok(limited.headers['retry-after'], 'Retry-After is kept')
  t.match(limited.json(), { statusCode: 429 })
  t.same((await a.inject('/suite')).json(), { errors: [{ field: 'slug', message: 'taken' }] }, 'an error of the suite\'s catalogue is in the envelope')
  t.same((await a.inject('/custom')).json(), { mine: true })
})

test('RFC 9457: problem details when the request prefers application/problem+json (rfc9110 profile), or by option; the entries kept as errors', async (t) => {
  const a = await app({ profile: 'rfc9110' })
  t.teardown(() => a.close())
  const res = await a.inject({ url: '/suite', headers: { accept: 'application/problem+json' } })
  t.equal(res.statusCode, 422)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.equal(res.headers.vary, 'Accept')
  t.same(res.json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'taken', instance: '/suite', errors: [{ field: 'slug', message: 'taken' }] })
  t.equal((await a.inject({ url: '/suite', headers: { accept: 'application/json' } })).headers['content-type'], 'application/json', 'the envelope stays the default')
  const b = await app({ errorFormat: 'problem' })
  t.teardown(() => b.close())
  const always = await b.inject('/suite')
  t.equal(always.headers['content-type'], 'application/problem+json', 'errorFormat: problem')
})

test('an error answer that is not JSON, though it says so, is left as it is', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.get('/broken', async (_request, reply) => reply.code(502).type('application/json').send('{"statusCode": 502, "error": '))
  const res = await app.inject('/broken')
  t.equal(res.statusCode, 502)
  t.equal(res.body, '{"statusCode": 502, "error": ', 'not re-rendered: nothing could be read from it')
})
