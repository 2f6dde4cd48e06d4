import { test } from 'tap'
import fc from 'fast-check'
import { encode, decode } from '../src'
import { equalBytes, text, edit, inspect } from './fixtures/helpers'

function roundTrips (source: Uint8Array, target: Uint8Array, options = {}): boolean {
  return equalBytes(decode(source, encode(source, target, options)), target)
}

const bytes = fc.uint8Array({ maxLength: 2000 })
/** Few distinct bytes: many repeats, so many matches and self-copies. */
const lowEntropy = fc.uint8Array({ maxLength: 2000, min: 48, max: 51 })
const anyBytes = fc.oneof(bytes, lowEntropy)

/** Random edits applied to a generated source. */
const edited = fc.tuple(anyBytes, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 50 }), fc.uint8Array({ maxLength: 40 })), { maxLength: 20 }))
  .map(([source, edits]) => {
    let target = Buffer.from(source)
    for (const [at, del, ins] of edits) {
      const p = source.length === 0 ? 0 : at % (target.length + 1)
      target = Buffer.concat([target.subarray(0, p), ins, target.subarray(Math.min(target.length, p + del))])
    }
    return [source, target] as const
  })

test('RFC 3284 round trip: decode(source, encode(source, target)) equals target for random inputs', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(anyBytes, anyBytes, (s, tg) => roundTrips(s, tg)), { numRuns: 300 }))
})

test('RFC 3284 round trip: edited inputs', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(edited, ([s, tg]) => roundTrips(s, tg)), { numRuns: 300 }))
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 200 }), (seed, n) => {
    const source = text(20_000, seed)
    return roundTrips(source, edit(source, n, seed + 1))
  }), { numRuns: 40 }))
})

test('RFC 3284 round trip: empty source, empty target, tiny inputs', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(anyBytes, (x) => roundTrips(new Uint8Array(0), x) && roundTrips(x, new Uint8Array(0))), { numRuns: 100 }))
  t.doesNotThrow(() => fc.assert(fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (s, tg) => roundTrips(s, tg)), { numRuns: 300 }))
  const empty = encode(new Uint8Array(0), new Uint8Array(0))
  t.same([...empty], [0xd6, 0xc3, 0xc4, 0, 0, 0, 5, 0, 0, 0, 0, 0], 'plain header and one empty window')
  t.equal(decode(new Uint8Array(0), empty).length, 0)
})

test('RFC 3284 round trip: identical inputs are one COPY of the whole source', async (t) => {
  const doc = text(100_000, 2)
  const delta = encode(doc, doc)
  t.ok(delta.length < 30, `identical: ${delta.length} bytes`)
  t.equal(inspect(delta).opcodes.reduce((a, b) => a + b, 0), 1, 'one instruction')
  t.ok(roundTrips(doc, doc))
})

test('RFC 3284 round trip: fully different inputs cost about the target size', async (t) => {
  const source = Buffer.alloc(10_000, 1)
  const target = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (Math.imul(i + 1, 2654435761) >>> 24) | 0x80))
  const delta = encode(source, target)
  t.ok(delta.length < target.length + 100, `delta ${delta.length} for ${target.length} bytes`)
  t.ok(roundTrips(source, target))
})

test('RFC 3284 section 3: repeated runs become self-referencing COPYs into the target window', async (t) => {
  const target = Buffer.concat([Buffer.alloc(10_000, 0x61), Buffer.from('xyz'.repeat(3000))])
  const delta = encode(new Uint8Array(0), target)
  t.ok(delta.length < 40, `runs: ${delta.length} bytes`)
  t.equal(inspect(delta).winIndicators[0], 0, 'no source segment')
  t.ok(roundTrips(new Uint8Array(0), target))
  t.doesNotThrow(() => fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 500 }), (unit, times) => {
    const tg = Buffer.concat(Array.from({ length: times }, () => unit))
    return roundTrips(new Uint8Array(0), tg) && roundTrips(unit, tg)
  }), { numRuns: 100 }))
})

test('RFC 3284 section 4.2: windows split the target; each window is decoded on its own', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(edited, fc.integer({ min: 1, max: 300 }), ([s, tg], windowSize) =>
    roundTrips(s, tg, { windowSize })), { numRuns: 200 }))
  const source = text(50_000, 3)
  const target = edit(source, 30, 4)
  const stats = inspect(encode(source, target, { windowSize: 1000 }))
  t.equal(stats.windows, Math.ceil(target.length / 1000))
  t.ok(stats.winIndicators.every((w) => w === 0 || w === 1), 'only VCD_SOURCE or plain windows, no VCD_TARGET')
})

test('RFC 3284 sections 5.3 and 5.6: the encoder uses paired opcodes and every address mode family', async (t) => {
  const source = text(200_000, 5)
  const target = edit(source, 3000, 6)
  const stats = inspect(encode(source, target))
  const paired = stats.opcodes.slice(163).reduce((a, b) => a + b, 0)
  t.ok(paired > 0, `ADD+COPY / COPY+ADD opcodes used (${paired})`)
  t.ok(stats.opcodes.slice(247).reduce((a, b) => a + b, 0) > 0, 'COPY+ADD used')
  t.ok(stats.modes[0] + stats.modes[1] > 0, 'VCD_SELF or VCD_HERE used')
  t.ok(stats.modes.slice(2, 6).reduce((a, b) => a + b, 0) > 0, 'near cache used')
  t.ok(stats.modes.slice(6).reduce((a, b) => a + b, 0) > 0, 'same cache used')
})

test('encoder options are validated', async (t) => {
  const a = Buffer.from('abc')
  t.throws(() => encode(a, a, { windowSize: 0 }), RangeError)
  t.throws(() => encode(a, a, { hashLength: 3 }), RangeError)
  t.throws(() => encode(a, a, { sourceStep: 1.5 }), RangeError)
  t.throws(() => encode(a, a, { maxProbes: 0 }), RangeError)
  t.ok(roundTrips(text(5000, 7), edit(text(5000, 7), 5, 8), { hashLength: 4, sourceStep: 1, maxProbes: 100, targetMatches: false }))
})
