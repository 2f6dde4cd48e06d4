/**
 * RFC 3284 4.3: the decoder's output bound holds for any input. Over random small
 * VCDIFF-like deltas (well framed windows with random sizes, sections and instructions,
 * some bytes then changed at random), decoding with a bound either returns a target no
 * longer than the bound or throws a VcdiffError, and never allocates more than the bound
 * and a constant (counted in ArrayBuffer bytes, not timed).
 */
import { test } from 'tap'
import fc from 'fast-check'
import { decode, VcdiffError, VCDIFF_INVALID, VCDIFF_TARGET_TOO_LARGE } from '../src/index'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 200
/** What the decoder may allocate beside the target: its address caches (RFC 3284 5.1), and slack. */
const SLACK = 64 * 1024

/** RFC 3284 section 2: base-128, most significant digit first. */
function varint (n: number): number[] {
  const out = [n & 0x7f]
  for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) out.unshift((n & 0x7f) | 0x80)
  return out
}

/** Sizes a hostile delta would declare: small, about the bound, past it, up to 2^32 - 1. */
const size = fc.oneof(fc.nat(64), fc.nat(300_000), fc.integer({ min: 0, max: 0xffffffff }))

/** One window (RFC 3284 4.2, 4.3): a segment or none, a declared target, and sections of random bytes. */
const windowArb = fc.record({
  indicator: fc.constantFrom(0, 1, 2, 4, 5),
  segLen: fc.nat(64),
  segPos: fc.nat(64),
  targetLen: size,
  data: fc.uint8Array({ maxLength: 24 }),
  // opcode 0 (RUN, size follows) and 1 (ADD, size follows) with a declared size, or any opcodes
  inst: fc.oneof(
    fc.tuple(fc.constantFrom(0, 1), size).map(([op, n]) => [op, ...varint(n)]),
    fc.array(fc.nat(255), { maxLength: 12 })
  ),
  addr: fc.uint8Array({ maxLength: 8 })
}).map((w) => {
  const segment = (w.indicator & 3) === 0 ? [] : [...varint(w.segLen), ...varint(w.segPos)]
  const checksum = (w.indicator & 4) === 0 ? [] : [0, 0, 0, 0]
  const body = [...varint(w.targetLen), 0, ...varint(w.data.length), ...varint(w.inst.length), ...varint(w.addr.length), ...checksum, ...w.data, ...w.inst, ...w.addr]
  return [w.indicator, ...segment, ...varint(body.length), ...body]
})

const deltaArb = fc.record({
  windows: fc.array(windowArb, { maxLength: 4 }),
  flips: fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 3 })
}).map(({ windows, flips }) => {
  const bytes = Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0, ...windows.flat()])
  for (const [at, value] of flips) bytes[at % bytes.length] = value
  return bytes
})

/** Decodes, and measures the ArrayBuffer bytes that appeared meanwhile (the target included when returned). */
function decodeCounted (source: Uint8Array, delta: Uint8Array, bound: number): { out?: Uint8Array, err?: unknown, grown: number } {
  const before = process.memoryUsage().arrayBuffers
  try {
    const out = decode(source, delta, { maxTargetSize: bound })
    return { out, grown: process.memoryUsage().arrayBuffers - before }
  } catch (err) {
    return { err, grown: process.memoryUsage().arrayBuffers - before }
  }
}

test('property: RFC 3284 4.3: the decoder returns at most maxTargetSize bytes or throws a VcdiffError, and allocates no more than the bound and a constant', async (t) => {
  let refused = 0
  let decoded = 0
  fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), deltaArb, fc.oneof(fc.nat(64), fc.nat(256 * 1024)), (source, delta, bound) => {
    const { out, err, grown } = decodeCounted(source, delta, bound)
    if (grown > bound + SLACK) return false
    if (out !== undefined) {
      decoded++
      return out.length <= bound
    }
    if (err instanceof VcdiffError && err.code === VCDIFF_TARGET_TOO_LARGE) refused++
    return err instanceof VcdiffError && (err.code === VCDIFF_INVALID || err.code === VCDIFF_TARGET_TOO_LARGE)
  }), { seed: 3284, numRuns: RUNS })
  t.ok(refused > 0, `${refused} refused for their size`)
  t.ok(decoded > 0, `${decoded} decoded`)
})

test('RFC 3284 4.3: a 15-byte delta declaring a 4 GiB - 1 window is refused with VCDIFF_TARGET_TOO_LARGE, nothing allocated', async (t) => {
  const huge = 0xffffffff
  const body = [...varint(huge), 0, 1, 1 + varint(huge).length, 0, 0x61, 0, ...varint(huge)]
  const d = Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0, 0, ...varint(body.length), ...body])
  const { err, grown } = decodeCounted(new Uint8Array(0), d, 1024)
  t.ok(err instanceof VcdiffError)
  t.equal((err as VcdiffError).code, VCDIFF_TARGET_TOO_LARGE)
  t.ok(grown < SLACK, `${grown} bytes allocated`)
})

test('maxTargetSize must be a non-negative integer: NaN or a fraction would bound nothing', async (t) => {
  // RUN of 5 'a' (opcode 0, size in the instruction section).
  const body = [5, 0, 1, 2, 0, 0x61, 0, 5]
  const d = Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0, 0, body.length, ...body])
  t.equal(Buffer.from(decode(new Uint8Array(0), d, { maxTargetSize: 5 })).toString(), 'aaaaa')
  for (const bad of [Number.NaN, -1, 1.5, Infinity]) {
    t.throws(() => decode(new Uint8Array(0), d, { maxTargetSize: bad }), { name: 'RangeError', message: 'maxTargetSize must be a non-negative integer' }, String(bad))
  }
  t.equal(decode(new Uint8Array(0), Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0]), { maxTargetSize: 0 }).length, 0, 'a bound of 0 takes an empty target')
  t.throws(() => decode(new Uint8Array(0), d, { maxTargetSize: 4 }), { code: VCDIFF_TARGET_TOO_LARGE })
  t.throws(() => decode(new Uint8Array(0), d.subarray(0, 3)), { code: VCDIFF_INVALID })
})
