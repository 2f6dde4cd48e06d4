import { test } from 'tap'
import fc from 'fast-check'
import {
  HashCursor, SourceIndex, entryHashes, hashAt, joinHashes, log2ceil, matchLength, newCandidate, power, HASH_MUL
} from '../src/block-hash'
import { rng, text } from './fixtures/helpers'

test('entryHashes: rolled and fresh hashes agree with hashAt', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.uint8Array({ minLength: 4, maxLength: 300 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 4, max: 20 }),
    (src, step, lookRaw) => {
      const look = Math.min(lookRaw, src.length)
      const hashes = entryHashes(src, look, step)
      if (hashes.length !== Math.floor((src.length - look) / step) + 1) return false
      return hashes.every((h, k) => h === hashAt(src, k * step, look))
    }), { numRuns: 200 }))
  t.equal(power(0), 1)
  t.equal(power(2), Math.imul(HASH_MUL, HASH_MUL))
  t.same([1, 2, 3, 4, 5, 1024, 1025].map(log2ceil), [0, 1, 2, 2, 3, 10, 11])
})

test('joinHashes: the hash of a concatenation from the hashes of its blocks', async (t) => {
  const src = text(5000, 1)
  for (const [look, step, longStep] of [[8, 8, 32], [8, 2, 16], [16, 4, 16], [8, 8, 16]]) {
    const n = 32 / look
    const joined = joinHashes(entryHashes(src, look, step), step, look, n, longStep, src.length)
    t.equal(joined.length, Math.floor((src.length - 32) / longStep) + 1)
    t.ok(joined.every((h, k) => h === hashAt(src, k * longStep, 32)), `look ${look}, step ${step}, every ${longStep}`)
  }
})

test('SourceIndex and HashCursor: lookups find verified matches, extended both ways; rolling equals hashing afresh', async (t) => {
  const r = rng(2)
  const src = Buffer.from(Array.from({ length: 20_000 }, () => Math.floor(r() * 250)))
  const index = new SourceIndex(src, 8, 4, 4, entryHashes(src, 8, 4))
  // Until the filter is built, the index keeps the entries' hashes (4 bytes an entry) to build it from.
  t.equal(index.byteLength, index.head.byteLength + 2 * index.chain.byteLength)
  t.ok(index.filter.byteLength < index.chain.byteLength, 'the filter, built on first use: 8 bits an entry')
  t.equal(index.byteLength, index.head.byteLength + index.chain.byteLength + index.filter.byteLength, 'the filter built, the hashes dropped')
  // The target: 100 foreign bytes, then src[1001, 1501) (not on an indexed position), then foreign bytes.
  const tgt = Buffer.concat([Buffer.alloc(100, 0xff), src.subarray(1001, 1501), Buffer.alloc(100, 0xfe)])
  const best = newCandidate()
  const cur = new HashCursor(index, tgt, best)
  let found = -1
  for (let i = 100; i < 110; i++) {
    if (found < 0) best[0] = 0
    if (cur.lookup(i, tgt.length, 0, -1, 64) && found < 0) found = i
    cur.roll(i, tgt.length)
    t.equal(cur.h, hashAt(tgt, i + 1, 8), 'rolled hash')
  }
  t.ok(found >= 100 && found < 104, `found at ${found}, the first indexed source position`)
  // The first candidate found: extended backwards to 100 and forwards to 600.
  t.ok(best[0] >= 500, `length ${best[0]}`)
  t.same([best[1], best[2]], [100, 1001])
  // The floor bounds the backward extension; a skipped position is not reported.
  best[0] = 0
  t.ok(cur.lookup(107, tgt.length, 105, -1, 64), 'target 107 is source 1008, indexed')
  t.same([best[1], best[2]], [105, 1006])
  best[0] = 0
  t.notOk(cur.lookup(107, tgt.length, 0, 1008, 1), 'the only probe is the skipped position')
  // Foreign bytes: the filter rejects them.
  t.notOk(index.mayHold(hashAt(Buffer.alloc(8, 0xff), 0, 8)) && cur.lookup(0, tgt.length, 0, -1, 4))
})

test('HashCursor: two cursors over one index do not interfere (re-entrant scans)', async (t) => {
  const src = text(4000, 3)
  const index = new SourceIndex(src, 8, 2, 4, entryHashes(src, 8, 2))
  const a = src.subarray(100, 400)
  const b = src.subarray(2000, 2300)
  const ba = newCandidate()
  const bb = newCandidate()
  const ca = new HashCursor(index, a, ba)
  const cb = new HashCursor(index, b, bb)
  for (let i = 0; i < 10; i++) {
    ca.lookup(i, a.length, 0, -1, 4)
    cb.lookup(i, b.length, 0, -1, 4)
    ca.roll(i, a.length)
    cb.roll(i, b.length)
  }
  t.same([ba[1], ba[2]], [0, 100])
  t.same([bb[1], bb[2]], [0, 2000])
})

test('matchLength: the common run, compared byte by byte then in chunks, as a plain loop finds it', async (t) => {
  const r = rng(9)
  const a = Buffer.from(Array.from({ length: 3000 }, () => Math.floor(r() * 4)))
  const b = Buffer.concat([Buffer.from('xy'), a])
  for (const at of [0, 5, 31, 32, 33, 287, 288, 289, 1000, 2999]) b[at + 2] ^= 0x80 // mismatches around the chunk edges
  const plain = (ai: number, bi: number, max: number): number => {
    let f = 0
    while (f < max && a[ai + f] === b[bi + f]) f++
    return f
  }
  for (let ai = 0; ai < 1200; ai += 7) {
    for (const max of [0, 3, 32, 40, 300, 3000 - ai]) {
      if (matchLength(a, ai, b, ai + 2, max) !== plain(ai, ai + 2, max)) t.fail(`at ${ai}, max ${max}`)
    }
  }
  t.equal(matchLength(a, 1001, b, 1003, 1998), 1998, 'a run to the end, over whole chunks')
  t.equal(matchLength(a, 0, b, 1, 100), plain(0, 1, 100), 'another diagonal')
  t.equal(matchLength(a, 10, b, 12, 20, 4), 20, 'from a known common prefix')
})

test('HashCursor: candidates verified per lookup are bounded; a long match ends the walk', async (t) => {
  // 40 copies of one 300-byte passage: every copy is a candidate of the same hash.
  const passage = text(300, 21)
  const src = Buffer.concat(Array.from({ length: 40 }, (_, k) => Buffer.concat([passage, Buffer.from(`#${k}#`)])))
  const index = new SourceIndex(src, 8, 2, 16, entryHashes(src, 8, 2))
  const best = newCandidate()
  const whole = new HashCursor(index, passage, best)
  t.ok(whole.lookup(0, passage.length, 0, -1, 16))
  t.equal(best[0], 300)
  t.equal(whole.verified, 1, 'the first candidate matches 300 bytes: no other is verified')
  // A 40-byte piece: every candidate matches it alike; at most maxProbes of them are verified.
  best[0] = 0
  const piece = new HashCursor(index, passage.subarray(0, 40), best)
  for (const probes of [1, 4, 16]) {
    const before = piece.verified
    piece.lookup(0, 40, 0, -1, probes)
    t.equal(piece.verified - before, probes, `${probes} probes`)
  }
})

test('HashCursor.nextPass: the first later position whose hash the filter lets through, as a lookup at every position finds it', async (t) => {
  const src = text(6000, 31)
  const index = new SourceIndex(src, 32, 32, 4, entryHashes(src, 32, 32))
  // Foreign text with passages of the source: most positions are rejected by the filter.
  const tgt = Buffer.concat([text(500, 32), src.subarray(1000, 1100), text(500, 33), src.subarray(3000, 3100), text(300, 34)])
  const cur = new HashCursor(index, tgt, newCandidate())
  cur.unfiltered = cur.filterAfter // past the first lookups, made without the filter (see the next test)
  const end = tgt.length - 32
  const expected: number[] = []
  for (let j = 1; j < end; j++) if (index.mayHold(hashAt(tgt, j, 32))) expected.push(j)
  const found: number[] = []
  for (let j = cur.nextPass(0, end); j < end; j = cur.nextPass(j, end)) {
    found.push(j)
    if (cur.h !== hashAt(tgt, j, 32)) t.fail(`hash rolled to ${j}`)
  }
  t.same(found, expected)
  t.ok(found.length >= 4 && found.length < end / 8, `${found.length} of ${end} positions let through`)
  // From a position the hash is not at (hashed afresh); none left before the end.
  t.equal(cur.nextPass(expected[0] - 1, expected[0] + 1), expected[0])
  t.equal(cur.nextPass(5, 6), 6, 'no position between')
})

test('HashCursor: on a source over 4 MiB the first lookups of a scan skip the filter, which is built only when a scan needs it', async (t) => {
  const small = text(64_000, 35)
  t.equal(new HashCursor(new SourceIndex(small, 8, 4, 4, entryHashes(small, 8, 4)), small, newCandidate()).filterAfter, 0, 'a smaller source: the filter from the first lookup')
  const src = Buffer.concat([small, text(4.5 * 1024 * 1024, 37)])
  const index = new SourceIndex(src, 8, 4, 4, entryHashes(src, 8, 4))
  const held = index.byteLength
  const r = rng(36)
  const tgt = Buffer.concat([Buffer.from(Array.from({ length: 3000 }, () => 128 + Math.floor(r() * 128))), src.subarray(5000, 5100)])
  const cur = new HashCursor(index, tgt, newCandidate())
  t.equal(cur.filterAfter, index.chain.length >> 4)
  // Before filterAfter checks, every position is looked up (no filter built yet): the last 1000 of them here ...
  cur.unfiltered = cur.filterAfter - 1000
  let j = 0
  for (let n = 1; n <= 1000; n++) {
    j = cur.nextPass(j, tgt.length - 8)
    if (j !== n) t.fail(`position ${n} let through without the filter`)
  }
  t.equal(index.byteLength, held, 'no filter built yet')
  // ... then the filter rejects foreign text: it is built now, from the hashes kept.
  let through = 0
  for (let k = cur.nextPass(j, 2900); k < 2900; k = cur.nextPass(k, 2900)) through++
  t.ok(through < (2900 - j) / 8, `foreign bytes: ${through} of ${2900 - j} positions let through by the filter`)
  t.ok(index.byteLength < held, `filter built: ${index.byteLength} bytes held, ${held} before`)
  // Another scan of the same target makes the same lookups, whether the filter exists or not.
  const again = new HashCursor(index, tgt, newCandidate())
  t.equal(again.unfiltered, 0)
  t.equal(again.nextPass(0, tgt.length - 8), 1, 'a new scan starts without the filter')
})

test('SourceIndex filter: two bits a hash in one word, few absent hashes let through', async (t) => {
  const r = rng(41)
  const src = Buffer.from(Array.from({ length: 64_000 }, () => Math.floor(r() * 256)))
  const index = new SourceIndex(src, 8, 4, 4, entryHashes(src, 8, 4))
  for (let k = 0; k < src.length - 8; k += 4) if (!index.mayHold(hashAt(src, k, 8))) t.fail(`entry at ${k} rejected`)
  let through = 0
  for (let n = 0; n < 100_000; n++) if (index.mayHold((r() * 0x100000000) | 0)) through++
  t.ok(through < 8000, `${through} of 100000 absent hashes let through`)
})
