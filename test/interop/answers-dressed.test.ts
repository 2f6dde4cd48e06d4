/**
 * Fetch, "Cross-Origin-Resource-Policy header": every answer of the service carries the
 * policy, whoever writes it: Fastify's own not-found handler (default or the app's), and
 * another plugin's onRequest hook that replies or throws (@fastify/rate-limit's 429) on a
 * route whose other conventions add no onSend step. Over real sockets.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { request } from 'undici'
import { listen } from '../helpers/app'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'

async function get (port: number, path: string, method = 'GET'): Promise<{ status: number, corp: unknown }> {
  const res = await request(`http://127.0.0.1:${port}${path}`, { method })
  await res.body.dump()
  return { status: res.statusCode, corp: res.headers['cross-origin-resource-policy'] }
}

const SHAPES: Array<[string, HttpConventionsOptions]> = [
  ['the whole suite with its defaults', {}],
  ['methods: false (no 405 step)', { methods: false }],
  ['a policy of cross-origin', { resourcePolicy: { policy: 'cross-origin' } }]
]

for (const [name, options] of SHAPES) {
  test(`Fastify's default 404 carries the policy: ${name}`, async (t) => {
    const app = Fastify(serverOptions)
    t.teardown(() => app.close())
    await app.register(httpConventions, options)
    app.get('/articles', async () => [])
    const port = await listen(app)
    const policy = (options.resourcePolicy as { policy?: string } | undefined)?.policy ?? 'same-origin'
    t.same(await get(port, '/openapi.json'), { status: 404, corp: policy }, 'GET of a path no route serves')
    t.same(await get(port, '/nothing/here', 'DELETE'), { status: 404, corp: policy }, 'DELETE of a path no route serves')
  })
}

test('the app\'s own not-found handler, in a prefixed context, carries the policy', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.register(async (api) => {
    api.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ message: 'no such thing' }))
    api.get('/a', async () => 'a')
  }, { prefix: '/api' })
  const port = await listen(app)
  t.same(await get(port, '/api/missing'), { status: 404, corp: 'same-origin' })
})

test('resourcePolicy.policy: false sends no policy on the 404 either', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions, { resourcePolicy: { policy: false } })
  const port = await listen(app)
  t.same(await get(port, '/missing'), { status: 404, corp: undefined })
})

const ROUTE_SHAPES: Array<[string, Record<string, unknown>]> = [
  ['defaults', {}],
  ['contentType: false', { contentType: false }],
  ['contentType: false, conditional: false, methods: false', { contentType: false, conditional: false, methods: false }],
  ['its own policy and contentType: false', { contentType: false, resourcePolicy: 'same-site' }]
]

for (const order of ['rate limiter first', 'suite first'] as const) {
  for (const [shape, config] of ROUTE_SHAPES) {
    test(`@fastify/rate-limit (${order}): its 429 carries the route's policy, route config ${shape}`, async (t) => {
      const app: FastifyInstance = Fastify(serverOptions)
      t.teardown(() => app.close())
      if (order === 'rate limiter first') await app.register(rateLimit, { max: 1, timeWindow: 60_000 })
      await app.register(httpConventions)
      if (order === 'suite first') await app.register(rateLimit, { max: 1, timeWindow: 60_000 })
      app.get('/limited', { config }, async () => 'ok')
      const port = await listen(app)
      const policy = (config.resourcePolicy as string | undefined) ?? 'same-origin'
      t.same(await get(port, '/limited'), { status: 200, corp: policy }, 'the first request is served with the policy')
      t.same(await get(port, '/limited'), { status: 429, corp: policy }, 'the limiter\'s 429 carries it too')
    })
  }
}

test('another plugin\'s onRequest hook that throws: its error answer carries the policy', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-deny'] !== undefined) throw Object.assign(new Error('denied'), { statusCode: 403 })
  })
  app.get('/x', { config: { contentType: false } }, async () => 'ok')
  const port = await listen(app)
  const res = await request(`http://127.0.0.1:${port}/x`, { headers: { 'x-deny': '1' } })
  await res.body.dump()
  t.equal(res.statusCode, 403)
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin')
})
