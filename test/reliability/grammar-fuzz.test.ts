/**
 * Property-based fuzzing of every header grammar in lib/headers (and the parsers built on
 * them): on arbitrary input they never throw, they stay linear, and format/parse
 * round-trips hold.
 */
import { test } from 'tap'
import fc from 'fast-check'
import { parseEntityTag, parseEntityTagList, formatEntityTag, strongCompare } from '../../lib/headers/etag'
import { parseHttpDate, formatHttpDate } from '../../lib/headers/http-date'
import { parseMediaType } from '../../lib/headers/media-type'
import { parseAccept, parseWeightedTokens, negotiateMediaType } from '../../lib/headers/qlist'
import { parseAuthorization, formatChallenge } from '../../lib/headers/authorization'
import { splitList, quoteString, parseQuotedString } from '../../lib/headers/tokens'
import { parseConditions, evaluateParsed } from '../../lib/conditional'
import { parseBasic } from '../../lib/auth/basic'
import { parseBearer } from '../../lib/auth/bearer'

// Inputs made of the characters the grammars care about, so the fuzzer reaches deep states.
const ALPHABET = ['"', '\\', ',', ';', '=', '/', '*', 'W', 'w', ' ', '\t', 'a', 'Z', '0', '9', '-', '.', 'q', ':', '(', ')', '\u00e9', '\r', '\n', '\u0000']
const headerish = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 200 }).map((cs) => cs.join(''))
const anything = fc.oneof(headerish, fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 100 }))

const parsers: Record<string, (s: string) => unknown> = {
  'entity-tag': parseEntityTag,
  'entity-tag list': (s) => parseEntityTagList(s),
  'HTTP-date': (s) => parseHttpDate(s),
  'media type': (s) => parseMediaType(s),
  Accept: (s) => parseAccept(s),
  'Accept negotiation': (s) => negotiateMediaType(s, ['application/json', 'application/xml']),
  'A-IM': (s) => parseWeightedTokens(s),
  Authorization: (s) => parseAuthorization(s),
  Basic: (s) => parseBasic(s),
  Bearer: (s) => parseBearer(s),
  'list elements': (s) => splitList(s),
  'quoted-string': (s) => parseQuotedString(s, 0),
  preconditions: (s) => evaluateParsed('PUT', parseConditions({ 'if-match': s, 'if-none-match': s, 'if-modified-since': s, 'if-unmodified-since': s }), { exists: true, etag: '"v1"', lastModified: 0 })
}

test('every header parser returns (never throws) on arbitrary input', async (t) => {
  for (const [name, parse] of Object.entries(parsers)) {
    t.doesNotThrow(() => fc.assert(fc.property(anything, (s) => { parse(s) }), { numRuns: 1500 }), name)
  }
})

// Linear time: the work on 8n characters is compared with the work on n characters of the same
// adversarial pattern (median of several runs). Linear parsers give a ratio near 8; a quadratic one
// near 64. The bound is generous so a busy machine does not fail the test; a backtracking regex would.
function cost (parse: (s: string) => unknown, input: string): number {
  const runs: number[] = []
  for (let i = 0; i < 5; i++) {
    const start = process.cpuUsage()
    for (let j = 0; j < 3; j++) parse(input)
    const used = process.cpuUsage(start)
    runs.push(used.user + used.system)
  }
  return runs.sort((a, b) => a - b)[2] + 50
}

const patterns = ['"', 'W/', ', ', '"a", ', 'a;q=0.5,', 'x/y;a="\\"', ' ', '\\"', 'a=', '*/*;', 'Mon, ']

test('parsers stay linear on long adversarial inputs', async (t) => {
  for (const [name, parse] of Object.entries(parsers)) {
    for (const p of patterns) {
      const small = p.repeat(Math.ceil(16384 / p.length))
      const large = p.repeat(Math.ceil(131072 / p.length))
      const ratio = cost(parse, large) / cost(parse, small)
      t.ok(ratio < 40, `${name} on ${JSON.stringify(p)}: 8x the input costs ${ratio.toFixed(1)}x`)
    }
  }
})

test('round-trips: entity-tags, HTTP-dates, quoted strings, challenges', async (t) => {
  const etagc = fc.array(fc.integer({ min: 0x21, max: 0x7e }).filter((c) => c !== 0x22), { maxLength: 40 }).map((cs) => String.fromCharCode(...cs))
  fc.assert(fc.property(fc.boolean(), etagc, (weak, opaque) => {
    const tag = { weak, opaque }
    const parsed = parseEntityTag(formatEntityTag(tag))
    return parsed !== null && parsed.weak === weak && parsed.opaque === opaque && (weak || strongCompare(parsed, tag))
  }))
  fc.assert(fc.property(fc.integer({ min: 0, max: 253402300799 }), (s) => parseHttpDate(formatHttpDate(s * 1000)) === s * 1000))
  const qd = fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: 60 }).map((cs) => String.fromCharCode(...cs))
  fc.assert(fc.property(qd, (v) => parseQuotedString(quoteString(v), 0)?.value === v))
  fc.assert(fc.property(qd, qd, (realm, desc) => {
    const parsed = parseAuthorization(formatChallenge('Bearer', [['realm', realm], ['error_description', desc]]))
    return parsed.ok && parsed.params?.realm === realm && parsed.params?.error_description === desc
  }))
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), 784111777000)
})
