/**
 * Media types (RFC 9110 8.3.1): `type "/" subtype *( OWS ";" OWS parameter )`.
 * Type, subtype and parameter names are case-insensitive (returned lower-cased);
 * parameter values are tokens or quoted strings. Linear, never throws.
 */
import { parseQuotedString, skipOws, tokenEnd } from './tokens'

/** A parsed media type (RFC 9110 8.3.1): type, subtype, essence and parameters. */
export interface MediaType {
  type: string
  subtype: string
  /** `type/subtype`, lower-cased, without parameters. */
  essence: string
  /** Parameters by lower-cased name. Values keep their case. */
  parameters: Record<string, string>
}

export const MAX_MEDIA_TYPE_LENGTH = 1024

/**
 * Parses `s` from index `start` up to `end` (exclusive). Returns null when malformed,
 * when a parameter is repeated, or when the value is longer than MAX_MEDIA_TYPE_LENGTH.
 */
export function parseMediaType (s: string, start = 0, end = s.length): MediaType | null {
  if (end - start > MAX_MEDIA_TYPE_LENGTH) return null
  let i = skipOws(s, start)
  const typeEnd = tokenEnd(s, i)
  if (typeEnd === i || typeEnd >= end || s.charCodeAt(typeEnd) !== 47) return null
  const subStart = typeEnd + 1
  const subEnd = Math.min(tokenEnd(s, subStart), end)
  if (subEnd === subStart) return null
  const type = s.slice(i, typeEnd).toLowerCase()
  const subtype = s.slice(subStart, subEnd).toLowerCase()
  const parameters: Record<string, string> = Object.create(null)
  i = subEnd
  while (true) {
    i = skipOws(s, i)
    if (i >= end) break
    if (s.charCodeAt(i) !== 59) return null // ";"
    i = skipOws(s, i + 1)
    if (i >= end) break // RFC 9110 5.6.6 allows an empty parameter after ";"
    if (s.charCodeAt(i) === 59) continue
    const nameEnd = Math.min(tokenEnd(s, i), end)
    if (nameEnd === i || nameEnd >= end || s.charCodeAt(nameEnd) !== 61) return null // "="
    const name = s.slice(i, nameEnd).toLowerCase()
    let value: string
    i = nameEnd + 1
    if (s.charCodeAt(i) === 34) {
      const q = parseQuotedString(s, i)
      if (q === null || q.end > end) return null
      value = q.value
      i = q.end
    } else {
      const valueEnd = Math.min(tokenEnd(s, i), end)
      if (valueEnd === i) return null
      value = s.slice(i, valueEnd)
      i = valueEnd
    }
    if (name in parameters) return null
    parameters[name] = value
  }
  return { type, subtype, essence: `${type}/${subtype}`, parameters }
}

/** True when the charset parameter is absent or names UTF-8 (any case; RFC 9110 8.3.2). */
export function isUtf8Charset (mt: MediaType): boolean {
  const charset = mt.parameters.charset
  return charset === undefined || charset.toLowerCase() === 'utf-8'
}

/** Text types need a charset on the wire: `text/*` and the XML types. */
export function isTextual (essence: string): boolean {
  return essence.startsWith('text/') || essence === 'application/xml' || essence.endsWith('+xml')
}
