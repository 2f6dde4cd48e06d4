/**
 * Pins the Fastify and Node behaviour plugins/adapter.ts relies on (it has no public API):
 * a release that changes it fails here instead of opening a route or resetting a connection.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import http from 'node:http'
import net from 'node:net'
import { rawRequest } from '../helpers/raw'
import { contextValue, isFastifyDefaultErrorHandler, lingerOnClose, ownContextValue, rootOf, setContextValue } from '../../plugins/adapter'

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

test('Node behaviour the lingering close relies on: the HTTP server ends a Connection: close response by calling socket.destroySoon()', async (t) => {
  // If a Node upgrade ends such connections another way, plugins/adapter.ts no longer lingers: this fails first.
  let calls = 0
  const server = http.createServer((req, res) => {
    const socket = req.socket as typeof req.socket & { destroySoon: () => void }
    const original = socket.destroySoon
    socket.destroySoon = function spy (this: typeof socket) { calls++; original.call(this) }
    res.writeHead(411, { connection: 'close', 'content-length': '0' })
    res.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const res = await rawRequest((server.address() as { port: number }).port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n', { responses: undefined, waitMs: 1500 })
  t.equal(res.status, 411)
  t.ok(res.closed)
  t.equal(calls, 1, 'destroySoon was called once, after the response')
})

test('RFC 9112 9.6: the lingering socket reads and discards until the client closes, then closes itself', async (t) => {
  const server = net.createServer((socket) => {
    lingerOnClose(socket, 60_000)
    socket.write('HTTP/1.1 411 Length Required\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', () => { (socket as net.Socket & { destroySoon: () => void }).destroySoon() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const pieces = ['a'.repeat(100_000), 'b'.repeat(100_000), 'c'.repeat(100_000)]
  const res = await rawRequest(port, '', { pieces, pauseMs: 20, endAfterMs: 50, waitMs: 3000, responses: undefined })
  t.equal(res.status, 411, 'the answer arrives whole though the client kept sending')
  t.ok(res.closed, 'closed once the client closed, long before the linger time')
  lingerOnClose(null)
})
