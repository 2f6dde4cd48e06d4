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
  digest?: { user: string, password: string }
}

export const REDACTED = '[redacted]'

/** The forms a secret takes when a service echoes it: as sent, percent-encoded, inside a JSON string. */
function forms (secret: string): string[] {
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]
}

/**
 * Every string that would give a credential away, longest first: Basic `user:password`, its
 * base64 (RFC 7617 2, without the padding so that a cut copy matches too) and the password;
 * the Bearer token (RFC 6750 2.1); the Digest password.
 */
export function secretsOf (c: HeldCredentials): string[] {
  const raw: string[] = []
  if (c.basic !== undefined) {
    const pair = `${c.basic.user}:${c.basic.password}`
    raw.push(pair, Buffer.from(pair).toString('base64').replace(/=+$/, ''), c.basic.password)
  }
  if (c.bearer !== undefined) raw.push(c.bearer)
  if (c.digest !== undefined) raw.push(c.digest.password)
  const all = new Set(raw.flatMap(forms).filter((s) => s.length > 0))
  return [...all].sort((a, b) => b.length - a.length)
}

/** `text` with each of `secrets` (longest first) replaced by `[redacted]`. */
export function redactSecrets (text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED)
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
