/**
 * What the audited service sends reaches a report only through here: the credentials the
 * auditor holds are replaced by `[redacted]` wherever they appear (a service may echo the
 * request in a body or a header), and every character a terminal would act on or XML 1.0
 * forbids (2.2 Characters) is written as an escape, `\x1b` or `\u{fffe}`.
 */

/** The credentials of a run, as given on the command line. */
export interface HeldCredentials {
  basic?: { user: string, password: string }
  bearer?: string
  /** `--bearer-insufficient` */
  insufficientBearer?: string
  digest?: { user: string, password: string }
}

export const REDACTED = '[redacted]'

/** The forms a secret takes when a service echoes it: as sent, percent-encoded, inside a JSON string. */
function forms (secret: string): string[] {
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]
}

/**
 * Secrets shorter than this are redacted only where they stand as a credential: a letter or
 * two redacted wherever it appears would garble a report and hide nothing.
 */
export const SHORT_SECRET = 3

function tokens (c: HeldCredentials): string[] {
  return [c.bearer, c.insufficientBearer].filter((t): t is string => t !== undefined)
}

/** What stands as a credential, whatever its length: the Basic pair and its base64, a token as it is sent. */
function credentialForms (c: HeldCredentials): string[] {
  const out: string[] = []
  if (c.basic !== undefined) {
    const pair = `${c.basic.user}:${c.basic.password}`
    const base64 = Buffer.from(pair).toString('base64')
    // RFC 7617 2: the base64 also without its padding, so that a cut copy matches
    out.push(pair, base64.replace(/=+$/, ''))
  }
  // RFC 6750 2.1, and 2.3 (the query parameter the auditor tries a token in)
  for (const token of tokens(c)) out.push(`Bearer ${token}`, `access_token=${encodeURIComponent(token)}`)
  return out
}

/** The bare secrets, redacted wherever they appear when they are not short: passwords, tokens. */
function bareSecrets (c: HeldCredentials): string[] {
  return [c.basic?.password, ...tokens(c), c.digest?.password].filter((s): s is string => s !== undefined && s.length >= SHORT_SECRET)
}

/**
 * Every string that would give a credential away, longest first: a token as it is sent
 * (`Bearer <token>`, `access_token=<token>`), the Basic `user:password` and its base64 (RFC 7617 2, without the padding so that a cut copy matches
 * too); and, when they are not short (SHORT_SECRET), the Basic password, the Bearer tokens
 * (RFC 6750 2.1) and the Digest password wherever they appear. A Digest password is never
 * sent, so it stands as no credential.
 */
export function secretsOf (c: HeldCredentials): string[] {
  const raw = [...credentialForms(c), ...bareSecrets(c)]
  const all = new Set(raw.flatMap(forms).filter((s) => s.length > 0))
  return [...all].sort((a, b) => b.length - a.length)
}

/** What a credential form keeps of itself when redacted: `Bearer [redacted]`, `access_token=[redacted]`. */
const KEPT = /^(?:Bearer(?: |%20)|access_token(?:=|%3D))/

/** `text` with each of `secrets` (longest first) replaced by `[redacted]`. */
export function redactSecrets (text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join((KEPT.exec(s)?.[0] ?? '') + REDACTED)
  return out
}

// C0 but tab and line feed, DEL and C1 (a terminal acts on them: ESC starts a sequence, U+009B
// is CSI); the bidirectional controls (they reorder what a reader sees); U+FEFF and the BMP
// noncharacters U+FFFE and U+FFFF (XML 1.0 forbids them); a surrogate without its pair.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

function escapeOne (c: string): string {
  const code = c.charCodeAt(0)
  return code < 0x100 ? '\\x' + code.toString(16).padStart(2, '0') : '\\u{' + code.toString(16) + '}'
}

/** Control, bidirectional and XML-forbidden characters as escapes; tab and line feed kept. */
export function escapeControls (s: string): string {
  return s.replace(UNSAFE, escapeOne)
}

/** What a report may show of `text`: credentials redacted, then unsafe characters escaped. */
export function outputText (text: string, secrets: readonly string[]): string {
  return escapeControls(redactSecrets(text, secrets))
}

/** A copy of a JSON value with every string (keys too) passed through outputText. */
export function outputValue (value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return outputText(value, secrets)
  if (Array.isArray(value)) return value.map((v) => outputValue(v, secrets))
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) out[outputText(k, secrets)] = outputValue(v, secrets)
  return out
}

/** Text for an XML attribute or element: output-safe, then the markup characters as references. */
export function xmlText (s: string, secrets: readonly string[]): string {
  return outputText(s, secrets).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}
