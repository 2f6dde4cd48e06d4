/**
 * The "Digest" authentication scheme (RFC 7616), server side, qop=auth.
 *
 * Nonces are stateless: nonce = base64url(time || random || generation ||
 * HMAC-SHA256(secret, time || random || generation || realm || opaque)), so every
 * instance that shares the secret verifies every other instance's nonces (RFC 7616 3.3
 * leaves the nonce's content to the server and suggests a time stamp and a private key).
 * Only the nonce-counts used with each nonce are state, kept by a NonceCountStore (memory
 * or Redis); `generation` names the store state the nonce was issued under, so that a
 * store that lost its state never takes an older nonce for an unused one (see
 * NonceCountStore).
 */
import { createHmac, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto'
import {
  decodeExtValue, digestAlgorithmInfo as algorithmInfo, digestHex as H, digestResponseHex as responseHex, formatChallenge, isPrintableAscii, parseAuthorization,
  type DigestAlgorithm, type DigestAlgorithmInfo as AlgorithmInfo, type DigestHash, type ParseAuthorizationOptions
} from '@http-conventions/grammar'
import { MemoryNonceStore } from '../io/stores/memory-nonce'
import { isGeneration, UNKNOWN_GENERATION, type NonceCountStore } from '../io/stores/nonce-store'

// The credential computation both sides share (RFC 7616 3.4), for the server's users and tests.
export { digestHash, digestHa1, digestUserhash, digestResponse, type DigestHash, type DigestAlgorithm, type DigestResponseInput } from '@http-conventions/grammar'

/** What the user lookup is asked. */
export interface DigestUserQuery {
  /** the user name in NFC (one user however the client composed it), or with `userhash` its hash: digestUserhash(hash, name, realm) */
  username: string
  userhash: boolean
  algorithm: DigestAlgorithm
  hash: DigestHash
  realm: string
}

/**
 * A user: the password, or H(username:realm:password) per hash (digestHa1).
 * `username` is required when answering a userhash query (it names the user
 * whose hash matched); otherwise it is ignored.
 */
export type DigestUserRecord =
  | { username?: string, password: string }
  | { username?: string, ha1: Partial<Record<DigestHash, string>> }

export type DigestUserLookup = (query: DigestUserQuery) =>
  DigestUserRecord | null | undefined | Promise<DigestUserRecord | null | undefined>

export type DigestFailure =
  /** no credentials */
  | 'missing'
  /** another scheme */
  | 'wrong-scheme'
  /** credentials that break the RFC 7616 3.4 grammar */
  | 'malformed'
  /** well-formed but wrong: realm, algorithm, opaque, uri, nonce, user or response */
  | 'invalid'
  /** right response, expired nonce: challenge again with stale=true (RFC 7616 3.3) */
  | 'stale'
  /** right response, nonce-count already used with this nonce, or the nonce predates the store's state (RFC 7616 5.4) */
  | 'replay'

export type DigestResult =
  | { ok: true, username: string, algorithm: DigestAlgorithm, userhash: boolean, nc: number }
  | {
    ok: false
    reason: DigestFailure
    /** which rule failed, for logs (never for the client) */
    detail: string
    /** true when the next challenge should carry stale=true: the password was right */
    stale: boolean
  }

export interface DigestOptions {
  /** RFC 7616 3.3 realm; printable ASCII (it is hashed as the client received it). */
  realm: string
  /**
   * HMAC key for nonces, at least 32 bytes; shared by every instance of a fleet. An
   * array rotates keys: the first signs, all verify.
   */
  secret: string | Uint8Array | ReadonlyArray<string | Uint8Array>
  /** Offered algorithms (default ['SHA-256']); challenges list them strongest first. */
  algorithms?: readonly DigestAlgorithm[]
  /** How long a nonce is accepted, in ms (default 300000). */
  nonceTtlMs?: number
  /** RFC 7616 3.3 opaque; default derived from the secret and realm, equal on every instance. */
  opaque?: string
  /** Nonce-count store (default a MemoryNonceStore). Share one (Redis) across a fleet. */
  store?: NonceCountStore
  /** Offer and accept userhash (RFC 7616 3.4.4); default false. */
  userhash?: boolean
  /** Advertise charset=UTF-8 (RFC 7616 3.3, 4); default true. */
  charset?: boolean
  /** RFC 7616 3.3 domain: URIs of the protection space. */
  domain?: readonly string[]
  /** Clock in ms, for tests (default Date.now). */
  now?: () => number
}

export interface Digest {
  readonly realm: string
  readonly opaque: string
  /** offered algorithms, strongest first */
  readonly algorithms: readonly DigestAlgorithm[]
  /**
   * One `WWW-Authenticate` challenge per algorithm, strongest first (RFC 7616 3.7),
   * all with one fresh nonce; `stale=true` when the last credentials had a correct
   * response with an expired or used nonce (RFC 7616 3.3).
   */
  challenges: (stale?: boolean) => string[]
  /**
   * Verifies Digest auth-params, as `parseAuthorization(...).params` gives them.
   * `requestTarget` is the request-target as the client sent it (origin-form or
   * absolute-form, RFC 9112 3.2); `target.host`, when given, is the request's Host, which
   * an absolute-form `uri` must name (RFC 7616 3.4.6).
   */
  verify: (params: Readonly<Record<string, string>> | null | undefined, method: string, requestTarget: string, lookupUser: DigestUserLookup, target?: DigestTargetOptions) => Promise<DigestResult>
  /** Parses an `Authorization` value and verifies it as Digest credentials. */
  verifyAuthorization: (authorization: unknown, method: string, requestTarget: string, lookupUser: DigestUserLookup, options?: ParseAuthorizationOptions & DigestTargetOptions) => Promise<DigestResult>
}

/** What the verifier knows of the request beyond its method and target. */
export interface DigestTargetOptions {
  /** The request's Host (authority), e.g. `example.org` or `example.org:8080`. */
  host?: string
}

const NONCE_BYTES = 56 // 8 time + 8 random + 8 store generation + 32 HMAC-SHA256
const NONCE_HEAD = 24 // what the HMAC covers
const NONCE_CHARS = 75 // base64url of 56 bytes, no padding
// The earlier layout (8 time + 8 random + 32 HMAC, 64 characters): verified, never accepted
// again, answered with stale=true so that a client holding one at an upgrade retries unasked.
const EARLIER_NONCE_CHARS = 64
const EARLIER_NONCE_HEAD = 16
const NONCE_LABEL = Buffer.from('fastify-http-conventions digest nonce\0')

/** A failed verification. */
type DigestFailed = Extract<DigestResult, { ok: false }>

function fail (reason: DigestFailure, detail: string, stale = false): DigestFailed {
  return { ok: false, reason, detail, stale }
}

function toKey (secret: string | Uint8Array): Buffer {
  if (typeof secret !== 'string' && !(secret instanceof Uint8Array)) {
    throw new TypeError('the Digest nonce secret (option secret) is required: a string or bytes of at least 32 bytes')
  }
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret)
  if (key.length < 32) throw new RangeError('the Digest nonce secret must be at least 32 bytes')
  return key
}

function isHex (s: string, length: number): boolean {
  if (s.length !== length) return false
  for (let i = 0; i < length; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false
  }
  return true
}

function isBase64url (s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95)) return false
  }
  return true
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Header values reach us as octets in a 'latin1' string. A quoted username with
 * octets >= 0x80 is read as UTF-8 when it is UTF-8 (RFC 7616 4, charset=UTF-8),
 * so that hashing it as UTF-8 gives back the octets the client hashed.
 */
function headerText (s: string): string {
  let high = false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c > 0xff) return s
    if (c >= 0x80) high = true
  }
  if (!high) return s
  try {
    return fatalUtf8.decode(Buffer.from(s, 'latin1'))
  } catch {
    return s
  }
}

/** An absolute URI split for comparison, or null when `s` is not one (RFC 3986 3). */
function splitAbsolute (s: string): { scheme: string, authority: string, rest: string } | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(s)
  if (m === null) return null
  // RFC 9112 3.2.2 and RFC 3986 6.2.3: an empty path is "/"; a query without a path keeps its "?".
  const rest = m[3] === '' || m[3][0] !== '/' ? '/' + m[3] : m[3]
  return { scheme: m[1].toLowerCase(), authority: m[2], rest }
}

/** RFC 3986 6.2.2.1 and 6.2.3: host case-insensitive, the scheme's default port the same as none. */
function sameAuthority (scheme: string, a: string, b: string): boolean {
  const norm = (x: string): string => {
    const lower = x.toLowerCase()
    if (scheme === 'http' && lower.endsWith(':80')) return lower.slice(0, -3)
    if (scheme === 'https' && lower.endsWith(':443')) return lower.slice(0, -4)
    return lower
  }
  return norm(a) === norm(b)
}

/**
 * RFC 7616 3.4.6: the "uri" parameter must designate the resource of the request-target
 * (RFC 9112 3.2). Either may be in absolute-form; then the scheme is http(s) and the
 * authority is the request's Host (when the caller gives it) and that of the other form;
 * path and query are compared exactly, octet for octet (RFC 7616 3.4.6 gives no other
 * equivalence, and an attacker must not be able to reuse credentials for another target).
 */
function sameTarget (uri: string, target: string, host: string | undefined): boolean {
  const u = splitAbsolute(uri)
  const t = splitAbsolute(target)
  if (u === null && t === null) return uri === target
  if (u !== null && u.scheme !== 'http' && u.scheme !== 'https') return false
  if (t !== null && t.scheme !== 'http' && t.scheme !== 'https') return false
  // Origin-form must start with "/" (RFC 9112 3.2.1): "//host/a" or "a" is no target.
  if (u === null && uri[0] !== '/') return false
  if (t === null && target[0] !== '/') return false
  if (u !== null && t !== null && (u.scheme !== t.scheme || !sameAuthority(u.scheme, u.authority, t.authority))) return false
  const abs = u ?? t
  if (abs !== null && host !== undefined && !sameAuthority(abs.scheme, abs.authority, host)) return false
  return (u?.rest ?? uri) === (t?.rest ?? target)
}

function param (params: Readonly<Record<string, string>>, name: string): string | undefined {
  const v = Object.prototype.hasOwnProperty.call(params, name) ? params[name] : undefined
  return typeof v === 'string' ? v : undefined
}

/** What createDigest settled from its options: checked once, used by every challenge and verification. */
interface DigestPlan {
  realm: string
  secrets: Buffer[]
  nonceTtlMs: number
  /** The algorithms offered, the strongest first. */
  offered: AlgorithmInfo[]
  opaque: string
  store: NonceCountStore
  generationOf: (() => unknown) | undefined
  userhash: boolean
  now: () => number
  realmBytes: Buffer
  opaqueBytes: Buffer
  /** A1 of an unknown user: a random dummy secret, so that it costs the hashing of a known one. */
  dummyA1: string
}

function checkedRealm (options: DigestOptions): string {
  if (options === null || typeof options !== 'object') throw new TypeError('Digest options are required')
  const { realm } = options
  if (typeof realm !== 'string' || !isPrintableAscii(realm)) {
    throw new TypeError('the Digest realm must be a string of printable ASCII')
  }
  return realm
}

/** The algorithms of `requested`, each known and listed once, the strongest first. */
function offeredAlgorithms (requested: unknown): AlgorithmInfo[] {
  if (!Array.isArray(requested) || requested.length === 0) throw new TypeError('at least one Digest algorithm is needed')
  const offered: AlgorithmInfo[] = []
  for (const name of requested) {
    const info = typeof name === 'string' ? algorithmInfo(name) : undefined
    if (info === undefined || info.name !== name) throw new TypeError(`unknown Digest algorithm ${JSON.stringify(name)}`)
    if (offered.includes(info)) throw new TypeError(`Digest algorithm ${name} is listed twice`)
    offered.push(info)
  }
  // RFC 7616 3.7: challenges in order of preference, the strongest first
  return offered.sort((a, b) => a.rank - b.rank)
}

function checkedStore (options: DigestOptions): NonceCountStore {
  const store = options.store ?? new MemoryNonceStore()
  if (typeof store?.seen !== 'function') throw new TypeError('the nonce-count store must have a seen() method')
  if (store.generation !== undefined && typeof store.generation !== 'function') throw new TypeError('the nonce-count store\'s generation must be a method')
  return store
}

/** Checks `options` and settles everything createDigest needs; throws on options that make no sense. */
function digestPlan (options: DigestOptions): DigestPlan {
  const realm = checkedRealm(options)
  const secrets = (Array.isArray(options.secret) ? options.secret : [options.secret]).map(toKey)
  if (secrets.length === 0) throw new RangeError('at least one Digest nonce secret is needed')
  const nonceTtlMs = options.nonceTtlMs ?? 300_000
  if (!Number.isInteger(nonceTtlMs) || nonceTtlMs < 1000) throw new RangeError('nonceTtlMs must be an integer of at least 1000')
  const offered = offeredAlgorithms(options.algorithms ?? ['SHA-256'])
  const opaque = options.opaque ?? createHmac('sha256', secrets[0]).update(`opaque\0${realm}`).digest('base64url').slice(0, 32)
  if (typeof opaque !== 'string' || !isPrintableAscii(opaque)) throw new TypeError('the Digest opaque must be printable ASCII')
  const store = checkedStore(options)
  return {
    realm,
    secrets,
    nonceTtlMs,
    offered,
    opaque,
    store,
    generationOf: store.generation === undefined ? undefined : store.generation.bind(store),
    userhash: options.userhash === true,
    now: options.now ?? Date.now,
    realmBytes: Buffer.from(realm, 'latin1'),
    opaqueBytes: Buffer.from(opaque, 'latin1'),
    dummyA1: `${randomBytes(16).toString('hex')}:${realm}:${randomBytes(16).toString('hex')}`
  }
}

/**
 * The challenges (RFC 7616 3.3), one per offered algorithm, precomputed around the nonce
 * (the work is done at registration): `challenges(nonce, stale)`.
 */
function challengeWriter (plan: DigestPlan, options: DigestOptions): (nonce: string, stale: boolean) => string[] {
  const head: Array<[string, string]> = [['realm', plan.realm]]
  if (options.domain !== undefined) head.push(['domain', options.domain.join(' ')])
  head.push(['qop', 'auth'])
  const tail: Array<[string, string]> = [['opaque', plan.opaque]]
  if (options.charset !== false) tail.push(['charset', 'UTF-8'])
  if (plan.userhash) tail.push(['userhash', 'true'])
  const prefixes = plan.offered.map((info) => formatChallenge('Digest', [...head, ['algorithm', info.name]]) + ', nonce="')
  const suffix = '", ' + formatChallenge('Digest', tail).slice('Digest '.length)
  return function writeChallenges (nonce, stale) {
    const end = stale ? suffix + ', stale=true' : suffix
    return prefixes.map((p) => p + nonce + end)
  }
}

/** Where a nonce comes from: its issue time and store generation (`earlier`: of the earlier layout). */
interface NonceOrigin { issuedAt: number, generation: string, earlier: boolean }

function nonceMac (plan: DigestPlan, key: Buffer, head: Buffer): Buffer {
  return createHmac('sha256', key).update(NONCE_LABEL).update(head).update(plan.realmBytes).update('\0').update(plan.opaqueBytes).digest()
}

function newNonce (plan: DigestPlan): string {
  const buf = Buffer.allocUnsafe(NONCE_BYTES)
  buf.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(plan.now()))), 0)
  randomFillSync(buf, 8, 8)
  // The store state this nonce is issued under; a store without generations gets zeros.
  const generation = plan.generationOf?.()
  buf.write(isGeneration(generation) ? generation : UNKNOWN_GENERATION, 16, 8, 'hex')
  nonceMac(plan, plan.secrets[0], buf.subarray(0, NONCE_HEAD)).copy(buf, NONCE_HEAD)
  return buf.toString('base64url')
}

/** The origin of a nonce this fleet made (under any of its secrets), or null. */
function nonceOrigin (plan: DigestPlan, nonce: string): NonceOrigin | null {
  const earlier = nonce.length === EARLIER_NONCE_CHARS
  if ((nonce.length !== NONCE_CHARS && !earlier) || !isBase64url(nonce)) return null
  const buf = Buffer.from(nonce, 'base64url')
  const headLength = earlier ? EARLIER_NONCE_HEAD : NONCE_HEAD
  const head = buf.subarray(0, headLength)
  const tag = buf.subarray(headLength)
  let good = false
  for (const key of plan.secrets) good = timingSafeEqual(nonceMac(plan, key, head), tag) || good
  if (!good) return null
  return { issuedAt: Number(buf.readBigUInt64BE(0)), generation: earlier ? UNKNOWN_GENERATION : buf.toString('hex', 16, NONCE_HEAD), earlier }
}

/** The user a request names (RFC 7616 3.4), and whether the name is hashed (userhash, 3.4.4). */
function readUsername (params: Readonly<Record<string, string>>): { username: string, hashed: boolean } | DigestFailed {
  // RFC 7616 3.4.4: userhash is "true" or "false", default false
  const userhashParam = param(params, 'userhash')?.toLowerCase()
  if (userhashParam !== undefined && userhashParam !== 'true' && userhashParam !== 'false') {
    return fail('malformed', 'userhash is neither true nor false')
  }
  const hashed = userhashParam === 'true'
  // RFC 7616 3.4: username, or username* (RFC 8187) for names that cannot be quoted
  const plainName = param(params, 'username')
  const extName = param(params, 'username*')
  if (plainName !== undefined && extName !== undefined) return fail('malformed', 'username and username* are both present')
  if (plainName !== undefined) return { username: hashed ? plainName : headerText(plainName), hashed }
  if (extName === undefined) return fail('malformed', 'no username')
  // RFC 7616 3.4.4: username* MUST NOT be used with userhash=true
  if (hashed) return fail('malformed', 'username* with userhash=true')
  const decoded = decodeExtValue(extName)
  if (decoded === null) return fail('malformed', 'username* is not an RFC 8187 ext-value')
  return { username: decoded, hashed }
}

/** The parameters of a response (RFC 7616 3.4), each present and of its syntax. */
interface DigestCredentials {
  sentRealm: string
  nonce: string
  uri: string
  response: string
  qop: string
  ncText: string
  nc: number
  cnonce: string
}

function readCredentials (params: Readonly<Record<string, string>>): DigestCredentials | DigestFailed {
  const sentRealm = param(params, 'realm')
  const nonce = param(params, 'nonce')
  const uri = param(params, 'uri')
  const response = param(params, 'response')
  const qop = param(params, 'qop')
  const ncText = param(params, 'nc')
  const cnonce = param(params, 'cnonce')
  if (sentRealm === undefined || nonce === undefined || uri === undefined || response === undefined) {
    return fail('malformed', 'realm, nonce, uri and response are required')
  }
  // RFC 7616 3.4: qop, cnonce and nc are required (qop is always offered)
  if (qop === undefined || cnonce === undefined || ncText === undefined || cnonce.length === 0) {
    return fail('malformed', 'qop, cnonce and nc are required')
  }
  // RFC 7616 3.4: nc-value = 8LHEX
  if (!isHex(ncText, 8)) return fail('malformed', 'nc is not eight hex digits')
  const nc = Number.parseInt(ncText, 16)
  if (nc === 0) return fail('malformed', 'nc starts at 00000001')
  return { sentRealm, nonce, uri, response, qop, ncText, nc, cnonce }
}

/**
 * The algorithm of a response, when the challenge offered it and what was sent matches
 * the offer: qop, userhash, realm, opaque and the request target; else the failure.
 */
function checkOffer (
  plan: DigestPlan,
  params: Readonly<Record<string, string>>,
  c: DigestCredentials,
  hashed: boolean,
  requestTarget: string,
  target: DigestTargetOptions | undefined
): AlgorithmInfo | DigestFailed {
  // RFC 7616 3.3: absent algorithm means MD5; it must be one that was offered
  const info = algorithmInfo(param(params, 'algorithm') ?? 'MD5')
  if (info === undefined || !plan.offered.includes(info)) return fail('invalid', 'algorithm was not offered')
  if (!isHex(c.response, info.hexLength)) return fail('malformed', 'response is not a digest of the algorithm')
  // RFC 7616 3.4: qop "MUST be one of the alternatives the server indicated it supports";
  // the challenge offers the token "auth" (3.3) and only that token, exactly as sent, is
  // accepted ("AUTH" is not "auth"; auth-int is not offered). The response hashes qop as
  // sent, so a value other than the offered one would also change what was signed.
  if (c.qop !== 'auth') return fail('invalid', 'qop was not offered')
  if (hashed && !plan.userhash) return fail('invalid', 'userhash was not offered')
  if (c.sentRealm !== plan.realm) return fail('invalid', 'realm differs')
  // RFC 7616 3.3: opaque "SHOULD be returned by the client unchanged"; ours always is
  if (param(params, 'opaque') !== plan.opaque) return fail('invalid', 'opaque differs')
  // RFC 7616 3.4.6: the uri must designate the resource of the request target
  const host = typeof target?.host === 'string' && target.host !== '' ? target.host : undefined
  if (!sameTarget(c.uri, requestTarget, host)) return fail('invalid', 'uri is not the request target')
  return info
}

/** What a user record gives to hash: A1 from a password, or a stored H(A1), and the name A1 holds. */
interface UserSecret {
  a1User: string
  /** username:realm:password to hash */
  a1: string | undefined
  /** H(A1) kept by the application */
  stored: string | undefined
}

function userSecret (plan: DigestPlan, info: AlgorithmInfo, record: unknown, username: string, hashed: boolean): UserSecret {
  const secret: UserSecret = { a1User: username, a1: undefined, stored: undefined }
  if (record === null || record === undefined || typeof record !== 'object') return secret
  const r = record as { username?: unknown, password?: unknown, ha1?: unknown }
  if (hashed) secret.a1User = typeof r.username === 'string' ? r.username.normalize('NFC') : ''
  if (hashed && secret.a1User === '') return secret
  if ('password' in r && typeof r.password === 'string') {
    // RFC 7616 3.3: the client hashed the NFC form of the password; the user name
    // is hashed as the client sent it (it is what the client hashed)
    secret.a1 = `${secret.a1User}:${plan.realm}:${r.password.normalize('NFC')}`
  } else if ('ha1' in r && r.ha1 !== null && typeof r.ha1 === 'object') {
    const h = (r.ha1 as Record<string, unknown>)[info.hash]
    if (typeof h === 'string' && isHex(h, info.hexLength)) secret.stored = h.toLowerCase()
  }
  return secret
}

/** Whether `c.response` is the digest the user's secret gives, in constant time whoever the user is. */
function responseMatches (plan: DigestPlan, info: AlgorithmInfo, secret: UserSecret, method: string, c: DigestCredentials): boolean {
  // Exactly one A1 hash on every path (password, stored HA1, unknown user), so that
  // timing does not tell them apart; the unknown user gets a random dummy secret.
  const hashed1 = H(info.node, secret.a1 ?? plan.dummyA1, 'utf8')
  const known = secret.a1 !== undefined || secret.stored !== undefined
  const ha1 = secret.stored ?? hashed1
  const expected = Buffer.from(responseHex(info, ha1, method, c.uri, c.nonce, c.ncText, c.cnonce, c.qop), 'hex')
  // Constant time over equal-length digests
  const match = timingSafeEqual(expected, Buffer.from(c.response, 'hex'))
  return match && known
}

/** The failure of a right response whose nonce is expired, of the earlier layout or replayed; null when it is fresh. */
async function nonceFailure (plan: DigestPlan, origin: NonceOrigin, c: DigestCredentials, t: number): Promise<DigestFailed | null> {
  // RFC 7616 3.3: stale=true when the nonce is expired but the digest is valid
  const expiresAt = origin.issuedAt + plan.nonceTtlMs
  if (t >= expiresAt) return fail('stale', 'nonce expired', true)
  // A nonce of the earlier layout names no store generation: its counts cannot be judged.
  if (origin.earlier) return fail('stale', 'nonce of the earlier layout', true)
  // RFC 7616 5.4 (and 3.4: nc lets the server detect replays). A nonce issued under another
  // state of the store is refused too: the store has no record of its counts, which is no
  // proof that they are unused. RFC 7616 3.3: stale=true, the client retries with a fresh nonce.
  const generation = plan.generationOf === undefined ? undefined : origin.generation
  if (await plan.store.seen(c.nonce, c.nc, expiresAt - t, generation)) return fail('replay', 'nonce-count already used, or the nonce predates the store\'s state', true)
  return null
}

function isFailure<T extends object> (value: T | DigestFailed): value is DigestFailed {
  return 'ok' in value && value.ok === false
}

/** Verifies the parameters of Digest credentials: syntax, offer, nonce, response, then the nonce-count. */
async function verifyDigest (
  plan: DigestPlan,
  params: Readonly<Record<string, string>> | null | undefined,
  method: string,
  requestTarget: string,
  lookupUser: DigestUserLookup,
  target?: DigestTargetOptions
): Promise<DigestResult> {
  if (params === null || params === undefined || typeof params !== 'object') return fail('missing', 'no Digest credentials')
  if (typeof method !== 'string' || typeof requestTarget !== 'string') return fail('malformed', 'method and request target are strings')
  const user = readUsername(params)
  if (isFailure(user)) return user
  const c = readCredentials(params)
  if (isFailure(c)) return c
  const info = checkOffer(plan, params, c, user.hashed, requestTarget, target)
  if (isFailure(info)) return info
  const origin = nonceOrigin(plan, c.nonce)
  const t = plan.now()
  if (origin === null || origin.issuedAt > t + plan.nonceTtlMs) return fail('invalid', 'nonce was not issued by this realm')
  // RFC 7616 3.3 and 4 (charset=UTF-8): a user name is compared in NFC, as Basic's user-id
  // (RFC 7617 2.1): "josé" sent precomposed or decomposed is one user and one principal.
  // A1 still hashes the name as sent, since that is what the client hashed.
  const { username, hashed } = user
  const principal = hashed ? username : username.normalize('NFC')
  const record = await lookupUser({ username: principal, userhash: hashed, algorithm: info.name, hash: info.hash, realm: plan.realm })
  const secret = userSecret(plan, info, record, username, hashed)
  if (!responseMatches(plan, info, secret, method, c)) return fail('invalid', 'response does not match')
  const stale = await nonceFailure(plan, origin, c, t)
  if (stale !== null) return stale
  return { ok: true, username: hashed ? secret.a1User : principal, algorithm: info.name, userhash: hashed, nc: c.nc }
}

/** Builds a Digest verifier; throws at once on options that make no sense. */
export function createDigest (options: DigestOptions): Digest {
  const plan = digestPlan(options)
  const writeChallenges = challengeWriter(plan, options)

  function challenges (stale = false): string[] {
    return writeChallenges(newNonce(plan), stale)
  }

  async function verify (
    params: Readonly<Record<string, string>> | null | undefined,
    method: string,
    requestTarget: string,
    lookupUser: DigestUserLookup,
    target?: DigestTargetOptions
  ): Promise<DigestResult> {
    return verifyDigest(plan, params, method, requestTarget, lookupUser, target)
  }

  async function verifyAuthorization (
    authorization: unknown,
    method: string,
    requestTarget: string,
    lookupUser: DigestUserLookup,
    parseOptions?: ParseAuthorizationOptions & DigestTargetOptions
  ): Promise<DigestResult> {
    const parsed = parseAuthorization(authorization, parseOptions)
    if (!parsed.ok) {
      return parsed.reason === 'missing' ? fail('missing', 'no Authorization value') : fail('malformed', `Authorization ${parsed.reason}`)
    }
    if (parsed.scheme !== 'digest') return fail('wrong-scheme', 'not Digest credentials')
    if (parsed.params === undefined) return fail('malformed', 'Digest credentials are auth-params')
    return verify(parsed.params, method, requestTarget, lookupUser, { host: parseOptions?.host })
  }

  return Object.freeze({
    realm: plan.realm,
    opaque: plan.opaque,
    algorithms: Object.freeze(plan.offered.map((info) => info.name)),
    challenges,
    verify,
    verifyAuthorization
  })
}
