/**
 * The upstream proposals (docs/architecture.md, "Reliances and upstream proposals") on a
 * Fastify patched with them: scripts/upstream/*.patch applied (`patch -p1`) to a copy of the
 * installed Fastify in a temporary directory, as scripts/upstream.js does. The suite uses each
 * proposal where the Fastify in use has it (plugins/infrastructure/adapter.ts), and answers
 * as it does on stock Fastify, or better: a route it cannot serve is a boot error.
 *
 * Skipped only where the `patch` program is missing outside CI; under CI=true a missing
 * `patch` fails.
 */
import { test, type Test } from 'tap'
import { join, sep } from 'node:path'
import { registerHooks } from 'node:module'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { ROOT } from '../helpers/paths'
import { httpConventions, serverOptions, type AuthOptions } from '../../plugins/index'

interface Patched { readonly fastify: string, remove: () => void }
interface Upstream { hasPatch: () => boolean, buildPatched: (patches: string[]) => Patched }
const upstream = require(join(ROOT, 'scripts', 'upstream.js')) as Upstream

const A: AuthOptions = { realm: 'r', basic: { users: { alice: 'secret' } } }
const ALICE = 'Basic ' + Buffer.from('alice:secret').toString('base64')
const NO_PATCH = 'the `patch` program is missing: install it (e.g. `apt-get install patch`) to run these tests'
const skip = !upstream.hasPatch() && process.env.CI !== 'true' ? NO_PATCH : false

/** Makes an app with the suite's server options (and `options`). */
type Make = (options?: object) => FastifyInstance
/** A Fastify and the suite bound to it. */
interface Side { make: Make, suite: Pick<typeof import('../../plugins/index'), 'httpConventions' | 'serverOptions'> }

/**
 * Fastify with every proposal, and the suite as an app of it loads it: one process holds one
 * Fastify for the suite and the app (the suite refuses an app made by another copy), so this
 * file runs alone. Built at the first call: from then on every `require('fastify')` of the
 * process resolves to the patched copy (Node's documented module.registerHooks), and the
 * suite's modules are loaded once more, from the same files, bound to it. The stock Fastify
 * and suite imported above stay as they were loaded. The copy is removed when the file ends.
 */
let patched: Side | undefined
function withProposals (t: Test): Side {
  if (patched !== undefined) return patched
  const copy = upstream.buildPatched(['routes', 'route-options', 'contexts', 'hook-runners'])
  process.once('exit', () => copy.remove())
  registerHooks({
    resolve (specifier, context, next) {
      if (specifier === 'fastify' || specifier.startsWith('fastify/')) return next(copy.fastify + specifier.slice('fastify'.length), context)
      return next(specifier, context)
    }
  })
  const plugins = join(ROOT, '.test-build', 'plugins') + sep
  for (const key of Object.keys(require.cache)) if (key.startsWith(plugins)) Reflect.deleteProperty(require.cache, key)
  const suite = require('../../plugins/index') as typeof import('../../plugins/index')
  const make = require(copy.fastify) as (options: object) => FastifyInstance
  patched = { make: (options = {}) => make({ ...suite.serverOptions, ...options }), suite }
  return patched
}

const stock: Side = { make: (options = {}) => Fastify({ ...serverOptions, ...options }), suite: { httpConventions, serverOptions } }

/** The suite registered without await, then a DELETE with config.auth: what ready() and a request with its credentials give. */
async function registeredWithoutAwait ({ make, suite }: Side): Promise<{ ready: string } | { status: number }> {
  const app = make()
  try {
    app.register(suite.httpConventions, { auth: A })
    app.delete('/admin', { config: { auth: true } }, async () => 'deleted')
    try {
      await app.ready()
    } catch (err) {
      return { ready: (err as Error).message }
    }
    return { status: (await app.inject({ method: 'DELETE', url: '/admin', headers: { authorization: ALICE } })).statusCode }
  } finally {
    await app.close()
  }
}

test('a route that asks for a convention, declared before the suite (register without await): where Fastify lists its routes, ready() rejects naming the route and the fix; on stock Fastify a 500', { skip }, async (t) => {
  t.same(await registeredWithoutAwait(stock), { status: 500 }, 'stock Fastify: refused on each request')
  const patchedAnswer = await registeredWithoutAwait(withProposals(t))
  t.match(patchedAnswer, { ready: /route DELETE \/admin asks for auth, but it was declared before fastify-http-conventions was registered, and the suite never compiled it; register fastify-http-conventions-auth .*await fastify\.register\(\.\.\.\) before adding routes/ })
})

test('where Fastify lists its routes, a route declared before the suite that asks for nothing is served, as on stock Fastify', { skip }, async (t) => {
  for (const [name, { make, suite }] of [['stock', stock], ['patched', withProposals(t)]] as const) {
    const app = make()
    t.teardown(() => app.close())
    app.get('/health', async () => 'up')
    await app.register(suite.httpConventions, { auth: A })
    const res = await app.inject({ method: 'GET', url: '/health' })
    t.equal(res.statusCode, 200, `${name}: served`)
    t.equal(res.body, 'up', `${name}: by its handler`)
  }
})

test('where Fastify has isRoot and children(): a route of a context made before the suite that asks for a convention fails ready(); the suite registered in a child is refused', { skip }, async (t) => {
  const { make, suite } = withProposals(t)
  const app = make()
  t.teardown(() => app.close())
  app.register(async (child) => {
    child.get('/inner', { config: { auth: true } }, async () => 'inner')
  })
  app.register(suite.httpConventions, { auth: A })
  // One problem: the HEAD route Fastify adds beside the GET is not named again.
  await t.rejects(async () => { await app.ready() }, /1 route\(s\) cannot be served as they ask:\n- route GET \/inner asks for auth, but it was declared before fastify-http-conventions was registered[^\n]*$/)
  const nested = make()
  t.teardown(() => nested.close())
  nested.register(async (child) => { await child.register(suite.httpConventions, { auth: A }) })
  await t.rejects(async () => { await nested.ready() }, /the suite is installed in the root context of the app/)
})

/** A JSON route answered by the suite's 415 for a body of a type it does not take: the answer and the request's log lines of an error. */
async function refusedBody (t: Test, { make, suite }: Side, own: boolean): Promise<{ status: number, body: string, logged: Array<Record<string, unknown>> }> {
  const logged: Array<Record<string, unknown>> = []
  const app = make({ logger: { level: 'info', stream: { write: (line: string) => { logged.push(JSON.parse(line) as Record<string, unknown>) } } } })
  t.teardown(() => app.close())
  if (own) app.setErrorHandler(async (_err, _request, reply) => reply.code(503).type('text/plain').send('own handler'))
  await app.register(suite.httpConventions, {})
  app.post('/doc', { schema: { body: { type: 'object' } } }, async () => 'stored')
  const res = await app.inject({ method: 'POST', url: '/doc', headers: { 'content-type': 'application/x-foo' }, payload: 'x' })
  return { status: res.statusCode, body: res.body, logged: logged.filter((l) => l.err !== undefined).map(({ level, msg, err }) => ({ level, msg, err })) }
}

test('where Fastify has hasErrorHandler(): the suite answers and logs its own 415 (with the Content-Type it refused) as on stock Fastify, and an app\'s own error handler keeps it', { skip }, async (t) => {
  const onPatched = withProposals(t)
  const stockSuite = await refusedBody(t, stock, false)
  t.equal(stockSuite.status, 415, 'stock: the suite\'s 415')
  t.match(stockSuite.logged, [{ level: 30, err: { statusCode: 415, contentType: 'application/x-foo' } }], 'stock: the suite logs it, with the Content-Type refused')
  t.same(await refusedBody(t, onPatched, false), stockSuite, 'patched: the same answer and log line')
  const stockOwn = await refusedBody(t, stock, true)
  t.equal(stockOwn.body, 'own handler', 'stock: the app\'s handler answers')
  t.same(await refusedBody(t, onPatched, true), stockOwn, 'patched: the app\'s own handler, as on stock Fastify')
})

test('an app\'s own `routes` decorator, not a list of routes, is not taken for Fastify\'s: the route declared before the suite is refused on each request, as without it', async (t) => {
  for (const value of [() => new Map(), new Map()]) {
    const made: Make = () => {
      const app = Fastify({ ...serverOptions })
      app.decorate('routes', value as never)
      return app
    }
    t.same(await registeredWithoutAwait({ make: made, suite: stock.suite }), { status: 500 }, typeof value === 'function' ? 'a function that returns a Map' : 'a Map (@fastify/routes)')
  }
})

test('an app\'s own `isRoot` decorator is not taken for Fastify\'s: the suite registered in a child context is still refused', async (t) => {
  const app = Fastify({ ...serverOptions })
  t.teardown(() => app.close())
  app.decorate('isRoot', true)
  app.register(async (child) => { await child.register(httpConventions, { auth: A }) })
  await t.rejects(async () => { await app.ready() }, /the suite is installed in the root context of the app/)
})

/** An app whose hooks take every way a hook can end (done, a resolved or rejected promise, a new body stream), and the suite's 415 beside them: the answers. */
async function hookOutcomes ({ make, suite }: Side): Promise<Array<{ status: number, body: unknown }>> {
  const app = make()
  try {
    await app.register(suite.httpConventions)
    app.addHook('onRequest', async (request) => {
      if (request.url === '/reject') throw Object.assign(new Error('slow down'), { statusCode: 429 })
    })
    app.addHook('preParsing', async (request, _reply, payload) => (request.url === '/swap' ? Readable.from([Buffer.from('{"b":2}')]) : payload))
    app.addHook('preValidation', (_request, _reply, done) => { done() })
    app.addHook('preHandler', async (request) => {
      // A hook's promise rejected without a reason: Fastify's FST_ERR_SEND_UNDEFINED_ERR (500).
      if (request.url === '/undefined') return await Promise.reject(undefined) // eslint-disable-line prefer-promise-reject-errors
    })
    app.post('/*', async (request) => ({ body: request.body }))
    const out = []
    for (const [url, type] of [['/ok', 'application/json'], ['/reject', 'application/json'], ['/swap', 'application/json'], ['/undefined', 'application/json'], ['/ok', 'text/csv']]) {
      const r = await app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload: '{"a":1}' })
      const body = r.headers['content-type']?.startsWith('application/json') === true ? r.json() : r.body
      out.push({ status: r.statusCode, body: typeof body === 'object' && body !== null && 'errors' in body ? 'errors' : body })
    }
    return out
  } finally {
    await app.close()
  }
}

test('where Fastify makes a hook\'s promise handlers only for a hook that returned a promise: every way a hook ends answers as on stock Fastify', { skip }, async (t) => {
  const onStock = await hookOutcomes(stock)
  t.same(onStock.map((o) => o.status), [200, 429, 200, 500, 415], 'stock Fastify: done, rejected, a new body, rejected without a reason, the suite\'s 415')
  t.same(onStock[0].body, { body: { a: 1 } })
  t.same(onStock[2].body, { body: { b: 2 } }, 'the body the preParsing hook gave (as long as the one sent)')
  t.same(await hookOutcomes(withProposals(t)), onStock, 'the patched copy answers the same')
})
