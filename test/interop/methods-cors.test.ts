/**
 * @fastify/cors and the methods convention (RFC 9110 9.3.7; Fetch, "CORS-preflight request"):
 * a real preflight (Origin and Access-Control-Request-Method) gets @fastify/cors's answer and
 * headers; a plain OPTIONS gets the suite's 204 with Allow; a 405 carries cors's headers too.
 * With cors registered before the suite and after it, over real sockets.
 */
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import { request } from 'undici'
import { listen } from '../helpers/app'
import { httpConventions, serverOptions } from '../../plugins/index'

const handler = async (): Promise<object> => ({ ok: true })

async function build (t: Test, order: 'before' | 'after'): Promise<string> {
  const app: FastifyInstance = Fastify(serverOptions)
  t.teardown(() => app.close())
  const corsOptions = { origin: ['https://app.example'], methods: ['GET', 'PUT', 'DELETE'], maxAge: 600 }
  if (order === 'before') await app.register(cors, corsOptions)
  await app.register(httpConventions)
  app.get('/items/:id', handler)
  if (order === 'after') await app.register(cors, corsOptions)
  app.put('/items/:id', handler)
  app.get('/late', handler)
  const port = await listen(app)
  return `http://127.0.0.1:${port}`
}

for (const order of ['before', 'after'] as const) {
  test(`Fetch CORS-preflight, cors registered ${order} the suite: a real preflight gets @fastify/cors's answer and headers`, async (t) => {
    const base = await build(t, order)
    for (const path of ['/items/1', '/late', '/elsewhere']) {
      const res = await request(`${base}${path}`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' } })
      t.equal(res.statusCode, 204, path)
      t.equal(res.headers['access-control-allow-origin'], 'https://app.example', path)
      t.equal(res.headers['access-control-allow-methods'], 'GET, PUT, DELETE', path)
      t.equal(res.headers['access-control-max-age'], '600', path)
      t.equal(await res.body.text(), '')
    }
    const refused = await request(`${base}/items/1`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'PUT' } })
    t.equal(refused.headers['access-control-allow-origin'], undefined, 'an origin cors does not allow gets no CORS headers')
    await refused.body.dump()
  })

  test(`RFC 9110 9.3.7, cors registered ${order} the suite: a plain OPTIONS gets the suite's 204 with Allow`, async (t) => {
    const base = await build(t, order)
    for (const [path, allow] of [['/items/1', 'GET, HEAD, PUT, OPTIONS'], ['/late', 'GET, HEAD, OPTIONS']]) {
      const res = await request(`${base}${path}`, { method: 'OPTIONS' })
      t.equal(res.statusCode, 204, path)
      t.equal(res.headers.allow, allow, path)
      t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
      t.equal(await res.body.text(), '')
    }
    const elsewhere = await request(`${base}/elsewhere`, { method: 'OPTIONS' })
    t.equal(elsewhere.statusCode, 400, 'a path the suite does not serve is left to cors (a plain OPTIONS is not a preflight to it)')
    await elsewhere.body.dump()
  })

  test(`RFC 9110 15.5.6, cors registered ${order} the suite: a 405 from a cross-origin page carries cors's headers`, async (t) => {
    const base = await build(t, order)
    const res = await request(`${base}/items/1`, { method: 'POST', headers: { origin: 'https://app.example' } })
    t.equal(res.statusCode, 405)
    t.equal(res.headers.allow, 'GET, HEAD, PUT, OPTIONS')
    t.equal(res.headers['access-control-allow-origin'], 'https://app.example')
    await res.body.dump()
  })
}

test('RFC 9110 9.3.7 with @fastify/cors: an OPTIONS route of the app\'s own declared first wins; declared after the suite\'s, it is refused naming the fix', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(cors, { origin: '*' })
  await app.register(httpConventions)
  app.options('/mine', async (_request, reply) => reply.code(200).send('mine'))
  app.get('/mine', handler)
  app.get('/theirs', handler)
  t.throws(() => app.options('/theirs', handler), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /declare this OPTIONS route before the other routes of \/theirs/ })
  const res = await app.inject({ method: 'OPTIONS', url: '/mine', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } })
  t.equal(res.statusCode, 204, 'cors answers the preflight in its hook')
  const plain = await app.inject({ method: 'OPTIONS', url: '/mine' })
  t.equal(plain.statusCode, 400, 'the app\'s own route: cors judges a plain OPTIONS as its options say')
})
