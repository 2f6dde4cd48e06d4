/**
 * The one place the suite relies on Fastify behaviour that has no public API. Each function
 * names what it relies on; test/plugins/fastify-adapter.test.ts pins that behaviour, so a
 * Fastify release that changes it fails a test instead of opening a route.
 */
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
