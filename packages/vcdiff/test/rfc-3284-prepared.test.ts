import { test } from 'tap'
import fc from 'fast-check'
import { decode as ablyDecode } from '@ably/vcdiff-decoder'
import { encode, decode, prepareSource, tryEncode, type EncodeOptions } from '../src'
import { equalBytes, xdelta3Decode, withXdelta3, text, edit, inspect, rng } from './fixtures/helpers'

const MiB = 1024 * 1024

test('prepareSource: each target encodes exactly as encode(source, target) does, in any order', async (t) => {
  const source = text(60_000, 21)
  const targets = [edit(source, 5, 22), edit(source, 300, 23), Buffer.alloc(0), source, text(3000, 24), edit(source, 40, 25)]
  const prepared = prepareSource(source)
  t.equal(prepared.source, source, 'the prepared source is the caller\'s buffer')
  t.ok(prepared.indexBytes > source.length && prepared.indexBytes < 12 * source.length, `index of ${prepared.indexBytes} bytes`)
  t.equal(prepareSource(Buffer.from('abc')).indexBytes, 0, 'a source shorter than the hash has no index')
  // Twice over, so every target follows a different one: the rolling hashes restart for each target.
  for (const target of [...targets, ...targets.reverse()]) {
    const delta = prepared.encode(target)
    t.ok(equalBytes(delta, encode(source, target)), `same delta for a ${target.length}-byte target`)
    t.ok(equalBytes(decode(source, delta), target), 'decodes')
  }
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 0, max: 80 }), (seed, n) => {
    const target = edit(source, n, seed)
    return equalBytes(prepared.encode(target), encode(source, target))
  }), { numRuns: 20 }))
})

test('prepareSource: options at preparation, windowSize and targetMatches per target', async (t) => {
  const source = text(20_000, 26)
  const target = Buffer.concat([edit(source, 20, 27), Buffer.alloc(3000, 0x41)])
  const prepared = prepareSource(source, { hashLength: 6, sourceStep: 3, maxProbes: 2, windowSize: 5000 })
  const delta = prepared.encode(target)
  t.equal(inspect(delta).windows, Math.ceil(target.length / 5000), 'windowSize from preparation')
  t.ok(equalBytes(delta, encode(source, target, { hashLength: 6, sourceStep: 3, maxProbes: 2, windowSize: 5000 })), 'as encode with the same options')
  const wide = prepared.encode(target, { windowSize: 1 << 20 })
  t.equal(inspect(wide).windows, 1, 'windowSize overridden per target')
  const noSelf = prepared.encode(target, { targetMatches: false })
  t.ok(noSelf.length > wide.length, 'without target matches the run of A costs more')
  for (const d of [delta, wide, noSelf]) t.ok(equalBytes(decode(source, d), target))
  t.ok(equalBytes(ablyDecode(noSelf, source), target), '@ably/vcdiff-decoder')
  await withXdelta3(t, 'xdelta3', (t) => {
    t.ok(equalBytes(xdelta3Decode(source, wide), target), 'xdelta3')
  })
  t.throws(() => prepareSource(source, { windowSize: 0 }), RangeError)
  t.throws(() => prepareSource(source, { sourceStep: 65 }), RangeError)
  t.throws(() => prepared.encode(target, { windowSize: 1.5 }), RangeError)
  t.throws(() => prepareSource(source, { hashLength: 65 }), RangeError)
})

/** Source over 512 KiB (the sparse index: whole 32-byte blocks and every 8th position): moved blocks, edits, new text. */
function largeCase (): { source: Buffer, target: Buffer } {
  const source = text(3 * MiB, 31)
  const r = rng(32)
  const parts: Buffer[] = []
  let at = 0
  while (at < source.length) {
    const len = 20_000 + Math.floor(r() * 200_000)
    const from = r() < 0.15 ? Math.floor(r() * (source.length - len)) : at // some blocks from elsewhere
    const block = source.subarray(from, Math.min(from + len, source.length))
    parts.push(r() < 0.3 ? edit(block, 3, at) : block, text(Math.floor(r() * 200), at))
    at += len
  }
  return { source, target: Buffer.concat(parts) }
}

test('RFC 3284 interop: a multi-MiB source (sparse index) gives a small delta every decoder reads', async (t) => {
  const { source, target } = largeCase()
  t.ok(source.length > 2 * MiB)
  const prepared = prepareSource(source)
  t.ok(prepared.indexBytes < 3 * source.length, `index of ${prepared.indexBytes} bytes: under 3x the source`)
  const delta = prepared.encode(target)
  t.ok(delta.length < target.length / 100, `delta ${delta.length} bytes for ${target.length}`)
  t.ok(equalBytes(decode(source, delta), target), 'our decoder')
  await withXdelta3(t, 'xdelta3', (t) => {
    t.ok(equalBytes(xdelta3Decode(source, delta), target), 'xdelta3')
  })
  t.ok(equalBytes(ablyDecode(delta, source), target), '@ably/vcdiff-decoder')
  // A second target against the same index.
  const second = edit(source.subarray(0, MiB), 50, 33)
  const delta2 = prepared.encode(second)
  await withXdelta3(t, 'xdelta3, second target', (t) => {
    t.ok(equalBytes(xdelta3Decode(source, delta2), second), 'xdelta3, second target')
  })
  t.ok(delta2.length < 5000, `second delta ${delta2.length} bytes`)
})

test('a short match does not hide a long match on another diagonal', async (t) => {
  // The source holds a passage P (at an odd offset, so the short index, every 16th
  // position here, misses its start) and, on indexed positions, decoys: 30-byte pieces
  // of P followed by other bytes. At the start of P in the target the greedy choice is
  // a decoy; probing the long index inside it finds P itself, which wins.
  const P = text(3000, 43)
  const decoys = [0, 1, 2, 3].map((k) => Buffer.concat([P.subarray(30 * k, 30 * k + 30), Buffer.from('#'.repeat(18))]))
  const source = Buffer.concat([text(4001, 41), P, text(2999, 42), ...decoys, text(1000, 44)])
  const target = Buffer.concat([text(50, 45), P])
  // Long hashes rolled over the source, joined from short blocks of 16 and of 8 bytes, and the defaults;
  // with P as one COPY the delta is at most `bound` bytes (a few more when P is cut up).
  const variants: Array<[EncodeOptions, number]> = [
    [{ sourceStep: 16 }, 55], [{ sourceStep: 16, hashLength: 16 }, 60], [{ sourceStep: 8, hashLength: 8, maxProbes: 1 }, 55], [{}, 45]
  ]
  for (const [options, bound] of variants) {
    const delta = encode(source, target, { targetMatches: false, ...options })
    t.ok(equalBytes(decode(source, delta), target))
    t.ok(delta.length <= bound, `delta ${delta.length} bytes (${JSON.stringify(options)}): P is one COPY`)
  }
  // A long match that adds fewer than 8 bytes to the short one does not replace it:
  // Q[0, 36) at an indexed position (4000), Q[0, 42) where only the long index sees it (4108 + 4).
  const r = rng(49)
  const Q = Buffer.from(Array.from({ length: 44 }, () => Math.floor(r() * 256)))
  const near = Buffer.concat([text(4000, 46), Q.subarray(0, 36), Buffer.from('!'), text(71, 47), Q.subarray(0, 42), Buffer.from('!'), text(1000, 47)])
  t.equal(near.indexOf(Q.subarray(0, 42)), 4108)
  const target2 = Buffer.concat([text(50, 48), Q])
  const delta2 = encode(near, target2, { sourceStep: 16, targetMatches: false })
  t.ok(equalBytes(decode(near, delta2), target2))
  await withXdelta3(t, 'xdelta3', (t) => {
    t.ok(equalBytes(xdelta3Decode(near, delta2), target2), 'xdelta3')
  })
})

test('tryEncode: null when the source does not help, the delta of encode otherwise', async (t) => {
  const source = text(300_000, 51)
  const r = rng(52)
  const unrelated = Buffer.from(Array.from({ length: 400_000 }, () => Math.floor(r() * 256)))
  t.equal(tryEncode(source, unrelated), null, 'random bytes against text: the plain instance is smaller')
  const prepared = prepareSource(source)
  t.equal(prepared.tryEncode(unrelated), null)
  const target = edit(source, 30, 53)
  const delta = prepared.tryEncode(target)
  t.ok(delta !== null && equalBytes(delta, encode(source, target)), 'same bytes as encode')
  t.equal(prepared.tryEncode(target, { maxSize: 50 }), null, 'maxSize')
  t.equal(tryEncode(Buffer.alloc(0), Buffer.alloc(0)), null, 'an empty target: nothing to save')
  t.throws(() => prepared.tryEncode(target, { maxSize: -1 }), RangeError)
  // Interleaved encodes against one prepared source (a re-entrant encoder): each as if alone.
  const other = edit(source, 300, 54)
  t.ok(equalBytes(prepared.encode(other), encode(source, other)))
})

test('RFC 3284 interop: a source over 4 MiB (head table at its cap, filters built when a scan needs them) decodes exactly, whatever was encoded before', async (t) => {
  const source = text(5 * MiB, 61)
  // Lightly edited: few lookups, no filter needed. Heavily edited: a quarter of 100-byte pieces rewritten.
  const light = Buffer.concat([edit(source.subarray(0, MiB), 20, 62), source.subarray(MiB, 4 * MiB), edit(source.subarray(4 * MiB), 20, 63)])
  const r = rng(64)
  const pieces: Buffer[] = []
  for (let at = 0; at < source.length; at += 100) pieces.push(r() < 0.25 ? text(100, at) : source.subarray(at, at + 100))
  const heavy = Buffer.concat(pieces)
  const alone = [encode(source, light), encode(source, heavy)]
  const prepared = prepareSource(source)
  const before = prepared.indexBytes
  t.ok(before < 2 * source.length, `index of ${before} bytes before any filter is built`)
  // Heavy first (its scan builds the filters), then light: the same deltas as each encoded alone.
  const deltas = [prepared.encode(heavy), prepared.encode(light)].reverse()
  t.ok(prepared.indexBytes > before && prepared.indexBytes < 2.5 * source.length, `index of ${prepared.indexBytes} bytes once the filters are built`)
  for (const [k, target] of [light, heavy].entries()) {
    const delta = deltas[k]
    t.ok(equalBytes(delta, alone[k]), 'the delta does not depend on what earlier encodes built')
    t.ok(delta.length < target.length / 3, `delta ${delta.length} bytes for ${target.length}`)
    t.ok(equalBytes(decode(source, delta), target), 'our decoder')
    t.ok(equalBytes(ablyDecode(delta, source), target), '@ably/vcdiff-decoder')
    await withXdelta3(t, 'xdelta3', (t) => {
      t.ok(equalBytes(xdelta3Decode(source, delta), target), 'xdelta3')
    })
  }
  t.ok(deltas[0].length < 3000, `light edits: ${deltas[0].length} bytes`)
})
