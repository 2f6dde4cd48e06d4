/**
 * What the scheme adapters (basic.ts, bearer.ts, digest.ts) share with the auth plugin:
 * the principal, the outcome of one verification, and option checks.
 */
import type { FastifyRequest } from 'fastify'
import { invalidOption } from '../../../lib/errors'
import { isThenable } from '../../services/shared'

/**
 * The schemes a route may accept: the three HTTP schemes, and `app`, the app's own
 * authentication (a session, ...) given as the `app` option.
 */
export type AuthScheme = 'basic' | 'bearer' | 'digest' | 'app'

/** Who the request authenticated as: available to handlers as `request.principal`. */
export interface AuthPrincipal {
  scheme: AuthScheme
  /** the user name (Basic, Digest), the token's subject (Bearer) or the app's own (app) */
  subject: string
  /** what the credentials grant */
  scopes: readonly string[]
}

/**
 * A user of Basic or Digest: the password, or `{ password, scopes }`. Users without
 * their own scopes get the scheme's `scopes` option.
 */
export type AuthUser = string | { password: string, scopes?: readonly string[] }

/** Why credentials were refused; the client is only told the kind (never which part failed). */
export type FailureKind =
  /** wrong, unknown or malformed credentials */
  | 'invalid'
  /** a Bearer token past its expiry */
  | 'expired'
  /** RFC 7616 3.3: correct Digest response on an expired (or used) nonce; challenge with stale=true */
  | 'stale'
  /** the nonce-count store failed: fail closed */
  | 'unavailable'
  /**
   * the app's own code (a verifier, `lookup`) threw, rejected, or returned what its contract does
   * not allow: fail closed, whatever the value (undefined, null, 0, '' and false included)
   */
  | 'failed'

export type Outcome =
  | { ok: true, principal: AuthPrincipal }
  | { ok: false, kind: FailureKind, reason: string }

export type Verdict = Outcome | Promise<Outcome>

/** What the plugin hands an adapter: the parsed `Authorization` value (RFC 9110 11.4). */
export interface Credentials {
  token68?: string
  params?: Record<string, string>
}

export const WHERE = 'fastify-http-conventions-auth'

export function fail (kind: FailureKind, reason: string): Outcome {
  return { ok: false, kind, reason }
}

/** What a failure of the app's code was, for the log: its type, and an Error's name and message (never the value itself). */
function describeFailure (err: unknown): string {
  try {
    if (err instanceof Error) return `${err.name}: ${err.message}`
  } catch {}
  return err === null ? 'null' : Array.isArray(err) ? 'an array' : `a value of type ${typeof err}`
}

/**
 * Every throw or rejection of the app's code, whatever its value, as a refusal. A falsy reason
 * handed to a hook's `next()` would read as success, so a failure never travels as one.
 */
export function asRefusal (scheme: string, err: unknown): Outcome {
  return fail('failed', `${scheme}: the verifier failed: ${describeFailure(err)}`)
}

/**
 * Calls the app's code and reads its result with `accept`, synchronously when it returns a
 * value, after it settles when it returns a thenable (any, not only native promises). A throw
 * or rejection of either, whatever its value, is `refuse(err)`: nothing the app does can reach
 * the caller as an exception or a rejection.
 */
export function settle<T, R> (call: () => unknown, accept: (result: T) => R, refuse: (err: unknown) => R): R | Promise<R> {
  let result: unknown
  try {
    result = call()
    // A getter named `then` may throw as well: it is read here, inside the guard.
    if (!isThenable(result)) return accept(result as T)
  } catch (err) {
    return refuse(err)
  }
  return Promise.resolve(result as PromiseLike<T>).then(accept).then(undefined, refuse)
}

/**
 * Scopes from configuration: an array of non-empty strings without spaces, or one space-separated
 * string. The schemas check the scopes of the options and of `config.auth`; a user's own scopes
 * (an entry of a users table, which the schema leaves to userTable) are checked here.
 */
export function scopeList (value: unknown, name: string): readonly string[] {
  const list = typeof value === 'string' ? value.split(' ').filter((s) => s.length > 0) : value
  if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.length === 0 || /[\s"\\]/.test(s))) {
    throw invalidOption(WHERE, `${name} must be an array of scope tokens`)
  }
  return Object.freeze([...list as string[]])
}

/**
 * Scopes a verifier returned at request time, never trusted to be well formed: none given
 * (undefined or null) is `fallback`; a space-separated string or an array of strings is read;
 * anything else (a number, an array holding a non-string, ...) is null: not a principal.
 */
export function runtimeScopes (value: unknown, fallback: readonly string[]): readonly string[] | null {
  if (value === undefined || value === null) return fallback
  if (typeof value === 'string') return value.split(' ').filter((s) => s.length > 0)
  if (Array.isArray(value) && value.every((s) => typeof s === 'string')) return value as string[]
  return null
}

/** A result the app's code returned that its contract does not allow: refused, and logged as a failure of that code. */
export function notPrincipal (scheme: string, what: string): Outcome {
  return fail('failed', `${scheme}: ${what}`)
}

/** RFC 5234 B.1: CTL = %x00-1F / %x7F */
function hasControl (s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return true
  }
  return false
}

export interface UserEntry { password: string, scopes: readonly string[] }

/**
 * Validates the entries of a users map (an object, as authOptionsSchema says) at boot; passwords
 * NFC (RFC 7617 2.1, RFC 7616 3.3). In code, not in the schema: the user names are the map's
 * keys, and the message says what is wrong with a user, not where in the schema it failed.
 */
export function userTable (users: object, defaultScopes: readonly string[], name: string): Map<string, UserEntry> {
  const table = new Map<string, UserEntry>()
  for (const [user, value] of Object.entries(users)) {
    if (user.length === 0 || user.includes(':') || hasControl(user)) {
      // RFC 7617 2: a user-id has no colon and no control character
      throw invalidOption(WHERE, `${name}.users: user names are non-empty, without colon or control characters`)
    }
    const entry = typeof value === 'string' ? { password: value } : value as { password?: unknown, scopes?: unknown }
    if (entry === null || typeof entry !== 'object' || typeof entry.password !== 'string') {
      throw invalidOption(WHERE, `${name}.users: each user is a password or { password, scopes }`)
    }
    const scopes = entry.scopes === undefined ? defaultScopes : scopeList(entry.scopes, `${name}.users scopes`)
    table.set(user.normalize('NFC'), { password: entry.password.normalize('NFC'), scopes })
  }
  return table
}

export interface SchemeAdapter {
  scheme: Exclude<AuthScheme, 'app'>
  verify: (credentials: Credentials, request: FastifyRequest, algorithms?: ReadonlySet<string>) => Verdict
}
