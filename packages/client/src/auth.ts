/**
 * An undici interceptor that answers `401` challenges (RFC 9110 11.6.1) with credentials
 * it holds for the request's origin, and only for that origin (RFC 6454: scheme, host and
 * port): a request to any other origin passes untouched, and a redirect to another origin
 * is never answered with them.
 *
 * Of the challenges offered it answers the strongest it has credentials for: Digest
 * (RFC 7616; SHA-512-256, then SHA-256, then MD5, each with or without `-sess`), whose
 * password never travels, then Bearer (RFC 6750), then Basic (RFC 7617). Once a challenge
 * of an origin is answered, later requests to it carry credentials at once: Digest with the
 * same nonce and the next nonce count (RFC 7616 3.4), Basic and Bearer as they were.
 *
 * Per request it answers at most one challenge, plus one more when the answer was a
 * Digest `stale=true` (a fresh nonce, the password was right: RFC 7616 3.3) or a Bearer
 * 401 (the token provider is asked for a fresh token, once). A 401 after that is the
 * caller's answer. The Digest arithmetic is the server's own (lib/auth/digest.ts).
 *
 * Over plain http it answers nothing weaker than `weakestAuth`: Basic sends the password in
 * clear (RFC 7617 4), Bearer the token (RFC 6750 5.3), and an MD5 Digest answer is an MD5
 * of the password that can be searched offline (RFC 7616 5, RFC 6151). A challenge offering only
 * weaker answers fails the request with WEAK_CHALLENGE and no credential is sent. By
 * default, a host that is not loopback gets nothing weaker than Digest MD5 (no password or
 * token in clear); a loopback host and any https origin get whatever is offered.
 */
import { randomBytes } from 'node:crypto'
import type { Dispatcher } from 'undici'
import { type Challenge, type DigestAlgorithm, type DigestHash, digestResponse, digestUserhash, encodeBasicCredentials, isPrintableAscii, isToken68, parseChallenges, quoteString } from '@http-conventions/grammar'
import { ReplayingHandler, headerRecord, originOf, type Replay, type RequestHeaders, urlOf, withQuery } from './dispatch'
import { ConventionsClientError, clientErrorCodes } from './errors'

/** A user name and password for one origin: answers Digest and Basic. */
export interface PasswordCredential {
  /** `http://host:port`: the only origin these credentials are sent to. */
  origin: string
  username: string
  password: string
}

/** Asked for a token; `refresh` is true after the server refused the last one. */
export type TokenProvider = (context: { origin: string, refresh: boolean }) => string | Promise<string>

/** A Bearer token provider for one origin. */
export interface TokenCredential {
  /** `http://host:port`: the only origin the tokens are sent to. */
  origin: string
  token: TokenProvider
}

/** A credential for one origin: a user and password (Digest, Basic), or a token provider (Bearer). */
export type ClientCredential = PasswordCredential | TokenCredential

/** What the interceptor reports, for logs: never a credential, a nonce or a header value. */
export interface AuthEvent {
  type: 'challenge-answered'
  origin: string
  scheme: 'digest' | 'bearer' | 'basic'
  /** Digest only. */
  algorithm?: DigestAlgorithm
  /** Why this answer: the first challenge, a stale nonce, a refused token. */
  reason: 'challenge' | 'stale' | 'refresh'
}

/**
 * The weakest answer given to a challenge over plain http, from weakest to strongest:
 * Basic, Bearer, Digest MD5, Digest SHA-256, Digest SHA-512-256 (`-sess` or not); `'any'`
 * answers whatever is offered. Over https every answer is given (TLS hides it).
 */
export type WeakestAuth =
  | 'any'
  | { scheme: 'basic' | 'bearer' }
  | { scheme: 'digest', algorithm?: 'MD5' | 'SHA-256' | 'SHA-512-256' }

/** Options of `authInterceptor`: the credentials, and the weakest answer to a challenge it may give. */
export interface AuthInterceptorOptions {
  credentials: readonly ClientCredential[]
  /**
   * The weakest answer given over plain http (default: Digest MD5 to a host that is not
   * loopback, anything to a loopback host). A 401 offering only weaker answers is
   * WEAK_CHALLENGE, and no credential is sent.
   */
  weakestAuth?: WeakestAuth
  /** Called for each challenge answered. */
  onEvent?: (event: AuthEvent) => void
}

const ALGORITHMS: ReadonlyMap<string, { name: DigestAlgorithm, hash: DigestHash, rank: number }> = new Map([
  ['sha-512-256', { name: 'SHA-512-256', hash: 'SHA-512-256', rank: 3 }],
  ['sha-512-256-sess', { name: 'SHA-512-256-sess', hash: 'SHA-512-256', rank: 3 }],
  ['sha-256', { name: 'SHA-256', hash: 'SHA-256', rank: 2 }],
  ['sha-256-sess', { name: 'SHA-256-sess', hash: 'SHA-256', rank: 2 }],
  ['md5', { name: 'MD5', hash: 'MD5', rank: 1 }],
  ['md5-sess', { name: 'MD5-sess', hash: 'MD5', rank: 1 }]
])

/** A Digest challenge the client can answer, kept per origin for the requests after it. */
interface DigestSession {
  algorithm: DigestAlgorithm
  hash: DigestHash
  realm: string
  nonce: string
  opaque: string | undefined
  userhash: boolean
  /** nonce-count of the last request sent with this nonce */
  nc: number
  /** strength of the hash: SHA-512-256 3, SHA-256 2, MD5 1 */
  rank: number
}

type Chosen =
  | { scheme: 'digest', session: DigestSession, rank: number }
  | { scheme: 'bearer', rank: number }
  | { scheme: 'basic', rank: number }

/** RFC 7616 3.3: a challenge the client can answer (qop=auth, a known algorithm, MD5 when absent). */
function digestSession (c: Challenge): DigestSession | undefined {
  const info = ALGORITHMS.get((c.params.algorithm ?? 'MD5').toLowerCase())
  const qop = (c.params.qop ?? '').split(',').map((q) => q.trim().toLowerCase())
  if (info === undefined || !qop.includes('auth') || c.params.realm === undefined || c.params.nonce === undefined) return undefined
  return {
    algorithm: info.name,
    hash: info.hash,
    realm: c.params.realm,
    nonce: c.params.nonce,
    opaque: c.params.opaque,
    userhash: (c.params.userhash ?? '').toLowerCase() === 'true',
    nc: 0,
    rank: info.rank
  }
}

/** The rank of each answer, the strongest highest (the order answers are chosen in): what `weakestAuth` is compared with. */
const RANK = { basic: 1, bearer: 5, digest: 10 } as const
const DIGEST_RANK = { MD5: 1, 'SHA-256': 2, 'SHA-512-256': 3 } as const
/** The default floor over plain http to a host that is not loopback: Digest MD5, no credential in clear. */
const NOT_LOOPBACK_FLOOR = RANK.digest + DIGEST_RANK.MD5

const WEAKEST_AUTH_MESSAGE = "weakestAuth must be 'any', { scheme: 'basic' }, { scheme: 'bearer' } or { scheme: 'digest', algorithm: 'MD5' | 'SHA-256' | 'SHA-512-256' }"

/** The rank `weakestAuth` names (checked when the interceptor is made), or undefined for the default. */
export function weakestRank (weakest: unknown): number | undefined {
  if (weakest === undefined) return undefined
  if (weakest === 'any') return 0
  if (typeof weakest !== 'object' || weakest === null) throw new TypeError(WEAKEST_AUTH_MESSAGE)
  const { scheme, algorithm, ...rest } = weakest as { scheme?: unknown, algorithm?: unknown }
  if (Object.keys(rest).length > 0) throw new TypeError(WEAKEST_AUTH_MESSAGE)
  if ((scheme === 'basic' || scheme === 'bearer') && algorithm === undefined) return RANK[scheme]
  if (scheme !== 'digest') throw new TypeError(WEAKEST_AUTH_MESSAGE)
  if (algorithm === undefined) return NOT_LOOPBACK_FLOOR
  if (typeof algorithm !== 'string' || !Object.hasOwn(DIGEST_RANK, algorithm)) throw new TypeError(WEAKEST_AUTH_MESSAGE)
  return RANK.digest + DIGEST_RANK[algorithm as keyof typeof DIGEST_RANK]
}

/** RFC 6761 6.3 (localhost), RFC 1122 3.2.1.3 (127.0.0.0/8), RFC 4291 2.5.3 (::1): a host on this machine. */
export function isLoopbackHost (hostname: string): boolean {
  const host = hostname.toLowerCase()
  if (host === 'localhost' || host.endsWith('.localhost') || host === '[::1]') return true
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/** The weakest rank answered for `origin`: any over https, else the option's, else the default. */
function floorOf (origin: string, weakest: number | undefined): number {
  const url = new URL(origin)
  if (url.protocol === 'https:') return 0
  if (weakest !== undefined) return weakest
  return isLoopbackHost(url.hostname) ? 0 : NOT_LOOPBACK_FLOOR
}

/** How an answer is named in a message: "Basic", "Bearer", "Digest MD5-sess". */
function answerName (chosen: Chosen): string {
  return chosen.scheme === 'digest' ? `Digest ${chosen.session.algorithm}` : chosen.scheme === 'basic' ? 'Basic' : 'Bearer'
}

/** The floor as a message names it. */
function floorName (floor: number): string {
  if (floor === RANK.bearer) return 'Bearer'
  // a floor that refuses anything is Bearer or a Digest algorithm's
  const [algorithm] = Object.entries(DIGEST_RANK).find(([, r]) => RANK.digest + r === floor) as [string, number]
  return `Digest ${algorithm}`
}

/** Every answer of `challenges` this origin's credentials could give, strongest first. */
function answerable (challenges: Challenge[], password: PasswordCredential | undefined, token: TokenCredential | undefined): Chosen[] {
  const out: Chosen[] = []
  for (const c of challenges) {
    if (c.scheme === 'digest' && password !== undefined) {
      const session = digestSession(c)
      if (session !== undefined) out.push({ scheme: 'digest', session, rank: RANK.digest + session.rank })
    } else if (c.scheme === 'bearer' && token !== undefined) {
      out.push({ scheme: 'bearer', rank: RANK.bearer })
    } else if (c.scheme === 'basic' && password !== undefined) {
      out.push({ scheme: 'basic', rank: RANK.basic })
    }
  }
  // a stable sort: of equal answers, the server's order
  return out.sort((a, b) => b.rank - a.rank)
}

/** RFC 7616 3.4: the Authorization value answering `session` for `method uri`, with the next nonce count. */
export function digestAuthorization (session: DigestSession, credential: PasswordCredential, method: string, uri: string): string {
  session.nc++
  const nc = session.nc.toString(16).padStart(8, '0')
  const cnonce = randomBytes(16).toString('hex')
  // RFC 7616 3.3 (charset=UTF-8): the user name in NFC
  const username = credential.username.normalize('NFC')
  const response = digestResponse({ algorithm: session.algorithm, username, realm: session.realm, password: credential.password, method, uri, nonce: session.nonce, nc, cnonce, qop: 'auth' })
  const parts: string[] = []
  if (session.userhash) {
    // RFC 7616 3.4.4: username = H(unq(username) ":" unq(realm))
    parts.push(`username=${quoteString(digestUserhash(session.hash, username, session.realm))}`)
  } else if (isPrintableAscii(username) && !username.includes('"') && !username.includes('\\')) {
    parts.push(`username=${quoteString(username)}`)
  } else {
    // RFC 7616 3.4 and RFC 8187: username* for a name a quoted-string cannot carry
    parts.push(`username*=UTF-8''${encodeURIComponent(username).replace(/['()*!]/g, (ch) => '%' + ch.charCodeAt(0).toString(16).toUpperCase())}`)
  }
  parts.push(`realm=${quoteString(session.realm)}`, `uri=${quoteString(uri)}`, `algorithm=${session.algorithm}`, `nonce=${quoteString(session.nonce)}`,
    `nc=${nc}`, `cnonce=${quoteString(cnonce)}`, 'qop=auth', `response=${quoteString(response)}`)
  if (session.opaque !== undefined) parts.push(`opaque=${quoteString(session.opaque)}`)
  if (session.userhash) parts.push('userhash=true')
  return 'Digest ' + parts.join(', ')
}

/** A body undici can send again as it is (a stream cannot be read twice). */
export function isReplayable (body: Dispatcher.DispatchOptions['body']): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array
}

function bearerValue (token: unknown): string {
  // RFC 6750 2.1: b64token; a value outside it is refused here, and never shown
  if (typeof token !== 'string' || !isToken68(token)) throw new ConventionsClientError(clientErrorCodes.CREDENTIALS, 'the token provider gave a value that is not a Bearer token (RFC 6750 2.1)')
  return `Bearer ${token}`
}

/** What the interceptor remembers of one origin: the scheme it last answered with, and the Digest nonce. */
interface OriginState {
  scheme?: 'digest' | 'bearer' | 'basic'
  digest?: DigestSession
  token?: string
}

function normalizedOrigin (origin: string): string {
  const url = new URL(origin)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('a credential origin is an http: or https: origin')
  return url.origin
}

/**
 * `Agent#compose(authInterceptor({ credentials }))`. Credentials are matched to requests by
 * origin only; a request that carries its own Authorization is left alone.
 */
/** The credentials of an interceptor by origin, checked once; and who hears of its answers. */
interface Credentials {
  passwords: Map<string, PasswordCredential>
  tokens: Map<string, TokenCredential>
  /** `weakestAuth` as a rank, undefined for the default */
  weakest: number | undefined
  onEvent: AuthInterceptorOptions['onEvent']
}

function credentialsOf (options: AuthInterceptorOptions): Credentials {
  const passwords = new Map<string, PasswordCredential>()
  const tokens = new Map<string, TokenCredential>()
  for (const c of options.credentials) {
    const origin = normalizedOrigin(c.origin)
    if ('token' in c) {
      if (typeof c.token !== 'function') throw new TypeError('a token credential has a token provider function')
      tokens.set(origin, c)
    } else {
      if (typeof c.username !== 'string' || typeof c.password !== 'string') throw new TypeError('a password credential has a username and a password')
      if (c.username.includes(':')) throw new TypeError('RFC 7617 2: a user name cannot contain a colon')
      passwords.set(origin, c)
    }
  }
  return { passwords, tokens, weakest: weakestRank(options.weakestAuth), onEvent: options.onEvent }
}

/** The Authorization value for a request to `origin` from the last challenge answered, if any. */
function remembered (credentials: Credentials, origin: string, state: OriginState, method: string, uri: string): string | undefined {
  if (state.scheme === 'digest') return digestAuthorization(state.digest as DigestSession, credentials.passwords.get(origin) as PasswordCredential, method, uri)
  if (state.scheme === 'basic') {
    const p = credentials.passwords.get(origin) as PasswordCredential
    return 'Basic ' + encodeBasicCredentials(p.username, p.password)
  }
  if (state.scheme === 'bearer') return `Bearer ${state.token as string}`
  return undefined
}

/** Replays a request refused with 401 once with the credentials a challenge asks for (RFC 9110 11.6.1). */
class AuthHandler extends ReplayingHandler {
  readonly #credentials: Credentials
  readonly #origin: string
  readonly #state: OriginState
  /** a challenge of this request was answered */
  #answered = false
  #staleRetried = false
  #refreshed = false
  /** what this request last sent */
  #sent: OriginState['scheme']

  constructor (credentials: Credentials, dispatch: Dispatcher.Dispatch, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, origin: string, state: OriginState, sent: OriginState['scheme']) {
    super(dispatch, opts, handler)
    this.#credentials = credentials
    this.#origin = origin
    this.#state = state
    this.#sent = sent
  }

  #with (authorization: string): Dispatcher.DispatchOptions {
    return { ...this.opts, headers: { ...headerRecord(this.opts.headers), authorization } }
  }

  protected replay (statusCode: number, headers: Record<string, string | string[] | undefined>): Replay {
    if (statusCode !== 401 || !isReplayable(this.opts.body)) return undefined
    const challenges = parseChallenges(headers['www-authenticate'])
    if (this.#sent === 'digest' && !this.#staleRetried) {
      const retry = this.#staleRetry(challenges)
      if (retry !== undefined) return retry
    }
    if (this.#sent === 'bearer' && !this.#refreshed && challenges.some((c) => c.scheme === 'bearer')) return this.#bearerRefresh()
    if (this.#answered) return undefined
    return this.#answer(challenges)
  }

  /** RFC 7616 3.3: stale=true, the password was right and the nonce is not: once more with the new one. */
  #staleRetry (challenges: Challenge[]): Replay {
    const state = this.#state
    const stale = challenges.find((c) => c.scheme === 'digest' && (c.params.stale ?? '').toLowerCase() === 'true' &&
      (c.params.algorithm ?? 'MD5').toLowerCase() === (state.digest as DigestSession).algorithm.toLowerCase())
    const session = stale === undefined ? undefined : digestSession(stale)
    if (session === undefined) return undefined
    this.#staleRetried = true
    state.digest = session
    this.#credentials.onEvent?.({ type: 'challenge-answered', origin: this.#origin, scheme: 'digest', algorithm: session.algorithm, reason: 'stale' })
    const password = this.#credentials.passwords.get(this.#origin) as PasswordCredential
    const { method, path } = this.opts
    return () => this.#with(digestAuthorization(session, password, method, path))
  }

  /** A refused token: the provider is asked for a fresh one, once. */
  #bearerRefresh (): Replay {
    const origin = this.#origin
    const state = this.#state
    const token = this.#credentials.tokens.get(origin) as TokenCredential
    this.#refreshed = true
    this.#answered = true
    this.#credentials.onEvent?.({ type: 'challenge-answered', origin, scheme: 'bearer', reason: 'refresh' })
    return async () => {
      const fresh = await token.token({ origin, refresh: true })
      const value = bearerValue(fresh)
      state.token = fresh
      return this.#with(value)
    }
  }

  /** The first answer to a challenge: the strongest scheme this origin has credentials for. */
  #answer (challenges: Challenge[]): Replay {
    const origin = this.#origin
    const state = this.#state
    const { passwords, tokens, onEvent } = this.#credentials
    const password = passwords.get(origin)
    const token = tokens.get(origin)
    // The strongest answer this origin's credentials give (ties: the server's order).
    const offered = answerable(challenges, password, token)
    const chosen = offered[0]
    if (chosen === undefined) return undefined
    const method = this.opts.method
    const uri = this.opts.path
    const floor = floorOf(origin, this.#credentials.weakest)
    if (chosen.rank < floor) {
      // Nothing is sent: the request fails with what was offered and the option that refused it.
      const names = [...new Set(offered.map(answerName))]
      const err = new ConventionsClientError(clientErrorCodes.WEAK_CHALLENGE,
        `401 offered only ${names.join(', ')} over plain http, weaker than weakestAuth (${floorName(floor)}${this.#credentials.weakest === undefined ? ', the default to a host that is not loopback' : ''}): no credentials were sent`,
        { status: 401, method, url: urlOf(this.opts), offered: names })
      return () => { throw err }
    }
    this.#answered = true
    this.#sent = chosen.scheme
    state.scheme = undefined
    if (chosen.scheme === 'digest') {
      state.digest = chosen.session
      state.scheme = 'digest'
      onEvent?.({ type: 'challenge-answered', origin, scheme: 'digest', algorithm: chosen.session.algorithm, reason: 'challenge' })
      return () => this.#with(digestAuthorization(chosen.session, password as PasswordCredential, method, uri))
    }
    onEvent?.({ type: 'challenge-answered', origin, scheme: chosen.scheme, reason: 'challenge' })
    if (chosen.scheme === 'basic') {
      state.scheme = 'basic'
      return () => this.#with(remembered(this.#credentials, origin, state, method, uri) as string)
    }
    return async () => {
      // the token provider is asked when a Bearer challenge is answered; its token is kept for the next requests
      const given = state.token ?? await (token as TokenCredential).token({ origin, refresh: false })
      const value = bearerValue(given)
      state.token = given
      state.scheme = 'bearer'
      return this.#with(value)
    }
  }
}

/** An undici interceptor that answers a 401 with the strongest scheme the server offers (Digest, RFC 7616; Bearer, RFC 6750; Basic, RFC 7617), only to the credential's origin. */
export function authInterceptor (options: AuthInterceptorOptions): Dispatcher.DispatcherComposeInterceptor {
  const credentials = credentialsOf(options)
  const states = new Map<string, OriginState>()
  return (dispatch) => function authDispatch (given, handler) {
    const opts = withQuery(given)
    const origin = originOf(opts)
    const headers: RequestHeaders = headerRecord(opts.headers)
    if ((!credentials.passwords.has(origin) && !credentials.tokens.has(origin)) || headers.authorization !== undefined) return dispatch(opts, handler)
    let state = states.get(origin)
    if (state === undefined) states.set(origin, state = {})
    const sent = state.scheme
    const authorization = remembered(credentials, origin, state, opts.method, opts.path)
    const first = authorization === undefined ? opts : { ...opts, headers: { ...headers, authorization } }
    return dispatch(first, new AuthHandler(credentials, dispatch, first, handler, origin, state, sent))
  }
}
