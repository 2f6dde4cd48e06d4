/**
 * Fail closed, judged from the route's final config (docs/plugins.md, "Fail closed"): every
 * way an app can settle a route's config or its context late leaves the route either
 * compiled for what it asks, or refused (ready() rejects, or 500 at request time with the
 * handler never run). One row per way.
 */
import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { boot } from '../helpers/app'
import {
  httpConventions, httpConventionsAuth, httpConventionsConditional, serverOptions, type AuthOptions
} from '../../plugins/index'

const A: AuthOptions = { realm: 'r', basic: { users: { alice: 'secret' } } }
const B: AuthOptions = { realm: 'r', basic: { users: { bob: 'other' } } }
const ALICE = 'Basic ' + Buffer.from('alice:secret').toString('base64')
const BOB = 'Basic ' + Buffer.from('bob:other').toString('base64')
const VALIDATORS = { validators: () => ({ etag: '"v2"' }) }

interface Row {
  name: string
  /** Builds the app; `ran` records handler runs. */
  build: (app: FastifyInstance, ran: string[]) => Promise<void> | void
  request: { method: 'GET' | 'PUT' | 'DELETE', url: string, headers?: Record<string, string> }
  /** 'ready': ready() rejects with this pattern; a number: the status every request gets. */
  expect: { ready: RegExp } | { status: number, refusedAt?: 'request' }
}

function handler (ran: string[], name: string) {
  return async () => { ran.push(name); return name }
}

/** An onRoute hook another plugin adds after the suite: config for /admin routes. */
function adminConfig (change: 'spread' | 'mutate', config: Record<string, unknown>) {
  return fp(async (app: FastifyInstance) => {
    app.addHook('onRoute', (route: RouteOptions) => {
      if (!route.url.startsWith('/admin')) return
      if (change === 'spread') route.config = { ...(route.config ?? {}), ...config } as RouteOptions['config']
      else Object.assign(route.config as object, config)
    })
  })
}

const ROWS: Row[] = [
  {
    name: 'the suite registered without await with auth.protect, then a route without config.auth',
    build: (app, ran) => {
      app.register(httpConventions, { auth: { ...A, protect: true } })
      app.delete('/admin', handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin' },
    expect: { status: 500, refusedAt: 'request' }
  },
  {
    name: 'the suite registered without await, then a route with config.auth',
    build: (app, ran) => {
      app.register(httpConventions, { auth: A })
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin' },
    expect: { status: 500, refusedAt: 'request' }
  },
  {
    name: 'another plugin\'s onRoute hook, added after the suite, spreads config.auth = true into /admin routes',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(adminConfig('spread', { auth: true }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin/x' },
    expect: { ready: /route DELETE \/admin\/x asks for auth with config\.auth = true, but the suite compiled it with unset/ }
  },
  {
    name: 'the same hook mutates the config object it gets',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(adminConfig('mutate', { auth: true }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin/x' },
    expect: { ready: /asks for auth with config\.auth = true/ }
  },
  {
    name: 'the same hook adds config.conditional with validators to a PUT',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(adminConfig('spread', { conditional: VALIDATORS }))
      app.put('/admin/doc', handler(ran, 'put'))
    },
    request: { method: 'PUT', url: '/admin/doc', headers: { 'if-match': '"stale"' } },
    expect: { ready: /route PUT \/admin\/doc asks for conditional/ }
  },
  {
    name: 'a root route with config.auth, then the suite registered (awaited) in a child context',
    build: async (app, ran) => {
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
      await app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { status: 500, refusedAt: 'request' }
  },
  {
    name: 'the suite registered in a child context without await, then a root route with config.auth',
    build: (app, ran) => {
      app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { status: 500, refusedAt: 'request' }
  },
  {
    name: 'the suite in a child context, then a sibling context with a route asking for auth',
    build: async (app, ran) => {
      await app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
      await app.register(async (sibling) => { sibling.delete('/admin', { config: { auth: true } }, handler(ran, 'admin')) })
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { ready: /route DELETE \/admin asks for auth, but no convention of the suite is registered in its context/ }
  },
  {
    name: 'auth for A at the root; a child registers auth for B without await and declares a route with config.auth',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(async (child) => {
        child.register(httpConventionsAuth, B)
        child.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
      })
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { ready: /route DELETE \/admin was compiled with other auth options than its context has now/ }
  },
  {
    name: 'a child registers conditional with requirePrecondition without await, then declares a DELETE',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(async (child) => {
        child.register(httpConventionsConditional, { requirePrecondition: true })
        child.delete('/doc', { config: { conditional: VALIDATORS } }, handler(ran, 'delete'))
      })
    },
    request: { method: 'DELETE', url: '/doc' },
    expect: { ready: /route DELETE \/doc was compiled with other conditional options/ }
  },
  {
    name: 'a child registers conditional with requirePrecondition without await, then declares a DELETE without config.conditional',
    build: async (app, ran) => {
      await app.register(async (child) => {
        child.register(httpConventionsConditional, { requirePrecondition: true })
        child.delete('/doc', handler(ran, 'delete'))
      })
    },
    request: { method: 'DELETE', url: '/doc' },
    expect: { status: 500, refusedAt: 'request' }
  },
  {
    name: 'an onRoute hook after the suite replaces the route\'s onRequest hooks',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(fp(async (other: FastifyInstance) => {
        other.addHook('onRoute', (route: RouteOptions) => { route.onRequest = [] })
      }))
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin' },
    expect: { ready: /lost the suite's onRequest hook/ }
  }
]

for (const row of ROWS) {
  test(`fail closed: ${row.name}`, async (t) => {
    const lines: Array<{ level: number, msg: string, reason?: string }> = []
    const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
    const app = Fastify({ ...serverOptions, logger: { level: 'info', stream } })
    const ran: string[] = []
    t.teardown(() => app.close())
    await row.build(app, ran)
    if ('ready' in row.expect) {
      await t.rejects(boot(app.ready()), row.expect.ready, 'ready() rejects, naming the route and what it asks for')
      return
    }
    await boot(app.ready())
    for (let i = 0; i < 2; i++) {
      const res = await app.inject(row.request)
      t.equal(res.statusCode, row.expect.status, `request ${i + 1}: ${row.expect.status}`)
      t.match(res.json(), { errors: [{ field: 'route' }] }, 'the envelope names the route as the problem')
    }
    t.same(ran, [], 'the handler never ran')
    const errors = lines.filter((l) => l.level === 50 && /not compiled with/.test(l.msg))
    t.equal(errors.length, 2, 'one error line per refused request')
    t.match(errors[0].reason, /asks for/, 'the line names what the route asks for')
    t.match(errors[0].reason, /register|declare/, 'and the fix')
  })
}

test('fail closed: with the changes above done before the suite sees the route, the route is served as it asks', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  // The plugin that sets config is registered before the suite: its onRoute hook runs first.
  await app.register(adminConfig('spread', { auth: true }))
  await app.register(httpConventions, { auth: A })
  app.delete('/admin/x', async () => 'deleted')
  await boot(app.ready())
  t.equal((await app.inject({ method: 'DELETE', url: '/admin/x' })).statusCode, 401, 'no credentials: 401')
  t.equal((await app.inject({ method: 'DELETE', url: '/admin/x', headers: { authorization: ALICE } })).statusCode, 200, 'credentials: served')
})

test('fail closed: a child that awaits its own auth registration serves its routes with its own users only', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions, { auth: A })
  await app.register(async (child) => {
    await child.register(httpConventionsAuth, B)
    child.delete('/admin', { config: { auth: true } }, async () => 'deleted')
  })
  await boot(app.ready())
  t.equal((await app.inject({ method: 'DELETE', url: '/admin', headers: { authorization: ALICE } })).statusCode, 401, 'the parent\'s user is not the child\'s')
  t.equal((await app.inject({ method: 'DELETE', url: '/admin', headers: { authorization: BOB } })).statusCode, 200, 'the child\'s user is')
})

test('never silent: a route declared before the suite that asks for nothing is served and logs one warning naming the conventions it does not get', async (t) => {
  const lines: Array<{ level: number, msg: string, conventions?: string[] }> = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
  const app = Fastify({ ...serverOptions, logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  app.get('/early', async () => 'early')
  await app.register(httpConventions)
  await boot(app.ready())
  for (let i = 0; i < 3; i++) t.equal((await app.inject('/early')).statusCode, 200)
  const warnings = lines.filter((l) => l.level === 40)
  t.equal(warnings.length, 1, 'one warning, at the first request')
  t.match(warnings[0].msg, /route GET \/early was declared before fastify-http-conventions was loaded/)
  t.ok(warnings[0].conventions?.includes('content-type'), 'it names the conventions the route does not get')
})

test('two apps in one process with different options never see each other\'s routes or decisions', async (t) => {
  const one = Fastify(serverOptions)
  const two = Fastify(serverOptions)
  t.teardown(async () => { await one.close(); await two.close() })
  await one.register(httpConventions, { auth: { ...A, protect: true } })
  await two.register(httpConventions, { auth: B })
  const config = { auth: true }
  one.delete('/x', { config }, async () => 'one')
  two.delete('/x', { config }, async () => 'two')
  await boot(one.ready())
  await boot(two.ready())
  t.equal((await one.inject({ method: 'DELETE', url: '/x', headers: { authorization: ALICE } })).statusCode, 200)
  t.equal((await one.inject({ method: 'DELETE', url: '/x', headers: { authorization: BOB } })).statusCode, 401)
  t.equal((await two.inject({ method: 'DELETE', url: '/x', headers: { authorization: BOB } })).statusCode, 200)
  t.equal((await two.inject({ method: 'DELETE', url: '/x', headers: { authorization: ALICE } })).statusCode, 401)
})

test('a route declared with several methods is judged as one route (its record names them all)', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions, { auth: A })
  app.route({ method: ['PUT', 'DELETE'], url: '/both', config: { auth: true }, handler: async () => 'done' })
  await boot(app.ready())
  t.equal((await app.inject({ method: 'DELETE', url: '/both' })).statusCode, 401)
  t.equal((await app.inject({ method: 'PUT', url: '/both', payload: { a: 1 } })).statusCode, 401)
  t.equal((await app.inject({ method: 'DELETE', url: '/both', headers: { authorization: ALICE } })).statusCode, 200)
})

test('fail closed: a late config value that cannot be written as JSON is named as an object', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  const circular: Record<string, unknown> = { validators: () => null }
  circular.self = circular
  await app.register(adminConfig('spread', { conditional: circular }))
  app.put('/admin/doc', async () => 'x')
  await t.rejects(boot(app.ready()), /config\.conditional = an object/)
})

test('a convention registered in a child before the root registers the suite: a boot error that names the cause and the fix', async (t) => {
  for (const [name, child] of [['the umbrella', httpConventions], ['one convention', httpConventionsConditional]] as const) {
    const app = Fastify({ ...serverOptions })
    app.register(async (c) => {
      await c.register(child as typeof httpConventions, {})
      c.get('/c', async () => 'c')
    })
    app.register(httpConventions, {})
    const err = await boot(app.ready()).then(() => null, (e: Error & { code?: string }) => e)
    t.match(err, { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /a child context registered a convention of the suite before this context registered the suite/ }, `${name} in the child first`)
    t.match(err?.message, /await app\.register\(httpConventions, options\) before app\.register\(child\)/, 'the message says how to order the registrations')
    await app.close().catch(() => {})
  }
  // Sibling children, each with its own registration, and the root after them without the suite: fine.
  const app = Fastify({ ...serverOptions })
  app.register(async (c) => { await c.register(httpConventions, {}); c.get('/a', async () => 'a') })
  app.register(async (c) => { await c.register(httpConventions, {}); c.get('/b', async () => 'b') })
  await t.resolves(boot(app.ready()))
  t.equal((await app.inject({ url: '/b' })).statusCode, 200)
  await app.close()
})
