import { test, type Test } from 'tap'
import { decode as ablyDecode } from '@ably/vcdiff-decoder'
import { encode, decode, prepareSource, tryEncode } from '../src'
import { commonPrefix, commonSuffix, prepareLazily } from '../src/prepared-source'
import { equalBytes, xdelta3Decode, withXdelta3, text, edit, inspect, rng } from './fixtures/helpers'

const KiB = 1024
const MiB = 1024 * KiB

/** Every decoder reads `delta` against `source` back to `target`. */
async function decodesEverywhere (t: Test, source: Uint8Array, target: Uint8Array, delta: Uint8Array, what: string): Promise<void> {
  t.ok(equalBytes(decode(source, delta), target), `${what}: our decoder`)
  t.ok(equalBytes(ablyDecode(delta, source), target), `${what}: @ably/vcdiff-decoder`)
  await withXdelta3(t, `${what}: xdelta3`, (t) => {
    t.ok(equalBytes(xdelta3Decode(source, delta), target), 'xdelta3')
  })
}

function splice (doc: Uint8Array, at: number, del: number, ins: Uint8Array): Buffer {
  return Buffer.concat([doc.subarray(0, at), ins, doc.subarray(at + del)])
}

test('commonPrefix and commonSuffix: exact lengths across span boundaries, the suffix bounded', async (t) => {
  const a = text(200 * KiB, 1)
  for (const at of [0, 1, 255, 256, 257, 64 * KiB - 1, 64 * KiB, 64 * KiB + 300, 200 * KiB - 1]) {
    const b = Buffer.from(a)
    b[at] ^= 1
    t.equal(commonPrefix(a, b), at, `prefix up to a change at ${at}`)
    t.equal(commonSuffix(a, b, a.length), a.length - at - 1, `suffix down to a change at ${at}`)
  }
  t.equal(commonPrefix(a, a), a.length, 'identical: the whole')
  t.equal(commonPrefix(a, a.subarray(0, 70 * KiB)), 70 * KiB, 'a prefix of the other')
  t.equal(commonPrefix(Buffer.alloc(0), a), 0)
  t.equal(commonSuffix(a, a.subarray(100 * KiB), a.length), 100 * KiB, 'a suffix of the other')
  t.equal(commonSuffix(a, a, 1000), 1000, 'at most max')
  t.equal(commonSuffix(a, Buffer.alloc(0), 0), 0)
})

test('prefix and suffix path: edge cases decode exactly with every decoder', async (t) => {
  const doc = text(20 * KiB, 2)
  const r = rng(3)
  const noise = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)))
  const cases: Array<[string, Uint8Array, Uint8Array]> = [
    ['identical', doc, Buffer.from(doc)],
    ['empty source', Buffer.alloc(0), doc],
    ['empty target', doc, Buffer.alloc(0)],
    ['both empty', Buffer.alloc(0), Buffer.alloc(0)],
    ['change at the very start', doc, splice(doc, 0, 1, Buffer.from('#'))],
    ['change at the very end', doc, splice(doc, doc.length - 1, 1, Buffer.from('#'))],
    ['insertion at the start', doc, Buffer.concat([noise(10), doc])],
    ['appended bytes', doc, Buffer.concat([doc, noise(10)])],
    ['target shorter (a middle cut)', doc, splice(doc, 9000, 3000, Buffer.alloc(0))],
    ['target longer (a middle insertion)', doc, splice(doc, 9000, 0, noise(3000))],
    ['target a prefix of the source', doc, doc.subarray(0, 15000)],
    ['target a suffix of the source', doc, doc.subarray(5000)],
    ['prefix and suffix overlap (runs of one byte)', Buffer.alloc(5000, 0x61), Buffer.alloc(7000, 0x61)],
    ['prefix and suffix overlap (shorter)', Buffer.alloc(7000, 0x61), Buffer.alloc(5000, 0x61)],
    ['a repeated block removed where prefix and suffix could overlap', Buffer.concat([doc, doc.subarray(0, 500), doc]), Buffer.concat([doc, doc])],
    ['prefix and suffix shorter than the fixed minimum', doc, Buffer.concat([doc.subarray(0, 30), noise(5), doc.subarray(35, 19_000), noise(7), doc.subarray(19_000 + 20)])]
  ]
  for (const [what, source, target] of cases) {
    const delta = encode(source, target)
    await decodesEverywhere(t, source, target, delta, what)
    t.ok(equalBytes(prepareSource(source).encode(target), delta), `${what}: the prepared source gives the same delta`)
  }
  const same = encode(doc, Buffer.from(doc))
  t.ok(same.length < 30, `identical: one COPY (${same.length} bytes)`)
  const overlap = encode(Buffer.alloc(5000, 0x61), Buffer.alloc(7000, 0x61))
  t.ok(overlap.length < 120, `overlap: a few COPYs (${overlap.length} bytes)`)
})

test('prefix and suffix path: a large document changed in its middle encodes to a few bytes, over several windows too', async (t) => {
  const source = text(3 * MiB, 4)
  const target = splice(source, 1_500_000, 12, Buffer.from('000000000042'))
  const delta = encode(source, target)
  t.ok(delta.length < 60, `delta ${delta.length} bytes`)
  await decodesEverywhere(t, source, target, delta, 'one window')
  // Windows of 1 MiB: the prefix, the change and the suffix fall in different windows.
  const windowed = encode(source, target, { windowSize: MiB })
  t.equal(inspect(windowed).windows, 3)
  await decodesEverywhere(t, source, target, windowed, 'three windows')
  // Windows smaller than the changed middle: it is searched window by window.
  const grown = splice(source, 1_500_000, 0, text(5000, 5))
  const small = encode(source, grown, { windowSize: 2000 })
  t.equal(inspect(small).windows, Math.ceil(grown.length / 2000))
  t.ok(equalBytes(decode(source, small), grown), 'small windows decode')
  t.equal(tryEncode(source, target, { maxSize: 10 }), null, 'tryEncode: maxSize still applies')
})

test('prefix and suffix path: the changed middle finds matches in the source around it (local index)', async (t) => {
  const source = text(2 * MiB, 6)
  // The middle: a passage moved from 20 KiB earlier, and one from 1 MiB away.
  const near = source.subarray(980_000, 983_000)
  const far = source.subarray(50_000, 53_000)
  const target = Buffer.concat([source.subarray(0, 1_000_000), near, Buffer.from('!'), far, source.subarray(1_000_050)])
  const lazy = prepareLazily(source)
  const delta = lazy.encode(target)
  t.equal(lazy.indexBytes, 0, 'a small middle: the whole index is not built')
  await decodesEverywhere(t, source, target, delta, 'moved passages')
  // The nearby passage is a COPY; the far one, outside the local index, still comes from
  // the diagonal of the previous match or as an ADD: the delta stays well under its size.
  t.ok(delta.length < far.length + 200, `delta ${delta.length} bytes`)
  t.ok(equalBytes(prepareSource(source).encode(target), delta), 'the eager index gives the same delta')

  // A target that changes throughout needs the whole index: built once, then kept.
  const heavy = edit(source, 400, 7)
  const d1 = lazy.encode(heavy)
  t.ok(lazy.indexBytes > source.length, `whole index built (${lazy.indexBytes} bytes)`)
  t.ok(d1.length < heavy.length / 20, `heavy edit delta ${d1.length} bytes`)
  t.ok(equalBytes(decode(source, d1), heavy))
  t.ok(equalBytes(prepareSource(source).encode(heavy), d1), 'same delta as with the eager index')
})
