import { test } from 'tap'
import fc from 'fast-check'
import {
  parseEntityTag, parseEntityTagList, strongCompare, weakCompare, formatEntityTag,
  toEntityTag, normalizeEntityTag, INVALID, DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_LENGTH
} from '../src/etag'
import type { EntityTag } from '../src/etag'

const strong = (opaque: string): EntityTag => ({ weak: false, opaque })
const weak = (opaque: string): EntityTag => ({ weak: true, opaque })

// etagc = %x21 / %x23-7E / obs-text
const etagcArb = fc.oneof(
  fc.constant('!'),
  fc.integer({ min: 0x23, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c))
)
const opaqueArb = fc.string({ unit: etagcArb, maxLength: 12 })
const tagArb = fc.record({ weak: fc.boolean(), opaque: opaqueArb })
const owsArb = fc.string({ unit: fc.constantFrom(' ', '\t'), maxLength: 3 })

test('RFC 9110 8.8.3: an entity-tag is an optional W/ and a double-quoted opaque-tag', async (t) => {
  t.same(parseEntityTag('"v2"'), strong('v2'))
  t.same(parseEntityTag('W/"v2"'), weak('v2'))
  t.same(parseEntityTag('""'), strong(''), 'the opaque-tag may be empty')
  t.same(parseEntityTag('W/""'), weak(''))
  t.same(parseEntityTag('"a\\b"'), strong('a\\b'), 'a backslash is an etagc, not an escape')
  t.same(parseEntityTag('"\u00e9!#~"'), strong('\u00e9!#~'), 'obs-text and the edges of the etagc range')
})

test('RFC 9110 8.8.3: malformed entity-tags are refused', async (t) => {
  for (const bad of ['v2', '"v2', 'v2"', 'w/"v2"', 'W"v2"', 'W/v2', 'W/', '"v 2"', '"a"b"', '"v2" ', ' "v2"',
    '"v2"x', '"\u0100"', '"\u007f"', '"a\tb"', '', 'W/W/"x"']) {
    t.equal(parseEntityTag(bad), null, JSON.stringify(bad))
  }
  t.equal(parseEntityTag(42 as unknown as string), null, 'a non-string is not an entity-tag')
})

test('RFC 9110 13.1.1: "*" stands alone, with optional whitespace around it', async (t) => {
  t.equal(parseEntityTagList('*'), '*')
  t.equal(parseEntityTagList(' \t* '), '*')
  t.equal(parseEntityTagList('*, "v2"'), INVALID, '* mixed with tags')
  t.equal(parseEntityTagList('"v2", *'), INVALID, 'tags mixed with *')
  t.equal(parseEntityTagList('**'), INVALID)
  t.equal(parseEntityTagList('*,'), INVALID)
})

test('RFC 9110 5.6.1: list elements separated by commas with OWS; empty elements skipped', async (t) => {
  t.same(parseEntityTagList('"x", "v2"'), [strong('x'), strong('v2')])
  t.same(parseEntityTagList(' "x" ,"v2"'), [strong('x'), strong('v2')])
  t.same(parseEntityTagList(', "v2"'), [strong('v2')])
  t.same(parseEntityTagList('"a",,\t, W/"b" ,'), [strong('a'), weak('b')])
  t.same(parseEntityTagList('"a, b"'), INVALID, 'a comma is an etagc but a space is not')
  t.same(parseEntityTagList('"a,b", "c"'), [strong('a,b'), strong('c')], 'a comma inside the quotes belongs to the tag')
  t.same(parseEntityTagList('"x"' + ', ' + 'W/"y"'), [strong('x'), weak('y')], 'two field lines joined by Node')
  t.same(parseEntityTagList(''), [], 'a present but empty field holds no tag')
  t.same(parseEntityTagList(' , ,'), [])
})

test('RFC 9110 8.8.3: a list with any malformed element is invalid as a whole', async (t) => {
  for (const bad of ['v2', '"x", v2', 'w/"x"', '"x" "y"', '"x";', '"x", "y', '"x"\n', 'W/ "x"', '"x" , W/', '"a\\"b"']) {
    t.equal(parseEntityTagList(bad), INVALID, JSON.stringify(bad))
  }
  t.equal(parseEntityTagList(undefined as unknown as string), INVALID, 'a non-string value')
})

test('list caps: more than maxElements tags or more than maxLength characters is invalid', async (t) => {
  const list = (n: number) => Array.from({ length: n }, (_, i) => `"${i}"`).join(',')
  t.equal((parseEntityTagList(list(DEFAULT_MAX_ELEMENTS)) as EntityTag[]).length, DEFAULT_MAX_ELEMENTS)
  t.equal(parseEntityTagList(list(DEFAULT_MAX_ELEMENTS + 1)), INVALID)
  t.equal(parseEntityTagList(list(3), { maxElements: 2 }), INVALID)
  t.equal(parseEntityTagList(',,,,,', { maxElements: 0 }).length, 0, 'empty elements do not count')
  t.equal(parseEntityTagList('"' + 'a'.repeat(DEFAULT_MAX_LENGTH - 2) + '"').length, 1)
  t.equal(parseEntityTagList('"' + 'a'.repeat(DEFAULT_MAX_LENGTH - 1) + '"'), INVALID)
  t.equal(parseEntityTagList('*', { maxLength: 0 }), INVALID)
})

test('RFC 9110 8.8.3.2: strong comparison needs both tags strong and identical', async (t) => {
  t.ok(strongCompare(strong('1'), strong('1')))
  t.notOk(strongCompare(weak('1'), weak('1')))
  t.notOk(strongCompare(weak('1'), strong('1')))
  t.notOk(strongCompare(strong('1'), weak('1')))
  t.notOk(strongCompare(strong('1'), strong('2')))
  t.notOk(strongCompare(strong('v2'), strong('V2')), 'case-sensitive')
})

test('RFC 9110 8.8.3.2: weak comparison needs only identical opaque-tags', async (t) => {
  t.ok(weakCompare(weak('1'), weak('1')))
  t.ok(weakCompare(weak('1'), strong('1')))
  t.ok(weakCompare(strong('1'), weak('1')))
  t.ok(weakCompare(strong('1'), strong('1')))
  t.notOk(weakCompare(weak('1'), weak('2')))
  t.notOk(weakCompare(strong('v2'), strong('V2')), 'case-sensitive')
})

test('formatEntityTag writes strong and weak tags and refuses non-etagc characters', async (t) => {
  t.equal(formatEntityTag(strong('v2')), '"v2"')
  t.equal(formatEntityTag(weak('v2')), 'W/"v2"')
  t.equal(formatEntityTag(strong('')), '""')
  for (const bad of ['a"b', 'a b', 'a\r\nSet-Cookie: x', '\u0100', '\u0000']) {
    t.throws(() => formatEntityTag(strong(bad)), TypeError, JSON.stringify(bad))
  }
  t.throws(() => formatEntityTag({ weak: false, opaque: 1 as unknown as string }), TypeError)
})

test('a route-provided etag must be an entity-tag; a bare opaque value is quoted as a strong tag', async (t) => {
  t.equal(normalizeEntityTag('"v2"'), '"v2"')
  t.equal(normalizeEntityTag('W/"v2"'), 'W/"v2"')
  t.equal(normalizeEntityTag('v2'), '"v2"')
  t.equal(normalizeEntityTag('""'), '""')
  t.equal(normalizeEntityTag('w/abc'), '"w/abc"', 'a bare value that only looks like a prefix is opaque')
  t.same(toEntityTag('abc'), strong('abc'))
  t.same(toEntityTag('W/"abc"'), weak('abc'))
  for (const bad of ['', 'a b', '"v2', 'W/"x', 'a"b', 'x\r\ny', '\u0100']) {
    t.equal(toEntityTag(bad), null, JSON.stringify(bad))
    t.throws(() => normalizeEntityTag(bad), TypeError, JSON.stringify(bad))
  }
  t.equal(toEntityTag(undefined as unknown as string), null)
})

test('property: normalizeEntityTag is the entity-tag a value is read as, quoted, or a TypeError', async (t) => {
  // Strings made of the grammar's pieces and what breaks it: W/, quotes, etagc, space, CR, U+0100.
  const piece = fc.constantFrom('W/', '"', 'w/', 'a', '!', '#', '~', '\u0080', '\u00ff', ' ', '\r', '\u0100', ',')
  await t.resolves(async () => fc.assert(fc.property(fc.array(piece, { maxLength: 8 }).map((p) => p.join('')), (value) => {
    const tag = toEntityTag(value)
    let normalized: unknown
    try { normalized = normalizeEntityTag(value) } catch (err) { normalized = err }
    return tag === null ? normalized instanceof TypeError : normalized === formatEntityTag(tag)
  }), { numRuns: 3000 }))
})

test('property: formatEntityTag and parseEntityTag round-trip', async (t) => {
  fc.assert(fc.property(tagArb, (tag) => {
    const text = formatEntityTag(tag)
    t.same(parseEntityTag(text), tag)
    return normalizeEntityTag(text) === text
  }))
})

test('property: a list of formatted tags with any OWS and empty elements parses back to the tags', async (t) => {
  const pieceArb = fc.tuple(owsArb, fc.option(tagArb, { nil: undefined }), owsArb)
  fc.assert(fc.property(fc.array(pieceArb, { maxLength: 8 }), (pieces) => {
    const text = pieces.map(([a, tag, b]) => a + (tag === undefined ? '' : formatEntityTag(tag)) + b).join(',')
    const expected = pieces.flatMap(([, tag]) => tag === undefined ? [] : [tag])
    // only-whitespace pieces are empty elements; a list that is all OWS is the empty list
    t.same(parseEntityTagList(text), expected)
  }), { numRuns: 300 })
})

test('property: the parsers never throw on arbitrary strings', async (t) => {
  const anyString = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 64 }),
    fc.string({ unit: fc.constantFrom('"', 'W', '/', ',', ' ', '*', 'a', '\\', 'w', '\t'), maxLength: 64 })
  )
  fc.assert(fc.property(anyString, (s) => {
    const list = parseEntityTagList(s)
    t.ok(list === '*' || list === INVALID || Array.isArray(list))
    const one = parseEntityTag(s)
    if (one !== null) t.equal(formatEntityTag(one), s, 'whatever parses as one tag is written back identically')
    toEntityTag(s)
  }), { numRuns: 2000 })
})

test('linear time: long adversarial inputs are scanned once', async (t) => {
  const n = 1_000_000
  const unlimited = { maxLength: Infinity, maxElements: Infinity }
  t.equal(parseEntityTagList('"'.repeat(n), unlimited), INVALID)
  t.equal(parseEntityTagList('W/'.repeat(n), unlimited), INVALID)
  t.equal(parseEntityTagList('"' + 'a'.repeat(n), unlimited), INVALID, 'unterminated tag')
  t.equal(parseEntityTagList(', '.repeat(n), unlimited).length, 0)
  t.equal(parseEntityTagList(' '.repeat(n) + '*' + ' '.repeat(n), unlimited), '*')
  const many = '"a", '.repeat(n / 5) + 'W/"b"'
  t.equal((parseEntityTagList(many, unlimited) as EntityTag[]).length, n / 5 + 1)
  t.equal(parseEntityTagList('"a", '.repeat(n / 5) + 'x', unlimited), INVALID, 'the bad element comes last')
  t.equal(parseEntityTag('"' + '\\'.repeat(n)), null)
  t.equal(toEntityTag('a'.repeat(n) + ' '), null)
  // With the default caps the same inputs are refused before any scanning.
  t.equal(parseEntityTagList('"'.repeat(100 * 1024)), INVALID)
  t.equal(parseEntityTagList('W/'.repeat(50 * 1024)), INVALID)
})
