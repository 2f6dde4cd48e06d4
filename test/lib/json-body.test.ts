import { test } from 'tap'
import fc from 'fast-check'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { BlockJoiner, BodyBytes, parseJsonBody, parseJsonBuffer, scanJsonText, fewOpeners, findLoneSurrogate, isWellFormedString, decodeUtf8Strict, DEFAULT_JSON_MAX_DEPTH } from '../../lib/json-body'

function refusal (r: ReturnType<typeof parseJsonBody>): { statusCode: number, errors: unknown } | null {
  return r.ok ? null : { statusCode: r.error.statusCode, errors: r.error.errors }
}

test('well-formed JSON bodies parse as before; poisoned and malformed ones are a 400 with field body', async (t) => {
  t.same(parseJsonBody('{"a":[1,{"b":"c"}],"s":"\\"[{"}'), { ok: true, value: { a: [1, { b: 'c' }], s: '"[{' } })
  t.same(refusal(parseJsonBody('')), { statusCode: 400, errors: [{ field: 'body', message: 'body is empty but Content-Type says JSON' }] })
  t.same(refusal(parseJsonBody('{"a')), { statusCode: 400, errors: [{ field: 'body', message: 'body is not well-formed JSON' }] }, 'an unterminated string')
  t.same(refusal(parseJsonBody('{"a":')), { statusCode: 400, errors: [{ field: 'body', message: 'body is not well-formed JSON' }] })
  t.same(refusal(parseJsonBody('{"__proto__":{"x":1}}')), { statusCode: 400, errors: [{ field: 'body', message: 'body contains a forbidden __proto__ or constructor.prototype key' }] })
})

test('depth limit: a body nested deeper than maxDepth (default 64) is a 400, checked before JSON.parse', async (t) => {
  t.equal(DEFAULT_JSON_MAX_DEPTH, 64)
  const objects = (n: number): string => '{"a":'.repeat(n - 1) + '{}' + '}'.repeat(n - 1)
  const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n)
  t.ok(parseJsonBody(objects(64)).ok)
  t.ok(parseJsonBody(arrays(64)).ok)
  t.same(refusal(parseJsonBody(objects(65))), { statusCode: 400, errors: [{ field: 'body', message: 'body is nested deeper than 64 levels' }] })
  t.same(refusal(parseJsonBody(arrays(65))), { statusCode: 400, errors: [{ field: 'body', message: 'body is nested deeper than 64 levels' }] })
  t.ok(parseJsonBody(arrays(10), { maxDepth: 10 }).ok)
  t.equal(parseJsonBody(arrays(11), { maxDepth: 10 }).ok, false)
  t.ok(parseJsonBody(`{"s":"${'['.repeat(1000)}","t":"\\\\"}`).ok, 'brackets inside strings (and escaped backslashes) do not count')
  // The merge patch that used to overflow the stack: {"title":{"a":{"a":...}}} 100 000 deep, and 100 000 nested arrays.
  t.same(refusal(parseJsonBody('{"title":' + objects(100_000) + '}')), { statusCode: 400, errors: [{ field: 'body', message: 'body is nested deeper than 64 levels' }] })
  t.same(refusal(parseJsonBody(arrays(100_000))), { statusCode: 400, errors: [{ field: 'body', message: 'body is nested deeper than 64 levels' }] })
  t.same(refusal(parseJsonBody(']]' + arrays(66))), { statusCode: 400, errors: [{ field: 'body', message: 'body is not well-formed JSON' }] }, 'closing brackets first cannot offset the depth')
  t.throws(() => parseJsonBody('{}', { maxDepth: 0 }), RangeError)
  t.same(scanJsonText('[{"a":[]}]', 64), { ok: true, depth: 3, surrogates: false })
})

test('UTF-8: a body of bytes that are not UTF-8 is a 400, never text with U+FFFD in it', async (t) => {
  t.same(refusal(parseJsonBuffer(Buffer.from([0x22, 0xff, 0xfe, 0x22]))), { statusCode: 400, errors: [{ field: 'body', message: 'body is not valid UTF-8 (RFC 8259 8.1)' }] })
  t.same(refusal(parseJsonBuffer(Buffer.from('{"t":"\xff\xfe"}', 'latin1'))), { statusCode: 400, errors: [{ field: 'body', message: 'body is not valid UTF-8 (RFC 8259 8.1)' }] })
  // Overlong encodings and encoded surrogates (CESU-8) are not UTF-8 either (RFC 3629 3).
  t.equal(parseJsonBuffer(Buffer.from([0x22, 0xc0, 0xaf, 0x22])).ok, false)
  t.equal(parseJsonBuffer(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])).ok, false)
  t.same(parseJsonBuffer(Buffer.from('{"t":"J\u00e4s\u00f8n \ud83d\ude00"}', 'utf8')), { ok: true, value: { t: 'J\u00e4s\u00f8n \ud83d\ude00' } })
  t.same(parseJsonBuffer(Buffer.from('\ufeff[1]', 'utf8')), { ok: true, value: [1] }, 'RFC 8259 8.1: a byte order mark may be ignored')
  t.same(refusal(parseJsonBuffer(Buffer.alloc(0))), { statusCode: 400, errors: [{ field: 'body', message: 'body is empty but Content-Type says JSON' }] })
  t.equal(parseJsonBuffer(Buffer.from('['.repeat(65) + ']'.repeat(65))).ok, false, 'the depth limit holds for bytes too')
  t.equal(decodeUtf8Strict(Buffer.from([0x80])), null)
  // A Buffer or any other view of bytes (its own offset within a larger buffer) reads the same.
  const bytes = new Uint8Array([0x78, 0xef, 0xbb, 0xbf, 0xc3, 0xa4, 0x78]).subarray(1, 6)
  t.equal(decodeUtf8Strict(bytes), '\u00e4', 'a Uint8Array view: its bytes only, the byte order mark dropped')
  t.equal(decodeUtf8Strict(Buffer.from(bytes)), '\u00e4', 'a Buffer of the same bytes')
})

test('RFC 8259 8.2: a string holding a lone surrogate is a 422 naming the field', async (t) => {
  t.same(refusal(parseJsonBody('{"title":"a\\ud800b"}')), { statusCode: 422, errors: [{ field: 'title', message: 'contains a lone surrogate, which is not a Unicode character (RFC 8259 8.2)' }] })
  t.same(refusal(parseJsonBody('{"a":{"tags":["ok","\\uDC00"]}}')), { statusCode: 422, errors: [{ field: 'a.tags.1', message: 'contains a lone surrogate, which is not a Unicode character (RFC 8259 8.2)' }] })
  t.match(refusal(parseJsonBody('[1,"\\udbff"]')), { statusCode: 422, errors: [{ field: '1' }] })
  t.same(refusal(parseJsonBody('"\\udbff"')), { statusCode: 422, errors: [{ field: 'body', message: 'contains a lone surrogate, which is not a Unicode character (RFC 8259 8.2)' }] })
  t.match(refusal(parseJsonBody('{"k\\ud800":1}')), { statusCode: 422, errors: [{ field: 'k\ufffd' }] }, 'member names too')
  t.match(refusal(parseJsonBody('{"a":"\ud800"}')), { statusCode: 422, errors: [{ field: 'a' }] }, 'a raw lone surrogate in the text')
  t.same(parseJsonBody('{"t":"\\ud83d\\ude00 \\u00e9 \\uD7FF \\uE000"}'), { ok: true, value: { t: '\ud83d\ude00 \u00e9 \ud7ff \ue000' } }, 'pairs and the characters around the range are fine')
  t.same(parseJsonBody('{"t":"\\\\ud800"}'), { ok: true, value: { t: '\\ud800' } }, 'an escaped backslash before "ud800" is no escape')
  t.equal(findLoneSurrogate({ a: [1, null, { b: 'ok' }] }), null)
  t.equal(isWellFormedString('a\ud800'), false)
  t.equal(isWellFormedString('\ud83d\ude00'), true)
})

function depthOf (v: unknown): number {
  if (v === null || typeof v !== 'object') return 0
  const children = Array.isArray(v) ? v : Object.values(v)
  return 1 + children.reduce((m: number, c) => Math.max(m, depthOf(c)), 0)
}

test('property: the scan measures the same depth as the value, whatever the strings hold', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
    const text = JSON.stringify(value)
    const scan = scanJsonText(text, 64)
    if (!scan.ok || scan.depth !== depthOf(value)) return false
    const parsed = parseJsonBody(text)
    return parsed.ok ? JSON.stringify(parsed.value) === text : parsed.error.statusCode === 400
  }), { numRuns: 500 }))
})

test('a body with at most maxDepth brackets skips the full scan and is refused or accepted exactly as the scan decides', async (t) => {
  t.equal(fewOpeners('{"a":[1,2],"b":"[{"}', 4), true, 'brackets in strings count too: four here')
  t.equal(fewOpeners('{"a":[1,2],"b":"[{"}', 3), false)
  t.equal(fewOpeners('no brackets', 1), true)
  // The oracle: the full scan, then the same parse.
  const byScan = (text: string, maxDepth: number): unknown => {
    const scan = scanJsonText(text, maxDepth)
    if (!scan.ok) return 'malformed'
    const parsed = parseJsonBody(text, { maxDepth: 1_000_000 })
    if (!parsed.ok) return parsed.error.statusCode === 422 ? 'surrogate' : 'malformed'
    return parsed.value
  }
  const outcome = (text: string, maxDepth: number): unknown => {
    const r = parseJsonBody(text, { maxDepth })
    if (r.ok) return r.value
    return r.error.statusCode === 422 ? 'surrogate' : 'malformed'
  }
  const piece = fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '1', '"a"', '\\u', '\\ud800', '\\udc00', '\\n', '\ud800', 'x', ' ')
  fc.assert(fc.property(fc.array(piece, { maxLength: 24 }), fc.integer({ min: 1, max: 6 }), (pieces, maxDepth) => {
    const text = pieces.join('')
    if (text.length === 0) return
    t.same(outcome(text, maxDepth), byScan(text, maxDepth), JSON.stringify(text))
  }), { numRuns: 3000, seed: 7 })
  // Valid JSON too, so that the fast path is seen accepting.
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 1, max: 6 }), (value, maxDepth) => {
    const text = JSON.stringify(value)
    t.same(outcome(text, maxDepth), byScan(text, maxDepth), text)
  }), { numRuns: 1000, seed: 11 })
})

test('BodyBytes: a body in one piece is kept as it is; pieces are joined into one buffer, with or without a declared length', async (t) => {
  const one = Buffer.from('{"a":1}')
  const single = new BodyBytes(7)
  single.push(Buffer.alloc(0))
  single.push(one)
  t.equal(single.bytes(), one, 'one piece: the same buffer, not a copy')
  t.equal(new BodyBytes().bytes().length, 0, 'no piece: an empty body')
  const text = 'x'.repeat(40_000) + 'é'
  const bytes = Buffer.from(text)
  for (const expected of [0, bytes.length, 10]) {
    const body = new BodyBytes(expected)
    for (let i = 0; i < bytes.length; i += 7) body.push(bytes.subarray(i, i + 7))
    t.equal(body.length, bytes.length)
    t.equal(body.bytes().toString(), text, `declared length ${expected}: the bytes in order`)
  }
})

test('BodyBytes: one-byte pieces cost about one byte of memory each, not one buffer each', async (t) => {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const buffers = (): number => { gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers }
  const body = new BodyBytes()
  const before = buffers()
  const n = 1_000_000
  for (let i = 0; i < n; i++) body.push(Buffer.from([0x61]))
  const held = buffers() - before
  // One buffer per piece would hold some 100 MB here.
  t.ok(held < 2 * n + 1024 * 1024, `held ${held} bytes of memory for ${n} body bytes`)
  t.equal(body.bytes().toString(), 'a'.repeat(n))
})

function collect (joiner: BlockJoiner, pieces: Buffer[]): Buffer[] {
  const out: Buffer[] = []
  const emit = (b: Buffer): void => { out.push(b) }
  for (const p of pieces) joiner.add(p, emit)
  joiner.end(emit)
  return out
}

test('BlockJoiner with a declared length: a body in one piece passes as it is; one-byte pieces fill blocks no longer than the body', async (t) => {
  const collectFor = (expected: number, pieces: Buffer[]): Buffer[] => collect(new BlockJoiner(expected), pieces)
  const whole = Buffer.from('{"a":1}')
  const one = collectFor(whole.length, [whole])
  t.equal(one.length, 1)
  t.equal(one[0], whole, 'the very buffer, not a copy')
  const bytes = Buffer.alloc(20_000, 'x')
  const pieces = [...bytes].map((b) => Buffer.from([b]))
  const out = collectFor(bytes.length, pieces)
  t.same(out.map((b) => b.length), [16 * 1024, 20_000 - 16 * 1024], 'a full block, then a block of what was left')
  t.equal(Buffer.concat(out).toString(), bytes.toString())
  const longer = collectFor(3, [Buffer.from('ab'), Buffer.from('cd'), Buffer.from('e')])
  t.equal(Buffer.concat(longer).toString(), 'abcde', 'a body longer than declared still passes whole (the parser refuses it)')
})

test('BlockJoiner: small pieces come out in blocks of 16 KiB, large ones as they are, every byte in order', async (t) => {
  const joiner = new BlockJoiner()
  const pieces = [Buffer.from('a'), Buffer.alloc(16 * 1024 - 2, 'b'), Buffer.from('cde'), Buffer.alloc(20_000, 'f'), Buffer.from('g')]
  const out = collect(joiner, pieces)
  t.same(out.map((b) => b.length), [16 * 1024, 2, 20_000, 1], 'a full block, the rest of it, a large piece, the tail')
  t.equal(Buffer.concat(out).toString(), Buffer.concat(pieces).toString())
  t.equal(joiner.received, Buffer.concat(pieces).length)
})
