/**
 * `auth.protect` and CORS preflights (Fetch, "CORS-preflight request": a preflight never
 * carries credentials): under `protect`, a route of OPTIONS alone (@fastify/cors's preflight
 * route, the suite's own OPTIONS answers) stays open, so a browser can write to a protected
 * API from another origin; its actual request still needs credentials. `protect.options`
 * protects OPTIONS too. With cors registered before the suite and after it, over real sockets.
 */
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import { request } from 'undici'
import { listen } from '../helpers/app'
import { httpConventions, serverOptions, type AuthOptions } from '../../plugins/index'

const ALICE = 'Basic ' + Buffer.from('alice:secret').toString('base64')
const PREFLIGHT = { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-type' }

async function build (t: Test, order: 'before' | 'after', protect: AuthOptions['protect']): Promise<string> {
  const app: FastifyInstance = Fastify(serverOptions)
  t.teardown(() => app.close())
  const corsOptions = { origin: ['https://app.example'], methods: ['GET', 'PUT', 'DELETE'], credentials: true }
  if (order === 'before') await app.register(cors, corsOptions)
  await app.register(httpConventions, { auth: { realm: 'api', basic: { users: { alice: 'secret' } }, protect } })
  app.get('/items/:id', async () => ({ id: 1 }))
  if (order === 'after') await app.register(cors, corsOptions)
  app.put('/items/:id', async () => ({ id: 1 }))
  return `http://127.0.0.1:${await listen(app)}`
}

for (const order of ['before', 'after'] as const) {
  test(`a CORS preflight under auth.protect, cors registered ${order} the suite: cors answers it, no 401`, async (t) => {
    const base = await build(t, order, true)
    for (const path of ['/items/1', '/elsewhere']) {
      const res = await request(`${base}${path}`, { method: 'OPTIONS', headers: PREFLIGHT })
      t.equal(res.statusCode, 204, `${path}: the preflight passes`)
      t.equal(res.headers['access-control-allow-origin'], 'https://app.example', path)
      t.equal(res.headers['www-authenticate'], undefined, `${path}: no challenge`)
      await res.body.dump()
    }
    const plain = await request(`${base}/items/1`, { method: 'OPTIONS' })
    t.equal(plain.statusCode, 204, 'a plain OPTIONS gets the suite\'s Allow, not a 401')
    t.equal(plain.headers.allow, 'GET, HEAD, PUT, OPTIONS')
    await plain.body.dump()
    const anonymous = await request(`${base}/items/1`, { method: 'PUT', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, body: '{}' })
    t.equal(anonymous.statusCode, 401, 'the actual request still needs credentials')
    await anonymous.body.dump()
    const alice = await request(`${base}/items/1`, { method: 'PUT', headers: { origin: 'https://app.example', 'content-type': 'application/json', authorization: ALICE }, body: '{}' })
    t.equal(alice.statusCode, 200, 'with credentials it is served')
    t.equal(alice.headers['access-control-allow-origin'], 'https://app.example')
    await alice.body.dump()
  })

  test(`auth.protect with options: true, cors registered ${order} the suite: OPTIONS is protected too`, async (t) => {
    const base = await build(t, order, { options: true })
    const res = await request(`${base}/items/1`, { method: 'OPTIONS', headers: PREFLIGHT })
    t.equal(res.statusCode, 401, 'the preflight is refused without credentials')
    t.match(res.headers['www-authenticate'], /^Basic realm="api"/)
    await res.body.dump()
  })
}

test('auth.protect takes { scopes, options } only: another key is a boot error naming it', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(httpConventions, { auth: { basic: { users: { a: 'b' } }, protect: { option: true } as never } }) }, /protect/)
})
