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
 * The client is passed in by the caller: any object with ioredis's
 * `eval(script, numkeys, ...args)` (and optionally `evalsha`) will do.
 */
import { createHash } from 'node:crypto'
import { checkWindow, DEFAULT_NONCE_COUNT_WINDOW, MAX_NONCE_COUNT, type NonceCountStore } from './nonce-store'

/** The part of an ioredis client this adapter uses. */
export interface RedisScriptClient {
  eval: (script: string, numkeys: number, ...args: Array<string | number>) => Promise<unknown>
  evalsha?: (sha1: string, numkeys: number, ...args: Array<string | number>) => Promise<unknown>
}

export interface RedisNonceStoreOptions {
  /** Key prefix (default `fhc:digest-nc:`). */
  prefix?: string
  /** Counts below the highest seen that are still accepted (default 256). */
  window?: number
}

// KEYS[1] nonce key; ARGV[1] nc (decimal), ARGV[2] window, ARGV[3] ttl in ms.
// Returns 1 when the count was used before (or is below the window), 0 when new.
const SCRIPT = `
local nc = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local high = tonumber(redis.call('HGET', KEYS[1], 'h') or '0')
if high > 0 and nc <= high - w then return 1 end
if redis.call('HSETNX', KEYS[1], ARGV[1], '1') == 0 then return 1 end
if nc > high then
  redis.call('HSET', KEYS[1], 'h', ARGV[1])
  local from = high - w + 1
  if from < 1 then from = 1 end
  local to = nc - w
  if to > high then to = high end
  for c = from, to do redis.call('HDEL', KEYS[1], tostring(c)) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
`
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex')

export class RedisNonceStore implements NonceCountStore {
  readonly #client: RedisScriptClient
  readonly #prefix: string
  readonly #window: number

  constructor (client: RedisScriptClient, options: RedisNonceStoreOptions = {}) {
    if (client === null || typeof client !== 'object' || typeof client.eval !== 'function') {
      throw new TypeError('RedisNonceStore needs a client with an eval(script, numkeys, ...args) method')
    }
    this.#client = client
    this.#prefix = options.prefix ?? 'fhc:digest-nc:'
    this.#window = checkWindow(options.window ?? DEFAULT_NONCE_COUNT_WINDOW)
  }

  async seen (nonce: string, nc: number, ttlMs: number): Promise<boolean> {
    // RFC 7616 3.4: nc is eight hex digits, and the first request with a nonce sends 1
    if (!Number.isInteger(nc) || nc < 1 || nc > MAX_NONCE_COUNT) return true
    const args: Array<string | number> = [this.#prefix + nonce, String(nc), this.#window, Math.max(1, Math.ceil(ttlMs))]
    let reply: unknown
    if (typeof this.#client.evalsha === 'function') {
      try {
        reply = await this.#client.evalsha(SCRIPT_SHA, 1, ...args)
      } catch (err) {
        // the script cache is empty after a restart or on a fresh server
        if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err
        reply = await this.#client.eval(SCRIPT, 1, ...args)
      }
    } else {
      reply = await this.#client.eval(SCRIPT, 1, ...args)
    }
    return Number(reply) !== 0
  }
}
