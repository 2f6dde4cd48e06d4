/**
 * The "Basic" HTTP authentication scheme (RFC 7617): decoding credentials and
 * writing the challenge. Framework-free; the plugin compares the result with its
 * users in constant time.
 */
import { isAscii } from 'node:buffer'
import { formatChallenge, parseAuthorization, type ParseAuthorizationOptions } from '@http-conventions/grammar'

export type BasicFailure =
  /** no Authorization value */
  | 'missing'
  /** another scheme (the value is meant for another verifier) */
  | 'wrong-scheme'
  /** not `Basic <token68>`, too long, or not base64 (RFC 4648 4, strictly) */
  | 'malformed'
  /** the decoded octets are not UTF-8 */
  | 'not-utf8'
  /** no colon between user-id and password (RFC 7617 2) */
  | 'no-colon'
  /** a control character in the user-id or password (RFC 7617 2) */
  | 'control-character'

export type BasicResult =
  | { ok: true, userId: string, password: string }
  | { ok: false, reason: BasicFailure }

// RFC 4648 4: the base64 alphabet; -1 for everything else.
const B64 = new Int8Array(128).fill(-1)
{
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  for (let k = 0; k < 64; k++) B64[alphabet.charCodeAt(k)] = k
}

/**
 * True when `s` is canonical base64 (RFC 4648 4): the standard alphabet only,
 * length a multiple of 4, "=" only as one or two final characters, and the pad
 * bits of the last group zero (RFC 4648 3.5). Node's decoder would accept all of
 * these mistakes silently, so the check runs before it.
 */
export function isStrictBase64 (s: string): boolean {
  if (typeof s !== 'string' || s.length === 0 || s.length % 4 !== 0) return false
  let pad = 0
  if (s.charCodeAt(s.length - 1) === 61) pad = s.charCodeAt(s.length - 2) === 61 ? 2 : 1
  const dataEnd = s.length - pad
  for (let i = 0; i < dataEnd; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || B64[c] < 0) return false
  }
  // RFC 4648 3.5: the bits that pad the last octet must be zero
  const last = B64[s.charCodeAt(dataEnd - 1)]
  if (pad === 1 && (last & 0x03) !== 0) return false
  if (pad === 2 && (last & 0x0f) !== 0) return false
  return true
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** RFC 5234 B.1: CTL = %x00-1F / %x7F */
function hasControl (s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return true
  }
  return false
}

/**
 * Decodes the token68 of `Basic` credentials: strict base64, then strict UTF-8
 * (RFC 7617 2.1: charset UTF-8; invalid octets are a refusal, never U+FFFD), then
 * user-id and password split at the first colon (RFC 7617 2), both NFC normalised
 * (RFC 7617 2.1, via RFC 7613's profiles, which apply NFC). Never throws.
 */
export function decodeBasicCredentials (token68: string): BasicResult {
  if (!isStrictBase64(token68)) return { ok: false, reason: 'malformed' }
  const octets = Buffer.from(token68, 'base64')
  // US-ASCII is UTF-8 and already NFC: the common case skips the decoder and the normalisation
  // (Node's isAscii is native).
  const ascii = isAscii(octets)
  let text: string
  if (ascii) {
    text = octets.toString('latin1')
  } else {
    try {
      text = fatalUtf8.decode(octets)
    } catch {
      return { ok: false, reason: 'not-utf8' }
    }
  }
  // RFC 7617 2: user-id cannot contain a colon, so the first colon ends it
  const colon = text.indexOf(':')
  if (colon < 0) return { ok: false, reason: 'no-colon' }
  const userId = ascii ? text.slice(0, colon) : text.slice(0, colon).normalize('NFC')
  const password = ascii ? text.slice(colon + 1) : text.slice(colon + 1).normalize('NFC')
  // RFC 7617 2: "The user-id and password MUST NOT contain any control characters"
  if (hasControl(userId) || hasControl(password)) return { ok: false, reason: 'control-character' }
  return { ok: true, userId, password }
}

/** Parses an `Authorization` value as Basic credentials. Never throws. */
export function parseBasic (authorization: unknown, options?: ParseAuthorizationOptions): BasicResult {
  const parsed = parseAuthorization(authorization, options)
  if (!parsed.ok) return { ok: false, reason: parsed.reason === 'missing' ? 'missing' : 'malformed' }
  // RFC 7617 2: the scheme name is "Basic", matched case-insensitively (RFC 9110 11.1)
  if (parsed.scheme !== 'basic') return { ok: false, reason: 'wrong-scheme' }
  if (parsed.token68 === undefined) return { ok: false, reason: 'malformed' }
  return decodeBasicCredentials(parsed.token68)
}

export interface BasicChallengeOptions {
  /** Advertise `charset="UTF-8"` (RFC 7617 2.1); default true. */
  charset?: boolean
}

/**
 * `Basic realm="…", charset="UTF-8"` (RFC 7617 2 and 2.1: the realm is required,
 * charset is the only other parameter defined, and UTF-8 its only allowed value).
 * Throws a TypeError for a realm that cannot be sent in a header.
 */
export function basicChallenge (realm: string, options?: BasicChallengeOptions): string {
  const params: Array<[string, string]> = [['realm', realm]]
  if (options?.charset !== false) params.push(['charset', 'UTF-8'])
  return formatChallenge('Basic', params)
}

// The client side of RFC 7617 2, for the server's users and tests.
export { encodeBasicCredentials } from '@http-conventions/grammar'
