/**
 * RFC 9110 section 11: the `Authorization` credentials grammar and the
 * `WWW-Authenticate` challenge writer shared by the Basic, Bearer and Digest cores.
 *
 *   credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]     (11.4)
 *   challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]     (11.3)
 *   auth-param  = token BWS "=" BWS ( token / quoted-string )        (11.2)
 *   token68     = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
 *
 * The parser is a single left-to-right scan: linear in its input, no regular
 * expressions, and it never throws (any input that is not a string is refused).
 */
import { isToken, parseQuotedString, quoteString, skipOws, tokenEnd } from './tokens'

/** Default cap on the length of an `Authorization` value (8 KiB). */
export const DEFAULT_MAX_AUTHORIZATION_LENGTH = 8192

export interface ParseAuthorizationOptions {
  /** Longest value accepted, in characters; longer values are refused unread. */
  maxLength?: number
}

/** Why a value was refused. */
export type AuthorizationFailure =
  /** no value, an empty value, or a value that is not a string */
  | 'missing'
  /** longer than `maxLength` */
  | 'too-long'
  /** does not match the RFC 9110 11.4 grammar */
  | 'malformed'
  /** an auth-param name occurs twice (RFC 9110 11.2) */
  | 'duplicate-param'

export type AuthorizationResult =
  | {
    ok: true
    /** the auth-scheme, lower-cased (RFC 9110 11.1: schemes are case-insensitive) */
    scheme: string
    /** present when the credentials are a token68 */
    token68?: string
    /**
     * present when the credentials are auth-params: names lower-cased (RFC 9110 11.2),
     * values unquoted. The object has no prototype, so names such as `__proto__` are data.
     */
    params?: Record<string, string>
  }
  | { ok: false, reason: AuthorizationFailure }

// RFC 9110 11.2: token68 characters before the trailing "=" padding.
const TOKEN68 = new Uint8Array(128)
for (let c = 48; c <= 57; c++) TOKEN68[c] = 1
for (let c = 65; c <= 90; c++) TOKEN68[c] = 1
for (let c = 97; c <= 122; c++) TOKEN68[c] = 1
for (const c of '-._~+/') TOKEN68[c.charCodeAt(0)] = 1

/** Index just after the token68 starting at `i` (equal to `i` when there is none). */
function token68End (s: string, i: number): number {
  const start = i
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c >= 128 || TOKEN68[c] !== 1) break
    i++
  }
  if (i === start) return start
  while (s.charCodeAt(i) === 61) i++ // *"="
  return i
}

/** True when the whole string is one RFC 9110 11.2 token68 (also RFC 6750 b64token). */
export function isToken68 (s: string): boolean {
  return typeof s === 'string' && s.length > 0 && token68End(s, 0) === s.length
}

const MISSING = Object.freeze({ ok: false as const, reason: 'missing' as const })
const TOO_LONG = Object.freeze({ ok: false as const, reason: 'too-long' as const })
const MALFORMED = Object.freeze({ ok: false as const, reason: 'malformed' as const })
const DUPLICATE = Object.freeze({ ok: false as const, reason: 'duplicate-param' as const })

/**
 * Parses one `Authorization` (or `Proxy-Authorization`) field value.
 * Never throws; the cost is linear in `min(value.length, maxLength)`.
 */
export function parseAuthorization (value: unknown, options?: ParseAuthorizationOptions): AuthorizationResult {
  if (typeof value !== 'string') return MISSING
  const max = options?.maxLength ?? DEFAULT_MAX_AUTHORIZATION_LENGTH
  if (value.length > max) return TOO_LONG

  // RFC 9110 5.5: leading and trailing whitespace is not part of the field value.
  let end = value.length
  while (end > 0 && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--
  const s = value.slice(skipOws(value, 0), end)
  if (s.length === 0) return MISSING

  // RFC 9110 11.1: auth-scheme = token
  const schemeEnd = tokenEnd(s, 0)
  if (schemeEnd === 0) return MALFORMED
  const scheme = s.slice(0, schemeEnd).toLowerCase()
  if (schemeEnd === s.length) return { ok: true, scheme }

  // RFC 9110 11.4: 1*SP between the scheme and the credentials
  let i = schemeEnd
  if (s.charCodeAt(i) !== 32) return MALFORMED
  while (s.charCodeAt(i) === 32) i++

  // token68 when it spans the rest of the value; `a=b` and `a="b"` are auth-params.
  const t68 = token68End(s, i)
  if (t68 === s.length) return { ok: true, scheme, token68: s.slice(i) }

  const params = parseAuthParams(s, i)
  if (!isParams(params)) return params
  return { ok: true, scheme, params }
}

function isParams (value: Record<string, string> | typeof MALFORMED | typeof DUPLICATE): value is Record<string, string> {
  return value !== MALFORMED && value !== DUPLICATE
}

/** One auth-param at `i` (RFC 9110 11.2: token BWS "=" BWS ( token / quoted-string )), or null. */
function readAuthParam (s: string, i: number): { name: string, value: string, end: number } | null {
  const nameEnd = tokenEnd(s, i)
  if (nameEnd === i) return null
  const name = s.slice(i, nameEnd).toLowerCase()
  i = skipOws(s, nameEnd) // BWS
  if (s.charCodeAt(i) !== 61) return null
  i = skipOws(s, i + 1) // BWS
  if (s.charCodeAt(i) === 34) {
    const q = parseQuotedString(s, i)
    return q === null ? null : { name, value: q.value, end: q.end }
  }
  const valueEnd = tokenEnd(s, i)
  return valueEnd === i ? null : { name, value: s.slice(i, valueEnd), end: valueEnd }
}

/** The auth-params from `i` to the end of `s`: at least one, each name once. */
function parseAuthParams (s: string, i: number): Record<string, string> | typeof MALFORMED | typeof DUPLICATE {
  const params: Record<string, string> = Object.create(null)
  let count = 0
  // RFC 9110 5.6.1: #auth-param, empty list elements are accepted and ignored
  for (;;) {
    while (i < s.length) {
      const c = s.charCodeAt(i)
      if (c === 32 || c === 9 || c === 44) i++
      else break
    }
    if (i >= s.length) break
    const param = readAuthParam(s, i)
    if (param === null) return MALFORMED
    // RFC 9110 11.2: each parameter name MUST only occur once per challenge/credentials
    if (param.name in params) return DUPLICATE
    params[param.name] = param.value
    count++
    i = skipOws(s, param.end)
    if (i < s.length && s.charCodeAt(i) !== 44) return MALFORMED
  }
  return count === 0 ? MALFORMED : params
}

/** Parameters of a challenge: pairs in order, or an object (undefined values skipped). */
export type ChallengeParams = ReadonlyArray<readonly [string, string]> | Readonly<Record<string, string | undefined>>

export interface FormatChallengeOptions {
  /** Writes `scheme token68` instead of auth-params (RFC 9110 11.3); excludes params. */
  token68?: string
  /**
   * Names of the parameters written as a bare token instead of a quoted-string.
   * Defaults to `stale`, `algorithm`, `charset` and `userhash` for the Digest scheme
   * (RFC 7616 3.3 and its examples) and to none for every other scheme.
   */
  tokens?: Iterable<string>
}

// RFC 7616 3.3: "a sender MUST only generate the quoted string syntax values for
// the following parameters: realm, domain, nonce, opaque, and qop" and "MUST NOT
// generate the quoted string syntax values for ... stale and algorithm"; charset
// and userhash are written as tokens in the section 3.9 examples.
const DIGEST_TOKENS: ReadonlySet<string> = new Set(['stale', 'algorithm', 'charset', 'userhash'])
const NO_TOKENS: ReadonlySet<string> = new Set()

/**
 * Writes one challenge for `WWW-Authenticate` (RFC 9110 11.3). Values are
 * quoted-strings with `"` and `\` escaped, except the token parameters. Throws a
 * TypeError for anything that cannot be sent in a header (CR, LF, other controls, a
 * scheme or name that is not a token, a token value that is not a token, a
 * repeated name): such values come from configuration and fail at start-up.
 */
export function formatChallenge (scheme: string, params?: ChallengeParams, options?: FormatChallengeOptions): string {
  if (!isToken(scheme)) throw new TypeError(`auth-scheme ${JSON.stringify(scheme)} is not a token`)
  const entries: Array<readonly [string, string]> = Array.isArray(params)
    ? params as Array<readonly [string, string]>
    : Object.entries(params ?? {}).filter((e): e is [string, string] => e[1] !== undefined)
  const token68 = options?.token68
  if (token68 !== undefined) {
    if (entries.length > 0) throw new TypeError('a challenge carries either a token68 or auth-params, not both')
    if (!isToken68(token68)) throw new TypeError('token68 value is not a token68')
    return `${scheme} ${token68}`
  }
  if (entries.length === 0) return scheme
  const tokens: ReadonlySet<string> = options?.tokens !== undefined
    ? new Set(Array.from(options.tokens, (n) => n.toLowerCase()))
    : scheme.toLowerCase() === 'digest' ? DIGEST_TOKENS : NO_TOKENS
  const seen = new Set<string>()
  let out = scheme
  for (let k = 0; k < entries.length; k++) {
    const [name, value] = entries[k]
    if (!isToken(name)) throw new TypeError(`auth-param name ${JSON.stringify(name)} is not a token`)
    const lower = name.toLowerCase()
    // RFC 9110 11.2: each parameter name MUST only occur once per challenge
    if (seen.has(lower)) throw new TypeError(`auth-param ${name} is repeated`)
    seen.add(lower)
    let written: string
    if (tokens.has(lower)) {
      if (!isToken(value)) throw new TypeError(`auth-param ${name} must be a token`)
      written = value
    } else {
      written = quoteString(value)
    }
    out += (k === 0 ? ' ' : ', ') + name + '=' + written
  }
  return out
}

// RFC 8187 3.2.1: attr-char = ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "." /
//   "^" / "_" / "`" / "|" / "~"
const ATTR_CHAR = new Uint8Array(128)
for (let c = 48; c <= 57; c++) ATTR_CHAR[c] = 1
for (let c = 65; c <= 90; c++) ATTR_CHAR[c] = 1
for (let c = 97; c <= 122; c++) ATTR_CHAR[c] = 1
for (const c of '!#$&+-.^_`|~') ATTR_CHAR[c.charCodeAt(0)] = 1

function hexValue (c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 65 && c <= 70) return c - 55
  if (c >= 97 && c <= 102) return c - 87
  return -1
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Decodes an RFC 8187 ext-value (`charset'[language]'value-chars`), as carried by
 * parameters such as Digest `username*` (RFC 7616 3.4). Charsets UTF-8 (decoded
 * strictly) and ISO-8859-1 (RFC 8187 3.2.1 recipients support both). Returns null
 * for anything malformed; never throws.
 */
export function decodeExtValue (s: string): string | null {
  if (typeof s !== 'string') return null
  const q1 = s.indexOf("'")
  if (q1 < 0) return null
  const q2 = s.indexOf("'", q1 + 1)
  if (q2 < 0) return null
  const charset = s.slice(0, q1).toLowerCase()
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return null
  // RFC 5646 language tags: ALPHA, DIGIT and "-"
  for (let i = q1 + 1; i < q2; i++) {
    const c = s.charCodeAt(i)
    if (!(c === 45 || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) return null
  }
  const bytes: number[] = []
  for (let i = q2 + 1; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 37) {
      // pct-encoded = "%" HEXDIG HEXDIG
      const hi = hexValue(s.charCodeAt(i + 1))
      const lo = hexValue(s.charCodeAt(i + 2))
      if (hi < 0 || lo < 0) return null
      bytes.push(hi * 16 + lo)
      i += 2
    } else if (c < 128 && ATTR_CHAR[c] === 1) {
      bytes.push(c)
    } else {
      return null
    }
  }
  const octets = Uint8Array.from(bytes)
  if (charset === 'iso-8859-1') return Buffer.from(octets).toString('latin1')
  try {
    return fatalUtf8.decode(octets)
  } catch {
    return null
  }
}
