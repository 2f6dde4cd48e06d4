/**
 * A request the suite refuses is still a request to the app's own onRequest plugins: a rate
 * limiter counts it, load shedding sheds it first, whatever the order the plugins were
 * registered in (docs/architecture.md, "Where the suite's checks sit"). Real
 * @fastify/rate-limit and @fastify/under-pressure, over real sockets.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import underPressure from '@fastify/under-pressure'
import httpProxy from '@fastify/http-proxy'
import cors from '@fastify/cors'
import { request } from 'undici'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import { until } from '../helpers/until'

const GOOD = `Basic ${Buffer.from('demo:demo-password').toString('base64')}`
const WRONG = `Basic ${Buffer.from('demo:guess').toString('base64')}`
const ORDERS = ['rate limiter first', 'suite first'] as const

async function limitedApp (order: (typeof ORDERS)[number]): Promise<{ app: FastifyInstance, port: number, handled: () => number }> {
  const app = Fastify(serverOptions)
  const limiter = async (): Promise<void> => { await app.register(rateLimit, { max: 3, timeWindow: 60_000 }) }
  if (order === 'rate limiter first') await limiter()
  await app.register(httpConventions, { auth: { realm: 'articles', basic: { users: { demo: 'demo-password' } } } })
  if (order === 'suite first') await limiter()
  let handled = 0
  app.post('/articles', { config: { auth: true } }, async () => { handled++; return { ok: true } })
  app.put('/articles/:id', { config: { contentType: { accept: ['application/json'] } } }, async () => { handled++; return { ok: true } })
  const port = await listen(app)
  return { app, port, handled: () => handled }
}

for (const order of ORDERS) {
  test(`@fastify/rate-limit (${order}) counts the wrong passwords the suite refuses: the right one afterwards is 429`, async (t) => {
    const { app, port, handled } = await limitedApp(order)
    t.teardown(() => app.close())
    const statuses: number[] = []
    const policies: unknown[] = []
    for (let i = 0; i < 10; i++) {
      const res = await request(`http://127.0.0.1:${port}/articles`, { method: 'POST', headers: { authorization: WRONG, 'content-type': 'application/json' }, body: '{}' })
      await res.body.dump()
      statuses.push(res.statusCode)
      policies.push(res.headers['cross-origin-resource-policy'])
    }
    t.same(statuses, [401, 401, 401, 429, 429, 429, 429, 429, 429, 429], 'three guesses, then the limiter answers')
    t.same(policies, Array(10).fill('same-origin'), 'Fetch CORP: the 401s and the limiter\'s 429s carry the route\'s policy')
    const right = await request(`http://127.0.0.1:${port}/articles`, { method: 'POST', headers: { authorization: GOOD, 'content-type': 'application/json' }, body: '{}' })
    await right.body.dump()
    t.equal(right.statusCode, 429, 'the right password after ten guesses is limited too')
    t.equal(handled(), 0, 'the handler never ran')
  })

  test(`@fastify/rate-limit (${order}) counts the suite's 411 and 415`, async (t) => {
    const { app, port } = await limitedApp(order)
    t.teardown(() => app.close())
    const chunked = 'PUT /articles/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
    t.equal((await rawRequest(port, chunked)).status, 411, 'RFC 9112 6: a body without Content-Length')
    const xml = await request(`http://127.0.0.1:${port}/articles/1`, { method: 'PUT', headers: { 'content-type': 'application/xml' }, body: '<a/>' })
    await xml.body.dump()
    t.equal(xml.statusCode, 415, 'a media type the route does not accept')
    const third = await request(`http://127.0.0.1:${port}/articles/1`, { method: 'PUT', headers: { 'content-type': 'application/xml' }, body: '<a/>' })
    await third.body.dump()
    t.equal(third.statusCode, 415)
    const fourth = await request(`http://127.0.0.1:${port}/articles/1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })
    await fourth.body.dump()
    t.equal(fourth.statusCode, 429, 'the 411 and both 415s were counted')
  })
}

for (const order of ['load shedding first', 'suite first'] as const) {
  test(`@fastify/under-pressure (${order}) sheds a request before the suite judges its credentials`, async (t) => {
    const app = Fastify(serverOptions)
    let healthy = true
    const shed = async (): Promise<void> => { await app.register(underPressure, { healthCheck: async () => healthy, healthCheckInterval: 5 }) }
    if (order === 'load shedding first') await shed()
    await app.register(httpConventions, { auth: { realm: 'articles', basic: { users: { demo: 'demo-password' } } } })
    if (order === 'suite first') await shed()
    let handled = 0
    app.post('/articles', { config: { auth: true } }, async () => { handled++; return { ok: true } })
    const port = await listen(app)
    t.teardown(() => app.close())
    const ask = async (authorization: string): Promise<number> => {
      const res = await request(`http://127.0.0.1:${port}/articles`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{}' })
      await res.body.dump()
      return res.statusCode
    }
    t.equal(await ask(WRONG), 401, 'healthy: the suite refuses the wrong password')
    healthy = false
    await until('under-pressure reports the app unhealthy', async () => (await ask(WRONG)) === 503)
    t.equal(await ask(GOOD), 503, 'under pressure: shed, the right password too')
    t.equal(handled, 0, 'the handler never ran')
  })
}

test('the refusals still come before any byte of the body is read: a 401 answers a request whose body was never sent, after the app\'s onRequest hook', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { auth: { realm: 'articles', basic: { users: { demo: 'demo-password' } } } })
  let seenByApp = 0
  let parsed = 0
  app.addHook('onRequest', async () => { seenByApp++ })
  app.addContentTypeParser('application/x-counted', { parseAs: 'string' }, (_req, body, done) => { parsed++; done(null, body) })
  app.post('/articles', { config: { auth: true } }, async () => 'ran')
  const port = await listen(app)
  t.teardown(() => app.close())
  // The headers only: the 20 KB the request declares are never written.
  const res = await rawRequest(port, `POST /articles HTTP/1.1\r\nHost: x\r\nAuthorization: ${WRONG}\r\nContent-Type: application/x-counted\r\nContent-Length: 20000\r\n\r\n`, { waitMs: 30_000 })
  t.equal(res.status, 401, 'answered without waiting for the body')
  t.match(res.headers['www-authenticate'], /^Basic realm="articles"/)
  t.equal(seenByApp, 1, 'the app\'s onRequest hook saw the request first')
  t.equal(parsed, 0, 'no parser ran')
})

for (const protect of [false, true]) {
  test(`@fastify/http-proxy registered before the suite (auth.protect ${String(protect)}): its answers carry the service's Cross-Origin-Resource-Policy`, async (t) => {
    // The property's shrunk counterexamples: http-proxy before the suite, a proxied POST with
    // credentials; served as it was declared (protect off), or refused 500 (protect on).
    const upstream = Fastify()
    upstream.post('/x', async () => ({ upstream: true }))
    const base = `http://127.0.0.1:${await listen(upstream)}`
    t.teardown(() => upstream.close())
    const app = Fastify(serverOptions)
    await app.register(httpProxy, { upstream: base, prefix: '/up' })
    await app.register(httpConventions, { auth: { realm: 'r', protect, basic: { users: { demo: 'demo-password' } } } })
    const port = await listen(app)
    t.teardown(() => app.close())
    const res = await request(`http://127.0.0.1:${port}/up/x`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: GOOD }, body: '{"a":1}' })
    const body = await res.body.json()
    if (protect) t.match([res.statusCode, body], [500, { errors: [{ field: 'route' }] }], 'a covered route the suite never compiled: refused, never proxied')
    else t.same([res.statusCode, body], [200, { upstream: true }], 'proxied')
    t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', 'Fetch CORP: dressed as every answer of the service')
  })
}

test('@fastify/cors registered before the suite: its preflight for a URL only its OPTIONS * route serves carries Cross-Origin-Resource-Policy', async (t) => {
  // The property's shrunk counterexample: cors before the suite, a preflight to /up/x.
  const app = Fastify(serverOptions)
  await app.register(cors, { origin: ['https://app.example'], methods: ['GET', 'POST'] })
  await app.register(httpConventions)
  app.post('/secret', async () => ({ ok: true }))
  const port = await listen(app)
  t.teardown(() => app.close())
  const res = await request(`http://127.0.0.1:${port}/up/x`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } })
  await res.body.dump()
  t.same([res.statusCode, res.headers['access-control-allow-origin']], [204, 'https://app.example'], 'cors answered the preflight')
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', 'Fetch CORP: dressed as every answer of the service')
})
