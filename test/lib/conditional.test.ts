import { test } from 'tap'
import fc from 'fast-check'
import fresh from 'fresh'
import type { IncomingHttpHeaders } from 'node:http'
import {
  evaluatePreconditions, evaluateParsed, parseConditions, conditionsHold, hasPrecondition,
  hasWritePrecondition, conditionalHeadersFromRaw
} from '../../lib/conditional'
import type { ConditionalHeaders, Validators, PreconditionOutcome } from '../../lib/conditional'
import { formatHttpDate } from '../../packages/grammar/src/http-date'

// Conformance fixture (test/fixtures/conditional-requests.md): current ETag "v2", Last-Modified T.
const T = Date.UTC(2024, 0, 15, 12, 45, 26)
const HTTP_T = formatHttpDate(T) // Mon, 15 Jan 2024 12:45:26 GMT
const HTTP_T_MINUS_1 = formatHttpDate(T - 1000)
const HTTP_T_PLUS_1 = formatHttpDate(T + 1000)
const V: Validators = { exists: true, etag: '"v2"', lastModified: T }
const MISSING: Validators = { exists: false }

const PROCEED = { outcome: 'proceed' }
const failed = (header: string) => ({ outcome: 'precondition-failed', header })
const notModified = (header: string) => ({ outcome: 'not-modified', header })
const ev = (method: string, headers: ConditionalHeaders, validators: Validators = V): PreconditionOutcome =>
  evaluatePreconditions(method, headers, validators)

test('case 1: PUT If-Match "v1" fails on If-Match (the handler must not run)', async (t) => {
  t.same(ev('PUT', { 'if-match': '"v1"' }), failed('If-Match'))
})

test('case 2: If-Match uses strong comparison, so a weak tag never matches', async (t) => {
  t.same(ev('PUT', { 'if-match': 'W/"v2"' }), failed('If-Match'))
  t.same(ev('PUT', { 'if-match': '"v2"' }, { ...V, etag: 'W/"v2"' }), failed('If-Match'), 'current tag weak')
  t.same(ev('PUT', { 'if-match': 'W/"v2"' }, { ...V, etag: 'W/"v2"' }), failed('If-Match'), 'both weak')
  t.same(ev('PUT', { 'if-match': '"v2"' }), PROCEED, 'both strong and identical')
})

test('case 3: If-Match lists with OWS, several field lines and empty elements proceed', async (t) => {
  t.same(ev('PUT', { 'if-match': '"x", "v2"' }), PROCEED)
  t.same(ev('PUT', { 'if-match': ' "x" ,"v2"' }), PROCEED)
  t.same(ev('PUT', { 'if-match': '"x", "v2"' /* Node joins two lines with ", " */ }), PROCEED)
  t.same(ev('PUT', { 'if-match': ['"x"', '"v2"'] }), PROCEED, 'two separate lines as a list')
  t.same(ev('PUT', conditionalHeadersFromRaw(['If-Match', '"x"', 'Host', 'a', 'if-match', '"v2"'])), PROCEED, 'two raw lines')
  t.same(ev('PUT', { 'if-match': ', "v2"' }), PROCEED)
})

test('case 4: If-Match * proceeds when the resource exists and fails when it does not', async (t) => {
  t.same(ev('PUT', { 'if-match': '*' }), PROCEED)
  t.same(ev('PUT', { 'if-match': '*' }, { exists: true }), PROCEED, 'even without any validator')
  t.same(ev('PUT', { 'if-match': '*' }, MISSING), failed('If-Match'))
})

test('case 5: PUT If-None-Match * fails when the resource exists and proceeds when it does not', async (t) => {
  t.same(ev('PUT', { 'if-none-match': '*' }), failed('If-None-Match'))
  t.same(ev('PUT', { 'if-none-match': '*' }, MISSING), PROCEED)
})

test('case 6: GET If-None-Match "v2" is not modified', async (t) => {
  t.same(ev('GET', { 'if-none-match': '"v2"' }), notModified('If-None-Match'))
  t.same(ev('GET', { 'if-none-match': '*' }), notModified('If-None-Match'), '* matches an existing resource')
})

test('case 7: If-None-Match uses weak comparison; case matters; w/ is not a weak prefix', async (t) => {
  t.same(ev('GET', { 'if-none-match': 'W/"v2"' }), notModified('If-None-Match'))
  t.same(ev('GET', { 'if-none-match': '"v2"' }, { ...V, etag: 'W/"v2"' }), notModified('If-None-Match'))
  t.same(ev('GET', { 'if-none-match': '"V2"' }), PROCEED)
  t.same(ev('GET', { 'if-none-match': 'w/"v2"' }), PROCEED, 'malformed: matches nothing for GET')
  t.same(ev('GET', { 'if-none-match': '"a", W/"v2"' }), notModified('If-None-Match'), 'any list member')
})

test('case 8: PUT/POST/DELETE/PATCH with a matching If-None-Match fail with 412, never 304', async (t) => {
  for (const method of ['PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS']) {
    t.same(ev(method, { 'if-none-match': '"v2"' }), failed('If-None-Match'), method)
    t.same(ev(method, { 'if-none-match': 'W/"v2"' }), failed('If-None-Match'), method + ' weak')
  }
})

test('case 9: HEAD is evaluated exactly like GET', async (t) => {
  const cases: ConditionalHeaders[] = [
    { 'if-none-match': '"v2"' }, { 'if-none-match': '"x"' }, { 'if-modified-since': HTTP_T },
    { 'if-modified-since': HTTP_T_MINUS_1 }, { 'if-match': '"v1"' }, { 'if-unmodified-since': HTTP_T_MINUS_1 },
    { 'if-none-match': 'w/"v2"' }
  ]
  for (const headers of cases) t.same(ev('HEAD', headers), ev('GET', headers), JSON.stringify(headers))
  t.same(ev('HEAD', { 'if-modified-since': HTTP_T }), notModified('If-Modified-Since'))
})

test('case 10: If-Unmodified-Since is ignored when If-Match is present', async (t) => {
  t.same(ev('PUT', { 'if-match': '"v2"', 'if-unmodified-since': HTTP_T_MINUS_1 }), PROCEED)
  t.same(ev('PUT', { 'if-match': '"v1"', 'if-unmodified-since': HTTP_T_PLUS_1 }), failed('If-Match'),
    'and a fresh If-Unmodified-Since does not rescue a failed If-Match')
})

test('case 11: If-Unmodified-Since T proceeds; T - 1s fails', async (t) => {
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T }), PROCEED)
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T_PLUS_1 }), PROCEED)
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T_MINUS_1 }), failed('If-Unmodified-Since'))
  t.same(ev('GET', { 'if-unmodified-since': HTTP_T_MINUS_1 }), failed('If-Unmodified-Since'), 'for GET as well')
})

test('case 12: If-Unmodified-Since invalid, a list of dates, or without a modification date is ignored', async (t) => {
  t.same(ev('PUT', { 'if-unmodified-since': 'yesterday' }), PROCEED, 'invalid date')
  t.same(ev('PUT', { 'if-unmodified-since': [HTTP_T_MINUS_1, HTTP_T_MINUS_1] }), PROCEED, 'several lines')
  t.same(ev('PUT', conditionalHeadersFromRaw([
    'If-Unmodified-Since', HTTP_T_MINUS_1, 'If-Unmodified-Since', HTTP_T
  ])), PROCEED, 'several raw lines (Node would keep only the first in req.headers)')
  t.same(ev('PUT', { 'if-unmodified-since': `${HTTP_T_MINUS_1}, ${HTTP_T}` }), PROCEED, 'several dates on one line')
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T_MINUS_1 }, { exists: true, etag: '"v2"' }), PROCEED,
    'resource without a modification date')
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T_MINUS_1 }, { exists: true, lastModified: Number.NaN }), PROCEED,
    'a non-finite modification date counts as none')
  t.same(ev('PUT', { 'if-unmodified-since': [HTTP_T_MINUS_1] }), failed('If-Unmodified-Since'), 'one line in a list is used')
})

test('case 13: GET with a non-matching If-None-Match ignores If-Modified-Since', async (t) => {
  t.same(ev('GET', { 'if-none-match': '"x"', 'if-modified-since': HTTP_T }), PROCEED)
  t.same(ev('GET', { 'if-modified-since': HTTP_T }), notModified('If-Modified-Since'), 'alone it would say not modified')
})

test('case 14: If-Modified-Since applies to GET and HEAD only', async (t) => {
  for (const method of ['PUT', 'POST', 'PATCH', 'DELETE', 'get']) {
    t.same(ev(method, { 'if-modified-since': HTTP_T }), PROCEED, method)
  }
})

test('case 15: one-second granularity: stored 12:45:26.700 is not modified since 12:45:26 and unmodified since it', async (t) => {
  const stored: Validators = { exists: true, etag: '"v2"', lastModified: T + 700 }
  t.equal(formatHttpDate(T + 700), 'Mon, 15 Jan 2024 12:45:26 GMT', 'Last-Modified is an IMF-fixdate of the whole second')
  t.same(ev('GET', { 'if-modified-since': 'Mon, 15 Jan 2024 12:45:26 GMT' }, stored), notModified('If-Modified-Since'))
  t.same(ev('PUT', { 'if-unmodified-since': 'Mon, 15 Jan 2024 12:45:26 GMT' }, stored), PROCEED)
  t.same(ev('GET', { 'if-modified-since': 'Mon, 15 Jan 2024 12:45:25 GMT' }, stored), PROCEED, 'one second earlier: modified')
})

test('case 16: RFC 850 and asctime dates are accepted; garbage is ignored', async (t) => {
  const rfc850 = 'Monday, 15-Jan-24 12:45:26 GMT'
  const asctime = 'Mon Jan 15 12:45:26 2024'
  t.same(ev('GET', { 'if-modified-since': rfc850 }), notModified('If-Modified-Since'))
  t.same(ev('GET', { 'if-modified-since': asctime }), notModified('If-Modified-Since'))
  t.same(ev('PUT', { 'if-unmodified-since': 'Monday, 15-Jan-24 12:45:25 GMT' }), failed('If-Unmodified-Since'))
  t.same(ev('PUT', { 'if-unmodified-since': 'Mon Jan 15 12:45:25 2024' }), failed('If-Unmodified-Since'))
  t.same(ev('GET', { 'if-modified-since': 'garbage' }), PROCEED)
  t.same(ev('PUT', { 'if-unmodified-since': 'garbage' }), PROCEED)
  t.same(parseConditions({ 'if-modified-since': 'Monday, 15-Jan-24 12:45:26 GMT' }, { now: Date.UTC(2090, 0, 1) }),
    { ifModifiedSince: Date.UTC(2124, 0, 15, 12, 45, 26) }, 'the two-digit year is read relative to options.now')
})

test('case 17 (evaluator part): a missing resource never yields not-modified, so the route answers 404', async (t) => {
  t.same(ev('GET', { 'if-none-match': '"v2"' }, { exists: false, etag: '"v2"', lastModified: T }), PROCEED)
  t.same(ev('GET', { 'if-modified-since': HTTP_T }, { exists: false, lastModified: T }), PROCEED)
  t.same(ev('GET', { 'if-unmodified-since': HTTP_T_MINUS_1 }, { exists: false, lastModified: T }), PROCEED)
  // The 404-before-412 and 401-before-412 order (RFC 9110 13.2.1) is the plugin's: it
  // calls the evaluator only after auth and the existence check.
})

test('case 18: a malformed If-Match (unquoted v2) never lets the method run', async (t) => {
  t.same(ev('PUT', { 'if-match': 'v2' }), failed('If-Match'))
  t.same(ev('GET', { 'if-match': 'v2' }), failed('If-Match'))
  t.same(ev('PUT', { 'if-match': '"v2", v3' }), failed('If-Match'), 'even when a valid member matches')
  t.same(ev('PUT', { 'if-match': '*, "v2"' }), failed('If-Match'), '* mixed with tags')
})

test('case 19: GET If-Match "v1" fails on If-Match', async (t) => {
  t.same(ev('GET', { 'if-match': '"v1"' }), failed('If-Match'))
})

test('case 20: the 428 option asks for If-Match or If-Unmodified-Since on writes (RFC 6585 3)', async (t) => {
  const write = (headers: ConditionalHeaders) => hasWritePrecondition(parseConditions(headers))
  t.notOk(write({}), 'no precondition: 428')
  t.notOk(write({ 'if-none-match': '"v2"' }), 'If-None-Match does not protect an update')
  t.notOk(write({ 'if-modified-since': HTTP_T }))
  t.notOk(write({ 'if-unmodified-since': 'garbage' }), 'an ignored date is no precondition')
  t.ok(write({ 'if-match': '"v2"' }))
  t.ok(write({ 'if-match': 'v2' }), 'a malformed If-Match counts, and then fails with 412')
  t.ok(write({ 'if-unmodified-since': HTTP_T }))
})

test('RFC 9110 13.2.2: evaluation order decides which header is reported', async (t) => {
  t.same(ev('GET', { 'if-match': '"v1"', 'if-none-match': '"x"' }), failed('If-Match'), 'If-Match first')
  t.same(ev('PUT', { 'if-unmodified-since': HTTP_T_MINUS_1, 'if-none-match': '"v2"' }), failed('If-Unmodified-Since'))
  t.same(ev('GET', { 'if-match': '"v2"', 'if-none-match': '"v2"' }), notModified('If-None-Match'),
    'If-Match holds, then If-None-Match matches')
  t.same(ev('GET', { 'if-unmodified-since': HTTP_T, 'if-modified-since': HTTP_T }), notModified('If-Modified-Since'))
  t.same(ev('GET', { 'if-match': '*', 'if-modified-since': HTTP_T_MINUS_1 }), PROCEED, 'modified since: send it')
})

test('RFC 9110 13.1.1: If-Match on a resource that does not exist fails, whatever the validators say', async (t) => {
  t.same(ev('PUT', { 'if-match': '"v2"' }, { exists: false, etag: '"v2"' }), failed('If-Match'))
  t.same(ev('PUT', { 'if-match': '"v2"' }, { exists: true }), failed('If-Match'), 'an existing resource without an ETag')
})

test('RFC 9110 13.1.2: If-None-Match without a current ETag matches nothing, except *', async (t) => {
  t.same(ev('PUT', { 'if-none-match': '"v2"' }, { exists: true }), PROCEED)
  t.same(ev('PUT', { 'if-none-match': '*' }, { exists: true }), failed('If-None-Match'))
})

test('a malformed If-None-Match: ignored for GET/HEAD (and still disables If-Modified-Since), fails other methods', async (t) => {
  t.same(ev('GET', { 'if-none-match': 'v2' }), PROCEED)
  t.same(ev('HEAD', { 'if-none-match': 'v2', 'if-modified-since': HTTP_T }), PROCEED)
  t.same(ev('PUT', { 'if-none-match': 'v2' }), failed('If-None-Match'))
  t.same(ev('PUT', { 'if-none-match': '*x' }, MISSING), failed('If-None-Match'), 'a garbled create-only write does not run')
})

test('a present but empty If-Match / If-None-Match is a list of no tags', async (t) => {
  t.same(ev('PUT', { 'if-match': '' }), failed('If-Match'), 'If-Match: (empty) never matches: fail closed')
  t.same(ev('PUT', { 'if-match': ' , ' }), failed('If-Match'))
  t.same(ev('GET', { 'if-none-match': '' }), PROCEED)
  t.same(ev('GET', { 'if-none-match': '', 'if-modified-since': HTTP_T }), PROCEED, 'If-Modified-Since is still ignored')
  t.same(ev('PUT', { 'if-match': [] }), PROCEED, 'an empty list of lines is an absent field')
})

test('no precondition: proceed', async (t) => {
  t.same(ev('GET', {}), PROCEED)
  t.same(ev('PUT', {}, MISSING), PROCEED)
  t.same(ev('GET', { host: 'x', 'if-range': '"v2"' }), PROCEED, 'other fields are ignored')
})

test('parseConditions parses each field once and never throws on odd values', async (t) => {
  t.same(parseConditions({
    'if-match': '"a", W/"b"', 'if-none-match': '*', 'if-modified-since': HTTP_T, 'if-unmodified-since': 'nope'
  }), {
    ifMatch: [{ weak: false, opaque: 'a' }, { weak: true, opaque: 'b' }], ifNoneMatch: '*', ifModifiedSince: T
  })
  t.same(parseConditions({ 'if-match': ['"a"', 7] as unknown as string[] }), { ifMatch: 'invalid' }, 'non-strings in a list')
  t.same(parseConditions({ 'if-match': 7, 'if-modified-since': 7, 'if-none-match': null } as unknown as ConditionalHeaders), {})
  t.same(parseConditions({ 'if-modified-since': [7] as unknown as string[] }), {})
  t.same(parseConditions(null as unknown as ConditionalHeaders), {})
  t.same(parseConditions({ 'if-match': '"a", "b", "c"' }, { maxElements: 2 }), { ifMatch: 'invalid' }, 'limits pass through')
  const nodeHeaders: IncomingHttpHeaders = { 'if-none-match': '"v2"', 'content-type': 'text/plain' }
  t.same(parseConditions(nodeHeaders), { ifNoneMatch: [{ weak: false, opaque: 'v2' }] }, 'accepts Node request headers')
})

test('conditionalHeadersFromRaw keeps every line of the four fields, case-insensitively', async (t) => {
  t.same(conditionalHeadersFromRaw([
    'Host', 'x', 'IF-MODIFIED-SINCE', 'a', 'If-None-Match', '"1"', 'if-modified-since', 'b', 'If-Unmodified-Since', 'c',
    'If-Match', '*', 'dangling'
  ]), {
    'if-modified-since': ['a', 'b'], 'if-none-match': ['"1"'], 'if-unmodified-since': ['c'], 'if-match': ['*']
  })
  t.same(conditionalHeadersFromRaw([]), {})
})

test('hasPrecondition: any field that will be evaluated', async (t) => {
  t.notOk(hasPrecondition(parseConditions({})))
  t.notOk(hasPrecondition(parseConditions({ 'if-modified-since': 'garbage', 'if-unmodified-since': [HTTP_T, HTTP_T] })))
  t.ok(hasPrecondition(parseConditions({ 'if-match': '*' })))
  t.ok(hasPrecondition(parseConditions({ 'if-none-match': '"x"' })))
  t.ok(hasPrecondition(parseConditions({ 'if-modified-since': HTTP_T })))
  t.ok(hasPrecondition(parseConditions({ 'if-unmodified-since': HTTP_T })))
})

test('compare-and-set: conditionsHold re-checks the same parsed conditions against the stored validators', async (t) => {
  const parsed = parseConditions({ 'if-match': '"v2"' })
  t.same(evaluateParsed('PUT', parsed, V), PROCEED, 'before the handler')
  t.ok(conditionsHold(parsed, V), 'still v2 inside the write')
  t.notOk(conditionsHold(parsed, { ...V, etag: '"v3"' }), 'a concurrent write changed it: 412')
  t.notOk(conditionsHold(parsed, MISSING), 'a concurrent delete: 412')
  const create = parseConditions({ 'if-none-match': '*' })
  t.ok(conditionsHold(create, MISSING))
  t.notOk(conditionsHold(create, V), 'created concurrently')
  const since = parseConditions({ 'if-modified-since': HTTP_T })
  t.ok(conditionsHold(since, V), 'If-Modified-Since plays no part in a write')
  t.notOk(conditionsHold(since, V, 'GET'), 'unless the method given is GET')
})

test('validators: a bare opaque ETag is a strong tag; a malformed one is a programming error', async (t) => {
  t.same(ev('PUT', { 'if-match': '"v2"' }, { exists: true, etag: 'v2' }), PROCEED)
  t.throws(() => ev('GET', {}, { exists: true, etag: 'v 2' }), TypeError)
  t.throws(() => ev('GET', {}, { exists: true, etag: '' }), TypeError)
})

// ---- properties ----

const opaqueArb = fc.constantFrom('v1', 'v2', 'V2', 'a', '')
const tagArb = fc.record({ weak: fc.boolean(), opaque: opaqueArb }).map(({ weak, opaque }) => (weak ? 'W/' : '') + `"${opaque}"`)
const junkArb = fc.string({ unit: 'binary', maxLength: 20 })
const listArb = fc.oneof(
  fc.constant('*'),
  fc.array(fc.oneof(tagArb, fc.constant('')), { minLength: 1, maxLength: 4 }).map((xs) => xs.join(', ')),
  junkArb
)
const dateArb = fc.oneof(
  fc.integer({ min: -3, max: 3 }).map((d) => formatHttpDate(T + d * 1000)),
  fc.constant('garbage')
)
const validatorsArb: fc.Arbitrary<Validators> = fc.record({
  exists: fc.boolean(),
  etag: fc.option(tagArb, { nil: undefined }),
  lastModified: fc.option(fc.integer({ min: T - 3000, max: T + 3000 }), { nil: undefined })
}, { requiredKeys: ['exists'] })
const headersArb: fc.Arbitrary<ConditionalHeaders> = fc.record({
  'if-match': listArb,
  'if-none-match': listArb,
  'if-modified-since': fc.oneof(dateArb, fc.array(dateArb, { maxLength: 3 })),
  'if-unmodified-since': fc.oneof(dateArb, fc.array(dateArb, { maxLength: 3 }))
}, { requiredKeys: [] })

test('property: HEAD is always evaluated like GET; unsafe methods are never "not modified"', async (t) => {
  fc.assert(fc.property(headersArb, validatorsArb, fc.constantFrom('PUT', 'POST', 'PATCH', 'DELETE'), (headers, v, unsafe) => {
    t.same(ev('HEAD', headers, v), ev('GET', headers, v))
    t.not(ev(unsafe, headers, v).outcome, 'not-modified')
  }), { numRuns: 500 })
})

test('a list field whose lines are not all strings is an invalid list, never a throw (an object that cannot become a string included)', async (t) => {
  const weird = [{ toString: '' }] as unknown as string[]
  t.same(parseConditions({ 'if-none-match': weird, 'if-match': weird }), { ifMatch: 'invalid', ifNoneMatch: 'invalid' })
  t.equal(ev('PUT', { 'if-match': weird } as ConditionalHeaders).outcome, 'precondition-failed', 'an invalid If-Match matches nothing')
})

test('property: the evaluator never throws on arbitrary header values', async (t) => {
  const anyValue = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.array(fc.string({ maxLength: 40 }), { maxLength: 3 }), fc.anything())
  fc.assert(fc.property(anyValue, anyValue, anyValue, anyValue, fc.string({ maxLength: 8 }), (a, b, c, d, method) => {
    const outcome = ev(method, { 'if-match': a, 'if-none-match': b, 'if-modified-since': c, 'if-unmodified-since': d } as ConditionalHeaders)
    t.ok(['proceed', 'precondition-failed', 'not-modified'].includes(outcome.outcome))
  }), { numRuns: 1000 })
})

/*
 * Oracle: the npm `fresh` package decides "not modified" for GET from If-None-Match and
 * If-Modified-Since. Inputs are restricted to where both claim to implement RFC 9110;
 * the documented differences, each excluded from the generator, are:
 * - fresh treats an empty If-None-Match as absent (it then looks at If-Modified-Since);
 *   we treat a present, empty field as a list of no tags (RFC 9110 13.1.3: If-Modified-Since
 *   is ignored whenever If-None-Match is present). Pinned below.
 * - fresh splits lists on spaces and commas and does not check the entity-tag grammar, so
 *   malformed lists (`w/"v2"`, unquoted tags) are excluded; ours are invalid and match nothing.
 * - fresh returns false for `Cache-Control: no-cache`; Cache-Control is not a precondition
 *   here (the plugin may add that rule), so it is not generated.
 * - fresh parses dates with Date.parse, which accepts non-HTTP-date formats; only IMF-fixdate
 *   and "garbage" are generated.
 * - fresh knows nothing of a missing resource; the resource always exists here.
 */
test('oracle: GET If-None-Match / If-Modified-Since agree with the npm fresh package', async (t) => {
  const oracleListArb = fc.oneof(
    fc.constant('*'),
    fc.array(fc.oneof(tagArb, fc.constant('')), { minLength: 1, maxLength: 4 })
      .filter((xs) => xs.some((x) => x !== '')).map((xs) => xs.join(', '))
  )
  const reqArb = fc.record({ 'if-none-match': oracleListArb, 'if-modified-since': dateArb }, { requiredKeys: [] })
  const resArb = fc.record({
    etag: fc.option(tagArb, { nil: undefined }),
    lastModified: fc.option(fc.integer({ min: T - 3000, max: T + 3000 }), { nil: undefined })
  })
  let notModifiedSeen = 0
  fc.assert(fc.property(reqArb, resArb, (req, res) => {
    const resHeaders: Record<string, string> = {}
    if (res.etag !== undefined) resHeaders.etag = res.etag
    if (res.lastModified !== undefined) resHeaders['last-modified'] = formatHttpDate(res.lastModified)
    const ours = ev('GET', req, { exists: true, ...res }).outcome === 'not-modified'
    if (ours) notModifiedSeen++
    return ours === fresh(req, resHeaders)
  }), { numRuns: 3000 })
  t.ok(notModifiedSeen > 100, `both outcomes were exercised (${notModifiedSeen} not modified of 3000)`)
  // The one difference the generator avoids, pinned so it stays deliberate:
  const req = { 'if-none-match': '', 'if-modified-since': HTTP_T }
  t.equal(fresh(req, { 'last-modified': HTTP_T }), true, 'fresh ignores the empty If-None-Match')
  t.same(ev('GET', req), PROCEED, 'we do not: If-None-Match is present')
})
