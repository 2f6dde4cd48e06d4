/**
 * Deadlines for store operations. A store behind a network (Redis) can stop answering
 * without closing its connection, and a client library may queue commands while it
 * reconnects: without a deadline of its own, a request waiting on such a store waits as
 * long as the client library decides (ioredis with its defaults: most of a minute). Every
 * store operation the suite awaits is bounded by one of these; the caller then decides
 * (Digest refuses, delta encoding answers without a delta).
 */

/** Default longest wait for one store operation, in ms. */
export const DEFAULT_STORE_TIMEOUT_MS = 1000

/** Largest deadline accepted: a minute (a longer wait is no deadline for a request). */
export const MAX_STORE_TIMEOUT_MS = 60_000

/** A store operation that did not settle within its deadline. */
export class StoreTimeoutError extends Error {
  readonly code = 'ERR_STORE_TIMEOUT'
  readonly timeoutMs: number
  constructor (what: string, timeoutMs: number) {
    super(`${what} did not answer within ${timeoutMs} ms`)
    this.name = 'StoreTimeoutError'
    this.timeoutMs = timeoutMs
  }
}

/** Checks a deadline option once, at creation: an integer number of ms from 1 to a minute. */
export function checkTimeout (name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_STORE_TIMEOUT_MS) {
    throw new RangeError(`${name} must be an integer number of milliseconds from 1 to ${MAX_STORE_TIMEOUT_MS}`)
  }
  return value
}

/**
 * `pending`, or a StoreTimeoutError once `timeoutMs` have passed without it settling. The
 * timer does not keep the process alive, and a late answer (or failure) of `pending` is
 * absorbed, never an unhandled rejection.
 */
export function withDeadline<T> (pending: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(what, timeoutMs)), timeoutMs)
    timer.unref()
  })
  const settled = Promise.resolve(pending)
  settled.catch(() => {})
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer))
}
