/**
 * Property-based fuzzing of every header grammar in packages/grammar (and the parsers built on
 * them): on arbitrary input they never throw, they stay linear, and format/parse
 * round-trips hold.
 */
import { test } from 'tap'
import fc from 'fast-check'
import { parseEntityTag, parseEntityTagList, formatEntityTag, strongCompare } from '../../packages/grammar/src/etag'
import { parseHttpDate, formatHttpDate } from '../../packages/grammar/src/http-date'
import { parseMediaType } from '../../packages/grammar/src/media-type'
import { parseAccept, parseWeightedTokens, negotiateMediaType } from '../../packages/grammar/src/qlist'
import { parseAuthorization, formatChallenge } from '../../packages/grammar/src/authorization'
import { splitList, quoteString, parseQuotedString } from '../../packages/grammar/src/tokens'
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

// Linear work: the work done on 8n characters is compared with the work on n characters of the
// same adversarial pattern. Work is counted, not timed, so a busy machine cannot change the result:
// while a parser runs, the string and RegExp methods it can scan with are wrapped to count the
// characters each call covers (one for charCodeAt and its kin; the span a search covers; the
// length of what slice, split, case and trim methods read or make; the whole input of a regular
// expression). The grammars are hand-written scanners over charCodeAt, so this sees their every
// step. A linear parser gives a ratio near 8, a quadratic one near 64.
type Method = (this: string, ...args: unknown[]) => unknown
const CHARGES: Record<string, (s: string, args: unknown[], result: unknown) => number> = {
  charCodeAt: () => 1,
  codePointAt: () => 1,
  at: () => 1,
  indexOf: (s, [search, from], r) => (r === -1 ? s.length : (r as number) + String(search).length) - Math.max(0, Number(from ?? 0)),
  lastIndexOf: (s, [, from], r) => (from === undefined ? s.length : Number(from)) - (r === -1 ? 0 : r as number),
  includes: (s, [, from]) => s.length - Math.max(0, Number(from ?? 0)),
  startsWith: (_s, [search]) => String(search).length,
  endsWith: (_s, [search]) => String(search).length,
  slice: (_s, _a, r) => (r as string).length,
  substring: (_s, _a, r) => (r as string).length,
  split: (s) => s.length,
  toLowerCase: (s) => s.length,
  toUpperCase: (s) => s.length,
  trim: (s) => s.length,
  trimStart: (s, _a, r) => s.length - (r as string).length + 1,
  trimEnd: (s, _a, r) => s.length - (r as string).length + 1
}

/** Characters the parse of `input` scans, counted through the string and RegExp methods. */
function work (parse: (s: string) => unknown, input: string): number {
  let n = 0
  const proto = String.prototype as unknown as Record<string, Method>
  const saved = new Map<string, Method>()
  const regexp = RegExp.prototype as unknown as { exec: (this: RegExp, s: string) => RegExpExecArray | null }
  const { exec } = regexp
  for (const [name, charge] of Object.entries(CHARGES)) {
    const original = proto[name]
    saved.set(name, original)
    proto[name] = function (this: string, ...args: unknown[]) {
      const result = original.apply(this, args)
      n += 1 + Math.max(0, charge(String(this), args, result))
      return result
    }
  }
  regexp.exec = function (this: RegExp, s: string) { n += 1 + String(s).length; return exec.call(this, s) }
  try {
    parse(input)
  } finally {
    for (const [name, original] of saved) proto[name] = original
    regexp.exec = exec
  }
  return n
}
const patterns = ['"', 'W/', ', ', '"a", ', 'a;q=0.5,', 'x/y;a="\\"', ' ', '\\"', 'a=', '*/*;', 'Mon, ']

// Two scales: 1000 -> 8000 characters stays under the grammars' length caps (8192), so their
// scanners run to the end; 16384 -> 131072 checks that a value over a cap is refused early.
const SIZES: Array<[number, number]> = [[1000, 8000], [16384, 131072]]

test('parsers stay linear on long adversarial inputs (work counted, not timed)', async (t) => {
  for (const [name, parse] of Object.entries(parsers)) {
    for (const p of patterns) {
      for (const [n, m] of SIZES) {
        const small = p.repeat(Math.ceil(n / p.length))
        const large = p.repeat(Math.ceil(m / p.length))
        const ratio = (work(parse, large) + 100) / (work(parse, small) + 100)
        t.ok(ratio < 16, `${name} on ${JSON.stringify(p)}, ${n} -> ${m} characters: ${(large.length / small.length).toFixed(1)}x the input costs ${ratio.toFixed(1)}x the work`)
      }
    }
  }
})

test('the work counter sees a quadratic scanner', async (t) => {
  // Rescans the rest of the input for every character: n * (n + 1) / 2 reads.
  const quadratic = (s: string): number => {
    let seen = 0
    for (let i = 0; i < s.length; i++) for (let j = i; j < s.length; j++) seen += s.charCodeAt(j) === 44 ? 1 : 0
    return seen
  }
  const ratio = (work(quadratic, 'a,'.repeat(500)) + 100) / (work(quadratic, 'a,'.repeat(62)) + 100)
  t.ok(ratio > 16, `8x the input costs ${ratio.toFixed(1)}x the work`)
  const linear = (s: string): number => s.indexOf('z') + s.slice(1).length
  t.equal(work(linear, 'abc'), 1 + 3 + 1 + 2, 'indexOf charges the span it searched, slice what it returned')
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
