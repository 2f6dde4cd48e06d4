/**
 * Pins the Fastify and Node behaviour the kernel and plugins/infrastructure/adapter.ts rely on:
 * a release that changes it fails here instead of opening a route or resetting a connection.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import http from 'node:http'
import net from 'node:net'
import { rawRequest } from '../helpers/raw'
import fp from 'fastify-plugin'
import {
  ajvStateKey, contextsBelow, gateRequests, hasOnlyFastifysErrorHandler, installedClientErrorHandler, isGated, isRootContext, lingerOnClose, routesDeclared,
  sendAsGiven, takeOverHostCheck, isRouterRefusal
} from '../../plugins/infrastructure/adapter'
import { listen } from '../helpers/app'
import { answerExpectations, continueRequestsOnFirstRead, isCorsPreflightRoute, readFastifyErrorBody, refusedMajorVersion } from '../../plugins/infrastructure/adapter'
import cors from '@fastify/cors'
import { postExpecting } from '../helpers/expect-continue'
import { pipeline } from 'node:stream/promises'
import { Writable } from 'node:stream'
import type { Test } from 'tap'

test('Fastify makes an encapsulated context with Object.create(parent): only the root (and fastify-plugin plugins in it) is no Fastify instance\'s child', async (t) => {
  // How the kernel finds the root by what it is: a plugin function named `fastify` has the root's pluginName.
  const app = Fastify()
  t.teardown(() => app.close())
  const seen: Array<[string, boolean]> = []
  seen.push(['root', isRootContext(app)])
  await app.register(fp(async (i) => { seen.push(['fastify-plugin in the root', isRootContext(i)]) }))
  await app.register(async function fastify (c) {
    seen.push(['a child named fastify', isRootContext(c)])
    t.equal(Object.getPrototypeOf(c), app, 'the child\'s prototype is its parent')
    await c.register(fp(async (i) => { seen.push(['fastify-plugin in a child', isRootContext(i)]) }))
  })
  t.same(seen, [['root', true], ['fastify-plugin in the root', true], ['a child named fastify', false], ['fastify-plugin in a child', false]])
})

test('Fastify keeps the contexts made from an instance under the symbol "fastify.children"; fastify-plugin makes none', async (t) => {
  // How the kernel finds contexts made before it, whose routes its onRoute hook never sees.
  const app = Fastify()
  t.teardown(() => app.close())
  t.same(contextsBelow(app), [], 'a new app has none')
  const made: FastifyInstance[] = []
  await app.register(fp(async () => {}))
  await app.register(async (a) => {
    made.push(a)
    await a.register(async (b) => { made.push(b) })
  })
  await app.register(async (c) => { made.push(c) })
  t.same(contextsBelow(app), made, 'every encapsulated context, depth first')
  t.equal(contextsBelow({} as FastifyInstance), undefined, 'an instance without the symbol: unknown')
})

test('Fastify installs the clientErrorHandler server option as the server\'s clientError listener, bound to the app (named "bound <name>")', async (t) => {
  // How the validation plugin knows, without a route schema, that serverOptions were spread into Fastify().
  function mine (_err: Error, socket: net.Socket): void { socket.destroy() }
  function other (_err: Error, socket: net.Socket): void { socket.destroy() }
  const app = Fastify({ clientErrorHandler: mine })
  t.teardown(() => app.close())
  await app.ready()
  t.ok(app.server.listeners('clientError').some((l) => l.name === 'bound mine'), 'the listener is the handler, bound')
  t.equal(installedClientErrorHandler(app, mine), true)
  t.equal(installedClientErrorHandler(app, other), false)
  const plain = Fastify()
  t.teardown(() => plain.close())
  await plain.ready()
  t.equal(installedClientErrorHandler(plain, mine), false, 'Fastify\'s own listener is not it')
})

test('printRoutes() of an app without routes is "(empty tree)", and lists a route as soon as it is declared', async (t) => {
  // How the kernel refuses to be installed after routes it could not see.
  const app = Fastify()
  t.teardown(() => app.close())
  t.equal(app.printRoutes({ commonPrefix: false }).trim(), '(empty tree)')
  t.equal(routesDeclared(app), false, 'routesDeclared reads it')
  app.get('/x', async () => 'x')
  let seen = ''
  let declared = false
  await app.register(fp(async (i) => { seen = i.printRoutes({ commonPrefix: false }); declared = routesDeclared(i) }))
  t.match(seen, /\/x \(GET, HEAD\)/)
  t.equal(declared, true, 'a route declared before a plugin is seen from it')
})

test('a value assigned in onRegister on a decorated key is the new context\'s own: children see theirs, parents and siblings keep theirs', async (t) => {
  // The pattern Fastify documents for encapsulated decorators, which the kernel's nodes use.
  const key = Symbol('test')
  const app = Fastify()
  t.teardown(() => app.close())
  app.decorate(key, 'root')
  app.addHook('onRegister', (child) => { (child as unknown as Record<symbol, string>)[key] += '>' })
  const seen: Record<string, unknown> = {}
  const read = (i: FastifyInstance) => (i as unknown as Record<symbol, string>)[key]
  await app.register(async (a) => {
    seen.a = read(a)
    await a.register(async (child) => { seen.child = read(child) })
    await a.register(fp(async (same) => { seen.fp = read(same) }))
  })
  await app.register(async (sibling) => { seen.sibling = read(sibling) })
  seen.root = read(app)
  t.same(seen, { a: 'root>', child: 'root>>', fp: 'root>', sibling: 'root>', root: 'root' })
})

test('a hook added to a context reaches its routes declared before it and its children made before it', async (t) => {
  // How the redirect rules' hook covers every URL of its context, routed or not.
  const app = Fastify()
  t.teardown(() => app.close())
  const calls: string[] = []
  app.get('/before', async () => 'before')
  await app.register(async (early) => { early.get('/early', async () => 'early') })
  app.addHook('onRequest', async (request) => { calls.push(request.url) })
  await app.inject('/before')
  await app.inject('/early')
  await app.inject('/nowhere')
  t.same(calls, ['/before', '/early', '/nowhere'])
})

test('every Fastify instance without setErrorHandler exposes one and the same errorHandler; setErrorHandler replaces it', async (t) => {
  // How the suite knows the app set no error handler for a route's context (by identity, never by name).
  const app = Fastify()
  t.teardown(() => app.close())
  t.equal(app.errorHandler, Fastify().errorHandler, 'the same function in two apps')
  let child: FastifyInstance | undefined
  await app.register(async (c) => { child = c })
  t.equal(child?.errorHandler, app.errorHandler, 'a child context without a handler of its own')
  t.equal(hasOnlyFastifysErrorHandler(app), true, 'hasOnlyFastifysErrorHandler reads it')
  app.setErrorHandler(function defaultErrorHandler () {})
  t.not(app.errorHandler, Fastify().errorHandler, 'the app\'s handler, even named like Fastify\'s')
  t.equal(hasOnlyFastifysErrorHandler(app), false)
})

test('a string sent on a reply with its own serializer keeps the JSON Content-Type the reply set; without one Fastify adds charset=utf-8', async (t) => {
  // How the suite's error bodies, strings, keep `Content-Type: application/json` exactly (sendAsGiven).
  const body = '{"errors":[{"field":"body","message":"é"}]}'
  const app = Fastify()
  t.teardown(() => app.close())
  app.get('/given', async (_request, reply) => {
    reply.header('content-type', 'application/json')
    sendAsGiven(reply)
    return reply.send(body)
  })
  app.get('/plain', async (_request, reply) => reply.header('content-type', 'application/json').send(body))
  const port = await listen(app)
  const given = await fetch(`http://127.0.0.1:${port}/given`)
  t.equal(given.headers.get('content-type'), 'application/json', 'the Content-Type as the reply set it')
  t.equal(given.headers.get('content-length'), String(Buffer.byteLength(body)), 'Content-Length is the UTF-8 length')
  t.equal(await given.text(), body, 'the body as given')
  const plain = await fetch(`http://127.0.0.1:${port}/plain`)
  t.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8', 'what sendAsGiven keeps from happening')
  t.equal(await plain.text(), body)
})

test('Fastify hands the validator compiler builder of every context of one app the same ajv options object, and another app another', async (t) => {
  // How the suite keeps one schema checker and one pool of Ajv compilers per app (plugins/services/schema-check.ts).
  const seen: Array<[string, object]> = []
  function serverWith (name: string) {
    return Fastify({
      ajv: { customOptions: { allErrors: true } },
      schemaController: {
        compilersFactory: {
          buildValidator (_schemas: unknown, options: object) {
            seen.push([name, options])
            return () => () => true
          }
        }
      }
    } as never)
  }
  const app = serverWith('one')
  t.teardown(() => app.close())
  const schema = { querystring: { type: 'object' } }
  app.get('/root', { schema }, async () => 'x')
  await app.register(async (c) => {
    c.addSchema({ $id: 'child', type: 'string' })
    c.get('/child', { schema }, async () => 'x')
  })
  const other = serverWith('two')
  t.teardown(() => other.close())
  other.get('/x', { schema }, async () => 'x')
  await app.ready()
  await other.ready()
  const one = seen.filter(([name]) => name === 'one').map(([, o]) => o)
  const two = seen.filter(([name]) => name === 'two').map(([, o]) => o)
  t.ok(one.length >= 2, `a builder per context with schemas of its own (${one.length})`)
  t.ok(one.every((o) => o === one[0]), 'the one object for every context of the app')
  t.not(two[0], one[0], 'another app gets another object')
  t.equal(ajvStateKey(one[1]), ajvStateKey(one[0]), 'ajvStateKey keys them as one app')
})

test('Node behaviour the lingering close relies on: the HTTP server ends a Connection: close response by calling socket.destroySoon()', async (t) => {
  // If a Node upgrade ends such connections another way, plugins/infrastructure/adapter.ts no longer lingers: this fails first.
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

test('Fastify\'s request handler is the one \'request\' listener of the server Fastify() made; gateRequests stands in front of it', async (t) => {
  // How the answers written before a route runs (plugins/edge/server-answers.ts) keep a request from Fastify's router.
  const app = Fastify()
  app.get('/x', async () => 'routed')
  t.equal(app.server.listeners('request').length, 1, 'one listener: Fastify\'s handler')
  t.equal(isGated(app.server), false)
  const gated: string[] = []
  gateRequests(app.server, (request, response) => {
    if (request.url !== '/refused') return false
    gated.push(request.url)
    response.end('gated')
    return true
  })
  t.equal(isGated(app.server), true)
  const port = await listen(app)
  t.teardown(() => app.close())
  t.equal((await rawRequest(port, 'GET /x HTTP/1.1\r\nHost: x\r\n\r\n')).body, 'routed', 'a request the gate passes is routed')
  const refused = await rawRequest(port, 'GET /refused HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(refused.raw, /\r\n\r\n(5\r\n)?gated/, 'a request the gate answers is never routed (no 404)')
  t.same(gated, ['/refused'])
})

test('Node reads requireHostHeader from the server on each request, before \'checkExpectation\' and \'request\'', async (t) => {
  // How the suite, not Node, answers an HTTP/1.1 request without Host (plugins/infrastructure/adapter.ts takeOverHostCheck).
  const seen: string[] = []
  const server = http.createServer((request, response) => { seen.push(`request ${request.url ?? ''}`); response.end() })
  server.on('checkExpectation', (request, response) => { seen.push(`checkExpectation ${request.url ?? ''}`); response.end() })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const before = await rawRequest(port, 'GET /a HTTP/1.1\r\n\r\n')
  t.equal(before.status, 400, 'Node answers itself while the property is true')
  t.equal(takeOverHostCheck(server), true, 'Node was checking')
  t.equal((server as http.Server & { requireHostHeader?: boolean }).requireHostHeader, false)
  await rawRequest(port, 'GET /b HTTP/1.1\r\n\r\n')
  await rawRequest(port, 'GET /c HTTP/1.1\r\nExpect: fancy\r\n\r\n')
  t.same(seen, ['request /b', 'checkExpectation /c'], 'then every request without Host reaches the server\'s listeners')
  t.equal(takeOverHostCheck(server), false, 'a server that does not check: nothing to take over')
})

test('Node\'s parser refuses HTTP/3.0 and HTTP/1.2 as HPE_INVALID_VERSION, stopping right after the version (bytesParsed) of the bytes it was given (rawPacket); it reads HTTP/2.0 and HTTP/0.9', async (t) => {
  // How the clientErrorHandler tells a request of another major version (505) from a malformed one (400).
  const seen: string[] = []
  const server = http.createServer((request, response) => { seen.push(`request ${request.httpVersion}`); response.end() })
  server.on('clientError', (err: Error & { code?: string, rawPacket?: Buffer, bytesParsed?: number }, socket: net.Socket) => {
    const at = err.bytesParsed ?? 0
    seen.push(`${err.code ?? ''} ${err.rawPacket?.subarray(at - 8, at).toString('latin1') ?? ''} major ${String(refusedMajorVersion(err))}`)
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  for (const version of ['HTTP/3.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9']) await rawRequest(port, `GET / ${version}\r\nHost: x\r\n\r\n`)
  t.same(seen, ['HPE_INVALID_VERSION HTTP/3.0 major 3', 'HPE_INVALID_VERSION HTTP/1.2 major 1', 'request 2.0', 'request 0.9'])
  const packet = Buffer.from('GET / HTTP/3.0\r\n')
  t.equal(refusedMajorVersion(Object.assign(new Error('x'), { rawPacket: packet, bytesParsed: 14 })), 3, 'refusedMajorVersion reads the digits before bytesParsed')
  t.equal(refusedMajorVersion(Object.assign(new Error('x'), { rawPacket: packet, bytesParsed: 4 })), null, 'anything else there is no version')
  t.equal(refusedMajorVersion(Object.assign(new Error('x'), { rawPacket: packet, bytesParsed: 99 })), null, 'beyond the packet')
  t.equal(refusedMajorVersion(new Error('x')), null, 'an error without them')
})

test('gateRequests keeps every request listener a server had, in order, behind the gate', async (t) => {
  // A server made by an app's serverFactory may have more than Fastify's handler.
  const seen: string[] = []
  const server = http.createServer((request) => { seen.push(`first ${request.url ?? ''}`) })
  server.on('request', (request, response) => { seen.push(`second ${request.url ?? ''}`); response.end('ok') })
  gateRequests(server, (request, response) => {
    if (request.url !== '/refused') return false
    response.end('gated')
    return true
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  await rawRequest(port, 'GET /passed HTTP/1.1\r\nHost: x\r\n\r\n')
  await rawRequest(port, 'GET /refused HTTP/1.1\r\nHost: x\r\n\r\n')
  t.same(seen, ['first /passed', 'second /passed'])
})

/** A server whose 'checkContinue' listener (continueRequestsOnFirstRead) hands each request over to `handler`, by emitting 'request'. */
async function continueServer (t: Test, handler: (request: http.IncomingMessage, response: http.ServerResponse) => void): Promise<number> {
  const server = http.createServer(handler)
  continueRequestsOnFirstRead(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  return (server.address() as net.AddressInfo).port
}

test('RFC 9110 10.1.1: whatever reads a request body first adds a \'data\' or \'readable\' listener, so continueOnFirstRead writes the 100 before the body is read', async (t) => {
  // How a request the suite's 'checkContinue' listener handed over gets its 100 on a route without the convention's step.
  const readers: Record<string, (request: http.IncomingMessage) => Promise<number>> = {
    'a data listener': (request) => new Promise((resolve) => { let n = 0; request.on('data', (c: Buffer) => { n += c.length }).on('end', () => resolve(n)) }),
    'pipe()': (request) => new Promise((resolve) => { let n = 0; request.pipe(new Writable({ write (c: Buffer, _e, cb) { n += c.length; cb() } })).on('finish', () => resolve(n)) }),
    'stream.pipeline()': async (request) => { let n = 0; await pipeline(request, new Writable({ write (c: Buffer, _e, cb) { n += c.length; cb() } })); return n },
    'async iteration': async (request) => { let n = 0; for await (const c of request) n += (c as Buffer).length; return n }
  }
  for (const [name, read] of Object.entries(readers)) {
    const port = await continueServer(t, (request, response) => { read(request).then((n) => response.end(`read ${n}`), (err: Error) => response.end(err.message)) })
    t.same(await postExpecting(port, '/', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, name)
  }
  const unread = await continueServer(t, (_request, response) => { response.end('answered') })
  t.same(await postExpecting(unread, '/', 5), { statuses: [200], body: 'answered', sentBody: false }, 'answered without reading: the final status, no 100')
  const late = await continueServer(t, (request, response) => {
    response.end('answered')
    request.on('data', () => {})
  })
  t.same(await postExpecting(late, '/', 5), { statuses: [200], body: 'answered', sentBody: false }, 'read after the answer: no 100 behind it')
})

test('RFC 9110 10.1.1: Fastify\'s body reader adds a \'data\' listener to the request (its 100 comes from continueOnFirstRead); a media type no parser reads gets none', async (t) => {
  const app = Fastify()
  app.post('/read', async (request) => `read ${String(request.body).length}`)
  continueRequestsOnFirstRead(app.server)
  const port = await listen(app)
  t.teardown(() => app.close())
  t.same(await postExpecting(port, '/read', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, 'Fastify\'s reader')
  const refused = await postExpecting(port, '/read', 5, 'text/csv')
  t.same(refused.statuses, [415], 'Fastify\'s 415 reads nothing: no 100 before it')
  t.equal(refused.sentBody, false)
})

test('RFC 9110 10.1.1: a request a \'checkContinue\' listener emits on \'request\' is served by Fastify\'s handler; an app\'s own listener answers alone', async (t) => {
  // How every Expect: 100-continue request reaches the app with its 100 deferred (continueRequestsOnFirstRead).
  const app = Fastify()
  app.post('/read', async (request) => `read ${String(request.body).length}`)
  continueRequestsOnFirstRead(app.server)
  continueRequestsOnFirstRead(app.server)
  t.equal(app.server.listenerCount('checkContinue'), 1, 'one listener per server')
  const port = await listen(app)
  t.teardown(() => app.close())
  t.same(await postExpecting(port, '/read', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, 'routed by Fastify, 100 when its reader starts')
  app.server.on('checkContinue', (_request: http.IncomingMessage, response: http.ServerResponse) => { response.writeHead(417, { 'content-length': '9' }).end('the app\'s') })
  const own = await postExpecting(port, '/read', 5)
  t.same([own.statuses, own.body], [[417], 'the app\'s'], 'a listener the app added after it answers alone')
  const before = http.createServer((_request, response) => { response.end('routed') })
  before.on('checkContinue', (_request, response) => { response.writeHead(417).end('first') })
  continueRequestsOnFirstRead(before)
  t.equal(before.listenerCount('checkContinue'), 1, 'a listener the app added before it: none added')
})

test('Node emits \'checkExpectation\' for an Expect other than 100-continue, after its Host check; answerExpectations answers it unless the app listens', async (t) => {
  // How the suite answers 417 in its own rendering (plugins/edge/server-answers.ts).
  const server = http.createServer((_request, response) => { response.end('routed') })
  answerExpectations(server, (request, response) => {
    const body = `refused ${request.headers.expect ?? ''}`
    response.writeHead(417, { 'content-type': 'text/plain', 'content-length': String(body.length) }).end(body)
  })
  answerExpectations(server, () => { t.fail('a second listener') })
  t.equal(server.listenerCount('checkExpectation'), 1)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const port = (server.address() as net.AddressInfo).port
  const fancy = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nExpect: fancy\r\n\r\n')
  t.same([fancy.status, fancy.body], [417, 'refused fancy'])
  t.equal((await rawRequest(port, 'GET / HTTP/1.1\r\nExpect: fancy\r\n\r\n')).status, 400, 'Node\'s Host check comes first')
  const own = http.createServer()
  own.on('checkExpectation', () => {})
  answerExpectations(own, () => {})
  t.equal(own.listenerCount('checkExpectation'), 1, 'an app\'s own listener is left to answer alone')
})

test('@fastify/cors declares its preflight route as OPTIONS * (kept as /*) beside the request decorator corsPreflightEnabled', async (t) => {
  // How the methods convention tells @fastify/cors's catch-all OPTIONS route from an app's own (isCorsPreflightRoute).
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(cors)
  t.equal(app.hasRoute({ method: 'OPTIONS', url: '/*' }), true, 'the route, as /*')
  t.equal(app.hasRequestDecorator('corsPreflightEnabled'), true, 'the decorator')
  t.equal(isCorsPreflightRoute(app, '/*'), true)
  t.equal(isCorsPreflightRoute(app, '*'), true)
  t.equal(isCorsPreflightRoute(app, '/x'), false, 'another path')
  const own = Fastify()
  t.teardown(() => own.close())
  own.options('*', async () => 'own')
  t.equal(isCorsPreflightRoute(own, '/*'), false, 'an app\'s own catch-all OPTIONS route')
})

test('Fastify\'s default error handler writes { statusCode, code, error, message } and nothing else, a string in onSend; readFastifyErrorBody reads it back', async (t) => {
  // How the suite finds, in onSend, its own error that an app's handler passed on to Fastify's (plugins/services/errors.ts).
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  const payloads: unknown[] = []
  app.addHook('onSend', async (_request, _reply, payload) => { payloads.push(payload); return payload })
  app.get('/coded', async () => { throw Object.assign(new Error('gone'), { statusCode: 410, code: 'X_GONE' }) })
  app.get('/plain', async () => { throw Object.assign(new Error('teapot'), { statusCode: 418 }) })
  await app.inject('/coded')
  await app.inject('/plain')
  t.type(payloads[0], 'string', 'a string payload')
  t.same(readFastifyErrorBody(payloads[0] as string), { statusCode: 410, code: 'X_GONE', error: 'Gone', message: 'gone' })
  t.same(readFastifyErrorBody(payloads[1] as string), { statusCode: 418, error: 'I\'m a Teapot', message: 'teapot' })
  t.equal(readFastifyErrorBody('{"statusCode":410,"error":"Gone","message":"gone","more":1}'), null, 'another member: the app\'s own body')
  t.equal(readFastifyErrorBody('{"statusCode":"410","error":"Gone","message":"gone"}'), null, 'a member of another type')
  t.equal(readFastifyErrorBody('{"statusCode":410,"error":"Gone","message":"gone","code":1}'), null, 'a code that is no string')
  t.equal(readFastifyErrorBody('[1]'), null, 'an array')
  t.equal(readFastifyErrorBody('null'), null)
  t.equal(readFastifyErrorBody('not json'), null, 'not JSON')
  t.equal(readFastifyErrorBody(`{"statusCode":410,"error":"Gone","message":"${'x'.repeat(70_000)}"}`), null, 'too long to be Fastify\'s')
})

test('Fastify hands frameworkErrors (and the log controller before it) a request with null params and query in a context without a route URL; routed and not-found requests have both', async (t) => {
  const seen: Array<[string, boolean]> = []
  const app = Fastify({ routerOptions: { maxParamLength: 5 }, frameworkErrors: (error, request, reply) => { seen.push([error.code, isRouterRefusal(request as FastifyRequest)]); (reply as FastifyReply).code(400).send('x') } })
  t.teardown(() => app.close())
  app.get('/p/:id', async (request) => { seen.push(['routed', isRouterRefusal(request)]); return 'x' })
  app.setNotFoundHandler(async (request, reply) => { seen.push(['not found', isRouterRefusal(request)]); return reply.code(404).send('x') })
  await app.inject('/p/%E0%A4%A')
  await app.inject('/p/123456789')
  await app.inject('/p/1')
  await app.inject('/nowhere')
  t.same(seen, [['FST_ERR_BAD_URL', true], ['FST_ERR_MAX_PARAM_LENGTH', true], ['routed', false], ['not found', false]])
})
