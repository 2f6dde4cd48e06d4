/**
 * InstanceStore on Redis, for a fleet of instances sharing delta bases: any instance
 * can answer a delta request against a base another one served.
 *
 * One string key per instance: `<prefix><sha256 of the store key>` (URLs can be long;
 * the digest bounds the key length), written with `SET key value PX ttl`. Redis bounds
 * the total itself (its `maxmemory` with an LRU policy); this adapter bounds each entry
 * and gives every key an expiry.
 *
 * The client is passed in by the caller: any object with ioredis's `getBuffer(key)` and
 * `set(key, value, 'PX', ms)` will do. Every call is bounded by `timeoutMs`, so a Redis
 * that is down or slow costs a request at most that long; the plugin then answers without
 * a delta. While ioredis is not connected, the store leaves at most one command in its
 * offline queue and fails the others at once (lib/io/stores/offline.ts).
 */
import { createHash } from 'node:crypto'
import { checkByteCount, checkTtl, DEFAULT_MAX_INSTANCE_BYTES, type InstanceStore } from './instance-store'
import { checkTimeout, withDeadline } from './deadline'
import { OfflineGate, type ConnectionStatus } from './offline'

/** The part of an ioredis client this adapter uses (its `status` when it has one: lib/io/stores/offline.ts). */
export interface RedisBufferClient extends ConnectionStatus {
  getBuffer: (key: string) => Promise<Buffer | null>
  set: (key: string, value: Buffer, mode: 'PX', ms: number) => Promise<unknown>
}

/** Options of `RedisInstanceStore`. */
export interface RedisInstanceStoreOptions {
  /** Key prefix (default `fhc:instance:`). */
  prefix?: string
  /** Expiry of an instance stored without a ttl, in ms (default one day). */
  ttlMs?: number
  /** Largest single instance kept (default 8 MiB); larger ones are not stored. */
  maxEntryBytes?: number
  /** Longest wait for one Redis command, in ms (default 500). */
  timeoutMs?: number
}

export const DEFAULT_REDIS_INSTANCE_TTL_MS = 24 * 60 * 60 * 1000

export class RedisInstanceStore implements InstanceStore {
  readonly #client: RedisBufferClient
  readonly #prefix: string
  readonly #ttl: number
  readonly #maxEntryBytes: number
  readonly #timeout: number
  readonly #gate: OfflineGate

  constructor (client: RedisBufferClient, options: RedisInstanceStoreOptions = {}) {
    if (client === null || typeof client !== 'object' || typeof client.getBuffer !== 'function' || typeof client.set !== 'function') {
      throw new TypeError('RedisInstanceStore needs a client with getBuffer(key) and set(key, value, \'PX\', ms) methods (ioredis)')
    }
    this.#client = client
    this.#prefix = options.prefix ?? 'fhc:instance:'
    this.#ttl = checkTtl(options.ttlMs) ?? DEFAULT_REDIS_INSTANCE_TTL_MS
    this.#maxEntryBytes = checkByteCount('maxEntryBytes', options.maxEntryBytes ?? DEFAULT_MAX_INSTANCE_BYTES)
    this.#timeout = checkTimeout('timeoutMs', options.timeoutMs ?? 500)
    this.#gate = new OfflineGate(client)
  }

  /** The Redis key an instance is kept under. */
  redisKey (key: string): string {
    return this.#prefix + createHash('sha256').update(key).digest('base64url')
  }

  async get (key: string): Promise<Buffer | undefined> {
    const value = await withDeadline(this.#gate.run('Redis GET', () => this.#client.getBuffer(this.redisKey(key))), this.#timeout, 'Redis GET')
    return value === null || value === undefined ? undefined : value
  }

  async set (key: string, value: Buffer, ttlMs?: number): Promise<void> {
    const ttl = checkTtl(ttlMs) ?? this.#ttl
    if (value.length > this.#maxEntryBytes) return
    await withDeadline(this.#gate.run('Redis SET', () => this.#client.set(this.redisKey(key), value, 'PX', Math.max(1, Math.ceil(ttl)))), this.#timeout, 'Redis SET')
  }
}
