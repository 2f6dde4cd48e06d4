/**
 * NonceCountStore on Redis, for a fleet of instances sharing Digest nonces.
 *
 * One hash per nonce (`<prefix><nonce>`): field `h` holds the highest count seen,
 * and one field per used count within the window. One Lua script does the whole
 * test-and-set, so it is atomic (Redis runs a script without interleaving), and
 * sets the key's expiry to the nonce's remaining lifetime. The semantics equal
 * MemoryNonceStore's window: out-of-order counts within the window are accepted
 * once, counts at or below `highest - window` are refused. A hash never holds more
 * than `window + 1` fields.
 *
 * The store's generation (see NonceCountStore) lives in one more key,
 * `<prefix>#generation`, as `<generation>:<run_id>`: the script reads it in the same atomic
 * step as the counts, and makes a new one (the caller's random candidate) when the key is
 * gone (FLUSHALL, FLUSHDB, a restart without persistence) or was written by another server
 * process (a restart that restored an older snapshot, a failover to a replica that had not
 * received the latest counts: Redis gives every server process a new run_id). A nonce of
 * any other generation is refused (RFC 7616 5.4: its counts cannot be checked). Counts can then only be judged against records written
 * by this very server process since it made the generation, and within one process Redis
 * drops a record only when it expires (after its nonce) or is evicted: the Redis that holds
 * nonce counts must not evict (`maxmemory-policy noeviction`, Redis's default). In Redis
 * Cluster both keys must hash to one slot: give the prefix a hash tag (`{fhc}:digest-nc:`).
 *
 * Every call is bounded by `timeoutMs` (default 1 s): a Redis that is down, or that
 * accepts and never answers, costs a request at most that long; the auth plugin then
 * refuses the request (fail closed). While ioredis is not connected, the store leaves at most
 * one command in its offline queue and fails the others at once (lib/io/stores/offline.ts).
 *
 * The client is passed in by the caller: any object with ioredis's
 * `eval(script, numkeys, ...args)` (and optionally `evalsha`) will do.
 */
import { createHash } from 'node:crypto'
import {
  checkWindow, DEFAULT_NONCE_COUNT_WINDOW, isGeneration, MAX_NONCE_COUNT, newGeneration, UNKNOWN_GENERATION, type NonceCountStore
} from './nonce-store'
import { checkTimeout, DEFAULT_STORE_TIMEOUT_MS, withDeadline } from './deadline'
import { OfflineGate, type ConnectionStatus } from './offline'

/** The part of an ioredis client this adapter uses (its `status` when it has one: lib/io/stores/offline.ts). */
export interface RedisScriptClient extends ConnectionStatus {
  eval: (script: string, numkeys: number, ...args: Array<string | number>) => Promise<unknown>
  evalsha?: (sha1: string, numkeys: number, ...args: Array<string | number>) => Promise<unknown>
}

/** Options of `RedisNonceStore`. */
export interface RedisNonceStoreOptions {
  /** Key prefix (default `fhc:digest-nc:`). */
  prefix?: string
  /** Counts below the highest seen that are still accepted (default 256). */
  window?: number
  /** Longest wait for one check, in ms (default 1000); then `seen` rejects with a StoreTimeoutError. */
  timeoutMs?: number
  /** Clock in milliseconds, for tests (default Date.now). */
  now?: () => number
}

/**
 * How old the generation this process knows may be before a new nonce asks Redis again (in
 * the background): an instance that verifies nothing (a load balancer sends it no
 * credentials) still learns, within this long, of a generation another instance made.
 */
const GENERATION_RECHECK_MS = 1000

// The store's generation, for one server process (KEYS[1] the generation key, ARGV[1] a new
// random generation, used when the key is gone or another server process wrote it).
const GENERATION = `
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)') or ''
local current = redis.call('GET', KEYS[1])
local g
if current and string.sub(current, 18) == run then
  g = string.sub(current, 1, 16)
else
  g = ARGV[1]
  redis.call('SET', KEYS[1], g .. ':' .. run)
end
`
// KEYS[2] the nonce key; ARGV[2] the nonce's generation ('' for none), ARGV[3] nc (decimal),
// ARGV[4] window, ARGV[5] ttl in ms. Returns { code, generation }: code 0 when the count is
// new, 1 when it was used before (or is below the window), 2 when the nonce is of another
// generation.
const SCRIPT = GENERATION + `
if ARGV[2] ~= '' and ARGV[2] ~= g then return {2, g} end
local nc = tonumber(ARGV[3])
local w = tonumber(ARGV[4])
local high = tonumber(redis.call('HGET', KEYS[2], 'h') or '0')
if high > 0 and nc <= high - w then return {1, g} end
if redis.call('HSETNX', KEYS[2], ARGV[3], '1') == 0 then return {1, g} end
if nc > high then
  redis.call('HSET', KEYS[2], 'h', ARGV[3])
  local from = high - w + 1
  if from < 1 then from = 1 end
  local to = nc - w
  if to > high then to = high end
  for c = from, to do redis.call('HDEL', KEYS[2], tostring(c)) end
end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {0, g}
`
const GENERATION_SCRIPT = GENERATION + 'return g\n'
const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex')
const SCRIPT_SHA = sha1(SCRIPT)
const GENERATION_SHA = sha1(GENERATION_SCRIPT)

export class RedisNonceStore implements NonceCountStore {
  readonly #client: RedisScriptClient
  readonly #prefix: string
  readonly #window: number
  readonly #timeout: number
  readonly #generationKey: string
  readonly #now: () => number
  #generation = UNKNOWN_GENERATION
  #learnedAt = -Infinity
  #refreshing: Promise<string> | undefined
  readonly #gate: OfflineGate

  constructor (client: RedisScriptClient, options: RedisNonceStoreOptions = {}) {
    if (client === null || typeof client !== 'object' || typeof client.eval !== 'function') {
      throw new TypeError('RedisNonceStore needs a client with an eval(script, numkeys, ...args) method')
    }
    this.#client = client
    this.#prefix = options.prefix ?? 'fhc:digest-nc:'
    this.#generationKey = this.#prefix + '#generation'
    this.#window = checkWindow(options.window ?? DEFAULT_NONCE_COUNT_WINDOW)
    this.#timeout = checkTimeout('timeoutMs', options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS)
    this.#now = options.now ?? Date.now
    this.#gate = new OfflineGate(client)
  }

  /**
   * The generation new nonces are issued under: the last one Redis named. While it is
   * unknown (before the first answer from Redis), or older than GENERATION_RECHECK_MS, this
   * asks Redis again in the background; a nonce issued under a generation Redis no longer
   * holds is refused as stale on its first use (the client retries with the nonce of that
   * answer's challenge). The auth plugin calls `refresh` when the app starts, so that the
   * first clients do not pay that round trip.
   */
  generation (): string {
    if (this.#now() - this.#learnedAt >= GENERATION_RECHECK_MS) this.refresh().catch(() => {})
    return this.#generation
  }

  /** Asks Redis for the current generation (making one if it has none) and returns it. */
  async refresh (): Promise<string> {
    this.#refreshing ??= withDeadline(this.#run('Redis nonce-store generation', GENERATION_SHA, GENERATION_SCRIPT, 1, [this.#generationKey, newGeneration()]), this.#timeout, 'Redis nonce-store generation')
      .then((reply) => this.#learn(reply))
      .finally(() => { this.#refreshing = undefined })
    return await this.#refreshing
  }

  #learn (generation: unknown): string {
    if (isGeneration(generation)) {
      this.#generation = generation
      this.#learnedAt = this.#now()
    }
    return this.#generation
  }

  async seen (nonce: string, nc: number, ttlMs: number, generation?: string): Promise<boolean> {
    // RFC 7616 3.4: nc is eight hex digits, and the first request with a nonce sends 1
    if (!Number.isInteger(nc) || nc < 1 || nc > MAX_NONCE_COUNT) return true
    const args: Array<string | number> = [
      this.#generationKey, this.#prefix + nonce, newGeneration(), generation ?? '', String(nc), this.#window, Math.max(1, Math.ceil(ttlMs))
    ]
    const reply = await withDeadline(this.#run('Redis nonce-count check', SCRIPT_SHA, SCRIPT, 2, args), this.#timeout, 'Redis nonce-count check')
    // { code, generation }: the generation Redis holds now is the one new nonces carry.
    const [code, current] = Array.isArray(reply) ? reply : [reply, undefined]
    this.#learn(current)
    return Number(code) !== 0
  }

  /** One script, through the gate (the EVAL after a NOSCRIPT is part of the same command). */
  #run (what: string, sha: string, script: string, numkeys: number, args: Array<string | number>): Promise<unknown> {
    return this.#gate.run(what, () => this.#script(sha, script, numkeys, args))
  }

  async #script (sha: string, script: string, numkeys: number, args: Array<string | number>): Promise<unknown> {
    if (typeof this.#client.evalsha === 'function') {
      try {
        return await this.#client.evalsha(sha, numkeys, ...args)
      } catch (err) {
        // the script cache is empty after a restart or on a fresh server
        if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err
      }
    }
    return await this.#client.eval(script, numkeys, ...args)
  }
}
