import { test, type Test } from 'tap'
import fc from 'fast-check'
import { decode as ablyDecode } from '@ably/vcdiff-decoder'
import { encode, decode, VcdiffError } from '../src'
import {
  DEFAULT_CODE_TABLE, NOOP, ADD, RUN, COPY, ADD_OP, COPY_OP, ADD_COPY_OP, COPY_ADD_OP, RUN_OP
} from '../src/code-table'
import { equalBytes, xdelta3Decode, withXdelta3, text, edit } from './fixtures/helpers'

/** RFC 3284 section 2: base-128 integer, most significant digit first. */
function varint (v: number): number[] {
  const out = [v & 0x7f]
  v = Math.floor(v / 128)
  while (v > 0) {
    out.unshift((v & 0x7f) | 0x80)
    v = Math.floor(v / 128)
  }
  return out
}

interface Win {
  ind?: number
  seg?: [number, number]
  targetLen: number
  deltaInd?: number
  data?: number[]
  inst?: number[]
  addr?: number[]
  checksum?: number[]
  /** Added to the delta encoding length, to forge a bad one. */
  lenAdjust?: number
}

/** RFC 3284 section 4.2/4.3: one window, laid out field by field. */
function win (w: Win): number[] {
  const data = w.data ?? []
  const inst = w.inst ?? []
  const addr = w.addr ?? []
  const body = [
    ...varint(w.targetLen), w.deltaInd ?? 0, ...varint(data.length), ...varint(inst.length), ...varint(addr.length),
    ...(w.checksum ?? []), ...data, ...inst, ...addr
  ]
  const ind = w.ind ?? (w.seg !== undefined ? 1 : 0)
  return [ind, ...(w.seg !== undefined ? [...varint(w.seg[0]), ...varint(w.seg[1])] : []), ...varint(body.length + (w.lenAdjust ?? 0)), ...body]
}

const HEADER = [0xd6, 0xc3, 0xc4, 0x00, 0x00]
function delta (...windows: number[][]): Uint8Array {
  return Uint8Array.from([...HEADER, ...windows.flat()])
}
const ascii = (s: string): number[] => [...Buffer.from(s)]

test('RFC 3284 section 5.6: the default code table, entry by entry families', async (t) => {
  const c = DEFAULT_CODE_TABLE
  t.same([c.type1[0], c.size1[0], c.type2[0]], [RUN, 0, NOOP], '0: RUN size 0')
  for (let s = 0; s <= 17; s++) t.same([c.type1[1 + s], c.size1[1 + s], c.type2[1 + s]], [ADD, s, NOOP], `${1 + s}: ADD size ${s}`)
  t.same([c.type1[19], c.size1[19], c.mode1[19]], [COPY, 0, 0], '19: COPY size 0 mode 0')
  t.same([c.type1[20], c.size1[20], c.mode1[20]], [COPY, 4, 0], '20: COPY size 4 mode 0')
  t.same([c.type1[162], c.size1[162], c.mode1[162]], [COPY, 18, 8], '162: COPY size 18 mode 8')
  t.same([c.type1[163], c.size1[163], c.type2[163], c.size2[163], c.mode2[163]], [ADD, 1, COPY, 4, 0], '163: ADD 1 + COPY 4 mode 0')
  t.same([c.type1[234], c.size1[234], c.type2[234], c.size2[234], c.mode2[234]], [ADD, 4, COPY, 6, 5], '234: ADD 4 + COPY 6 mode 5')
  t.same([c.type1[235], c.size1[235], c.type2[235], c.size2[235], c.mode2[235]], [ADD, 1, COPY, 4, 6], '235: ADD 1 + COPY 4 mode 6')
  t.same([c.type1[246], c.size1[246], c.type2[246], c.size2[246], c.mode2[246]], [ADD, 4, COPY, 4, 8], '246: ADD 4 + COPY 4 mode 8')
  t.same([c.type1[247], c.size1[247], c.mode1[247], c.type2[247], c.size2[247]], [COPY, 4, 0, ADD, 1], '247: COPY 4 mode 0 + ADD 1')
  t.same([c.type1[255], c.size1[255], c.mode1[255], c.type2[255], c.size2[255]], [COPY, 4, 8, ADD, 1], '255: COPY 4 mode 8 + ADD 1')
  // The encoder lookups are the inverse of the table.
  t.equal(RUN_OP, 0)
  t.equal(ADD_OP[0], 1)
  t.equal(ADD_OP[17], 18)
  t.equal(COPY_OP[0 * 19 + 0], 19)
  t.equal(COPY_OP[8 * 19 + 18], 162)
  t.equal(COPY_OP[0 * 19 + 3], -1, 'no COPY opcode of size 3')
  t.equal(ADD_COPY_OP[(0 * 5 + 1) * 19 + 4], 163)
  t.equal(ADD_COPY_OP[(6 * 5 + 1) * 19 + 5], -1, 'modes 6-8 pair only with COPY size 4')
  t.equal(COPY_ADD_OP[(8 * 19 + 4) * 5 + 1], 255)
})

const SRC = Buffer.from('ABCDEFGHIJ')
// Every instruction type, VCD_SELF, VCD_HERE, near[0] and same[0] modes, an
// overlapping target copy, a copy running from the source segment into the
// target, and both paired opcode families.
const EVERY_INSTRUCTION = win({
  seg: [10, 0],
  targetLen: 43,
  data: ascii('zxyqw'),
  inst: [20, 36, 52, 116, 0, 3, 3, 38, 22, 163, 247],
  addr: [0, 12, 6, 2, 2, 8, 0, 4]
})
const EVERY_INSTRUCTION_TARGET = 'ABCDCDEFGHIJCDEFzzzxyxyxyxyIJABCDqABCDEFGHw'

test('RFC 3284 sections 5.3-5.6: every instruction type, paired opcodes, SELF/HERE/near/same modes', async (t) => {
  const d = delta(EVERY_INSTRUCTION)
  t.equal(Buffer.from(decode(SRC, d)).toString(), EVERY_INSTRUCTION_TARGET)
  t.equal(Buffer.from(ablyDecode(d, SRC)).toString(), EVERY_INSTRUCTION_TARGET, '@ably/vcdiff-decoder agrees')
  // xdelta3 refuses a COPY that runs from the source segment on into the target
  // ("size too large"), which RFC 3284 section 5.3 allows; the rest it decodes alike.
  const noSpan = delta(win({ seg: [10, 0], targetLen: 27, data: ascii('zxy'), inst: [20, 36, 52, 116, 0, 3, 3, 38], addr: [0, 12, 6, 2, 2] }))
  await withXdelta3(t, 'xdelta3 agrees', (t) => {
    t.equal(xdelta3Decode(SRC, noSpan).toString(), EVERY_INSTRUCTION_TARGET.slice(0, 27), 'xdelta3 agrees')
  })
})

test('RFC 3284 section 5.1: near slots 1-3 and same blocks 1-2', async (t) => {
  const src = text(1000, 1)
  const d = delta(win({
    seg: [1000, 0],
    targetLen: 32,
    inst: [20, 20, 20, 68, 84, 100, 132, 148],
    addr: [...varint(300), ...varint(600), ...varint(900), 10, 1, 5, 44, 88]
  }))
  const at = (a: number): string => src.subarray(a, a + 4).toString()
  const expected = [300, 600, 900, 610, 901, 615, 300, 600].map(at).join('')
  t.equal(Buffer.from(decode(src, d)).toString(), expected)
  await withXdelta3(t, 'xdelta3 agrees', (t) => {
    t.equal(xdelta3Decode(src, d).toString(), expected, 'xdelta3 agrees')
  })
})

test('RFC 3284 section 4.2: VCD_TARGET windows copy from the target already decoded', async (t) => {
  const d = delta(
    win({ targetLen: 6, data: ascii('hello!'), inst: [7] }),
    // VCD_TARGET segment = "hello" (output 0..5): COPY "hell", ADD " ", COPY "hell" through same[0].
    win({ ind: 2, seg: [5, 0], targetLen: 9, data: ascii(' '), inst: [20, 2, 116], addr: [0, 0] }),
    win({ targetLen: 2, data: ascii('ok'), inst: [3] })
  )
  t.equal(Buffer.from(decode(new Uint8Array(0), d)).toString(), 'hello!hell hellok')
  t.equal(decode(new Uint8Array(0), Uint8Array.from(HEADER)).length, 0, 'a header and no window is an empty target')
})

function refused (t: Test, d: Uint8Array, pattern: RegExp, name: string, source: Uint8Array = SRC, maxTargetSize?: number): void {
  t.throws(() => decode(source, d, maxTargetSize !== undefined ? { maxTargetSize } : {}), pattern, name)
  let err: unknown
  try { decode(source, d, maxTargetSize !== undefined ? { maxTargetSize } : {}) } catch (e) { err = e }
  t.ok(err instanceof VcdiffError, `${name}: a VcdiffError`)
}

test('malformed deltas are refused with an Error: header (RFC 3284 section 4.1)', async (t) => {
  refused(t, Uint8Array.from([0xd6, 0xc3]), /bad magic/, 'too short')
  refused(t, Uint8Array.from([0x56, 0x43, 0x44, 0, 0]), /bad magic/, 'magic without high bits')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 1, 0]), /version/, 'version 1')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0]), /header is truncated/, 'no Hdr_Indicator')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0x08]), /reserved bits/, 'reserved Hdr_Indicator bit')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0x01, 0x02]), /VCD_DECOMPRESS/, 'secondary compressor')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0x02]), /VCD_CODETABLE/, 'custom code table')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0x04, 10, 1]), /application header is truncated/, 'app header past the end')
  refused(t, Uint8Array.from([0xd6, 0xc3, 0xc4, 0, 0x04, 0x81]), /header is truncated/, 'app header length cut')
})

test('malformed deltas are refused with an Error: windows (RFC 3284 sections 4.2, 4.3)', async (t) => {
  refused(t, delta(win({ ind: 0x08, targetLen: 0 })), /reserved bits set in Win_Indicator/, 'reserved Win_Indicator bit')
  refused(t, delta(win({ ind: 3, seg: [1, 0], targetLen: 0 })), /both set/, 'VCD_SOURCE and VCD_TARGET')
  refused(t, delta(win({ seg: [11, 0], targetLen: 0 })), /source segment is out of range/, 'source segment past the source')
  refused(t, delta(win({ seg: [2, 9], targetLen: 0 })), /source segment is out of range/, 'source segment position past the source')
  refused(t, delta(win({ ind: 2, seg: [1, 0], targetLen: 0 })), /target segment is out of range/, 'VCD_TARGET before any target')
  refused(t, delta(win({ targetLen: 0, lenAdjust: 1 })), /window is truncated/, 'delta encoding length past the end')
  refused(t, delta(win({ targetLen: 0, lenAdjust: -1 })), /truncated|do not match/, 'delta encoding length too short')
  refused(t, delta(win({ targetLen: 1, deltaInd: 1, data: [1], inst: [2] })), /Delta_Indicator/, 'compressed sections')
  refused(t, delta(win({ ind: 4, targetLen: 0, checksum: [1, 2] })), /checksum is truncated/, 'Adler-32 cut short')
  refused(t, delta(win({ targetLen: 5, data: ascii('hello'), inst: [6] }).concat([1])), /truncated/, 'a second window cut short')
  refused(t, delta(win({ targetLen: 100, data: [], inst: [] })), /target exceeds the limit of 10 bytes/, 'maxTargetSize', SRC, 10)
  refused(t, delta([0, ...varint(5), 0x9f, 0x8f, 0x8f, 0x8f, 0x0f]), /too large/, 'integer over 2^32')
  refused(t, delta([0, ...varint(7), 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x01]), /too large/, 'integer of six digits')
  // Section lengths that disagree with the delta encoding length.
  // Win_Indicator, delta length 8, target length 2, Delta_Indicator, data length 3 (but 2 bytes follow), inst 1, addr 0.
  refused(t, delta([0, 8, 2, 0, 3, 1, 0, 0x61, 0x62, 3]), /do not match/, 'data length disagrees')
})

test('malformed deltas are refused with an Error: instructions (RFC 3284 sections 5.3, 5.4)', async (t) => {
  refused(t, delta(win({ seg: [10, 0], targetLen: 4, inst: [20], addr: [10] })), /COPY address is out of range/, 'copy from beyond here')
  refused(t, delta(win({ seg: [10, 0], targetLen: 4, inst: [36], addr: [11] })), /COPY address is out of range/, 'VCD_HERE before the start of U')
  refused(t, delta(win({ targetLen: 4, inst: [20], addr: [0] })), /COPY address is out of range/, 'target copy of nothing')
  refused(t, delta(win({ seg: [10, 0], targetLen: 4, inst: [20] })), /address section is truncated/, 'no address')
  refused(t, delta(win({ seg: [10, 0], targetLen: 4, inst: [116] })), /address section is truncated/, 'no same-cache byte')
  refused(t, delta(win({ targetLen: 3, data: ascii('ab'), inst: [4] })), /data section is truncated/, 'ADD past the data')
  refused(t, delta(win({ targetLen: 3, inst: [0, 3] })), /data section is truncated/, 'RUN without its byte')
  refused(t, delta(win({ targetLen: 3, inst: [1] })), /instruction section is truncated/, 'size missing after size-0 opcode')
  refused(t, delta(win({ targetLen: 1, data: ascii('ab'), inst: [3] })), /overflows the target window/, 'ADD past the window')
  refused(t, delta(win({ targetLen: 3, data: ascii('ab'), inst: [3] })), /do not fill/, 'window not filled')
  refused(t, delta(win({ targetLen: 2, data: ascii('abc'), inst: [3] })), /unused bytes/, 'data left over')
  refused(t, delta(win({ seg: [10, 0], targetLen: 4, inst: [20], addr: [0, 0] })), /unused bytes/, 'address left over')
})

test('malformed deltas: every truncation of a one-window delta is refused', async (t) => {
  const source = text(5000, 2)
  const d = encode(source, edit(source, 20, 3))
  let refusedCount = 0
  for (let n = 0; n < d.length; n++) {
    if (n === 5) continue // the bare header is a valid, empty delta
    try {
      decode(source, d.subarray(0, n))
    } catch (e) {
      if (e instanceof VcdiffError) refusedCount++
    }
  }
  t.equal(refusedCount, d.length - 1)
})

test('malformed deltas: random corruption ends in a result or a VcdiffError, never another error or a hang', async (t) => {
  const source = text(3000, 4)
  const good = encode(source, edit(source, 15, 5))
  t.doesNotThrow(() => fc.assert(fc.property(
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
    fc.nat({ max: 40 }),
    (flips, cut) => {
      const d = Uint8Array.from(good.subarray(0, good.length - cut))
      for (const [at, b] of flips) d[at % d.length] = b
      try {
        const out = decode(source, d, { maxTargetSize: 1 << 20 })
        return out.length <= 1 << 20
      } catch (e) {
        return e instanceof VcdiffError
      }
    }), { numRuns: 2000 }))
  t.ok(equalBytes(decode(source, good), edit(source, 15, 5)), 'the uncorrupted delta decodes')
})
