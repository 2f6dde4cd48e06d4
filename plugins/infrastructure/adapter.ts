/**
 * The one place the suite relies on Fastify or Node behaviour that has no public API. Each
 * function names what it relies on; test/plugins/adapter.test.ts pins that behaviour, so a
 * Fastify or Node release that changes it fails a test instead of opening a route or
 * resetting a connection.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * The public API Fastify would need in place of some reliances below, as proposed in
 * scripts/upstream/ (docs/architecture.md, "Reliances and upstream proposals"): no Fastify
 * release has it yet. Where the Fastify in use has a member of that name and kind, the
 * function uses it and the reliance is not needed; otherwise the reliance stands.
 */
interface Proposals {
  /** `fastify.routes()` (scripts/upstream/fastify-routes.patch). */
  routes?: unknown
  /** `fastify.isRoot`, `fastify.children()`, `fastify.hasErrorHandler()` (scripts/upstream/fastify-contexts.patch). */
  isRoot?: unknown
  children?: unknown
  hasErrorHandler?: unknown
}

function proposed (instance: FastifyInstance): Proposals {
  return instance as unknown as Proposals
}

/**
 * Whether the Fastify in use has the contexts proposal: all three of its members, each of its
 * kind. One alone may be an app's own decorator (a boolean `isRoot` would make every context
 * read as the root), and three of those names and kinds are taken for Fastify's.
 */
function hasContextsProposal (instance: FastifyInstance): boolean {
  const p = proposed(instance)
  return typeof p.isRoot === 'boolean' && typeof p.children === 'function' && typeof p.hasErrorHandler === 'function'
}

/**
 * Lingering close (RFC 9112 9.6): how the suite changes the way Node closes a connection.
 *
 * A server that closes while the client is still sending its body must not reset the
 * connection before the client has read the answer. Node's HTTP server ends a connection
 * whose response says `Connection: close` by calling `socket.destroySoon()` once the response
 * is written: that sends FIN, then destroys the socket as soon as the FIN is out. With the
 * client's unread bytes pending, the kernel then answers with a reset, and the client may
 * never see the 411. Node offers no public way to keep the socket open after such a response
 * (`res.shouldKeepAlive = false` and the `Connection: close` header both lead to that same
 * call; ending the socket ourselves on the response's 'finish' event comes after it), so this
 * replaces `destroySoon` on the one socket concerned: send FIN after the response, keep
 * reading (and discarding) until the client closes, for at most `lingerMs`.
 *
 * Relies on: Node's HTTP server calls `socket.destroySoon()` after a `Connection: close`
 * response (pinned in test/plugins/adapter.test.ts).
 */
/** How long a closing connection keeps reading a client's unread body. */
const LINGER_MS = 2000

/** Makes `socket`, once Node closes it after its response, linger as described above. */
export function lingerOnClose (socket: Socket | null, lingerMs = LINGER_MS): void {
  if (socket === null) return
  const s = socket as Socket & { destroySoon?: () => void }
  s.destroySoon = function lingeringClose (this: Socket) {
    if (this.writable) this.end()
    const timer = setTimeout(() => this.destroy(), lingerMs)
    timer.unref()
    this.once('end', () => { clearTimeout(timer); this.destroy() })
    this.resume()
  }
}

/**
 * The root context, found by what it is rather than by its name: Fastify makes each
 * encapsulated context with `Object.create(parent)`, so a context whose prototype is another
 * Fastify instance is not the root, whatever its plugin is called (nothing of the suite reads
 * `pluginName`, whose format Fastify does not promise). A plugin wrapped with fastify-plugin runs on the
 * instance it was registered on, so in the root it is the root.
 *
 * Relies on: encapsulated contexts are `Object.create(parent)` (pinned in
 * test/plugins/adapter.test.ts); nothing where the Fastify in use has the proposed
 * `fastify.isRoot` (scripts/upstream/fastify-contexts.patch), which it then reads.
 */
export function isRootContext (instance: FastifyInstance): boolean {
  if (hasContextsProposal(instance)) return proposed(instance).isRoot as boolean
  const proto: unknown = Object.getPrototypeOf(instance)
  return proto === null || typeof (proto as { addHook?: unknown }).addHook !== 'function'
}

/**
 * Every encapsulated context made so far below `instance`, depth first. The kernel reads it
 * once, when it is installed, to find contexts made before it: Fastify copies a context's
 * `onRoute` hooks into a child when the child is made, so the kernel's route compiler never
 * sees the routes those contexts declare.
 *
 * Relies on: Fastify keeps the contexts made from an instance in an array under the symbol
 * described `fastify.children` (pinned in test/plugins/adapter.test.ts). Where it is
 * missing, the kernel treats the app as one whose contexts it cannot see (see the guard).
 * Nothing where the Fastify in use has the proposed `fastify.children()`
 * (scripts/upstream/fastify-contexts.patch), which it then reads.
 */
export function contextsBelow (instance: FastifyInstance): FastifyInstance[] | undefined {
  const childrenOf = childrenReader(instance)
  if (childrenOf === undefined) return undefined
  const out: FastifyInstance[] = []
  const walk = (i: FastifyInstance): void => {
    for (const child of childrenOf(i)) {
      out.push(child)
      walk(child)
    }
  }
  walk(instance)
  return out
}

/** How the contexts made from an instance are read: the proposed `children()`, else the symbol. */
function childrenReader (instance: FastifyInstance): ((i: FastifyInstance) => FastifyInstance[]) | undefined {
  if (hasContextsProposal(instance)) {
    return (i) => (proposed(i).children as () => FastifyInstance[]).call(i)
  }
  const key = Object.getOwnPropertySymbols(instance).find((s) => s.description === 'fastify.children')
  if (key === undefined) return undefined
  return (i) => (i as unknown as Record<symbol, FastifyInstance[]>)[key] ?? []
}

/**
 * Whether Fastify installed `handler`, given as the `clientErrorHandler` server option, as the
 * server's 'clientError' listener: how the validation plugin knows, with no route schema to
 * probe, that the app was made with the suite's server options.
 *
 * Relies on: Fastify adds the handler bound to the app, and a bound function is named
 * "bound " and the function's name (ECMAScript Function.prototype.bind); pinned in
 * test/plugins/adapter.test.ts.
 */
export function installedClientErrorHandler (fastify: FastifyInstance, handler: (...args: never[]) => unknown): boolean {
  const name = `bound ${handler.name}`
  return fastify.server.listeners('clientError').some((listener) => listener.name === name)
}

/**
 * Whether `request` is one Fastify's router refused before any route (a path that does not
 * decode, a path parameter over `maxParamLength`, a failed async constraint): the request
 * Fastify hands the `frameworkErrors` server option, and the log controller's
 * `incomingRequest` just before it. No hook of any context runs for it, so the suite dresses
 * its reply there, whoever's `frameworkErrors` answers it.
 *
 * Relies on: Fastify makes that request with no params and no query (both null), in a context
 * without a route URL (`is404`), where a routed or not-found request has params and a query
 * (pinned in test/plugins/adapter.test.ts).
 */
export function isRouterRefusal (request: FastifyRequest): boolean {
  return request.params === null && request.query === null && request.is404
}

/**
 * Whether any route was declared in the app before now: the kernel, installed after routes
 * its onRoute hook never saw, judges them on each request. Fastify has no public list of
 * routes; its router prints its tree, and an empty tree as `(empty tree)`.
 *
 * Relies on: `printRoutes({ commonPrefix: false })` of an app without routes is
 * `(empty tree)`, and lists a route as soon as it is declared (pinned in
 * test/plugins/adapter.test.ts). Should the text change, every app counts as one with routes
 * declared before: the kernel then judges them on each request, which is safe. Nothing
 * where the Fastify in use has the proposed `fastify.routes()` (`declaredRoutes`).
 */
export function routesDeclared (instance: FastifyInstance): boolean {
  const declared = declaredRoutes(instance)
  if (declared !== undefined) return declared.length > 0
  return instance.printRoutes({ commonPrefix: false }).trim() !== '(empty tree)'
}

/** A route as the proposed `fastify.routes()` lists it. */
export interface DeclaredRoute { readonly method: unknown, readonly url: string, readonly config?: unknown }

/**
 * Every route declared so far in the app, in every context, where the Fastify in use lists
 * them; undefined where it does not. The kernel, installed after routes were declared (a
 * `register()` without await), judges those that ask for a convention when the app gets
 * ready: `ready()` rejects, naming the route and the fix, where it would otherwise refuse
 * the route on each request.
 *
 * Relies on: nothing; uses the proposal when the Fastify in use has it (`fastify.routes()`,
 * scripts/upstream/fastify-routes.patch). A `routes` member that is not a function returning
 * an array is not it (@fastify/routes decorates the app with a Map of that name).
 */
export function declaredRoutes (instance: FastifyInstance): DeclaredRoute[] | undefined {
  const routes = proposed(instance).routes
  if (typeof routes !== 'function') return undefined
  const list: unknown = routes.call(instance)
  return Array.isArray(list) ? list as DeclaredRoute[] : undefined
}

/** Fastify's default error handler, read once from a spare instance (it is not exported). */
let fastifyDefaultHandler: unknown
/** The symbols this copy of Fastify keeps an instance's state under, read once from a spare instance. */
let fastifyStateKeys: symbol[] | undefined
const FASTIFY_MAIN = /[\\/]fastify[\\/]fastify\.js$/

/**
 * The copy of Fastify the suite resolves, and the others Node loaded, when `instance` was made
 * by another copy (two installs of fastify, such as one nested under the suite's folder);
 * null when it was made by the suite's. Two copies share no classes and no state: an instance
 * of one holds none of the other's state.
 *
 * Relies on: Fastify keeps an instance's state under symbols of its own module described
 * `fastify.*` (one set per copy, not registered with Symbol.for), and its main module is `fastify/fastify.js` in Node's CommonJS module cache (pinned
 * in test/plugins/fastify-copies.alone.test.ts).
 */
export function otherFastifyCopy (instance: FastifyInstance): { suite: string, others: string[] } | null {
  // Registered symbols (Symbol.for) are every copy's, and a dependency's (avvio's) may be one
  // both copies share: only Fastify's own module symbols tell copies apart.
  fastifyStateKeys ??= Object.getOwnPropertySymbols(Fastify()).filter((key) => Symbol.keyFor(key) === undefined && key.description?.startsWith('fastify.') === true)
  if (fastifyStateKeys.some((key) => key in instance)) return null
  const suite = require.resolve('fastify')
  return { suite, others: Object.keys(require.cache).filter((path) => FASTIFY_MAIN.test(path) && path !== suite) }
}

/**
 * Whether the error handler of `instance`'s context is Fastify's own (no setErrorHandler of
 * the app from that context up to the root): the suite then answers its errors itself.
 *
 * Relies on: every Fastify instance without setErrorHandler exposes one and the same
 * function as `errorHandler` (Fastify exports no other way to name its default handler),
 * and setErrorHandler replaces it (pinned in test/plugins/adapter.test.ts). Nothing where
 * the Fastify in use has the proposed `fastify.hasErrorHandler()`
 * (scripts/upstream/fastify-contexts.patch), which it then asks.
 */
export function hasOnlyFastifysErrorHandler (instance: FastifyInstance): boolean {
  if (hasContextsProposal(instance)) return (proposed(instance).hasErrorHandler as () => boolean).call(instance) === false
  fastifyDefaultHandler ??= Fastify().errorHandler
  return instance.errorHandler === fastifyDefaultHandler
}

/**
 * The object an app's Ajv state is kept under (plugins/services/schema-check.ts: its
 * schema checkers and its pool of compilers): the `ajv` options Fastify hands the validator
 * compiler builder of each context, the same object for every context of one app.
 *
 * Relies on: Fastify passes its `ajv` server options object itself, never a copy, to the
 * validator compiler builder of every context of one app, and another object to another app
 * (pinned in test/plugins/adapter.test.ts). Should it pass copies, each context builds its
 * own checker: more memory, never a schema left unchecked.
 */
export function ajvStateKey (ajvOptions: object): object {
  return ajvOptions
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

/**
 * Puts `gate` in front of the app's request handler: a request the gate answers (it returns
 * true) never reaches Fastify's router, no route and no not-found handler runs for it. The
 * gate is a plain function call on every request: it must decide from what Node parsed.
 *
 * Relies on: Fastify's request handler is the 'request' listener of the server `Fastify()`
 * made (the handler its `serverFactory` option is given to listen with), in place when the
 * first plugin registers (pinned in test/plugins/adapter.test.ts). Listeners added later
 * are not behind the gate.
 */
export function gateRequests (server: Server, gate: (request: IncomingMessage, response: ServerResponse) => boolean): void {
  const handlers = server.listeners('request') as RequestListener[]
  for (const handler of handlers) server.removeListener('request', handler)
  // One handler (Fastify's) is called directly: no iteration on the common request.
  function requestHandlers (this: Server, request: IncomingMessage, response: ServerResponse): void {
    for (let i = 0; i < handlers.length; i++) handlers[i].call(this, request, response)
  }
  const only = handlers.length === 1 ? handlers[0] : requestHandlers
  server.on('request', function gatedRequest (this: Server, request: IncomingMessage, response: ServerResponse) {
    if (!gate(request, response)) only.call(this, request, response)
  })
  gated.add(server)
}

/** The servers `gateRequests` stands in front of (keyed by the server: no listener is recognised by its name). */
const gated = new WeakSet<Server>()

/** True when `gateRequests` already stands in front of the server's request handler. */
export function isGated (server: Server): boolean {
  return gated.has(server)
}

/**
 * RFC 9112 3.2: Node's HTTP server answers an HTTP/1.1 request without Host itself, with a
 * bare 400 no app can dress. This hands the check to the app: Node then emits the request,
 * and the caller must refuse it (the gate above). Returns whether Node was checking (false
 * when the app created the server with `requireHostHeader: false`, a choice the caller
 * keeps, and on an HTTP/2 server, which has no such check).
 *
 * Relies on: Node reads the server's `requireHostHeader` property (its option of that name)
 * on each request, before 'checkExpectation', 'checkContinue' and 'request' (pinned in
 * test/plugins/adapter.test.ts).
 */
export function takeOverHostCheck (server: Server): boolean {
  const s = server as Server & { requireHostHeader?: boolean }
  if (s.requireHostHeader !== true) return false
  s.requireHostHeader = false
  return true
}

/**
 * RFC 9110 10.1.1: `100 (Continue)` for a request Node handed over through its documented
 * 'checkContinue' event (where Node no longer sends the 100 itself), written when its body is
 * first read: by Fastify's body reader, or by any parser, hook or handler that reads the
 * request. Nothing runs before then, so a request answered without its body being read (a
 * refusal, a 404 of a GET) gets its final status and no 100, which tells the client not to
 * send the body.
 *
 * Relies on: whatever reads a request body first adds a 'data' or 'readable' listener to it
 * (Fastify's body reader, `pipe()`, `stream.pipeline()`, async iteration), which the
 * documented 'newListener' event shows (pinned in test/plugins/adapter.test.ts).
 */
export function continueOnFirstRead (request: IncomingMessage, response: ServerResponse): void {
  request.on('newListener', function continueOnRead (event: string | symbol) {
    if (event !== 'data' && event !== 'readable') return
    request.removeListener('newListener', continueOnRead)
    // A final answer already written told the client not to send the body.
    if (!response.headersSent) response.writeContinue()
  })
}

/**
 * Sends the string payload a reply is given as it is, under the Content-Type the reply set:
 * the suite's error bodies are strings (Node writes a string body with the head in one
 * write), and the envelope's Content-Type is exactly `application/json`.
 *
 * Relies on: `reply.send(string)` on a reply with its own serializer (`reply.serializer()`)
 * passes the string through that serializer, and does not add `charset=utf-8` to a JSON
 * Content-Type, which it does without one (pinned in test/plugins/adapter.test.ts).
 */
export function sendAsGiven (reply: FastifyReply): void {
  reply.serializer(asGiven)
}

function asGiven (payload: string): string {
  return payload
}

/**
 * RFC 9110 10.1.1: hands every `Expect: 100-continue` request to the app's request handler
 * as any other request, with the 100 written when its body is first read
 * (`continueOnFirstRead`). Node's documented 'checkContinue' event takes the request from
 * the 'request' event; the listener gives it back by emitting 'request' itself. One listener
 * per server: an app's own 'checkContinue' listener, added before or after this one,
 * answers the expectation (and hands the request over) alone.
 *
 * Relies on: a request emitted on the server's 'request' event by another listener is
 * served by Fastify's handler as one Node emitted (Node documents the 'checkContinue' event,
 * not that a listener may re-emit 'request'); pinned in test/plugins/adapter.test.ts.
 */
export function continueRequestsOnFirstRead (server: Server): void {
  if (server.listenerCount('checkContinue') > 0) return
  server.on('checkContinue', function handOverContinue (request: IncomingMessage, response: ServerResponse) {
    // A listener the app added after this one answers the expectation (and hands the request over) alone.
    if (server.listenerCount('checkContinue') > 1) return
    continueOnFirstRead(request, response)
    server.emit('request', request, response)
  })
}

/**
 * RFC 9110 10.1.1: `answer` writes the answer to a request whose `Expect` is not
 * 100-continue, in place of Node's bare 417 (Node's documented 'checkExpectation' event).
 * An app's own 'checkExpectation' listener, there before, is left to answer alone.
 *
 * Relies on: Node emits 'checkExpectation' instead of 'request' for such a request, after
 * its Host check (pinned in test/plugins/adapter.test.ts); the event is documented, its
 * order against the Host check is not.
 */
export function answerExpectations (server: Server, answer: (request: IncomingMessage, response: ServerResponse) => void): void {
  if (server.listenerCount('checkExpectation') > 0) return
  server.on('checkExpectation', function answerExpectation (request: IncomingMessage, response: ServerResponse) {
    answer(request, response)
  })
}

/**
 * RFC 9112 2.3: the major version of a request line Node's parser refused for its version
 * (`HTTP/3.0`), or null when the bytes there are not `HTTP/<digit>.<digit>`.
 *
 * Relies on: Node's parser (llhttp) refuses a version it does not read with
 * `HPE_INVALID_VERSION` and stops right after the version's last digit, so the error's
 * `bytesParsed` (documented: "the bytes count of request packet that Node.js may have parsed
 * correctly") points there in its `rawPacket` (pinned in test/plugins/adapter.test.ts).
 * Should it stop elsewhere, this gives null and the answer is the 400 of a malformed request.
 */
export function refusedMajorVersion (error: Error & { rawPacket?: unknown, bytesParsed?: unknown }): number | null {
  const packet = error.rawPacket
  const at = error.bytesParsed
  if (!Buffer.isBuffer(packet) || typeof at !== 'number' || at < 3 || at > packet.length) return null
  const major = packet[at - 3] - 0x30
  const minor = packet[at - 1] - 0x30
  return packet[at - 2] === 0x2e && major >= 0 && major <= 9 && minor >= 0 && minor <= 9 ? major : null
}

/**
 * Whether `url` is @fastify/cors's preflight route (`OPTIONS *`, which Fastify keeps as
 * `/*`) in `fastify`'s context: it takes OPTIONS on every path, a plain one included. An
 * app's own catch-all OPTIONS route, without @fastify/cors, is not.
 *
 * Relies on: @fastify/cors declares its preflight route as `OPTIONS *` and, in the same
 * context, the request decorator `corsPreflightEnabled` (neither is its documented API);
 * pinned in test/plugins/adapter.test.ts. Should either change, the suite declares no
 * OPTIONS route beside it, and @fastify/cors answers OPTIONS as it does without the suite.
 */
export function isCorsPreflightRoute (fastify: FastifyInstance, url: string): boolean {
  return (url === '*' || url === '/*') && fastify.hasRequestDecorator('corsPreflightEnabled')
}

/** Fastify's own error body: what its default error handler writes. */
export interface FastifyErrorBody { statusCode: number, error: string, message: string, code?: string }

/** The longest payload read as Fastify's own error body. */
const MAX_FASTIFY_ERROR_BYTES = 64 * 1024

/**
 * The payload Fastify's default error handler wrote, read back: its status, code and message,
 * or null for any other payload (one the app's handler wrote itself).
 *
 * Relies on: Fastify's default error handler serializes an error as the JSON object
 * `{ statusCode, code, error, message }` and no other member, a string payload in onSend
 * (the shape is in Fastify's docs, Reply: "Errors"; that no member is ever added is not
 * promised); pinned in test/plugins/adapter.test.ts. Should it change, the suite leaves that
 * answer as Fastify wrote it.
 */
export function readFastifyErrorBody (payload: string): FastifyErrorBody | null {
  if (payload.length > MAX_FASTIFY_ERROR_BYTES) return null
  let body: unknown
  try {
    body = JSON.parse(payload)
  } catch {
    return null
  }
  return isFastifyErrorBody(body) ? body : null
}

function isFastifyErrorBody (body: unknown): body is FastifyErrorBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false
  const b = body as Record<string, unknown>
  if (typeof b.statusCode !== 'number' || typeof b.message !== 'string' || typeof b.error !== 'string') return false
  for (const key of Object.keys(b)) {
    if (key !== 'statusCode' && key !== 'message' && key !== 'error' && key !== 'code') return false
  }
  return b.code === undefined || typeof b.code === 'string'
}
