/**
 * RFC 9110 11.6.1: `WWW-Authenticate = #challenge`. One field line may hold several
 * challenges, and a server may send several lines. The list is split with the grammar
 * module's list splitter (commas inside quoted strings kept); an element that starts
 * with `token` followed by anything but `=` begins a challenge, the others are its
 * auth-params. Each challenge is then read with the credentials grammar, which is the
 * challenge grammar (RFC 9110 11.3, 11.4). Shared by the client (which answers challenges)
 * and the auditor (which judges them).
 */
import { parseAuthorization } from './authorization'
import { skipOws, splitList, tokenEnd } from './tokens'

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

/** The challenges of WWW-Authenticate lines, and the text of each element that is not one. */
export interface ChallengeList {
  challenges: Challenge[]
  /** challenges that do not parse (and lines that are not lists), as received */
  malformed: string[]
}

/** The elements of one field line grouped into challenges: a challenge and its auth-params. */
function challengeTexts (value: string): string[] | null {
  const elements = splitList(value)
  if (elements === null) return null
  const texts: string[] = []
  for (const element of elements) {
    if (startsChallenge(element) || texts.length === 0) texts.push(element)
    else texts[texts.length - 1] += ', ' + element
  }
  return texts
}

/** Every challenge of the lines, in order, and what did not parse. */
export function readChallenges (lines: string | string[] | undefined): ChallengeList {
  const values = lines === undefined ? [] : typeof lines === 'string' ? [lines] : lines
  const out: ChallengeList = { challenges: [], malformed: [] }
  for (const value of values) {
    const texts = challengeTexts(value)
    if (texts === null) { out.malformed.push(value); continue }
    for (const text of texts) {
      const parsed = parseAuthorization(text)
      if (!parsed.ok) { out.malformed.push(text); continue }
      if (out.challenges.length >= MAX_CHALLENGES) continue
      out.challenges.push({ scheme: parsed.scheme, params: { ...parsed.params }, ...(parsed.token68 === undefined ? {} : { token68: parsed.token68 }) })
    }
  }
  return out
}

/** The challenges of the WWW-Authenticate lines of a response, in order; malformed ones skipped. */
export function parseChallenges (lines: string | string[] | undefined): Challenge[] {
  return readChallenges(lines).challenges
}
