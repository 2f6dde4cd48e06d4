/**
 * Fail closed, by construction (docs/architecture.md, "Fail closed"): every way an app can
 * settle a route's config or its context leaves the route either served with every
 * convention and context-wide policy that covers it, or refused at boot (ready() rejects,
 * naming the route and the fix). One table, one row per way.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { boot } from '../helpers/app'
import {
  httpConventions, httpConventionsAuth, httpConventionsConditional, httpConventionsContentType, serverOptions, type AuthOptions
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
  request?: { method: 'GET' | 'PUT' | 'DELETE', url: string, headers?: Record<string, string> }
  /** ready() rejects with this pattern; or every request gets `status`, the handler running or not. */
  expect: { ready: RegExp } | { status: number, ran: boolean }
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

/** An onRoute hook another plugin adds after the suite: edits /admin routes' options in place, at some depth. */
function editInPlace (edit: (route: RouteOptions) => void) {
  return fp(async (app: FastifyInstance) => {
    app.addHook('onRoute', (route: RouteOptions) => { if (route.url.startsWith('/admin')) edit(route) })
  })
}

const auth = (route: RouteOptions): { scopes?: string[], schemes?: string[] } => (route.config as { auth: { scopes?: string[], schemes?: string[] } }).auth

const NOT_ROOT = /the suite is installed in the root context of the app, where it sees every route: register fastify-http-conventions \(or this plugin\) on the instance Fastify\(\) returned, or in a plugin wrapped with fastify-plugin/

const ROWS: Row[] = [
  {
    name: 'the suite registered without await with auth.protect, then a route without config.auth',
    build: (app, ran) => {
      app.register(httpConventions, { auth: { ...A, protect: true } })
      app.delete('/admin', handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { status: 500, ran: false }
  },
  {
    name: 'the suite registered without await, then a route with config.auth',
    build: (app, ran) => {
      app.register(httpConventions, { auth: A })
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { status: 500, ran: false }
  },
  {
    name: 'the suite registered without await with requirePrecondition, then a DELETE without config.conditional',
    build: (app, ran) => {
      app.register(httpConventions, { conditional: { requirePrecondition: true } })
      app.delete('/doc', handler(ran, 'delete'))
    },
    request: { method: 'DELETE', url: '/doc', headers: { 'if-match': '"v2"' } },
    expect: { status: 500, ran: false }
  },
  {
    name: 'another plugin declares a route before the suite (the suite then guards it): a route that asks for nothing',
    build: async (app, ran) => {
      app.get('/health', handler(ran, 'health'))
      await app.register(httpConventions, { auth: A })
    },
    request: { method: 'GET', url: '/health' },
    expect: { status: 200, ran: true }
  },
  {
    name: 'another plugin\'s onRoute hook, added after the suite, spreads config.auth = true into /admin routes',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(adminConfig('spread', { auth: true }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin\/x asks for auth with config\.auth = true, but the suite compiled it with unset/ }
  },
  {
    name: 'the same hook mutates the config object it gets',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(adminConfig('mutate', { auth: true }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    expect: { ready: /asks for auth with config\.auth = true/ }
  },
  {
    name: 'the same hook adds config.conditional with validators to a PUT',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(adminConfig('spread', { conditional: VALIDATORS }))
      app.put('/admin/doc', handler(ran, 'put'))
    },
    expect: { ready: /route PUT \/admin\/doc asks for conditional/ }
  },
  {
    name: 'a later onRoute hook pushes a scope into config.auth.scopes in place',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(editInPlace((r) => { auth(r).scopes?.push('admin') }))
      app.delete('/admin/x', { config: { auth: { scopes: ['read'] } } }, handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin\/x asks for auth with config\.auth = \{"scopes":\["read","admin"\]\}, but the suite compiled it with \{"scopes":\["read"\]\}/ }
  },
  {
    name: 'a later onRoute hook replaces config.auth.scopes[0] in place',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(editInPlace((r) => { (auth(r).scopes as string[])[0] = 'admin' }))
      app.delete('/admin/x', { config: { auth: { scopes: ['read'] } } }, handler(ran, 'admin'))
    },
    expect: { ready: /config\.auth = \{"scopes":\["admin"\]\}, but the suite compiled it with \{"scopes":\["read"\]\}/ }
  },
  {
    name: 'a later onRoute hook narrows config.auth.schemes in place',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: { ...A, bearer: { verify: () => null } } })
      await app.register(editInPlace((r) => { auth(r).schemes?.splice(0, 1) }))
      app.delete('/admin/x', { config: { auth: { schemes: ['basic', 'bearer'] } } }, handler(ran, 'admin'))
    },
    expect: { ready: /config\.auth = \{"schemes":\["bearer"\]\}, but the suite compiled it with \{"schemes":\["basic","bearer"\]\}/ }
  },
  {
    name: 'a later onRoute hook renames the route\'s URL',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(editInPlace((r) => { r.url = '/elsewhere' }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin\/x is now at \/elsewhere, but the suite compiled it for \/admin\/x/ }
  },
  {
    name: 'a later onRoute hook adds a host constraint',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(editInPlace((r) => { r.constraints = { host: 'internal.example' } }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin\/x now has the constraints \{"host":"internal\.example"\}, but the suite compiled it with \{\}/ }
  },
  {
    name: 'the same hook adds a typo of a convention\'s key',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(adminConfig('spread', { auht: true }))
      app.delete('/admin/x', handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin\/x has config\.auht, which no convention reads: did you mean config\.auth\?/ }
  },
  {
    name: 'a root route with config.auth, then the suite registered (awaited) in a child context',
    build: async (app, ran) => {
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
      await app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
    },
    expect: { ready: NOT_ROOT }
  },
  {
    name: 'the suite registered in a child context without await, then a root route with config.auth',
    build: (app, ran) => {
      app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    expect: { ready: NOT_ROOT }
  },
  {
    name: 'the suite in a child context, then a sibling context with a route asking for auth',
    build: async (app, ran) => {
      await app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
      await app.register(async (sibling) => { sibling.delete('/admin', { config: { auth: true } }, handler(ran, 'admin')) })
    },
    expect: { ready: NOT_ROOT }
  },
  {
    name: 'a route asking for auth in a context where no auth is registered (the suite at the root without it)',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(async (sibling) => { sibling.delete('/admin', { config: { auth: true } }, handler(ran, 'admin')) })
    },
    expect: { ready: /route DELETE \/admin asks for auth, which is not registered in its context; register fastify-http-conventions-auth/ }
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
    expect: { ready: /route DELETE \/admin was compiled with other auth options than its context has now/ }
  },
  {
    name: 'the suite at the root without auth; in context A, a child B registers a convention of its own and declares a route; then A registers auth with protect (awaited)',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(async (a) => {
        await a.register(async (b) => {
          await b.register(httpConventionsContentType, {})
          b.get('/admin/report', handler(ran, 'report'))
        })
        a.get('/other', handler(ran, 'other'))
        await a.register(httpConventionsAuth, { ...A, protect: true })
      })
    },
    expect: { ready: /route GET \/admin\/report was compiled with no auth options than its context has now: fastify-http-conventions-auth was registered in its context or an ancestor after the route was declared/ }
  },
  {
    name: 'the same with requirePrecondition registered in A after a DELETE of B',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(async (a) => {
        await a.register(async (b) => {
          await b.register(httpConventionsContentType, {})
          b.delete('/admin/doc', { config: { conditional: VALIDATORS } }, handler(ran, 'delete'))
        })
        await a.register(httpConventionsConditional, { requirePrecondition: true })
      })
    },
    expect: { ready: /route DELETE \/admin\/doc was compiled with other conditional options than its context has now/ }
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
    expect: { ready: /route DELETE \/doc was compiled with other conditional options/ }
  },
  {
    name: 'requirePrecondition: a PUT declared after the suite without config.conditional (no validators to check If-Match against)',
    build: async (app, ran) => {
      await app.register(httpConventions, { conditional: { requirePrecondition: true } })
      await app.register(async (routes) => { routes.put('/doc', handler(ran, 'put')) })
    },
    expect: { ready: /route PUT \/doc: requirePrecondition covers PUT, but the route gives no validators: set config\.conditional: \{ validators \}.*or config\.conditional: false to exempt it/ }
  },
  {
    name: 'requirePrecondition: a DELETE with validators and no If-Match',
    build: async (app, ran) => {
      await app.register(httpConventions, { conditional: { requirePrecondition: true } })
      app.delete('/doc', { config: { conditional: VALIDATORS } }, handler(ran, 'delete'))
    },
    request: { method: 'DELETE', url: '/doc' },
    expect: { status: 428, ran: false }
  },
  {
    name: 'requirePrecondition: a DELETE with validators and a stale If-Match',
    build: async (app, ran) => {
      await app.register(httpConventions, { conditional: { requirePrecondition: true } })
      app.delete('/doc', { config: { conditional: VALIDATORS } }, handler(ran, 'delete'))
    },
    request: { method: 'DELETE', url: '/doc', headers: { 'if-match': '"nope"' } },
    expect: { status: 412, ran: false }
  },
  {
    name: 'requirePrecondition: a write the route exempts with config.conditional: false',
    build: async (app, ran) => {
      await app.register(httpConventions, { conditional: { requirePrecondition: true } })
      app.delete('/doc', { config: { conditional: false } }, handler(ran, 'delete'))
    },
    request: { method: 'DELETE', url: '/doc' },
    expect: { status: 200, ran: true }
  },
  {
    name: 'auth.protect at the root covers a route of a grandchild context without config.auth',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: { ...A, protect: true } })
      await app.register(async (a) => { await a.register(async (b) => { b.delete('/admin', handler(ran, 'admin')) }) })
    },
    request: { method: 'DELETE', url: '/admin' },
    expect: { status: 401, ran: false }
  },
  {
    name: 'a typo of a convention\'s key where the route is declared: config.auht',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(async (routes) => { routes.delete('/admin', { config: { auht: true } }, handler(ran, 'admin')) })
    },
    expect: { ready: /route DELETE \/admin has config\.auht, which no convention reads: did you mean config\.auth\?/ }
  },
  {
    name: 'a typo of a convention\'s key: config.conditonal',
    build: async (app, ran) => {
      await app.register(httpConventions)
      await app.register(async (routes) => { routes.put('/doc', { config: { conditonal: VALIDATORS } }, handler(ran, 'put')) })
    },
    expect: { ready: /did you mean config\.conditional\?/ }
  },
  {
    name: 'an onRoute hook after the suite replaces the route\'s onRequest hooks (the suite puts none there)',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(fp(async (other: FastifyInstance) => {
        other.addHook('onRoute', (route: RouteOptions) => { route.onRequest = [] })
      }))
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    request: { method: 'DELETE', url: '/admin' },
    expect: { status: 401, ran: false }
  },
  {
    name: 'an onRoute hook after the suite replaces the route\'s preParsing hooks (where the refusals sit)',
    build: async (app, ran) => {
      await app.register(httpConventions, { auth: A })
      await app.register(fp(async (other: FastifyInstance) => {
        other.addHook('onRoute', (route: RouteOptions) => { route.preParsing = [] })
      }))
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    expect: { ready: /lost the suite's preParsing hook/ }
  },
  {
    name: 'a context made before the suite declares, after it, a route with config.auth',
    build: async (app, ran) => {
      let saved: FastifyInstance | undefined
      await app.register(async (c) => { saved = c })
      await app.register(httpConventions, { auth: A })
      saved?.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin asks for auth, but it was declared in a context made before fastify-http-conventions was registered/ }
  },
  {
    name: 'a context made before the suite with auth.protect declares, after it, a route without config.auth',
    build: async (app, ran) => {
      let saved: FastifyInstance | undefined
      await app.register(async (c) => { saved = c })
      await app.register(httpConventions, { auth: { ...A, protect: true } })
      saved?.delete('/admin', handler(ran, 'admin'))
    },
    expect: { ready: /route DELETE \/admin asks for auth, but it was declared in a context made before/ }
  },
  {
    name: 'a plugin registered, after the suite, through a context made before it (Fastify loads it from the root): its route with config.auth',
    build: async (app, ran) => {
      let saved: FastifyInstance | undefined
      await app.register(async (c) => { saved = c })
      await app.register(httpConventions, { auth: A })
      await saved?.register(async (inner) => { inner.delete('/inner', { config: { auth: true } }, handler(ran, 'inner')) })
    },
    request: { method: 'DELETE', url: '/inner' },
    expect: { status: 401, ran: false }
  },
  {
    name: 'a context made before the suite declared a route with config.auth before it (the guard refuses it)',
    build: async (app, ran) => {
      await app.register(async (c) => { c.delete('/admin', { config: { auth: true } }, handler(ran, 'admin')) })
      await app.register(httpConventions, { auth: A })
    },
    request: { method: 'DELETE', url: '/admin', headers: { authorization: ALICE } },
    expect: { status: 500, ran: false }
  },
  {
    name: 'a context made before the suite declares, after it, a route that asks for nothing',
    build: async (app, ran) => {
      let saved: FastifyInstance | undefined
      await app.register(async (c) => { saved = c })
      await app.register(httpConventions, { auth: A })
      saved?.get('/health', handler(ran, 'health'))
    },
    request: { method: 'GET', url: '/health' },
    expect: { status: 200, ran: true }
  },
  {
    name: 'the suite inside an encapsulated plugin whose function is named fastify',
    build: async (app, ran) => {
      await app.register(async function fastify (c) { await c.register(httpConventions, { auth: A }) })
      app.delete('/admin', { config: { auth: true } }, handler(ran, 'admin'))
    },
    expect: { ready: NOT_ROOT }
  },
  {
    name: 'an onRoute hook after the suite changes the route\'s method',
    build: async (app, ran) => {
      await app.register(httpConventions, { contentLength: {} })
      await app.register(fp(async (other: FastifyInstance) => {
        other.addHook('onRoute', (route: RouteOptions) => { if (route.url === '/doc') route.method = 'PUT' })
      }))
      app.get('/doc', { exposeHeadRoute: false }, handler(ran, 'doc'))
    },
    expect: { ready: /route GET \/doc is now a route of PUT, but the suite compiled it for GET: an onRoute hook that runs after the suite changed the route's method/ }
  }
]

for (const row of ROWS) {
  test(`fail closed: ${row.name}`, async (t) => {
    const app = Fastify(serverOptions)
    const ran: string[] = []
    t.teardown(() => app.close().catch(() => {}))
    // A registration awaited in build() rejects as ready() would.
    const built = Promise.resolve().then(async () => { await row.build(app, ran) })
    if ('ready' in row.expect) {
      await t.rejects(built.then(() => boot(app.ready())), row.expect.ready, 'ready() rejects, naming the route and the fix')
      t.same(ran, [], 'nothing was served')
      return
    }
    await built
    await boot(app.ready())
    for (let i = 0; i < 2; i++) {
      const res = await app.inject(row.request ?? { url: '/' })
      t.equal(res.statusCode, row.expect.status, `request ${i + 1}: ${row.expect.status}`)
    }
    t.equal(ran.length > 0, row.expect.ran, row.expect.ran ? 'the handler ran' : 'the handler never ran')
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
    await t.rejects(boot(app.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: NOT_ROOT }, `${name} in the child first`)
    await app.close().catch(() => {})
  }
  // The suite at the root, then each child with a registration of its own: fine.
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions, {})
  app.register(async (c) => { await c.register(httpConventionsConditional, { requirePrecondition: true }); c.get('/a', async () => 'a') })
  app.register(async (c) => { await c.register(httpConventionsConditional, {}); c.get('/b', async () => 'b') })
  await t.resolves(boot(app.ready()))
  t.equal((await app.inject({ url: '/b' })).statusCode, 200)
  await app.close()
})
