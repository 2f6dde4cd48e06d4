/**
 * Precondition evaluation (RFC 9110 section 13), framework-free.
 *
 * `evaluateParsed` is one function read top to bottom in the order of RFC 9110
 * 13.2.2, after the model of Go's net/http `checkPreconditions`. It decides only
 * what the preconditions say; everything RFC 9110 13.2.1 puts first (auth, 404,
 * validation) is the caller's business and must already have happened.
 *
 * Decisions where the RFC leaves room (each tested in test/lib/conditional.test.ts):
 * - A malformed If-Match never lets the method run: precondition-failed.
 * - A malformed If-None-Match is, for GET/HEAD, a condition that matches nothing
 *   (a full 200 is always a safe answer); for any other method it is
 *   precondition-failed, so `If-None-Match: *`-style create-only writes never
 *   overwrite on a header the server could not read.
 * - An If-Match / If-None-Match field that is present but holds no element
 *   (`If-Match:` or `If-Match: ,`) is a list of zero tags: If-Match fails,
 *   If-None-Match holds (and still disables If-Modified-Since).
 * - Invalid dates, and several If-Modified-Since / If-Unmodified-Since lines,
 *   are ignored (RFC 9110 13.1.3, 13.1.4).
 * - A resource that does not exist has no current entity-tag and no
 *   modification date, whatever the validators say.
 * - No clock: an If-Modified-Since later than the server's time is compared as
 *   is (RFC 9110 13.1.3 lets the server choose).
 */
import { INVALID, parseEntityTagList, parseHttpDate, strongCompare, toEntityTag, weakCompare } from '@http-conventions/grammar'
import type { EntityTag, EntityTagList, EntityTagListLimits } from '@http-conventions/grammar'

/** Raw values of the precondition fields, as Node gives them or as lists of field lines. */
export interface ConditionalHeaders {
  'if-match'?: string | readonly string[]
  'if-none-match'?: string | readonly string[]
  'if-modified-since'?: string | readonly string[]
  'if-unmodified-since'?: string | readonly string[]
  /** Other fields are ignored, so a whole `IncomingHttpHeaders` object can be passed. */
  [name: string]: unknown
}

/** The preconditions of one request, parsed once. `undefined` means absent (or ignored). */
export interface ParsedConditions {
  /** If-Match: `'*'`, the listed tags, or `'invalid'`. */
  ifMatch?: EntityTagList
  /** If-None-Match: `'*'`, the listed tags, or `'invalid'`. */
  ifNoneMatch?: EntityTagList
  /** If-Modified-Since as epoch ms; absent when missing, invalid or sent on several lines. */
  ifModifiedSince?: number
  /** If-Unmodified-Since as epoch ms; absent when missing, invalid or sent on several lines. */
  ifUnmodifiedSince?: number
}

/** What the server currently knows of the target resource. */
export interface Validators {
  /** Whether the target resource has a current representation. */
  exists: boolean
  /** Its entity-tag, formatted (`"v2"`, `W/"v2"`) or bare (`v2`, taken as strong). */
  etag?: string
  /** Its last modification time in epoch ms (compared at one-second granularity). */
  lastModified?: number
}

export type PreconditionOutcome =
  | { outcome: 'proceed' }
  | { outcome: 'precondition-failed', header: 'If-Match' | 'If-None-Match' | 'If-Unmodified-Since' }
  | { outcome: 'not-modified', header: 'If-None-Match' | 'If-Modified-Since' }

export interface ParseConditionsOptions extends EntityTagListLimits {
  /** Current time in epoch ms, for the two-digit years of rfc850-date (default Date.now()). */
  now?: number
}

const PROCEED: PreconditionOutcome = Object.freeze({ outcome: 'proceed' })
const FAILED_IF_MATCH: PreconditionOutcome = Object.freeze({ outcome: 'precondition-failed', header: 'If-Match' })
const FAILED_IF_UNMODIFIED_SINCE: PreconditionOutcome = Object.freeze({ outcome: 'precondition-failed', header: 'If-Unmodified-Since' })
const FAILED_IF_NONE_MATCH: PreconditionOutcome = Object.freeze({ outcome: 'precondition-failed', header: 'If-None-Match' })
const NOT_MODIFIED_IF_NONE_MATCH: PreconditionOutcome = Object.freeze({ outcome: 'not-modified', header: 'If-None-Match' })
const NOT_MODIFIED_IF_MODIFIED_SINCE: PreconditionOutcome = Object.freeze({ outcome: 'not-modified', header: 'If-Modified-Since' })

const CONDITIONAL_FIELDS = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since']

/**
 * Collects every line of the four precondition fields from Node's
 * `req.rawHeaders` (name, value, name, value, ...). Node keeps only the first
 * of duplicate If-Modified-Since / If-Unmodified-Since lines in `req.headers`;
 * this keeps them all, so that several dates can be recognised and ignored.
 */
export function conditionalHeadersFromRaw (rawHeaders: readonly string[]): ConditionalHeaders {
  const out: Record<string, string[]> = {}
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = String(rawHeaders[i]).toLowerCase()
    if (CONDITIONAL_FIELDS.includes(name)) (out[name] ??= []).push(String(rawHeaders[i + 1]))
  }
  return out
}

function listField (value: unknown, limits: EntityTagListLimits): EntityTagList | undefined {
  if (typeof value === 'string') return parseEntityTagList(value, limits)
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined
    // Field lines are strings: a list holding anything else is not a list of entity-tags.
    if (!value.every((line) => typeof line === 'string')) return INVALID
    // RFC 9110 5.3: several field lines are one list, joined with ", ".
    return parseEntityTagList(value.join(', '), limits)
  }
  return undefined
}

function dateField (value: unknown, now: number | undefined): number | undefined {
  let line: unknown = value
  if (Array.isArray(value)) {
    // RFC 9110 13.1.3 / 13.1.4: a field value with more than one member is ignored.
    if (value.length !== 1) return undefined
    line = value[0]
  }
  if (typeof line !== 'string') return undefined
  // An invalid HTTP-date is ignored (RFC 9110 13.1.3, 13.1.4).
  return parseHttpDate(line, now) ?? undefined
}

/**
 * Parses the precondition fields of a request once. `headers` may be Node's
 * `req.headers` or the result of {@link conditionalHeadersFromRaw}; every value
 * may be a string or a list of field lines. Never throws on request input.
 */
export function parseConditions (headers: ConditionalHeaders, options: ParseConditionsOptions = {}): ParsedConditions {
  const parsed: ParsedConditions = {}
  if (headers === null || typeof headers !== 'object') return parsed
  const ifMatch = listField(headers['if-match'], options)
  if (ifMatch !== undefined) parsed.ifMatch = ifMatch
  const ifNoneMatch = listField(headers['if-none-match'], options)
  if (ifNoneMatch !== undefined) parsed.ifNoneMatch = ifNoneMatch
  const ims = dateField(headers['if-modified-since'], options.now)
  if (ims !== undefined) parsed.ifModifiedSince = ims
  const ius = dateField(headers['if-unmodified-since'], options.now)
  if (ius !== undefined) parsed.ifUnmodifiedSince = ius
  return parsed
}

/** RFC 9110 13.1.1 / 13.1.2: does the list hold a tag that matches `current`? */
function listMatches (list: readonly EntityTag[], current: EntityTag | null, compare: (a: EntityTag, b: EntityTag) => boolean): boolean {
  if (current === null) return false
  for (const tag of list) if (compare(tag, current)) return true
  return false
}

/** Truncates to the whole second: HTTP-dates have one-second resolution (RFC 9110 5.6.7). */
function toSeconds (ms: number): number {
  return Math.floor(ms / 1000) * 1000
}

function isGetOrHead (method: string): boolean {
  return method === 'GET' || method === 'HEAD'
}

/**
 * Evaluates already parsed preconditions against the current validators, in
 * the order of RFC 9110 13.2.2. `method` is the request method, case-sensitive
 * (RFC 9110 9.1). Throws a TypeError only when `validators.etag` is not an
 * entity-tag (a bug of the route, not of the request).
 */
export function evaluateParsed (method: string, parsed: ParsedConditions, validators: Validators): PreconditionOutcome {
  const exists = validators.exists === true
  let current: EntityTag | null = null
  if (validators.etag !== undefined) {
    current = toEntityTag(validators.etag)
    if (current === null) throw new TypeError(`validators.etag is not an entity-tag (RFC 9110 8.8.3): ${JSON.stringify(validators.etag)}`)
  }
  // A resource without a current representation has no validators.
  if (!exists) current = null
  const lastModified = exists && typeof validators.lastModified === 'number' && Number.isFinite(validators.lastModified)
    ? toSeconds(validators.lastModified)
    : undefined

  // Step 1. RFC 9110 13.1.1 If-Match: "*" is true iff a current representation
  // exists; otherwise strong comparison against each listed tag. A malformed
  // field never lets the method run.
  const ifMatch = parsed.ifMatch
  if (ifMatch !== undefined) {
    if (ifMatch === INVALID) return FAILED_IF_MATCH
    if (ifMatch === '*' ? !exists : !listMatches(ifMatch, current, strongCompare)) return FAILED_IF_MATCH
  } else if (parsed.ifUnmodifiedSince !== undefined && lastModified !== undefined) {
    // Step 2. RFC 9110 13.1.4 If-Unmodified-Since, only without If-Match, and
    // ignored when the resource has no modification date. True when the
    // representation was last modified at or before the given date.
    if (lastModified > parsed.ifUnmodifiedSince) return FAILED_IF_UNMODIFIED_SINCE
  }

  // Step 3. RFC 9110 13.1.2 If-None-Match: "*" matches iff a current
  // representation exists; otherwise weak comparison. A match means 304 for
  // GET/HEAD and 412 for every other method.
  const ifNoneMatch = parsed.ifNoneMatch
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch === INVALID) return isGetOrHead(method) ? PROCEED : FAILED_IF_NONE_MATCH
    const matched = ifNoneMatch === '*' ? exists : listMatches(ifNoneMatch, current, weakCompare)
    if (matched) return isGetOrHead(method) ? NOT_MODIFIED_IF_NONE_MATCH : FAILED_IF_NONE_MATCH
  } else if (isGetOrHead(method) && parsed.ifModifiedSince !== undefined && lastModified !== undefined) {
    // Step 4. RFC 9110 13.1.3 If-Modified-Since, only without If-None-Match,
    // only for GET/HEAD, ignored without a modification date. False (not
    // modified) when last modified at or before the given date.
    if (lastModified <= parsed.ifModifiedSince) return NOT_MODIFIED_IF_MODIFIED_SINCE
  }

  // Step 5 (Range / If-Range) is not handled here: proceed.
  return PROCEED
}

/**
 * Parses and evaluates in one call (see {@link parseConditions} and
 * {@link evaluateParsed}).
 */
export function evaluatePreconditions (method: string, headers: ConditionalHeaders, validators: Validators, options?: ParseConditionsOptions): PreconditionOutcome {
  return evaluateParsed(method, parseConditions(headers, options), validators)
}

/**
 * For a store's compare-and-set: true when the parsed preconditions still hold
 * against the validators read inside the write (same rules as
 * {@link evaluateParsed} for `method`, by default an unsafe method, so
 * If-Modified-Since plays no part).
 */
export function conditionsHold (parsed: ParsedConditions, validators: Validators, method = 'PUT'): boolean {
  return evaluateParsed(method, parsed, validators).outcome === 'proceed'
}

/** True when the request carries any precondition that will be evaluated (valid dates only). */
export function hasPrecondition (parsed: ParsedConditions): boolean {
  return parsed.ifMatch !== undefined || parsed.ifNoneMatch !== undefined ||
    parsed.ifModifiedSince !== undefined || parsed.ifUnmodifiedSince !== undefined
}

/**
 * RFC 6585 3 (428 Precondition Required): true when the request is conditional
 * on the state it overwrites, i.e. carries If-Match (even a malformed one,
 * which then fails with 412) or a valid If-Unmodified-Since.
 */
export function hasWritePrecondition (parsed: ParsedConditions): boolean {
  return parsed.ifMatch !== undefined || parsed.ifUnmodifiedSince !== undefined
}
