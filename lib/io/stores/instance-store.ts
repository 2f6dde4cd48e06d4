/**
 * Past instances kept as delta bases (RFC 3229 5.2, 7: the server must still hold the
 * base instance the client names in If-None-Match to send a delta against it).
 * Keyed by a string the delta-encoding plugin builds from the request URL, the
 * representation's Content-Type and the entity-tag, so two resources (or two
 * representations) with the same entity-tag never mix.
 */
export interface InstanceStore {
  /** The instance stored under `key`, or undefined when none is (never stored, evicted, expired). */
  get: (key: string) => Promise<Buffer | undefined>
  /** Stores `value` under `key`; `ttlMs` (optional) bounds how long it is kept. */
  set: (key: string, value: Buffer, ttlMs?: number) => Promise<void>
}

/** Default bound of the in-memory store: 64 MiB of instances. */
export const DEFAULT_INSTANCE_STORE_BYTES = 64 * 1024 * 1024

/** Default largest single instance a store keeps: 8 MiB (one VCDIFF window, RFC 3284 4.2). */
export const DEFAULT_MAX_INSTANCE_BYTES = 8 * 1024 * 1024

export function checkByteCount (name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer (bytes)`)
  return value
}

export function checkTtl (ttlMs: number | undefined): number | undefined {
  if (ttlMs === undefined) return undefined
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError('ttl must be a positive number of milliseconds')
  return ttlMs
}
