import { test } from 'tap'
import fc from 'fast-check'
import { Sink, varintSize } from '../src/varint'

/** RFC 3284 section 2, read back: base 128, most significant digit first. */
function readInt (buf: Uint8Array, at: number): [number, number] {
  let v = 0
  for (;;) {
    const b = buf[at++]
    v = v * 128 + (b & 0x7f)
    if ((b & 0x80) === 0) return [v, at]
  }
}

test('RFC 3284 section 2: integers, the example of the section and the size boundaries', async (t) => {
  const s = new Sink(1)
  s.int(123456789)
  t.same([...s.result()], [0x80 | 58, 0x80 | 111, 0x80 | 26, 21], 'the section 2 example: 123456789')
  for (const [v, n] of [[0, 1], [127, 1], [128, 2], [16383, 2], [16384, 3], [0x1fffff, 3], [0x200000, 4], [0xfffffff, 4], [0x10000000, 5], [2 ** 35 - 1, 5]]) {
    t.equal(varintSize(v), n, `${v} takes ${n} bytes`)
    const k = new Sink(0)
    k.int(v)
    t.equal(k.pos, n)
    t.equal(readInt(k.buf, 0)[0], v)
  }
})

test('Sink grows as needed and keeps what was written', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(fc.oneof(
    fc.integer({ min: 0, max: 2 ** 35 - 1 }).map((v) => ({ v })),
    fc.uint8Array({ maxLength: 100 }).map((bytes) => ({ bytes })),
    fc.integer({ min: 0, max: 255 }).map((b) => ({ b }))
  ), { maxLength: 60 }), (ops) => {
    const s = new Sink(1)
    for (const op of ops) {
      if ('v' in op) s.int(op.v)
      else if ('bytes' in op) s.bytes(op.bytes, 0, op.bytes.length)
      else s.byte(op.b)
    }
    const out = s.result()
    let at = 0
    for (const op of ops) {
      if ('v' in op) {
        const [v, next] = readInt(out, at)
        if (v !== op.v) return false
        at = next
      } else if ('bytes' in op) {
        if (Buffer.compare(Buffer.from(out.subarray(at, at + op.bytes.length)), Buffer.from(op.bytes)) !== 0) return false
        at += op.bytes.length
      } else if (out[at++] !== op.b) {
        return false
      }
    }
    return at === out.length && out.length === s.pos
  }), { numRuns: 200 }))
})
