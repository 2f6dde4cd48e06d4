/**
 * The embedded default NonceCountStore: a bounded LRU of nonces, each with a
 * sliding window of used nonce-counts (the anti-replay window of RFC 4303 3.4.3,
 * applied to the RFC 7616 nc). Counts may arrive out of order within the window;
 * counts at or below `highest - window` are refused as used.
 *
 * Eviction never opens a replay: when a nonce that is still valid is evicted, the
 * store remembers its expiry, and refuses (as used) any nonce it has no record of
 * whose expiry is not later than that. Such a nonce can only have been issued
 * before the eviction; the Digest core answers it with `stale=true`, and the client
 * retries with a fresh nonce, which expires later and is accepted.
 *
 * Its generation (see NonceCountStore) is made when the store is: a process that restarts
 * with the same Digest secret has a new store and refuses every nonce of the old one as
 * stale, whatever their counts were.
 *
 * The LRU is lru-cache's (bounded by count, its `dispose` telling evictions): O(1) per
 * eviction, where a Map's first key after many deletions costs a scan of them (20-26 µs a
 * new nonce at the bound of 10000, measured).
 */
import { LRUCache } from 'lru-cache'
import { checkWindow, DEFAULT_NONCE_COUNT_WINDOW, MAX_NONCE_COUNT, newGeneration, type NonceCountStore } from './nonce-store'

/** Options of `MemoryNonceStore`. */
export interface MemoryNonceStoreOptions {
  /** Most nonces tracked at once (default 10000); the least recently used is dropped. */
  maxNonces?: number
  /** Counts below the highest seen that are still accepted (default 256). */
  window?: number
  /** Clock in milliseconds, for tests (default Date.now). */
  now?: () => number
}

interface Entry {
  /** highest count seen */
  high: number
  /** bit (count % window) is set when that count within the window was used */
  bits: Uint32Array
  expiresAt: number
}

/** Expiry times computed by different calls for one nonce differ by the time between them. */
const EXPIRY_SLACK_MS = 1000

export class MemoryNonceStore implements NonceCountStore {
  readonly #window: number
  readonly #now: () => number
  readonly #entries: LRUCache<string, Entry>
  readonly #generation = newGeneration()
  #horizon = -Infinity

  constructor (options: MemoryNonceStoreOptions = {}) {
    const max = options.maxNonces ?? 10000
    if (!Number.isInteger(max) || max < 1) throw new RangeError('maxNonces must be a positive integer')
    this.#window = checkWindow(options.window ?? DEFAULT_NONCE_COUNT_WINDOW)
    this.#now = options.now ?? Date.now
    this.#entries = new LRUCache<string, Entry>({
      max,
      // The least recently used nonce dropped: remember its expiry if it is still valid (see the file header).
      dispose: (entry, _nonce, reason) => {
        if (reason === 'evict' && entry.expiresAt > this.#now() && entry.expiresAt > this.#horizon) this.#horizon = entry.expiresAt
      }
    })
  }

  /** Number of nonces currently tracked. */
  get size (): number {
    return this.#entries.size
  }

  /** The generation of this store's state: made with the store, lost with it. */
  generation (): string {
    return this.#generation
  }

  async seen (nonce: string, nc: number, ttlMs: number, generation?: string): Promise<boolean> {
    return this.seenSync(nonce, nc, ttlMs, generation)
  }

  /** Synchronous form of `seen`. */
  seenSync (nonce: string, nc: number, ttlMs: number, generation?: string): boolean {
    // RFC 7616 3.4: nc is eight hex digits, and the first request with a nonce sends 1
    if (!Number.isInteger(nc) || nc < 1 || nc > MAX_NONCE_COUNT) return true
    // A nonce of another store's state: this one has no record of its counts (RFC 7616 5.4).
    if (generation !== undefined && generation !== this.#generation) return true
    const now = this.#now()
    const w = this.#window
    let entry = this.#entries.get(nonce) // now the most recently used
    if (entry !== undefined && entry.expiresAt <= now) {
      this.#entries.delete(nonce)
      entry = undefined
    }
    if (entry === undefined) {
      const expiresAt = now + Math.max(0, ttlMs)
      // a nonce unknown here that expires no later than an evicted one may have been evicted
      if (expiresAt <= this.#horizon + EXPIRY_SLACK_MS) return true
      entry = { high: nc, bits: new Uint32Array(Math.ceil(w / 32)), expiresAt }
      setBit(entry.bits, nc % w)
      this.#entries.set(nonce, entry)
      return false
    }
    if (nc > entry.high) {
      if (nc - entry.high >= w) {
        entry.bits.fill(0)
      } else {
        for (let c = entry.high + 1; c < nc; c++) clearBit(entry.bits, c % w)
      }
      entry.high = nc
      setBit(entry.bits, nc % w)
      return false
    }
    if (nc <= entry.high - w) return true
    const p = nc % w
    if (testBit(entry.bits, p)) return true
    setBit(entry.bits, p)
    return false
  }
}

function setBit (bits: Uint32Array, p: number): void {
  bits[p >>> 5] |= 1 << (p & 31)
}

function clearBit (bits: Uint32Array, p: number): void {
  bits[p >>> 5] &= ~(1 << (p & 31))
}

function testBit (bits: Uint32Array, p: number): boolean {
  return (bits[p >>> 5] & (1 << (p & 31))) !== 0
}
