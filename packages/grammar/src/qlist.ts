/**
 * Lists with weights (RFC 9110 12.4.2): `element *( OWS ";" OWS param )` where the
 * `q` parameter is a qvalue `( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`.
 * Used for Accept (media ranges) and A-IM (instance manipulations, RFC 3229 10.5.3).
 *
 * Not @fastify/accept-negotiator: it negotiates tokens (Accept-Encoding) and returns one of
 * them. Given Accept it matches only exact strings and `*`: no media range wildcard (the
 * all-types range, `application/*`), no case folding (`Application/JSON`), any parameter's
 * digits read as its weight (`;level=1`, `;charset=utf-8`), a malformed `q=2` taken as
 * weight 2, and no RFC 9110 12.5.1 specificity (`application/json;q=0` beside the all-types
 * range at q=0.1 refuses JSON here; there nothing matches); a browser's Accept gives null
 * there, JSON here. A-IM needs every acceptable manipulation with its q (vcdiff and gzip
 * apply together, q=0 refuses), not one winner. It is 1.2x faster (2.1 against 2.5 µs a
 * negotiation), on paths that negotiate only for XML routes and errors
 * (docs/architecture.md, "Libraries we use and the ones we do not").
 */
import { splitList } from './tokens'
import { parseMediaType, type MediaType } from './media-type'
import { isToken } from './tokens'

const MAX_LIST_ELEMENTS = 64

/** Parses a qvalue in thousandths (0..1000), or -1 when malformed. */
export function parseQValue (s: string): number {
  if (s.length === 0 || s.length > 5) return -1
  const first = s.charCodeAt(0)
  if (first !== 48 && first !== 49) return -1
  if (s.length === 1) return first === 49 ? 1000 : 0
  if (s.charCodeAt(1) !== 46) return -1
  let frac = 0
  let scale = 100
  for (let i = 2; i < s.length; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    frac += d * scale
    scale /= 10
  }
  if (first === 49) return frac === 0 ? 1000 : -1
  return frac
}

export interface WeightedToken { token: string, q: number }

/**
 * A comma-separated list of tokens with optional `;q=` weights (A-IM). Tokens are
 * lower-cased. Malformed elements are skipped (an unknown or broken manipulation is
 * ignored, RFC 3229 10.5.3); q=0 elements are kept so callers can honour refusals.
 */
export function parseWeightedTokens (value: string | undefined): WeightedToken[] {
  if (value === undefined) return []
  const elements = splitList(value, MAX_LIST_ELEMENTS)
  if (elements === null) return []
  const out: WeightedToken[] = []
  for (const element of elements) {
    const semi = element.indexOf(';')
    const token = (semi === -1 ? element : element.slice(0, semi)).trim().toLowerCase()
    if (!isToken(token)) continue
    let q = 1000
    if (semi !== -1) {
      const mt = parseMediaType('x/x' + element.slice(semi))
      if (mt === null) continue
      if (mt.parameters.q !== undefined) {
        q = parseQValue(mt.parameters.q)
        if (q < 0) continue
      }
    }
    out.push({ token, q })
  }
  return out
}

export interface MediaRange { range: MediaType, q: number, order: number }

/** Accept (RFC 9110 12.5.1): media ranges with weights; malformed elements are skipped. */
export function parseAccept (value: string | undefined): MediaRange[] {
  if (value === undefined) return []
  const elements = splitList(value, MAX_LIST_ELEMENTS)
  if (elements === null) return []
  const out: MediaRange[] = []
  for (let order = 0; order < elements.length; order++) {
    const range = parseMediaType(elements[order])
    if (range === null) continue
    let q = 1000
    if (range.parameters.q !== undefined) {
      q = parseQValue(range.parameters.q)
      if (q < 0) continue
      delete range.parameters.q
    }
    if (range.type === '*' && range.subtype !== '*') continue
    out.push({ range, q, order })
  }
  return out
}

function specificity (r: MediaType, type: string, subtype: string): number {
  if (r.type === type && r.subtype === subtype) return 3
  if (r.type === type && r.subtype === '*') return 2
  if (r.type === '*' && r.subtype === '*') return 1
  return 0
}

/**
 * RFC 9110 12.5.1: picks the offer the client prefers. Each offer's weight comes from
 * the most specific matching range; ties keep the server's order of `offers`, so the
 * first offer wins when the client states no preference (or no Accept at all).
 * Returns null when the client refuses every offer.
 */
export function negotiateMediaType (accept: string | undefined, offers: readonly string[]): string | null {
  if (accept === undefined || accept === '') return offers[0] ?? null
  const ranges = parseAccept(accept)
  if (ranges.length === 0) return offers[0] ?? null
  let best: string | null = null
  let bestQ = 0
  for (const offer of offers) {
    const slash = offer.indexOf('/')
    const type = offer.slice(0, slash)
    const subtype = offer.slice(slash + 1)
    let q = -1
    let spec = 0
    for (const { range, q: rq } of ranges) {
      const s = specificity(range, type, subtype)
      if (s > spec) { spec = s; q = rq }
    }
    if (q > bestQ) { best = offer; bestQ = q }
  }
  return best
}
