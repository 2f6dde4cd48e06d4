// Interop with xdelta3 (skipped without it, see test/helpers/peers.ts) and @ably/vcdiff-decoder.
import { test } from 'tap'
import fc from 'fast-check'
import { decode as ablyDecode } from '@ably/vcdiff-decoder'
import { encode, decode } from '../src'
import { equalBytes, xdelta3Decode, xdelta3Encode, text, edit, rng, inspect } from './fixtures/helpers'
import { peer } from '../../../test/helpers/peers'

/** Every delta we produce must give back the exact target in all three decoders. */
function allDecoders (source: Uint8Array, target: Uint8Array): { ours: boolean, ably: boolean, xdelta3: boolean } {
  const delta = encode(source, target)
  return {
    ours: equalBytes(decode(source, delta), target),
    ably: equalBytes(ablyDecode(delta, source), target),
    xdelta3: equalBytes(xdelta3Decode(source, delta), target)
  }
}

const ALL = { ours: true, ably: true, xdelta3: true }

test('RFC 3284 interop: our deltas decode in xdelta3 and @ably/vcdiff-decoder (fixed cases)', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const doc = text(50_000, 1)
  const runs = Buffer.concat([Buffer.alloc(5000, 0x61), text(300, 2), Buffer.alloc(3000, 0x20), Buffer.from('abcabcabcabcabcabcabcabcabcabc')])
  const r = rng(3)
  const random = Buffer.from(Array.from({ length: 4096 }, () => Math.floor(r() * 256)))
  const cases: Array<[string, Uint8Array, Uint8Array]> = [
    ['empty source and target', Buffer.alloc(0), Buffer.alloc(0)],
    ['empty target', doc, Buffer.alloc(0)],
    ['empty source (self-copies only)', Buffer.alloc(0), doc],
    ['one byte', Buffer.from('a'), Buffer.from('b')],
    ['identical', doc, doc],
    ['small edits', doc, edit(doc, 5, 4)],
    ['heavy edits', doc, edit(doc, 400, 5)],
    ['repeated runs', Buffer.alloc(0), runs],
    ['runs against a source', runs, edit(runs, 3, 6)],
    ['fully different', doc, random],
    ['reordered halves', doc, Buffer.concat([doc.subarray(25_000), doc.subarray(0, 25_000)])]
  ]
  for (const [name, source, target] of cases) {
    t.same(allDecoders(source, target), ALL, name)
  }
})

test('RFC 3284 interop: random and edited inputs decode in xdelta3 and @ably/vcdiff-decoder', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const alphabet = fc.uint8Array({ maxLength: 600, min: 97, max: 100 })
  t.doesNotThrow(() => fc.assert(fc.property(
    fc.oneof(fc.uint8Array({ maxLength: 600 }), alphabet), fc.oneof(fc.uint8Array({ maxLength: 600 }), alphabet),
    (source, target) => {
      const r = allDecoders(source, target)
      return r.ours && r.ably && r.xdelta3
    }), { numRuns: 25 }))
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 40 }), (seed, edits) => {
    const source = text(2000 + seed % 5000, seed)
    const r = allDecoders(source, edit(source, edits, seed))
    return r.ours && r.ably && r.xdelta3
  }), { numRuns: 20 }))
})

test('RFC 3284 interop: a target over 8 MiB is split into windows every decoder reads', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const block = text(1 << 16, 7)
  const source = Buffer.concat(Array.from({ length: 8 }, () => edit(block, 2, 8)))
  const parts: Buffer[] = []
  for (let i = 0; i < 130; i++) parts.push(i % 40 === 0 ? edit(block, 1, i) : block)
  const target = Buffer.concat(parts) // 130 * 64 KiB > 8 MiB
  t.ok(target.length > 8 * 1024 * 1024)
  const delta = encode(source, target)
  const stats = inspect(delta)
  t.equal(stats.windows, 2, 'two windows of at most 8 MiB')
  t.ok(delta.length < 20_000, `delta is small (${delta.length} bytes)`)
  t.ok(equalBytes(decode(source, delta), target), 'our decoder')
  t.ok(equalBytes(ablyDecode(delta, source), target), '@ably/vcdiff-decoder')
  t.ok(equalBytes(xdelta3Decode(source, delta), target), 'xdelta3')
})

test('RFC 3284 interop: small windows (windowSize option) decode in every decoder', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const source = text(20_000, 9)
  const target = edit(source, 20, 10)
  for (const windowSize of [1, 100, 4096]) {
    const delta = encode(source, target, { windowSize })
    t.equal(inspect(delta).windows, Math.ceil(target.length / windowSize), `windows of ${windowSize} bytes`)
    t.ok(equalBytes(decode(source, delta), target), `ours, windows of ${windowSize}`)
    t.ok(equalBytes(ablyDecode(delta, source), target), `ably, windows of ${windowSize}`)
    if (windowSize >= 100) t.ok(equalBytes(xdelta3Decode(source, delta), target), `xdelta3, windows of ${windowSize}`)
  }
})

test('RFC 3284 interop: our decoder reads xdelta3 -e -S none -A -n output exactly', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const doc = text(100_000, 11)
  const runs = Buffer.concat([text(1000, 12), Buffer.alloc(4000, 0x7a), text(1000, 13), Buffer.alloc(100, 0)])
  const cases: Array<[string, Uint8Array, Uint8Array]> = [
    ['small edits', doc, edit(doc, 10, 14)],
    ['heavy edits', doc, edit(doc, 2000, 15)],
    ['runs (RUN instruction)', doc, runs],
    ['empty target', doc, Buffer.alloc(0)],
    ['empty source', Buffer.alloc(0), doc],
    ['identical', doc, doc]
  ]
  for (const [name, source, target] of cases) {
    const delta = xdelta3Encode(source, target)
    t.ok(equalBytes(decode(source, delta), target), name)
  }
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 60 }), (seed, edits) => {
    const source = text(1000 + seed % 9000, seed)
    const target = edit(source, edits, seed + 1)
    return equalBytes(decode(source, xdelta3Encode(source, target)), target)
  }), { numRuns: 15 }))
})

test('xdelta3 extensions: Adler-32 window checksums and the application header are skipped', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const source = text(30_000, 16)
  const target = edit(source, 30, 17)
  const withChecksum = xdelta3Encode(source, target, ['-S', 'none', '-A'])
  t.ok(inspect(withChecksum).winIndicators.some((w) => (w & 4) !== 0), 'VCD_ADLER32 is set')
  t.ok(equalBytes(decode(source, withChecksum), target), 'checksum skipped')
  const withAppHeader = xdelta3Encode(source, target, ['-S', 'none', '-n'])
  t.equal(withAppHeader[4] & 4, 4, 'VCD_APPHEADER is set')
  t.ok(equalBytes(decode(source, withAppHeader), target), 'application header skipped')
  // Several windows (-W: xdelta3's window size) and plain windows without a source.
  const big = text(300_000, 18)
  const multi = xdelta3Encode(big, edit(big, 50, 19), ['-S', 'none', '-A', '-n', '-W', '16384'])
  t.ok(inspect(multi).windows > 10, 'xdelta3 wrote many windows')
  t.ok(equalBytes(decode(big, multi), edit(big, 50, 19)), 'multi-window xdelta3 delta')
})
