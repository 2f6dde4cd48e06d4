/**
 * A store behind ioredis, while Redis is away. ioredis keeps every command sent while it is
 * not connected in its offline queue (its `enableOfflineQueue`, on by default), and sends
 * them all once it is back: with a plain `new Redis(url)`, each request to a suite whose
 * Redis is unreachable added one more command that nobody awaited any longer (the store's
 * deadline had answered the request). A store therefore bounds the commands it leaves
 * waiting while its client is not `ready` (ioredis's public `status`):
 *
 * - while the client makes its first connection (`wait`, `connecting`, `connect`, and no
 *   other state seen yet), up to MAX_STARTING_COMMANDS wait for it, as ioredis means its
 *   offline queue to be used: the requests of a start are not refused for the moments of
 *   connecting;
 * - once the client was ready or lost its connection, one command waits, to be sent when
 *   Redis is back.
 *
 * The others fail at once with StoreUnavailableError, the store failure the plugins already
 * answer (Digest refuses, delta encoding answers the whole instance), without waiting for
 * the deadline. A client that reports no `status` (not ioredis) is sent every command.
 */

/** Commands one store leaves waiting in its client's offline queue once the client was ready or lost Redis. */
export const MAX_OFFLINE_COMMANDS = 1
/** Commands one store leaves waiting while its client makes its first connection. */
export const MAX_STARTING_COMMANDS = 64

/** ioredis's states of a first connection. */
const STARTING: ReadonlySet<string> = new Set(['wait', 'connecting', 'connect'])

/** ioredis's connection state, read only: `ready` when commands are sent at once. */
export interface ConnectionStatus {
  readonly status?: string
}

/** A store operation not sent: the client is not connected and already holds the store's waiting commands. */
export class StoreUnavailableError extends Error {
  readonly code = 'ERR_STORE_UNAVAILABLE'
  constructor (what: string, status: string, waiting: number) {
    super(`${what} was not sent: the Redis client is ${status}, not ready, and already holds ${waiting === 1 ? 'a command' : `${waiting} commands`} of this store`)
    this.name = 'StoreUnavailableError'
  }
}

/** Sends a store's commands at once while its client is ready, and a bounded number while it is not. */
export class OfflineGate {
  readonly #client: ConnectionStatus
  #waiting = 0
  /** the client was seen ready, or in a state after its first connection */
  #started = false

  constructor (client: ConnectionStatus) {
    this.#client = client
  }

  /** `send()`'s promise, or a StoreUnavailableError without calling it. */
  run<T> (what: string, send: () => Promise<T>): Promise<T> {
    const status = this.#client.status
    if (typeof status !== 'string') return send()
    if (status === 'ready') {
      this.#started = true
      return send()
    }
    if (!STARTING.has(status)) this.#started = true
    if (this.#waiting >= (this.#started ? MAX_OFFLINE_COMMANDS : MAX_STARTING_COMMANDS)) {
      return Promise.reject(new StoreUnavailableError(what, status, this.#waiting))
    }
    this.#waiting++
    const release = (): void => { this.#waiting-- }
    const pending = Promise.resolve().then(send)
    pending.then(release, release)
    return pending
  }
}
