/**
 * Entity tags (RFC 9110 section 8.8.3) and the If-Match / If-None-Match lists
 * built from them (RFC 9110 13.1.1, 13.1.2).
 *
 *   entity-tag = [ weak ] opaque-tag
 *   weak       = %s"W/"                 ; case-sensitive: `w/` is not a weak prefix
 *   opaque-tag = DQUOTE *etagc DQUOTE
 *   etagc      = %x21 / %x23-7E / obs-text
 *
 * An opaque-tag is NOT a quoted-string: it has no quoted-pair, so `\` is an
 * ordinary etagc and the first `"` after the opening one always closes the tag.
 * That is why this module scans tags itself instead of using
 * `parseQuotedString` / `splitList` from ./tokens.
 *
 * Every parser here is a single left-to-right scan (linear time, no regular
 * expressions) and never throws on request input.
 */
import { skipOws } from './tokens'

export interface EntityTag {
  /** True for a weak validator (`W/` prefix, RFC 9110 8.8.1). */
  weak: boolean
  /** The opaque-tag without its surrounding double quotes. */
  opaque: string
}

/** Marker returned by {@link parseEntityTagList} for a malformed or oversized list. */
export const INVALID = 'invalid'

/**
 * The value of an If-Match / If-None-Match field: `'*'`, the entity-tags listed
 * (possibly none, when every element was empty), or {@link INVALID}.
 */
export type EntityTagList = '*' | readonly EntityTag[] | typeof INVALID

export interface EntityTagListLimits {
  /** Most entity-tags a list may hold; a longer list is invalid. Default 100. */
  maxElements?: number
  /** Longest field value (in characters) that is parsed at all. Default 8192. */
  maxLength?: number
}

export const DEFAULT_MAX_ELEMENTS = 100
export const DEFAULT_MAX_LENGTH = 8192

const DQUOTE = 34
const COMMA = 44

/** RFC 9110 8.8.3: etagc = %x21 / %x23-7E / obs-text (obs-text = %x80-FF). */
function isEtagc (c: number): boolean {
  return c === 0x21 || (c >= 0x23 && c <= 0x7e) || (c >= 0x80 && c <= 0xff)
}

interface Scanned { tag: EntityTag, end: number }

/**
 * The end of the entity-tag starting at `i` (RFC 9110 8.8.3: entity-tag = [ weak ]
 * opaque-tag, weak = %s"W/"): the index after its closing quote, or -1 when no well-formed
 * entity-tag starts there. Nothing is allocated.
 */
function entityTagEnd (s: string, i: number): number {
  if (s.charCodeAt(i) === 0x57 && s.charCodeAt(i + 1) === 0x2f) i += 2
  if (s.charCodeAt(i) !== DQUOTE) return -1
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === DQUOTE) return i + 1
    if (!isEtagc(c)) return -1
  }
  return -1 // unterminated opaque-tag
}

/** Scans one entity-tag starting at `i`: the tag and the index after its closing quote, or null. */
function scanEntityTag (s: string, i: number): Scanned | null {
  const end = entityTagEnd(s, i)
  if (end === -1) return null
  const weak = s.charCodeAt(i) === 0x57
  return { tag: { weak, opaque: s.slice(i + (weak ? 3 : 1), end - 1) }, end }
}

/** Whether a whole string is exactly one entity-tag, without building it. */
function isEntityTag (s: string): boolean {
  return entityTagEnd(s, 0) === s.length
}

/**
 * Parses a whole string as exactly one entity-tag (no surrounding whitespace,
 * nothing after it). Returns null when it is not one.
 */
export function parseEntityTag (s: string): EntityTag | null {
  if (typeof s !== 'string') return null
  const scanned = scanEntityTag(s, 0)
  if (scanned === null || scanned.end !== s.length) return null
  return scanned.tag
}

/**
 * Parses an If-Match / If-None-Match field value (RFC 9110 13.1.1, 13.1.2):
 *
 *   If-Match = "*" / #entity-tag
 *
 * Several field lines arrive joined with ", " (Node does that; RFC 9110 5.3
 * makes the joined value equivalent). Empty list elements are allowed and
 * skipped (RFC 9110 5.6.1.2). Returns:
 * - `'*'` when the value is `*` alone (OWS around it allowed);
 * - the list of entity-tags (empty when the value holds no element at all);
 * - {@link INVALID} when any element is not an entity-tag (`v2`, `w/"x"`, stray
 *   characters, `*` mixed with tags), or when the value is longer than
 *   `maxLength` or holds more than `maxElements` tags.
 */
export function parseEntityTagList (headerValue: string, limits: EntityTagListLimits = {}): EntityTagList {
  if (typeof headerValue !== 'string') return INVALID
  const maxElements = limits.maxElements ?? DEFAULT_MAX_ELEMENTS
  const maxLength = limits.maxLength ?? DEFAULT_MAX_LENGTH
  const s = headerValue
  if (s.length > maxLength) return INVALID

  let i = skipOws(s, 0)
  // RFC 9110 13.1.1: "*" stands alone; it is never a list member.
  if (s.charCodeAt(i) === 0x2a) {
    return skipOws(s, i + 1) === s.length ? '*' : INVALID
  }

  const tags: EntityTag[] = []
  while (i < s.length) {
    if (s.charCodeAt(i) === COMMA) {
      // RFC 9110 5.6.1.2: a recipient accepts (and ignores) empty list elements.
      i = skipOws(s, i + 1)
      continue
    }
    const scanned = scanEntityTag(s, i)
    if (scanned === null) return INVALID
    if (tags.length >= maxElements) return INVALID
    tags.push(scanned.tag)
    i = skipOws(s, scanned.end)
    // After an element only OWS then "," or the end may follow.
    if (i < s.length && s.charCodeAt(i) !== COMMA) return INVALID
  }
  return tags
}

/**
 * RFC 9110 8.8.3.2 strong comparison: both tags are strong and their opaque-tags
 * are identical, character by character.
 */
export function strongCompare (a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.opaque === b.opaque
}

/**
 * RFC 9110 8.8.3.2 weak comparison: the opaque-tags are identical, whatever the
 * weakness of either tag.
 */
export function weakCompare (a: EntityTag, b: EntityTag): boolean {
  return a.opaque === b.opaque
}

/**
 * Writes an entity-tag for an ETag field (RFC 9110 8.8.3). Throws a TypeError when
 * the opaque value holds a character that is not an etagc (`"`, space, controls,
 * characters above U+00FF): that is a programming error of the caller, never
 * request input.
 */
export function formatEntityTag (tag: EntityTag): string {
  const opaque = tag.opaque
  if (typeof opaque !== 'string') throw new TypeError('entity-tag opaque value must be a string')
  for (let i = 0; i < opaque.length; i++) {
    if (!isEtagc(opaque.charCodeAt(i))) {
      throw new TypeError('entity-tag opaque value holds a character outside etagc (RFC 9110 8.8.3)')
    }
  }
  return (tag.weak ? 'W/"' : '"') + opaque + '"'
}

/**
 * Reads the entity-tag a route (or a store) provides as the current validator:
 * either a formatted entity-tag (`"v2"`, `W/"v2"`) or a bare opaque value
 * (`v2`), which is taken as a strong tag. Returns null when it is neither (empty,
 * or characters outside etagc).
 */
export function toEntityTag (value: string): EntityTag | null {
  if (typeof value !== 'string' || value.length === 0) return null
  const parsed = parseEntityTag(value)
  if (parsed !== null) return parsed
  for (let i = 0; i < value.length; i++) {
    if (!isEtagc(value.charCodeAt(i))) return null
  }
  return { weak: false, opaque: value }
}

/**
 * Validates the entity-tag a route provides and returns it formatted for the
 * ETag field: `"v2"` and `W/"v2"` are kept, a bare `v2` becomes `"v2"`.
 * Throws a TypeError for anything else (meant to run where a route is
 * configured or its provider answers, not on request input).
 */
export function normalizeEntityTag (value: string): string {
  // Already an entity-tag (what a provider returns on every request): itself, nothing allocated.
  if (typeof value === 'string' && isEntityTag(value)) return value
  const tag = toEntityTag(value)
  if (tag === null) throw new TypeError(`not a valid entity-tag (RFC 9110 8.8.3): ${JSON.stringify(value)}`)
  return formatEntityTag(tag)
}
