/**
 * The embedded default InstanceStore: an LRU bounded by the total bytes it holds, kept by
 * lru-cache (its `maxSize`, each entry charged its cost; O(1) eviction, where a Map's first
 * key after many deletions costs a scan of them: 4-7 µs a set at the bound, measured).
 *
 * Each entry is charged its value's length, twice its key's length (UTF-16) and a fixed
 * overhead for the Map entry and the Buffer object, so `bytes` never exceeds `maxBytes`
 * whatever the mix of instance sizes. Values are copied into buffers of their own: a
 * small Buffer made from a string is a view of an 8 KiB shared slab, and keeping the
 * view would keep (and hide) the whole slab.
 */
import { LRUCache } from 'lru-cache'
import {
  checkByteCount, checkTtl, DEFAULT_INSTANCE_STORE_BYTES, DEFAULT_MAX_INSTANCE_BYTES, type InstanceStore
} from './instance-store'

/** Options of `MemoryInstanceStore`. */
export interface MemoryInstanceStoreOptions {
  /** Bound of the bytes held, entries and keys included (default 64 MiB). */
  maxBytes?: number
  /** Largest single instance kept (default 8 MiB, at most `maxBytes`); larger ones are not stored. */
  maxEntryBytes?: number
  /** Clock in milliseconds, for tests (default Date.now). */
  now?: () => number
}

interface Entry {
  value: Buffer
  cost: number
  expiresAt: number
}

/** What one entry costs beyond its value and key: Map slot, Entry object, Buffer and ArrayBuffer objects, allocator bookkeeping (measured by bench/delta.js). */
export const ENTRY_OVERHEAD = 512

export class MemoryInstanceStore implements InstanceStore {
  readonly #maxBytes: number
  readonly #maxEntryBytes: number
  readonly #now: () => number
  readonly #entries: LRUCache<string, Entry>

  constructor (options: MemoryInstanceStoreOptions = {}) {
    this.#maxBytes = checkByteCount('maxBytes', options.maxBytes ?? DEFAULT_INSTANCE_STORE_BYTES)
    this.#maxEntryBytes = Math.min(this.#maxBytes, checkByteCount('maxEntryBytes', options.maxEntryBytes ?? DEFAULT_MAX_INSTANCE_BYTES))
    this.#now = options.now ?? Date.now
    // The least recently used go first; an expired entry is dropped when it is read.
    this.#entries = new LRUCache<string, Entry>({ maxSize: this.#maxBytes, sizeCalculation: (entry) => entry.cost })
  }

  /** Bytes currently charged (values, keys and overhead); never above `maxBytes`. */
  get bytes (): number {
    return this.#entries.calculatedSize
  }

  /** Number of instances held. */
  get size (): number {
    return this.#entries.size
  }

  get maxBytes (): number {
    return this.#maxBytes
  }

  async get (key: string): Promise<Buffer | undefined> {
    return this.getSync(key)
  }

  /** Synchronous form of `get`. */
  getSync (key: string): Buffer | undefined {
    const entry = this.#entries.get(key) // now the most recently used
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  async set (key: string, value: Buffer, ttlMs?: number): Promise<void> {
    this.setSync(key, value, ttlMs)
  }

  /** Synchronous form of `set`. Returns false when the instance is too large to keep. */
  setSync (key: string, value: Buffer, ttlMs?: number): boolean {
    const ttl = checkTtl(ttlMs)
    const cost = value.length + 2 * key.length + ENTRY_OVERHEAD
    this.delete(key)
    if (value.length > this.#maxEntryBytes || cost > this.#maxBytes) return false
    const own = Buffer.allocUnsafeSlow(value.length)
    value.copy(own)
    // lru-cache drops the least recently used until the bytes are within maxBytes again.
    this.#entries.set(key, { value: own, cost, expiresAt: ttl === undefined ? Infinity : this.#now() + ttl })
    return true
  }

  /** Drops the instance stored under `key`, if any. */
  delete (key: string): void {
    this.#entries.delete(key)
  }
}
