/**
 * The spec is the default; the `rfc9110` profile restores every RFC behaviour the spec
 * departs from (docs/conventions.md). Each departure
 * also has its own option in the plugin it belongs to; an explicit option wins.
 */
export type Profile = 'spec' | 'rfc9110'

export interface ProfileDefaults {
  /** GET/HEAD "not modified": 412 (docs/conventions.md (Conditional requests)) or 304 (RFC 9110 13.1.2). */
  notModifiedStatus: 412 | 304
  /** Body over the limit: 411 (docs/conventions.md (Content-Length)) or 413 (RFC 9110 15.5.14). */
  limitStatus: 411 | 413
  /** Content-Length that does not match the body: 411 (docs/conventions.md (Content-Length)) or 400 (RFC 9112 6.3). */
  mismatchStatus: 411 | 400
  /** A body without Content-Length (chunked, or a POST/PUT/PATCH with none): refused (spec) or accepted (RFC 9112 6.1). */
  requireContentLength: boolean
  /** Valid credentials lacking scope: 401 (docs/conventions.md (Authentication)) or 403 (RFC 6750 3.1). */
  insufficientScopeStatus: 401 | 403
  /**
   * Whether the `envelope` error format gives way to RFC 9457 problem details for a client
   * whose Accept prefers `application/problem+json` (then the answer says `Vary: Accept`):
   * never under the spec (docs/conventions.md (errors): `application/json` bodies), as
   * RFC 9457 3 allows under the rfc9110 profile.
   */
  problemByAccept: boolean
}

const SPEC: ProfileDefaults = Object.freeze({
  notModifiedStatus: 412,
  limitStatus: 411,
  mismatchStatus: 411,
  requireContentLength: true,
  insufficientScopeStatus: 401,
  problemByAccept: false
})

const RFC9110: ProfileDefaults = Object.freeze({
  notModifiedStatus: 304,
  limitStatus: 413,
  mismatchStatus: 400,
  requireContentLength: false,
  insufficientScopeStatus: 403,
  problemByAccept: true
})

export function isProfile (value: unknown): value is Profile {
  return value === 'spec' || value === 'rfc9110'
}

export function profileDefaults (profile: Profile | undefined): ProfileDefaults {
  return profile === 'rfc9110' ? RFC9110 : SPEC
}
