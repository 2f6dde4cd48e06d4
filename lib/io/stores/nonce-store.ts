import { randomBytes } from 'node:crypto'

/**
 * Digest nonce-count bookkeeping (RFC 7616 3.4 and 5.4: "the server ... SHOULD
 * verify that the nc value has not been used before with this nonce" to refuse
 * replays). Nonces themselves are stateless; only the counts used with each
 * nonce are shared state, kept behind this interface so that a fleet can share them.
 *
 * A store that loses its state (a Redis restart or flush, a process restart with the
 * memory store) would take every nonce issued before the loss as unused. So a store has a
 * generation: a random id it makes when its state begins and that is lost with the state
 * (Redis keeps it in a key of its own, bound to the server process; the memory store in
 * the process). Every nonce carries the generation it was issued under (under the nonce's
 * HMAC), and the store refuses, atomically with the count check, a nonce of any other
 * generation: counts are only ever judged against the state that recorded them. The Digest
 * core answers such a nonce with `stale=true` (RFC 7616 3.3), the client retries with the
 * fresh nonce of that challenge, which carries the current generation.
 */
export interface NonceCountStore {
  /**
   * Records that `nc` was used with `nonce` and tells whether it had been used
   * before. Must be atomic: of two concurrent calls with the same pair, at most one
   * resolves `false`. Counts may arrive out of order (browsers send requests in
   * parallel on several connections); a store accepts any unused count within its
   * window and treats counts older than its window as used.
   *
   * @param nonce the nonce as the client sent it
   * @param nc the nonce-count, 1 to 0xffffffff
   * @param ttlMs how long the nonce stays valid from now; the record may be dropped after
   * @param generation the store generation the nonce was issued under (16 hex digits); a
   * store with a generation answers true when it is not the current one
   * @returns true when (nonce, nc) was already used (a replay), or cannot be known not to
   * have been (the nonce predates the store's state), false when it is new
   */
  seen: (nonce: string, nc: number, ttlMs: number, generation?: string) => Promise<boolean>
  /**
   * The generation new nonces are issued under: the current one as far as this process
   * knows (16 lower-case hex digits). A store that learns of a newer one (another instance
   * of a fleet made it after a loss) answers `seen` for the old one with true and returns
   * the newer one from then on. A store without it gives no protection against its own loss.
   */
  generation?: () => string
  /**
   * Learns the current generation now (a network store asks its server); the auth plugin
   * calls it once when the app starts. Optional.
   */
  refresh?: () => Promise<unknown>
}

/** The generation of a store that does not know its own yet: never a current one. */
export const UNKNOWN_GENERATION = '0000000000000000'

/** A new random generation: 64 bits, 16 lower-case hex digits, never UNKNOWN_GENERATION. */
export function newGeneration (): string {
  let g: string
  do g = randomBytes(8).toString('hex'); while (g === UNKNOWN_GENERATION)
  return g
}

/** True for 16 lower-case hex digits. */
export function isGeneration (value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{16}$/.test(value)
}

/** Default number of counts below the highest one seen that are still accepted. */
export const DEFAULT_NONCE_COUNT_WINDOW = 256

/** Largest nonce-count value: eight hex digits (RFC 7616 3.4, nc-value = 8LHEX). */
export const MAX_NONCE_COUNT = 0xffffffff

export function checkWindow (window: number): number {
  if (!Number.isInteger(window) || window < 1 || window > 65536) {
    throw new RangeError('nonce-count window must be an integer from 1 to 65536')
  }
  return window
}
