/**
 * Primitives of the RFC 9110 section 5.6 grammar shared by every header parser
 * in packages/grammar: tokens, optional whitespace, quoted strings and list elements.
 * Every function is linear in its input (no regular expressions that backtrack).
 */

const TCHAR = new Uint8Array(128)
// RFC 9110 5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//   "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1
for (let c = 48; c <= 57; c++) TCHAR[c] = 1
for (let c = 65; c <= 90; c++) TCHAR[c] = 1
for (let c = 97; c <= 122; c++) TCHAR[c] = 1

function isTchar (code: number): boolean {
  return code < 128 && TCHAR[code] === 1
}

/** RFC 9110 5.6.3: OWS = *( SP / HTAB ). Returns the index after the whitespace. */
export function skipOws (s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c !== 32 && c !== 9) break
    i++
  }
  return i
}

/** Index just after the token starting at `i` (equal to `i` when there is none). */
export function tokenEnd (s: string, i: number): number {
  while (i < s.length && isTchar(s.charCodeAt(i))) i++
  return i
}

/** True when the whole string is one RFC 9110 token. */
export function isToken (s: string): boolean {
  return s.length > 0 && tokenEnd(s, 0) === s.length
}

export interface Parsed<T> { value: T, end: number }

/**
 * RFC 9110 5.6.4: quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE.
 * `s[i]` must be the opening quote. Returns the unescaped value and the index after
 * the closing quote, or null when the string is unterminated or holds a control.
 */
export function parseQuotedString (s: string, i: number): Parsed<string> | null {
  if (s.charCodeAt(i) !== 34) return null
  let out = ''
  let start = ++i
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 34) {
      return { value: out + s.slice(start, i), end: i + 1 }
    }
    if (c === 92) {
      // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
      if (i + 1 >= s.length) return null
      const n = s.charCodeAt(i + 1)
      if (!isQdChar(n) && n !== 34 && n !== 92) return null
      out += s.slice(start, i) + s[i + 1]
      i += 2
      start = i
      continue
    }
    if (!isQdChar(c)) return null
    i++
  }
  return null
}

// qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
function isQdChar (c: number): boolean {
  return c === 9 || c === 32 || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) || (c >= 0x80 && c <= 0xff)
}

/** Writes `value` as a quoted-string, escaping `"` and `\`; refuses CR, LF and other controls. */
export function quoteString (value: string): string {
  let out = '"'
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 34 || c === 92) out += '\\' + value[i]
    else if (isQdChar(c)) out += value[i]
    else throw new TypeError('value holds a character that cannot be sent in a header')
  }
  return out + '"'
}

/**
 * RFC 9110 5.6.1: splits a comma-separated list into its elements, trimming OWS,
 * dropping empty elements, and keeping commas inside quoted strings. Returns null when
 * a quoted string is unterminated. `max` caps the number of elements (null beyond it).
 */
export function splitList (s: string, max = 1000): string[] | null {
  const out: string[] = []
  let i = 0
  let start = 0
  while (i <= s.length) {
    const c = i < s.length ? s.charCodeAt(i) : 44
    if (c === 34) {
      const q = parseQuotedString(s, i)
      if (q === null) return null
      i = q.end
      continue
    }
    if (c === 44) {
      const element = s.slice(skipOws(s, start), trimEnd(s, i))
      if (element.length > 0) {
        if (out.length >= max) return null
        out.push(element)
      }
      start = i + 1
    }
    i++
  }
  return out
}

function trimEnd (s: string, end: number): number {
  while (end > 0) {
    const c = s.charCodeAt(end - 1)
    if (c !== 32 && c !== 9) break
    end--
  }
  return end
}

/** Joins the values Node gives for a header (string, array of lines, or undefined). */
export function headerLines (value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  return typeof value === 'string' ? value : value.join(', ')
}
