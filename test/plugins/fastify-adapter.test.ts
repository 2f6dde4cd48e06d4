/**
 * Pins the Fastify behaviour plugins/fastify-adapter.ts relies on (it has no public API):
 * a Fastify release that changes it fails here instead of opening a route.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { contextValue, isFastifyDefaultErrorHandler, ownContextValue, rootOf, setContextValue } from '../../plugins/fastify-adapter'

test('Fastify creates a child context from its parent: the parent is its prototype and they share the server', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  let child: FastifyInstance | undefined
  let grandchild: FastifyInstance | undefined
  await app.register(async (c) => {
    child = c
    await c.register(async (g) => { grandchild = g })
  })
  t.equal(Object.getPrototypeOf(child), app, 'the child\'s prototype is its parent')
  t.equal(rootOf(grandchild as FastifyInstance), app, 'the root is found from two levels down')
  t.equal(rootOf(app), app, 'the root is its own root')
  t.equal((grandchild as FastifyInstance).server, app.server, 'one server for every context')
})

test('two apps in one process have two roots', async (t) => {
  const one = Fastify()
  const two = Fastify()
  t.teardown(async () => { await one.close(); await two.close() })
  let inTwo: FastifyInstance | undefined
  await two.register(async (c) => { inTwo = c })
  t.equal(rootOf(inTwo as FastifyInstance), two)
  t.not(rootOf(inTwo as FastifyInstance), one)
})

test('a value kept on a context is seen by its children, not by its parent or siblings; a child may keep its own', async (t) => {
  const key = Symbol('test')
  const app = Fastify()
  t.teardown(() => app.close())
  const seen: Record<string, unknown> = {}
  await app.register(async (a) => {
    setContextValue(a, key, 'a')
    await a.register(async (child) => {
      seen.inherited = contextValue(child, key)
      seen.ownBefore = ownContextValue(child, key)
      setContextValue(child, key, 'child')
      seen.own = ownContextValue(child, key)
    })
    seen.parentAfter = contextValue(a, key)
  })
  await app.register(async (sibling) => { seen.sibling = contextValue(sibling, key) })
  seen.root = contextValue(app, key)
  t.same(seen, { inherited: 'a', ownBefore: undefined, own: 'child', parentAfter: 'a', sibling: undefined, root: undefined })
})

test('a hook added to the root reaches every context, made before or after; an onRoute hook only contexts made after', async (t) => {
  // Why the guard lives in the root, and why a context that registers the suite adds its own onRoute hook.
  const app = Fastify()
  t.teardown(() => app.close())
  const calls: string[] = []
  const routes: string[] = []
  let early: FastifyInstance | undefined
  await app.register(async (e) => { early = e })
  app.addHook('onRequest', async (request) => { calls.push(request.url) })
  app.addHook('onRoute', (route) => { if (route.method !== 'HEAD') routes.push(route.url) })
  ;(early as FastifyInstance).get('/early', async () => 'early')
  app.get('/root', async () => 'root')
  await app.register(async (late) => { late.get('/late', async () => 'late') })
  await app.inject('/early')
  await app.inject('/root')
  await app.inject('/late')
  t.same(calls, ['/early', '/root', '/late'], 'the onRequest hook runs for every context')
  t.same(routes, ['/root', '/late'], 'the onRoute hook sees the root and later contexts')
  t.notOk(routes.includes('/early'), 'not a context made before it')
})

test('Fastify\'s default error handler is named defaultErrorHandler; a handler set with setErrorHandler is bound, whatever its name', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  t.ok(isFastifyDefaultErrorHandler(app.errorHandler), 'no handler set')
  app.setErrorHandler(function defaultErrorHandler () {})
  t.notOk(isFastifyDefaultErrorHandler(app.errorHandler), 'the app\'s handler, even named like Fastify\'s')
})
