/**
 * RFC 9110 11.6.1: `WWW-Authenticate = #challenge`. One field line may hold several
 * challenges, and a server may send several lines. The list is split with the grammar
 * module's list splitter (commas inside quoted strings kept); an element that starts
 * with `token` followed by anything but `=` begins a challenge, the others are its
 * auth-params. Each challenge is then read with the credentials grammar, which is the
 * challenge grammar (RFC 9110 11.3, 11.4).
 */
import { parseAuthorization } from '../headers/authorization'
import { skipOws, splitList, tokenEnd } from '../headers/tokens'

export interface Challenge {
  /** lower case */
  scheme: string
  /** auth-params, names lower case, values unquoted */
  params: Record<string, string>
  token68?: string
}

/** At most this many challenges are read from one response. */
const MAX_CHALLENGES = 32

function startsChallenge (element: string): boolean {
  const end = tokenEnd(element, 0)
  if (end === 0) return false
  return element.charCodeAt(skipOws(element, end)) !== 61 // not `name=`
}

/** The challenges of the WWW-Authenticate lines of a response, in order; malformed ones skipped. */
export function parseChallenges (lines: string | string[] | undefined): Challenge[] {
  const values = lines === undefined ? [] : typeof lines === 'string' ? [lines] : lines
  const out: Challenge[] = []
  for (const value of values) {
    const elements = splitList(value) ?? []
    const texts: string[] = []
    for (const element of elements) {
      if (startsChallenge(element) || texts.length === 0) texts.push(element)
      else texts[texts.length - 1] += ', ' + element
    }
    for (const text of texts) {
      const parsed = parseAuthorization(text)
      if (!parsed.ok || out.length >= MAX_CHALLENGES) continue
      out.push({ scheme: parsed.scheme, params: { ...parsed.params }, ...(parsed.token68 === undefined ? {} : { token68: parsed.token68 }) })
    }
  }
  return out
}
