/**
 * Digest nonce-count bookkeeping (RFC 7616 3.4 and 5.4: "the server ... SHOULD
 * verify that the nc value has not been used before with this nonce" to refuse
 * replays). Nonces themselves are stateless; only the counts used with each
 * nonce are shared state, kept behind this interface so that a fleet can share them.
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
   * @returns true when (nonce, nc) was already used (a replay), false when it is new
   */
  seen: (nonce: string, nc: number, ttlMs: number) => Promise<boolean>
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
