/**
 * The Prefer request header (RFC 7240): the preferences a client states, by name.
 * Framework-free; the Prefer convention (plugins/conventions/prefer.ts) wires it to a route.
 */
import { headerLines, isToken, parseQuotedString, skipOws, splitList, tokenEnd, type Parsed } from '@http-conventions/grammar'

/** A preference's value: its `=` value (unquoted), or true for a bare name. */
export type PreferenceValue = string | true

/**
 * RFC 7240 2: `Prefer: 1#preference`, `preference = token [ BWS "=" BWS word ] *( OWS ";"
 * [ OWS parameter ] )`. Names are case-insensitive; only the first instance of a preference
 * counts; parameters are not needed by any preference the suite honours and are skipped.
 * A malformed element is ignored (RFC 7240 2: a server ignores preferences it does not
 * understand), never the whole header.
 */
export function parsePrefer (value: string | string[] | undefined): ReadonlyMap<string, PreferenceValue> {
  const out = new Map<string, PreferenceValue>()
  const line = headerLines(value)
  if (line === undefined) return out
  for (const element of splitList(line, 64) ?? []) {
    const nameEnd = tokenEnd(element, 0)
    if (nameEnd === 0) continue
    const name = element.slice(0, nameEnd).toLowerCase()
    let i = skipOws(element, nameEnd)
    let v: PreferenceValue | null = true
    if (element.charCodeAt(i) === 61) { // "="
      i = skipOws(element, i + 1)
      if (element.charCodeAt(i) === 34) {
        // splitList already refused the header if a quoted string in it is malformed.
        v = (parseQuotedString(element, i) as Parsed<string>).value
      } else {
        const end = tokenEnd(element, i)
        const word = element.slice(i, end)
        v = isToken(word) ? word : null
      }
    }
    if (v !== null && !out.has(name)) out.set(name, v)
  }
  return out
}

/** RFC 7240 4.2: the client asks for a minimal representation of the result. */
export function prefersMinimal (value: string | string[] | undefined): boolean {
  if (value === undefined) return false
  const wanted = parsePrefer(value).get('return')
  return typeof wanted === 'string' && wanted.toLowerCase() === 'minimal'
}
