import { test, type Test } from 'tap'
import Fastify from 'fastify'
import { boot } from '../helpers/app'
import { httpConventions, httpConventionsPrefer, serverOptions } from '../../plugins/index'

async function build (t: Test) {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.put('/doc', { config: { prefer: true } }, async (_request, reply) => { reply.header('etag', '"v2"'); return { id: 1, title: 'updated' } })
  app.post('/docs', { config: { prefer: true } }, async (_request, reply) => { reply.code(201).header('location', '/docs/1'); return { id: 1 } })
  app.put('/plain', async () => ({ id: 1 }))
  app.put('/invalid', { config: { prefer: true } }, async (_request, reply) => reply.code(409).send({ conflict: true }))
  return app
}

const MINIMAL = { prefer: 'return=minimal', 'content-type': 'application/json' }

test('RFC 7240 4.2: a 200 to a client that prefers a minimal answer is a 204 without body, with its ETag and Preference-Applied', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'PUT', url: '/doc', headers: MINIMAL, payload: '{}' })
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  t.equal(res.headers['preference-applied'], 'return=minimal')
  t.equal(res.headers.etag, '"v2"', 'the validator of the new state stays')
  t.equal(res.headers['content-type'], undefined, 'no body, no Content-Type')
  t.match(res.headers.vary, /Prefer/)
})

test('RFC 7240 4.2: a 201 keeps its status and Location, with an empty body', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/docs', headers: MINIMAL, payload: '{}' })
  t.equal(res.statusCode, 201)
  t.equal(res.body, '')
  t.equal(res.headers.location, '/docs/1')
  t.equal(res.headers['content-length'], '0')
})

test('RFC 7240 2: without the preference, or with return=representation, the answer is whole and says Vary: Prefer', async (t) => {
  const app = await build(t)
  for (const prefer of [undefined, 'return=representation']) {
    const res = await app.inject({ method: 'PUT', url: '/doc', headers: { 'content-type': 'application/json', ...(prefer === undefined ? {} : { prefer }) }, payload: '{}' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { id: 1, title: 'updated' })
    t.equal(res.headers['preference-applied'], undefined)
    t.match(res.headers.vary, /Prefer/)
  }
})

test('RFC 7240 4.2: errors keep their body (the minimal answer is for a write that succeeded)', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'PUT', url: '/invalid', headers: MINIMAL, payload: '{}' })
  t.equal(res.statusCode, 409)
  t.same(res.json(), { conflict: true })
})

test('a route without config.prefer ignores the header and adds no Vary', async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'PUT', url: '/plain', headers: MINIMAL, payload: '{}' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.vary, undefined)
})

test('Vary: Prefer is added once to a Vary the route set, and not to Vary: *', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/a', { config: { prefer: true } }, async (_request, reply) => { reply.header('vary', 'Accept'); return 'a' })
  app.get('/b', { config: { prefer: true } }, async (_request, reply) => { reply.header('vary', 'Accept, prefer'); return 'b' })
  app.get('/c', { config: { prefer: true } }, async (_request, reply) => { reply.header('vary', '*'); return 'c' })
  t.equal((await app.inject('/a')).headers.vary, 'Accept, Prefer')
  t.equal((await app.inject('/b')).headers.vary, 'Accept, prefer')
  t.equal((await app.inject('/c')).headers.vary, '*')
})

test('options and route config are checked at boot', async (t) => {
  const bad = Fastify(serverOptions)
  bad.register(httpConventionsPrefer, { minimal: true } as never)
  await t.rejects(boot(bad.ready()), /unknown option "minimal"/)
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  t.throws(() => app.put('/x', { config: { prefer: 'yes' as never } }, async () => 'x'), /config\.prefer must be true or false/)
  await app.close()
  const off = Fastify(serverOptions)
  await off.register(httpConventions, { prefer: false })
  off.put('/x', { config: { prefer: true } }, async () => 'x')
  await t.rejects(boot(off.ready()), /asks for prefer/, 'turned off and asked for: the route is refused at boot')
})
