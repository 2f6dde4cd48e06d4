import { test } from 'tap'
import { decode, VcdiffError } from '../src/index'

/** RFC 3284 section 2: base-128, most significant digit first. */
function varint (n: number): number[] {
  const out = [n & 0x7f]
  for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) out.unshift((n & 0x7f) | 0x80)
  return out
}

/** A window without a source segment (RFC 3284 section 4.2, 4.3). */
function win (targetLen: number, data: number[], inst: number[]): number[] {
  const body = [...varint(targetLen), 0, ...varint(data.length), ...varint(inst.length), 0, ...data, ...inst]
  return [0, ...varint(body.length), ...body]
}

const HEADER = [0xd6, 0xc3, 0xc4, 0, 0]
const delta = (...windows: number[][]): Uint8Array => Uint8Array.from([...HEADER, ...windows.flat()])
/** RFC 3284 section 5.6: opcode 0 is RUN with its size in the instruction section. */
const run = (size: number, byte: number): number[] => win(size, [byte], [0, ...varint(size)])

function allocatedDuring (f: () => void): number {
  const before = process.memoryUsage().arrayBuffers
  f()
  return process.memoryUsage().arrayBuffers - before
}

test('RFC 3284 section 4.3: a 15-byte delta declaring a 255 MiB window is refused before anything is allocated', async (t) => {
  const d = delta([0, ...varint(8), ...varint(255 * 1024 * 1024), 0, 0, 0, 0])
  t.equal(d.length, 15)
  let err: unknown
  const grown = allocatedDuring(() => {
    try { decode(new Uint8Array(0), d) } catch (e) { err = e }
  })
  t.ok(err instanceof VcdiffError)
  t.match((err as Error).message, /instructions do not fill the target window/)
  t.ok(grown < 1024 * 1024, `${grown} bytes allocated`)
})

test('maxTargetSize bounds the sum of the declared window sizes, checked before any allocation', async (t) => {
  const MiB = 1024 * 1024
  // Each window is within the limit; together they are not.
  const d = delta(run(6 * MiB, 0x61), run(6 * MiB, 0x62))
  let err: unknown
  const grown = allocatedDuring(() => {
    try { decode(new Uint8Array(0), d, { maxTargetSize: 10 * MiB }) } catch (e) { err = e }
  })
  t.match(err, VcdiffError)
  t.match((err as Error).message, /target exceeds the limit of 10485760 bytes/)
  t.ok(grown < MiB, `${grown} bytes allocated`)
  // A delta whose second window is malformed is refused before the first is decoded.
  t.throws(() => decode(new Uint8Array(0), delta(run(4 * MiB, 0x61), [0x08])), /reserved bits set in Win_Indicator/)
})

test('the target is allocated once, at its exact size, never above maxTargetSize', async (t) => {
  const MiB = 1024 * 1024
  const d = delta(run(3 * MiB, 0x61), run(1 * MiB, 0x62), win(2, [0x6f, 0x6b], [3]))
  const out = decode(new Uint8Array(0), d, { maxTargetSize: 4 * MiB + 2 })
  t.equal(out.length, 4 * MiB + 2)
  t.equal(out.buffer.byteLength, out.length, 'no spare capacity, no copy')
  t.equal(out[0], 0x61)
  t.equal(out[3 * MiB], 0x62)
  t.equal(Buffer.from(out.subarray(4 * MiB)).toString(), 'ok')
  t.throws(() => decode(new Uint8Array(0), d, { maxTargetSize: 4 * MiB + 1 }), /target exceeds the limit/)
  t.throws(() => decode(new Uint8Array(0), delta(win(4, [1], [0, ...varint(5)]))), /instruction overflows the target window/, 'instruction sizes are checked in the first pass')
})
