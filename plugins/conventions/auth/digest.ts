/**
 * Digest (RFC 7616) for the auth plugin: the core (lib/auth/digest.ts) issues stateless
 * nonces and verifies responses; this adapter supplies the users, restricts a route to
 * the algorithms it offers, and turns a failing nonce-count store into a refusal
 * (fail closed), never into an exception. A store that does not answer within
 * `storeTimeoutMs` has failed.
 */
import type { FastifyRequest } from 'fastify'
import {
  createDigest, digestUserhash, type Digest, type DigestAlgorithm, type DigestHash,
  type DigestOptions, type DigestUserLookup, type DigestUserQuery, type DigestUserRecord
} from '../../../lib/auth/digest'
import { MemoryNonceStore } from '../../../lib/io/stores/memory-nonce'
import { UNKNOWN_GENERATION, type NonceCountStore } from '../../../lib/io/stores/nonce-store'
import { invalidOption } from '../../../lib/errors'
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from '../../../lib/io/stores/deadline'
import {
  asRefusal, fail, notPrincipal, runtimeScopes, scopeList, userTable, WHERE,
  type AuthUser, type Credentials, type Outcome, type SchemeAdapter
} from './common'

/** A user record from `lookup`, with the scopes it grants (default: the `scopes` option). */
export type DigestLookupRecord = DigestUserRecord & { scopes?: readonly string[] | string }

/** Digest authentication (RFC 7616): stateless nonces under a secret, users or a lookup, and a nonce-count store. */
export interface DigestAuthOptions {
  /** HMAC key of the stateless nonces, at least 32 bytes; shared by every instance of a fleet. */
  secret: DigestOptions['secret']
  /** Offered algorithms (default ['SHA-256']); challenges list them strongest first (RFC 7616 3.7). */
  algorithms?: readonly DigestAlgorithm[]
  /** user: password (or { password, scopes }). */
  users?: Readonly<Record<string, AuthUser>>
  /** The service's own user lookup, instead of `users`: a password or stored H(A1) per hash. */
  lookup?: (query: DigestUserQuery) => DigestLookupRecord | null | undefined | Promise<DigestLookupRecord | null | undefined>
  /** How long a nonce is accepted, in ms (default 300000); then stale=true (RFC 7616 3.3). */
  nonceTtlMs?: number
  /** Nonce-count store (RFC 7616 5.4); default an in-memory LRU. RedisNonceStore for a fleet. */
  store?: NonceCountStore
  /** Longest wait for the store, in ms (default 1000, at most 60000); then the request is refused (`storeFailureStatus`). */
  storeTimeoutMs?: number
  /** Offer and accept userhash (RFC 7616 3.4.4). */
  userhash?: boolean
  /** RFC 7616 3.3 opaque; default derived from the secret and realm. */
  opaque?: string
  /** Scopes granted to users that do not list their own (default none). */
  scopes?: readonly string[] | string
  /** Clock in ms, for tests. */
  now?: () => number
}

/** Raised by the store wrapper so that a store failure is told apart from a lookup failure. */
class StoreFailure extends Error {
  readonly failure: unknown
  constructor (failure: unknown) {
    super('the Digest nonce-count store failed')
    this.failure = failure
  }
}

const HASHES: readonly DigestHash[] = ['SHA-512-256', 'SHA-256', 'MD5']

export interface DigestAdapter extends SchemeAdapter {
  /** offered algorithms, strongest first */
  algorithms: readonly DigestAlgorithm[]
  /** one challenge per algorithm (of `only`, when given), sharing one fresh nonce */
  challenges: (stale: boolean, only?: ReadonlySet<string>) => string[]
  verify: (credentials: Credentials, request: FastifyRequest, only?: ReadonlySet<string>) => Promise<Outcome>
  /** Has the store learn its current generation (when it can), so that the first nonces carry it; rejects when the store fails. */
  refresh: () => Promise<void>
}

type UserLookup = (query: DigestUserQuery) => DigestLookupRecord | null | undefined | Promise<DigestLookupRecord | null | undefined>

function checkedStore (opts: DigestAuthOptions): NonceCountStore {
  // Its methods were checked with the plugin's options (authOptionsSchema).
  return opts.store ?? new MemoryNonceStore()
}

/** `store` made to fail closed: one that throws, rejects or does not answer in time raises a StoreFailure (see the plugin). */
function guardedStore (store: NonceCountStore, timeoutMs: number): NonceCountStore {
  const guarded: NonceCountStore = {
    seen: async (nonce, nc, ttlMs, generation) => {
      let used: unknown
      try {
        used = await withDeadline(Promise.resolve().then(() => store.seen(nonce, nc, ttlMs, generation)), timeoutMs, 'the Digest nonce-count store')
      } catch (err) {
        throw new StoreFailure(err)
      }
      // RFC 7616 5.4: only `false` says the count is unused; any other answer is a store that failed
      if (typeof used !== 'boolean') throw new StoreFailure(new TypeError('seen() answered what is not a boolean'))
      return used
    }
  }
  const generation = store.generation
  if (generation !== undefined) {
    // A generation that cannot be read issues nonces of no generation, which a store with
    // generations judges used (stale=true): a refusal, never a crash of the challenge.
    guarded.generation = () => {
      try {
        return generation.call(store)
      } catch {
        return UNKNOWN_GENERATION
      }
    }
  }
  return guarded
}

/** The core verifier for the adapter's options; its TypeError/RangeError becomes the suite's boot error. */
function digestCore (opts: DigestAuthOptions, realm: string, store: NonceCountStore): Digest {
  try {
    return createDigest({
      realm,
      secret: opts.secret,
      algorithms: opts.algorithms,
      nonceTtlMs: opts.nonceTtlMs,
      opaque: opts.opaque,
      store,
      userhash: opts.userhash,
      now: opts.now
    })
  } catch (err) {
    throw invalidOption(WHERE, `digest: ${(err as Error).message.replace('(option secret)', '(digest.secret)')}`)
  }
}

/** The lookup of the `users` table: by name in NFC, or by H(username ":" realm) with userhash. */
function tableLookup (opts: DigestAuthOptions, users: Readonly<Record<string, AuthUser>>, defaultScopes: readonly string[], realm: string): UserLookup {
  const table = userTable(users, defaultScopes, 'digest')
  // RFC 7616 3.4.4: with userhash the client sends H(username ":" realm); index every user by it
  const byHash = new Map<string, string>()
  if (opts.userhash === true) {
    for (const hash of HASHES) {
      for (const name of table.keys()) byHash.set(`${hash}\0${digestUserhash(hash, name, realm)}`, name)
    }
  }
  return ({ username, userhash, hash }) => {
    const name = userhash ? byHash.get(`${hash}\0${username.toLowerCase()}`) : username.normalize('NFC')
    const user = name === undefined ? undefined : table.get(name)
    return user === undefined ? null : { username: name, password: user.password, scopes: user.scopes }
  }
}

/** The store's failure for the log: an Error's message, else its type (never the value). */
function describeStoreFailure (failure: unknown): string {
  return failure instanceof Error ? failure.message : `a value of type ${failure === null ? 'null' : typeof failure}`
}

/** Verifies Digest credentials for a request, with the algorithms `only` (of a route) when given. */
async function verifyCredentials (
  digest: Digest,
  lookup: UserLookup,
  defaultScopes: readonly string[],
  credentials: Credentials,
  request: FastifyRequest,
  only?: ReadonlySet<string>
): Promise<Outcome> {
  const params = credentials.params
  if (params === undefined) return fail('invalid', 'digest: credentials are not auth-params')
  // A route offering fewer algorithms accepts only those (RFC 7616 3.3: absent means MD5)
  if (only !== undefined) {
    const algorithm = Object.prototype.hasOwnProperty.call(params, 'algorithm') ? params.algorithm.toLowerCase() : 'md5'
    if (!only.has(algorithm)) return fail('invalid', 'digest: algorithm not offered on this route')
  }
  let record: DigestLookupRecord | null | undefined
  const lookupUser: DigestUserLookup = async (query) => {
    record = await lookup(query)
    return record
  }
  let result
  try {
    // RFC 7616 3.4.6: the uri is compared with the request target as the client sent it
    // RFC 7616 3.4.6: the uri parameter must designate the request target (host included when absolute).
    result = await digest.verify(params, request.method, request.originalUrl, lookupUser, { host: request.host })
  } catch (err) {
    if (err instanceof StoreFailure) return fail('unavailable', `digest: the nonce-count store failed: ${describeStoreFailure(err.failure)}`)
    // lookup threw or rejected, whatever its value: a refusal, never a pass
    return asRefusal('digest', err)
  }
  if (result.ok) {
    // A record that matched has a password or H(A1): an object (lib/auth/digest.ts reads nothing else)
    const scopes = runtimeScopes((record as { scopes?: unknown }).scopes, defaultScopes)
    if (scopes === null) return notPrincipal('digest', 'lookup returned scopes that are not scope tokens')
    return { ok: true, principal: { scheme: 'digest', subject: result.username, scopes } }
  }
  // RFC 7616 3.3: stale=true when the response was right but the nonce expired (or its count was used)
  return fail(result.stale ? 'stale' : 'invalid', `digest: ${result.reason}: ${result.detail}`)
}

export function createDigestAdapter (opts: DigestAuthOptions, realm: string): DigestAdapter {
  // Its shape was checked with the plugin's options (authOptionsSchema); here what JSON Schema cannot say.
  const defaultScopes = opts.scopes === undefined ? Object.freeze([]) : scopeList(opts.scopes, 'digest.scopes')
  const store = checkedStore(opts)
  const timeoutMs = opts.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS
  const digest = digestCore(opts, realm, guardedStore(store, timeoutMs))
  const lookup = opts.users !== undefined ? tableLookup(opts, opts.users, defaultScopes, realm) : opts.lookup as UserLookup
  const algorithms = digest.algorithms
  const lower = algorithms.map((a) => a.toLowerCase())
  return {
    scheme: 'digest',
    algorithms,
    async refresh (): Promise<void> {
      if (typeof store.refresh === 'function') await withDeadline(Promise.resolve().then(() => store.refresh?.()), timeoutMs, 'the Digest nonce-count store')
    },
    challenges (stale: boolean, only?: ReadonlySet<string>): string[] {
      const all = digest.challenges(stale)
      return only === undefined ? all : all.filter((_c, i) => only.has(lower[i]))
    },
    verify: (credentials, request, only) => verifyCredentials(digest, lookup, defaultScopes, credentials, request, only)
  }
}
