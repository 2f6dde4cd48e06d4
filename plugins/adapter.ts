/**
 * The one place the suite relies on Fastify or Node behaviour that has no public API. Each
 * function names what it relies on; test/plugins/adapter.test.ts pins that behaviour, so a
 * Fastify or Node release that changes it fails a test instead of opening a route or
 * resetting a connection.
 */
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * The outermost instance of the app `instance` belongs to.
 *
 * Relies on: an encapsulation context is created from its parent with `Object.create`, so
 * the parent is the prototype of the child, and every instance of one app shares `server`.
 * The suite needs the root to guard routes of the whole app (root routes and contexts made
 * after the suite was first registered), not only those of the context that registered it.
 */
export function rootOf (instance: FastifyInstance): FastifyInstance {
  let root = instance
  for (;;) {
    const proto = Object.getPrototypeOf(root) as FastifyInstance | null
    if (proto === null || typeof (proto as { addHook?: unknown }).addHook !== 'function' || proto.server !== instance.server) return root
    root = proto
  }
}

/**
 * A value kept on an encapsulation context, as seen from `instance`: its own, else its
 * nearest ancestor's.
 *
 * Relies on: a child context inherits its parent's properties (it is created with
 * `Object.create(parent)`), which is how a child sees the conventions its ancestors
 * registered and may register its own.
 */
export function contextValue<T> (instance: FastifyInstance, key: symbol): T | undefined {
  return (instance as unknown as Record<symbol, T | undefined>)[key]
}

/** The value `instance`'s own context keeps (not an ancestor's). */
export function ownContextValue<T> (instance: FastifyInstance, key: symbol): T | undefined {
  return Object.prototype.hasOwnProperty.call(instance, key) ? contextValue<T>(instance, key) : undefined
}

export function setContextValue<T> (instance: FastifyInstance, key: symbol, value: T): void {
  Object.defineProperty(instance, key, { value, writable: true, configurable: true, enumerable: false })
}

/**
 * True when `handler` (a context's `fastify.errorHandler`) is Fastify's own default, i.e.
 * the app set no error handler from that context up to the root.
 *
 * Relies on: Fastify's default handler is named `defaultErrorHandler`, and every handler
 * set with `setErrorHandler` is bound (its name starts with `bound `), so an app's handler
 * is never taken for it, whatever its name.
 */
export function isFastifyDefaultErrorHandler (handler: { name: string }): boolean {
  return handler.name === 'defaultErrorHandler'
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
