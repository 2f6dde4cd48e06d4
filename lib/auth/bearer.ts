/**
 * The "Bearer" authentication scheme (RFC 6750): reading the token from an
 * `Authorization` value and writing `WWW-Authenticate` challenges with the
 * RFC 6750 3.1 error codes. Whether a token is valid is the application's call.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { formatChallenge, isToken68, parseAuthorization, type ParseAuthorizationOptions } from '@http-conventions/grammar'

export type BearerFailure =
  /** no Authorization value */
  | 'missing'
  /** another scheme */
  | 'wrong-scheme'
  /** not `Bearer <b64token>` (RFC 6750 2.1), or too long */
  | 'malformed'

export type BearerResult =
  | { ok: true, token: string }
  | { ok: false, reason: BearerFailure }

/** RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
export function isB64token (s: string): boolean {
  return isToken68(s)
}

/** Reads `Bearer <b64token>` (RFC 6750 2.1; the scheme is case-insensitive, RFC 9110 11.1). Never throws. */
export function parseBearer (authorization: unknown, options?: ParseAuthorizationOptions): BearerResult {
  const parsed = parseAuthorization(authorization, options)
  if (!parsed.ok) return { ok: false, reason: parsed.reason === 'missing' ? 'missing' : 'malformed' }
  if (parsed.scheme !== 'bearer') return { ok: false, reason: 'wrong-scheme' }
  if (parsed.token68 === undefined) return { ok: false, reason: 'malformed' }
  return { ok: true, token: parsed.token68 }
}

/** RFC 6750 3.1 error codes. */
export type BearerError = 'invalid_request' | 'invalid_token' | 'insufficient_scope'

export interface BearerChallengeOptions {
  realm?: string
  /**
   * RFC 6750 3: space-delimited scope tokens (or an array of them). Required with
   * `insufficient_scope`, where it names the scope the resource needs.
   */
  scope?: string | readonly string[]
  /** Omit when the request carried no credentials (RFC 6750 3.1). */
  error?: BearerError
  /** Human-readable text; only with an error (RFC 6750 3). */
  errorDescription?: string
  /** Only with an error (RFC 6750 3). */
  errorUri?: string
}

// RFC 6750 3: error and error_description use %x20-21 / %x23-5B / %x5D-7E, scope
// tokens %x21 / %x23-5B / %x5D-7E: no quote, no backslash, nothing to escape.
function checkChars (name: string, value: string, allowSpace: boolean): void {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if ((c === 0x20 && allowSpace) || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e)) continue
    throw new TypeError(`RFC 6750 3: ${name} holds a character it may not carry`)
  }
}

const ERRORS: ReadonlySet<string> = new Set(['invalid_request', 'invalid_token', 'insufficient_scope'])

/**
 * Writes a Bearer challenge (RFC 6750 3):
 * - no credentials came: `Bearer realm="…"` with no error code (3.1: the server
 *   SHOULD NOT include an error code or other error information);
 * - `invalid_token`: `error="invalid_token", error_description="…"`;
 * - `insufficient_scope`: `error="insufficient_scope", scope="…"`.
 * Throws a TypeError on values RFC 6750 3 forbids (they come from code, not requests).
 */
export function bearerChallenge (options: BearerChallengeOptions = {}): string {
  const params: Array<[string, string]> = []
  if (options.realm !== undefined) params.push(['realm', options.realm])
  if (options.scope !== undefined) {
    const scopes = typeof options.scope === 'string' ? options.scope.split(' ') : options.scope
    for (const s of scopes) {
      if (s.length === 0) throw new TypeError('RFC 6750 3: scope tokens are non-empty and separated by one space')
      checkChars('scope', s, false)
    }
    params.push(['scope', scopes.join(' ')])
  }
  if (options.error !== undefined) {
    if (!ERRORS.has(options.error)) throw new TypeError(`RFC 6750 3.1: unknown error code ${JSON.stringify(options.error)}`)
    params.push(['error', options.error])
    if (options.errorDescription !== undefined) {
      checkChars('error_description', options.errorDescription, true)
      params.push(['error_description', options.errorDescription])
    }
    if (options.errorUri !== undefined) {
      // RFC 6750 3: error_uri is a URI-reference, %x21 / %x23-5B / %x5D-7E
      checkChars('error_uri', options.errorUri, false)
      params.push(['error_uri', options.errorUri])
    }
  } else if (options.errorDescription !== undefined || options.errorUri !== undefined) {
    throw new TypeError('RFC 6750 3: error_description and error_uri go with an error code')
  }
  if (options.error === 'insufficient_scope' && options.scope === undefined) {
    throw new TypeError('RFC 6750 3.1: insufficient_scope names the scope needed')
  }
  return formatChallenge('Bearer', params)
}

/**
 * Compares a presented token with a list of accepted ones in constant time:
 * both sides are hashed to equal-length SHA-256 digests and compared with
 * timingSafeEqual, and every key is compared whatever the outcome.
 */
export function createBearerKeyMatcher (keys: Iterable<string>): (token: string) => boolean {
  const digests = Array.from(keys, (k) => {
    if (!isB64token(k)) throw new TypeError('RFC 6750 2.1: a bearer key must be a b64token')
    return createHash('sha256').update(k).digest()
  })
  if (digests.length === 0) throw new TypeError('at least one bearer key is needed')
  return function matchBearerKey (token: string): boolean {
    const presented = createHash('sha256').update(String(token)).digest()
    let match = false
    for (const d of digests) match = timingSafeEqual(d, presented) || match
    return match
  }
}
