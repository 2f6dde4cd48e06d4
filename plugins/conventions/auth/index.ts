/**
 * Authentication (docs/conventions.md, Authentication: the 401 row; RFC 9110 11, RFC 7617,
 * RFC 6750, RFC 7616): Basic, Bearer and Digest in one preParsing step of a protected route
 * (after every onRequest hook of the app, before any byte of the body is read), so that an
 * unauthenticated body is never parsed. Routes opt in with `config.auth`; a global
 * default protects every route. Every refusal is an error (401, or 403 for lacking
 * scope under rfc9110) that the suite's one writer renders (plugins/services/errors.ts)
 * with one `WWW-Authenticate` line per challenge: a small HTML page, or the route's JSON
 * error body for a client whose Accept prefers JSON. Handlers read `request.principal`.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import type { ErrorFormat } from '../../../lib/render'
import { parseAuthorization, type AuthorizationResult } from '@http-conventions/grammar'
import { basicChallenge } from '../../../lib/auth/basic'
import { bearerChallenge } from '../../../lib/auth/bearer'
import type { DigestAlgorithm } from '../../../lib/auth/digest'
import { forbidden, invalidOption, serviceUnavailable, unauthorized, type ConventionError } from '../../../lib/errors'
import { profileDefaults, type Profile } from '../../../lib/profile'
import { declareConvention, type RouteCompiler } from '../../host/suite'
import { writeError } from '../../services/errors'
import { createBasicAdapter, type BasicAuthOptions } from './basic'
import { createBearerAdapter, type BearerAuthOptions } from './bearer'
import { createDigestAdapter, type DigestAdapter, type DigestAuthOptions } from './digest'
import { asRefusal, runtimeScopes, scopeList, settle, WHERE, type AuthPrincipal, type AuthScheme, type FailureKind, type Outcome, type SchemeAdapter } from './common'
import { CACHE_CONTROL_TEXT, isThenable, methodsOf, replacePayload, routeWhere } from '../../services/shared'
import { FUNCTION_SCHEMA, MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../../services/options'
import { MAX_STORE_TIMEOUT_MS } from '../../../lib/io/stores/deadline'
import { defineConvention } from '../../host/suite'
import { AUTHENTICATED } from '../../services/capabilities'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'auth',
  plugin: WHERE,
  configKey: 'auth',
  provides: [AUTHENTICATED.name],
  steps: [
    { name: 'auth', phase: 'preParsing', after: ['content-length'] }, // 401 before the body is parsed, after the 411 that needs no credentials
    { name: 'auth:challenges', phase: 'onSend', after: ['errors:passed-on'] } // RFC 9110 15.5.2: a 401 another plugin wrote gets WWW-Authenticate
  ]
})

export type { AuthPrincipal, AuthScheme, AuthUser } from './common'
export type { BasicAuthOptions, BasicVerifyResult } from './basic'
export type { BearerAuthOptions, BearerTokenInfo, BearerVerifyResult } from './bearer'
export type { DigestAuthOptions, DigestLookupRecord } from './digest'

/** What the app's own authentication says of a request it recognises: who, and what they may do. */
export interface AppPrincipal {
  subject: string
  scopes?: readonly string[] | string
}

/**
 * The app's own authentication (a session cookie, a JWT checked by @fastify/jwt, ...): its
 * `verify` returns the principal of a request it authenticates, or null to leave the request to
 * the HTTP schemes. It is the scheme `app` of `config.auth.schemes`.
 */
export interface AppAuthOptions {
  verify: (request: FastifyRequest) => AppPrincipal | null | undefined | Promise<AppPrincipal | null | undefined>
}

/** A strategy for @fastify/auth, or an onRequest/preHandler hook: the suite's schemes, as `config.auth` would check them. */
export type ConventionAuthStrategy = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void

/** Options of the Authentication plugin (`auth` of the umbrella): the schemes offered (at least one), the realm, and the refusals. */
export interface AuthOptions {
  profile?: Profile
  /** RFC 9110 11.5: the protection space named in every challenge (default "api"). */
  realm?: string
  /** Basic (RFC 7617): `{ users }` or `{ verify }`. */
  basic?: BasicAuthOptions
  /** Bearer (RFC 6750): `{ verify(token) => { subject, scopes, expiresAt } | null }`. */
  bearer?: BearerAuthOptions
  /** Digest (RFC 7616): `{ secret, users | lookup, algorithms, nonceTtlMs, store, userhash }`. */
  digest?: DigestAuthOptions
  /** The app's own authentication (a session, ...): `{ verify(request) => { subject, scopes } | null }`, tried first. */
  app?: AppAuthOptions
  /**
   * The Digest algorithm challenged first (default: the strongest, RFC 7616 3.7). Clients that
   * read only the first challenge and know only MD5 (Python's urllib) need `'MD5'`.
   */
  digestFirst?: DigestAlgorithm
  /**
   * Routes without `config.auth`: open (false, the default), protected (true) or protected with
   * scopes. A route of OPTIONS alone (a CORS preflight, which never carries credentials, or
   * the suite's own OPTIONS answer) stays open unless `options: true`.
   */
  protect?: boolean | { scopes?: readonly string[] | string, options?: boolean }
  /** 'separate' (default): one WWW-Authenticate line per challenge; 'single': one comma-separated line. */
  challengeLines?: 'separate' | 'single'
  /** Valid credentials lacking scope: 401 (spec) or 403 (rfc9110, RFC 6750 3.1). */
  insufficientScopeStatus?: 401 | 403
  /** The Digest nonce-count store failed: refuse with 401 (default) or 503. Never let the request through. */
  storeFailureStatus?: 401 | 503
}

/** `config.auth`: false (open), true (protected), or which scopes, schemes and Digest algorithms. */
export type AuthRouteConfig = boolean | {
  /** every one of these scopes is needed */
  scopes?: readonly string[] | string
  /** schemes accepted and offered on this route (default every enabled one) */
  schemes?: readonly AuthScheme[]
  /** Digest algorithms offered on this route, of those enabled (default all) */
  algorithms?: readonly DigestAlgorithm[]
}

declare module 'fastify' {
  interface FastifyRequest {
    /** On protected routes: who the request authenticated as. Null elsewhere. */
    principal: AuthPrincipal | null
  }
  interface FastifyInstance {
    /**
     * The suite's schemes as a strategy for @fastify/auth (`app.auth([...])`) or a hook: checks
     * the request as a route with this `config.auth` would (default `true`), sets
     * `request.principal`, or fails with the suite's 401 (its challenges).
     */
    conventionAuth: (config?: AuthRouteConfig) => ConventionAuthStrategy
  }
}

/** Scopes: an array of scope tokens, or one space-separated string of them (RFC 6750 3: no space, quote or backslash in a token). */
const SCOPES = { type: ['string', 'array'], pattern: '^(?: |[^\\s"\\\\])*$', items: { type: 'string', pattern: '^[^\\s"\\\\]+$' }, [MESSAGE]: 'must be an array of scope tokens' } as const
/** user: password, or user: { password, scopes } (the names and entries are checked as the table is built: the message names the user's problem). */
const USERS = { type: 'object', [MESSAGE]: 'must be an object of user: password' } as const
/** A function, with the text that follows its name when it is not one. */
function fn (message: string): { 'x-typeof': 'function', [MESSAGE]: string } {
  return { ...FUNCTION_SCHEMA, [MESSAGE]: message } as { 'x-typeof': 'function', [MESSAGE]: string }
}

/** A branch of anyOf or oneOf: the object has `name` (strict mode wants it declared beside `required`). */
function has<N extends string> (name: N): { required: [N], properties: Record<N, true> } {
  return { required: [name], properties: { [name]: true } as Record<N, true> }
}

/**
 * The plugin's options as JSON Schema, checked at registration. Then, in code: `digestFirst`
 * against `digest.algorithms` (one option against another), the realm as a header value (as
 * the challenges are built), the users tables' names and entries (as the tables are built), and
 * Digest's secret, algorithms, nonce lifetime and opaque (by lib/auth/digest.ts, which checks
 * its own options for any caller).
 */
export const authOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    realm: { type: 'string', [MESSAGE]: 'must be a string' },
    basic: {
      type: 'object',
      properties: { users: USERS, verify: fn('must be a function'), scopes: SCOPES },
      oneOf: [has('users'), has('verify')],
      [MESSAGE]: { type: 'must be { users } or { verify }', oneOf: 'needs exactly one of users and verify' }
    },
    bearer: {
      type: 'object',
      required: ['verify'],
      properties: { verify: FUNCTION_SCHEMA, now: fn('must be a function') },
      [MESSAGE]: 'must be { verify(token) => { subject, scopes, expiresAt } | null }'
    },
    digest: {
      type: 'object',
      required: ['secret'],
      properties: {
        secret: { not: { type: 'null' }, [MESSAGE]: 'is required: the HMAC key of the nonces, at least 32 bytes, shared by every instance' },
        algorithms: {},
        users: USERS,
        lookup: fn('must be a function'),
        nonceTtlMs: {},
        store: {
          type: 'object',
          required: ['seen'],
          properties: { seen: FUNCTION_SCHEMA, generation: fn('must be a method (the store generation new nonces carry)') },
          [MESSAGE]: 'must have a seen(nonce, nc, ttlMs) method'
        },
        storeTimeoutMs: { type: 'integer', minimum: 1, maximum: MAX_STORE_TIMEOUT_MS, [MESSAGE]: `must be an integer number of milliseconds from 1 to ${MAX_STORE_TIMEOUT_MS}` },
        userhash: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
        opaque: {},
        scopes: SCOPES,
        now: fn('must be a function')
      },
      oneOf: [has('users'), has('lookup')],
      [MESSAGE]: { type: 'must be { secret, users | lookup, ... }', oneOf: 'needs exactly one of users and lookup' }
    },
    app: { type: 'object', required: ['verify'], properties: { verify: FUNCTION_SCHEMA }, [MESSAGE]: 'must be { verify(request) }' },
    digestFirst: { type: 'string', [MESSAGE]: 'must be one of digest.algorithms' },
    protect: {
      type: ['boolean', 'object'],
      properties: { scopes: SCOPES, options: { type: 'boolean', [MESSAGE]: 'must be a boolean' } },
      additionalProperties: false,
      [MESSAGE]: 'must be a boolean or { scopes, options }'
    },
    challengeLines: { enum: ['separate', 'single'], [MESSAGE]: "must be 'separate' or 'single'" },
    insufficientScopeStatus: { enum: [401, 403], [MESSAGE]: 'must be 401 or 403' },
    storeFailureStatus: { enum: [401, 503], [MESSAGE]: 'must be 401 or 503' }
  },
  // RFC 9110 11.6.1: every 401 carries a challenge, so the app's own authentication (which has none) is not enough alone.
  anyOf: [has('basic'), has('bearer'), has('digest')],
  [MESSAGE]: { type: 'options must be an object', anyOf: 'enable at least one of basic, bearer and digest' }
} as const

/**
 * A route's `config.auth` as JSON Schema, checked when the route is added (and by
 * `conventionAuth(config)`). Then, in code: its schemes and algorithms against those the
 * plugin's options enable.
 */
export const authRouteConfigSchema = {
  type: ['boolean', 'object'],
  additionalProperties: false,
  properties: {
    scopes: SCOPES,
    schemes: { type: 'array', minItems: 1, items: { enum: ['app', 'basic', 'bearer', 'digest'] }, [MESSAGE]: 'must be a non-empty list of app, basic, bearer and digest' },
    algorithms: {
      type: 'array',
      minItems: 1,
      items: { enum: ['SHA-512-256', 'SHA-256', 'MD5', 'SHA-512-256-sess', 'SHA-256-sess', 'MD5-sess'] },
      [MESSAGE]: 'must be a non-empty list of Digest algorithms (SHA-512-256, SHA-256, MD5, or one of them -sess)'
    }
  },
  [MESSAGE]: 'must be a boolean or { scopes, schemes, algorithms }'
} as const

const checkOptions = optionsChecker(WHERE, authOptionsSchema)
const checkRouteConfig = routeConfigChecker<AuthRouteConfig>('auth', authRouteConfigSchema)
const SCHEMES: ReadonlyArray<Exclude<AuthScheme, 'app'>> = ['digest', 'basic', 'bearer'] // RFC 7616 3.7 / RFC 9110 11.6.1: strongest first

// Bodies say what went wrong, never which part of the credentials (user, password, token, nonce).
const MESSAGES = {
  missing: 'Authentication is required to access this resource.',
  invalid: 'The credentials sent are not valid for this resource.',
  expired: 'The credentials sent have expired. Authenticate again.',
  insufficient: 'The credentials sent do not grant access to this resource.',
  unavailable: 'The credentials could not be verified at the moment. Try again later.'
} as const

/** RFC 9110 11.6.2: Authorization is a singleton field; Node keeps the first of several and drops the rest. */
function repeatedAuthorization (raw: string[]): boolean {
  let n = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++n > 1) return true
  }
  return false
}

// ---------------------------------------------------------------------------------------
// Options

/** The plugin's statuses and challenge layout, resolved once at registration. */
interface Settings {
  readonly insufficientStatus: 401 | 403
  readonly storeFailureStatus: 401 | 503
  /** `challengeLines: 'single'`: the challenges on one comma-separated line. */
  readonly single: boolean
}

function resolveSettings (opts: AuthOptions): Settings {
  checkOptions(opts)
  return {
    insufficientStatus: opts.insufficientScopeStatus ?? profileDefaults(opts.profile).insufficientScopeStatus,
    storeFailureStatus: opts.storeFailureStatus ?? 401,
    single: opts.challengeLines === 'single'
  }
}

// ---------------------------------------------------------------------------------------
// Plan: what a protected route gets, as data

/** Everything a protected route needs, computed once when the route is added (the work is done once, not per request). */
interface RoutePlan {
  scopes: readonly string[]
  adapters: Map<string, SchemeAdapter>
  /** the app's own authentication, when the route accepts it */
  app: AppAuthOptions['verify'] | undefined
  digest: DigestAdapter | undefined
  algorithms: ReadonlySet<string> | undefined
  /** where the `digestFirst` algorithm's challenge is among the route's Digest challenges (-1: not offered) */
  digestFirst: number
  basicLine: string | undefined
  bearer: { plain: string, invalid: string, expired: string, insufficient: string } | undefined
}

/** The plan of a route from its options, or null for an open route. */
type Planner = (route: RouteOptions) => RoutePlan | null

/** The schemes enabled at registration, with the challenges they send: built once. */
interface Schemes {
  readonly adapters: ReadonlyMap<Exclude<AuthScheme, 'app'>, SchemeAdapter>
  readonly digest: DigestAdapter | undefined
  readonly basicLine: string | undefined
  readonly bearerLines: RoutePlan['bearer']
}

/** What every route's plan is made from, resolved once at registration. */
interface Planning {
  readonly realm: string
  readonly schemes: Schemes
  readonly app: AppAuthOptions | undefined
  readonly digestFirst: DigestAlgorithm | undefined
  readonly protect: NonNullable<AuthOptions['protect']>
  readonly defaultScopes: readonly string[]
  /** The schemes a route accepts unless its config names others, the app's own first. */
  readonly enabled: readonly AuthScheme[]
  /** The Bearer insufficient_scope challenge of each list of scopes, built once per list. */
  readonly insufficientLines: Map<string, string>
}

/** Creates the adapters of the enabled schemes and their challenge lines. */
function createSchemes (opts: AuthOptions, realm: string): Schemes {
  let basicLine: string | undefined
  let bearerLines: RoutePlan['bearer']
  const adapters = new Map<Exclude<AuthScheme, 'app'>, SchemeAdapter>()
  let digest: DigestAdapter | undefined
  try {
    if (opts.digest !== undefined) {
      digest = createDigestAdapter(opts.digest, realm)
      adapters.set('digest', digest)
    }
    if (opts.basic !== undefined) {
      adapters.set('basic', createBasicAdapter(opts.basic))
      // RFC 7617 2.1: charset="UTF-8"
      basicLine = basicChallenge(realm)
    }
    if (opts.bearer !== undefined) {
      adapters.set('bearer', createBearerAdapter(opts.bearer))
      bearerLines = {
        // RFC 6750 3.1: no error code when the request carried no credentials
        plain: bearerChallenge({ realm }),
        invalid: bearerChallenge({ realm, error: 'invalid_token', errorDescription: 'The access token is invalid' }),
        expired: bearerChallenge({ realm, error: 'invalid_token', errorDescription: 'The access token expired' }),
        insufficient: ''
      }
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_HTTP_CONVENTIONS_INVALID_OPTION') throw err
    // formatChallenge refuses a realm that cannot travel in a header (RFC 9110 11.3)
    throw invalidOption(WHERE, (err as Error).message)
  }
  return { adapters, digest, basicLine, bearerLines }
}

function resolvePlanning (opts: AuthOptions): Planning {
  const realm = opts.realm ?? 'api'
  const digestFirst = opts.digestFirst
  // One option against another (and digest.algorithms' default): code.
  if (digestFirst !== undefined && (opts.digest === undefined || !(opts.digest.algorithms ?? ['SHA-256']).includes(digestFirst))) {
    throw invalidOption(WHERE, 'digestFirst must be one of digest.algorithms')
  }
  const schemes = createSchemes(opts, realm)
  const protect = opts.protect ?? false
  const defaultScopes = typeof protect === 'object' && protect.scopes !== undefined ? scopeList(protect.scopes, 'protect.scopes') : []
  const enabled: AuthScheme[] = SCHEMES.filter((s) => schemes.adapters.has(s))
  // The app's own authentication is tried first on every protected route, unless a route's schemes leave it out.
  if (opts.app !== undefined) enabled.unshift('app')
  return { realm, schemes, app: opts.app, digestFirst, protect, defaultScopes, enabled, insufficientLines: new Map() }
}

/** The Bearer challenges of a route that needs `scopes`. */
function bearerLinesFor (g: Planning, scopes: readonly string[]): NonNullable<RoutePlan['bearer']> {
  const key = scopes.join(' ')
  let line = g.insufficientLines.get(key)
  if (line === undefined) {
    // RFC 6750 3.1: insufficient_scope names the scope needed (a route without scopes never answers it)
    line = scopes.length === 0 ? '' : bearerChallenge({ realm: g.realm, error: 'insufficient_scope', scope: scopes, errorDescription: 'The access token lacks a needed scope' })
    g.insufficientLines.set(key, line)
  }
  return { ...(g.schemes.bearerLines as NonNullable<RoutePlan['bearer']>), insufficient: line }
}

function buildPlan (g: Planning, scopes: readonly string[], schemes: readonly AuthScheme[], algorithms: ReadonlySet<string> | undefined): RoutePlan {
  const routeDigest = schemes.includes('digest') ? g.schemes.digest : undefined
  const routeAlgorithms = routeDigest === undefined ? [] : routeDigest.algorithms.filter((a) => algorithms === undefined || algorithms.has(a.toLowerCase()))
  const routeAdapters = new Map<string, SchemeAdapter>()
  for (const s of SCHEMES) {
    if (schemes.includes(s)) routeAdapters.set(s, g.schemes.adapters.get(s) as SchemeAdapter)
  }
  const bearer = routeAdapters.has('bearer') ? bearerLinesFor(g, scopes) : undefined
  return {
    scopes,
    adapters: routeAdapters,
    app: schemes.includes('app') ? g.app?.verify : undefined,
    digest: routeDigest,
    algorithms,
    digestFirst: g.digestFirst === undefined ? -1 : routeAlgorithms.indexOf(g.digestFirst),
    basicLine: routeAdapters.has('basic') ? g.schemes.basicLine : undefined,
    bearer
  }
}

/** `config.auth.schemes`, checked against the enabled ones. */
function routeSchemes (g: Planning, where: string, c: Exclude<AuthRouteConfig, boolean>): readonly AuthScheme[] {
  if (c.schemes === undefined) return g.enabled
  // Against the plugin's options: code.
  if (c.schemes.some((s) => !g.enabled.includes(s))) {
    throw invalidOption(where, `config.auth.schemes must list enabled schemes (${g.enabled.join(', ')})`)
  }
  // RFC 9110 11.6.1: a 401 of the route must carry a challenge; the app's own authentication has none.
  if (!c.schemes.some((s) => g.schemes.adapters.has(s as Exclude<AuthScheme, 'app'>))) throw invalidOption(where, 'config.auth.schemes needs basic, bearer or digest beside app (a 401 carries their challenges)')
  return c.schemes
}

/** `config.auth.algorithms`, checked against the enabled Digest algorithms (lower-cased). */
function routeAlgorithms (g: Planning, where: string, c: Exclude<AuthRouteConfig, boolean>, schemes: readonly AuthScheme[]): Set<string> | undefined {
  if (c.algorithms === undefined) return undefined
  const digest = g.schemes.digest
  // Against the plugin's options and the route's schemes: code.
  if (digest === undefined || !schemes.includes('digest')) throw invalidOption(where, 'config.auth.algorithms needs Digest on the route')
  const offered = digest.algorithms
  if (c.algorithms.some((a) => !offered.includes(a))) {
    throw invalidOption(where, `config.auth.algorithms must list enabled Digest algorithms (${offered.join(', ')})`)
  }
  return new Set(c.algorithms.map((a) => a.toLowerCase()))
}

/** A route's plan from its `config.auth`: null (open), the default plan, or its own. */
function planRoute (g: Planning, byDefault: RoutePlan, route: RouteOptions): RoutePlan | null {
  const where = routeWhere(route)
  const c = checkRouteConfig(where, (route.config as { auth?: unknown } | undefined)?.auth)
  if (c === false) return null
  if (c === undefined) return protects(g.protect, methodsOf(route)) ? byDefault : null
  if (c === true) return byDefault
  const scopes = c.scopes === undefined ? g.defaultScopes : scopeList(c.scopes, `${where} config.auth.scopes`)
  const schemes = routeSchemes(g, where, c)
  const algorithms = routeAlgorithms(g, where, c, schemes)
  if (c.scopes === undefined && c.schemes === undefined && c.algorithms === undefined) return byDefault
  return buildPlan(g, scopes, schemes, algorithms)
}

/**
 * Whether `protect` covers a route without `config.auth`. A route of OPTIONS alone stays open
 * unless `protect.options`: a CORS preflight carries no credentials (Fetch, "CORS-preflight
 * request"), so protecting it would refuse every browser's cross-origin write.
 */
function protects (protect: AuthOptions['protect'], methods: readonly string[]): boolean {
  if (protect === undefined || protect === false) return false
  return !methods.every((m) => m === 'OPTIONS') || (typeof protect === 'object' && protect.options === true)
}

/** Validates the schemes once and returns the per-route planner (which validates `config.auth`). */
function planner (opts: AuthOptions): { plan: Planner, digest: DigestAdapter | undefined } {
  const g = resolvePlanning(opts)
  const byDefault = buildPlan(g, g.defaultScopes, g.enabled, undefined)
  return { plan: (route) => planRoute(g, byDefault, route), digest: g.schemes.digest }
}

// ---------------------------------------------------------------------------------------
// Steps

function challenges (s: Settings, p: RoutePlan, bearerLine: keyof NonNullable<RoutePlan['bearer']>, stale: boolean): string[] {
  // RFC 9110 11.6.1: one challenge per scheme (and Digest algorithm), strongest first, or the
  // algorithm of `digestFirst` first (RFC 7616 3.7 lets the server choose its preference order)
  const lines = p.digest === undefined ? [] : p.digest.challenges(stale, p.algorithms)
  if (p.digestFirst > 0) lines.unshift(...lines.splice(p.digestFirst, 1))
  if (p.basicLine !== undefined) lines.push(p.basicLine)
  if (p.bearer !== undefined) lines.push(p.bearer[bearerLine])
  return s.single ? [lines.join(', ')] : lines
}

/**
 * A 401 another plugin or the app wrote without challenges gets the route's, and
 * `Cache-Control: no-store`. An HTML page its producer wrote is kept; any other body
 * (@fastify/jwt's JSON, which says why a token was refused) becomes the suite's, written by
 * the one writer in the media type the request accepts: never the other producer's reason.
 */
function completeChallenges (s: Settings, request: FastifyRequest, reply: FastifyReply, payload: unknown, p: RoutePlan, format: ErrorFormat): unknown {
  if (reply.statusCode !== 401 || hasChallenge(reply.getHeader('www-authenticate'))) return undefined
  const err = unauthorized(request.headers.authorization === undefined ? MESSAGES.missing : MESSAGES.invalid, challenges(s, p, 'plain', false))
  if (/^text\/html/i.test(String(reply.getHeader('content-type') ?? ''))) {
    for (const name of Object.keys(err.headers)) reply.header(name, err.headers[name])
    return undefined
  }
  // What a step replaces, it releases: the other plugin's body (a file, a proxied upstream's stream).
  return replacePayload(payload, writeError(reply, err, format))
}

function refuse (s: Settings, p: RoutePlan, request: FastifyRequest, scheme: string, kind: FailureKind, reason: string): ConventionError {
  request.log.debug({ auth: { scheme, reason } }, 'credentials refused')
  const bearerSent = scheme === 'bearer'
  switch (kind) {
    case 'expired':
      return unauthorized(MESSAGES.expired, challenges(s, p, bearerSent ? 'expired' : 'plain', false))
    case 'stale':
      // RFC 7616 3.3: stale=true, the client retries with the new nonce without asking the user
      return unauthorized(MESSAGES.expired, challenges(s, p, 'plain', true))
    case 'unavailable':
      request.log.error({ auth: { scheme, reason } }, 'credentials could not be verified: refused (fail closed)')
      return s.storeFailureStatus === 503 ? serviceUnavailable(MESSAGES.unavailable) : unauthorized(MESSAGES.unavailable, challenges(s, p, 'plain', false))
    case 'failed':
      // The app's verifier threw, rejected or answered outside its contract: 401 with the
      // challenges (RFC 9110 15.5.2), never the handler, never the app's value as the answer.
      request.log.error({ auth: { scheme, reason } }, 'the verifier failed: refused (fail closed)')
      return unauthorized(MESSAGES.unavailable, challenges(s, p, 'plain', false))
    default:
      // RFC 6750 3.1: invalid_token only answers a Bearer token
      return unauthorized(MESSAGES.invalid, challenges(s, p, bearerSent ? 'invalid' : 'plain', false))
  }
}

function conclude (s: Settings, p: RoutePlan, request: FastifyRequest, outcome: Outcome, scheme: string, next: HookHandlerDoneFunction): void {
  if (!outcome.ok) return next(refuse(s, p, request, scheme, outcome.kind, outcome.reason))
  const principal = outcome.principal
  const required = p.scopes
  for (let i = 0; i < required.length; i++) {
    if (!principal.scopes.includes(required[i])) {
      request.log.debug({ auth: { scheme, reason: 'insufficient scope' } }, 'credentials refused')
      const bearerSent = scheme === 'bearer'
      // Conventions (Authentication) (insufficient credentials): 401; RFC 6750 3.1: 403 with insufficient_scope
      if (s.insufficientStatus === 403) return next(forbidden(MESSAGES.insufficient, bearerSent ? [(p.bearer as NonNullable<RoutePlan['bearer']>).insufficient] : []))
      return next(unauthorized(MESSAGES.insufficient, challenges(s, p, bearerSent ? 'insufficient' : 'plain', false)))
    }
  }
  request.principal = principal
  next()
}

/** Leaves the request to the HTTP schemes: what `auth.app.verify` returns when it does not recognise the request. */
const NOT_RECOGNISED = null

/** What `auth.app.verify` returned, as an outcome: a principal, or NOT_RECOGNISED (null, undefined, or what is not `{ subject, scopes? }`). */
function appOutcome (found: unknown): Outcome | typeof NOT_RECOGNISED {
  if (found === null || typeof found !== 'object' || typeof (found as AppPrincipal).subject !== 'string') return NOT_RECOGNISED
  const scopes = runtimeScopes((found as AppPrincipal).scopes, [])
  if (scopes === null) return NOT_RECOGNISED
  return { ok: true, principal: { scheme: 'app', subject: (found as AppPrincipal).subject, scopes } }
}

/**
 * The app's own authentication first: a principal lets the request in, null (or what is not a
 * principal) leaves it to the HTTP schemes, and a throw or rejection, whatever its value, refuses.
 */
function byApp (s: Settings, p: RoutePlan, request: FastifyRequest, verify: NonNullable<RoutePlan['app']>, next: HookHandlerDoneFunction): void {
  const decide = (outcome: Outcome | typeof NOT_RECOGNISED): void => {
    if (outcome === NOT_RECOGNISED) return byHeader(s, p, request, next)
    conclude(s, p, request, outcome, 'app', next)
  }
  const found = settle(() => verify(request), appOutcome, (err) => asRefusal('app', err))
  if (!isThenable(found)) return decide(found)
  found.then(decide)
}

function byHeader (s: Settings, p: RoutePlan, request: FastifyRequest, next: HookHandlerDoneFunction): void {
  const header = request.headers.authorization
  // RFC 9110 11.6.2 / conventions (Authentication) step 1: no credentials, every challenge (and no Bearer error code, RFC 6750 3.1)
  if (header === undefined) return next(unauthorized(MESSAGES.missing, challenges(s, p, 'plain', false)))
  if (repeatedAuthorization(request.raw.rawHeaders)) return next(refuse(s, p, request, 'none', 'invalid', 'Authorization field repeated'))
  const parsed: AuthorizationResult = parseAuthorization(header)
  if (!parsed.ok) {
    if (parsed.reason === 'missing') return next(unauthorized(MESSAGES.missing, challenges(s, p, 'plain', false)))
    return next(refuse(s, p, request, 'none', 'invalid', `Authorization ${parsed.reason}`))
  }
  const scheme = parsed.scheme
  const adapter = p.adapters.get(scheme)
  if (adapter === undefined) return next(refuse(s, p, request, 'none', 'invalid', 'scheme not offered here'))
  // The adapters turn every outcome of the app's code into an Outcome (settle); should one
  // fail all the same, that is a refusal too, never a reason handed to `next` as is.
  let verdict
  try {
    verdict = adapter.verify(parsed, request, p.algorithms)
  } catch (err) {
    /* c8 ignore next 2 -- no adapter throws: each settles the app's code (plugins/conventions/auth/common.ts); kept so that none ever could pass */
    return conclude(s, p, request, asRefusal(scheme, err), scheme, next)
  }
  // A synchronous verdict (Basic with users, most verifiers) is concluded without closures.
  if (!isThenable(verdict)) return conclude(s, p, request, verdict, scheme, next)
  verdict.then((outcome) => conclude(s, p, request, outcome, scheme, next), (err: unknown) => conclude(s, p, request, asRefusal(scheme, err), scheme, next))
}

/** The preParsing step of a protected route (or, as an onRequest or preHandler hook, a `conventionAuth` strategy). */
function authHook (s: Settings, p: RoutePlan): (request: FastifyRequest, reply: FastifyReply, next: HookHandlerDoneFunction) => void {
  return function authOnRequest (request: FastifyRequest, _reply: FastifyReply, next: HookHandlerDoneFunction): void {
    if (p.app !== undefined) return byApp(s, p, request, p.app, next)
    byHeader(s, p, request, next)
  }
}

/** Puts the plan's steps on the route, and documents its answers and security. */
function compileRoute (c: RouteCompiler, s: Settings, plan: Planner, byDefault: RoutePlan): void {
  const p = plan(c.route)
  // RFC 9110 15.5.2: every 401 carries WWW-Authenticate, whoever produced it (another plugin, the app).
  const format = c.errorFormat
  c.check('onSend', 'auth:challenges', (request, reply, payload) => completeChallenges(s, request, reply, payload, p ?? byDefault, format), { weak: true })
  if (p === null) return
  c.respond(401, { description: 'Unauthorized: no, invalid, expired or insufficient credentials', body: 'html', headers: ['WWW-Authenticate', 'Cache-Control'] })
  // RFC 6750 3.1: the 403 of insufficient_scope carries its challenge too.
  if (s.insufficientStatus === 403 && p.scopes.length > 0) c.respond(403, { description: 'Forbidden: the credentials lack a scope this route needs', body: 'html', headers: ['WWW-Authenticate', 'Cache-Control'] })
  if (s.storeFailureStatus === 503 && p.digest !== undefined) c.respond(503, { description: 'Service Unavailable: credentials cannot be verified now', body: 'html' })
  c.step('preParsing', 'auth', authHook(s, p))
  // OpenAPI: the schemes this route offers, and the scopes it needs.
  c.describe({
    security: { schemes: [...p.adapters.keys()] as Array<Exclude<AuthScheme, 'app'>>, scopes: p.scopes },
    headerTexts: { 'WWW-Authenticate': 'One challenge per accepted scheme', 'Cache-Control': CACHE_CONTROL_TEXT }
  })
  // Later conventions key per-user state by `request.principal` on protected routes.
  c.provide(AUTHENTICATED, p)
}

/**
 * The nonce store's generation is learnt before the first challenge (a Redis store asks
 * Redis once); a store that is down delays the start by at most its timeout, never fails it.
 */
function readyNonceStore (fastify: FastifyInstance, adapter: DigestAdapter): void {
  fastify.addHook('onReady', async function digestNonceStoreReady () {
    await adapter.refresh().catch((err: unknown) => fastify.log.warn({ err }, 'Digest nonce-count store not reached at start; the first nonces will be renewed (stale=true)'))
  })
}

function authPlugin (fastify: FastifyInstance, opts: AuthOptions, done: (err?: Error) => void): void {
  let settings: Settings
  let plan: Planner
  let digestAdapter: DigestAdapter | undefined
  try {
    settings = resolveSettings(opts)
    ;({ plan, digest: digestAdapter } = planner(opts))
  } catch (err) {
    return done(err as Error)
  }
  if (digestAdapter !== undefined) readyNonceStore(fastify, digestAdapter)
  const byDefault = plan(STRATEGY_ROUTE(true)) as RoutePlan
  try {
    declareConvention(fastify, {
      key: 'auth',
      plugin: WHERE,
      configKey: 'auth',
      // protect is a context-wide policy: plan() covers every route without config.auth.
      policy: opts.protect === undefined || opts.protect === false ? undefined : (methods) => protects(opts.protect, methods),
      compile: (c) => compileRoute(c, settings, plan, byDefault),
      refusesBodies: true
    }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  if (!fastify.hasRequestDecorator('principal')) fastify.decorateRequest('principal', null)
  // @fastify/auth strategies: the suite's schemes, checked as a route's config.auth would.
  fastify.decorate('conventionAuth', function conventionAuth (config: AuthRouteConfig = true): ConventionAuthStrategy {
    const p = plan(STRATEGY_ROUTE(config))
    // config was checked as a route's; a strategy that lets every request through is no strategy.
    if (p === null) throw invalidOption(WHERE, 'conventionAuth(config): config must ask for authentication (true or { scopes, schemes, algorithms })')
    return authHook(settings, p)
  })
  done()
}

/** What `conventionAuth(config)` plans from: a route with that `config.auth`. */
function STRATEGY_ROUTE (config: AuthRouteConfig): RouteOptions {
  return { method: 'conventionAuth', url: '(strategy)', config: { auth: config } } as unknown as RouteOptions
}

/** RFC 9110 11.6.1: a WWW-Authenticate field with at least one challenge. */
function hasChallenge (value: unknown): boolean {
  return Array.isArray(value) ? value.some((v) => typeof v === 'string' && v !== '') : typeof value === 'string' && value !== ''
}

/** Basic, Bearer and Digest authentication (docs/conventions.md (Authentication)), per route through `config.auth`. */
export const httpConventionsAuth = fp(authPlugin, { fastify: '^5.10.0', name: WHERE })

export type { DigestAlgorithm } from '../../../lib/auth/digest'
