/**
 * Bearer (RFC 6750) for the auth plugin: the token comes only from the `Authorization`
 * header (RFC 6750 2.1; the query string of 2.3 and the form body of 2.2 are never
 * read), and the service's `verify` says who it belongs to, what it grants and when
 * it expires.
 */
import type { FastifyRequest } from 'fastify'
import { asRefusal, fail, notPrincipal, runtimeScopes, settle, type Credentials, type Outcome, type SchemeAdapter, type Verdict } from './common'

/** What the service knows of a token; null or undefined when it knows none. */
export interface BearerTokenInfo {
  subject: string
  /** an array of scope tokens, or one space-separated string (RFC 6750 3) */
  scopes?: readonly string[] | string
  /** expiry, as a Date or milliseconds since the epoch; none when the token does not expire */
  expiresAt?: Date | number
}

/** What a Bearer `verify` returns: the token's information, or null/undefined to refuse it. */
export type BearerVerifyResult = BearerTokenInfo | null | undefined

/** Bearer authentication (RFC 6750): the service looks each token up with `verify`. */
export interface BearerAuthOptions {
  /** Looks a token up. Compare secrets in constant time (`createBearerKeyMatcher` helps). */
  verify: (token: string, request: FastifyRequest) => BearerVerifyResult | Promise<BearerVerifyResult>
  /** Clock in ms for expiry, for tests (default Date.now). */
  now?: () => number
}

const NONE: readonly string[] = Object.freeze([])
const UNKNOWN = fail('invalid', 'bearer: unknown token')
const EXPIRED = fail('expired', 'bearer: token expired')
const refusal = (err: unknown): Outcome => asRefusal('bearer', err)

export function createBearerAdapter (opts: BearerAuthOptions): SchemeAdapter {
  // Checked with the plugin's options (authOptionsSchema), its functions included.
  const verify = opts.verify
  const now = opts.now ?? Date.now

  function accept (info: BearerVerifyResult): Outcome {
    // null and undefined: a token the service does not know, as documented
    if (info === null || info === undefined) return UNKNOWN
    if (typeof info !== 'object' || typeof info.subject !== 'string') return notPrincipal('bearer', 'verify returned neither null nor { subject, scopes?, expiresAt? }')
    const scopes = runtimeScopes(info.scopes, NONE)
    if (scopes === null) return notPrincipal('bearer', 'verify returned scopes that are not scope tokens')
    if (info.expiresAt !== undefined) {
      const at = info.expiresAt instanceof Date ? info.expiresAt.getTime() : Number(info.expiresAt)
      // RFC 6750 3.1: an expired token is invalid_token; an unreadable expiry is treated as expired
      if (!(at > now())) return EXPIRED
    }
    return { ok: true, principal: { scheme: 'bearer', subject: info.subject, scopes } }
  }

  return {
    scheme: 'bearer',
    verify (credentials: Credentials, request: FastifyRequest): Verdict {
      const token = credentials.token68
      // RFC 6750 2.1: b64token (the token68 of RFC 9110 11.4); auth-params are not Bearer credentials
      if (token === undefined) return fail('invalid', 'bearer: not a b64token')
      // Any outcome of the service's code, a throw or rejection of any value included, is an Outcome.
      return settle(() => verify(token, request), accept, refusal)
    }
  }
}
