import { test } from 'tap'
import { Matcher } from '../src/matcher'
import { SourceIndex, entryHashes } from '../src/block-hash'
import { Matches } from '../src/window-writer'
import { text, edit, rng } from './fixtures/helpers'

function matches (src: Uint8Array, tgt: Uint8Array, limit = Infinity, targetMatches = true): { m: Matches, ok: boolean, matcher: Matcher } {
  const short = new SourceIndex(src, 8, 2, 4, entryHashes(src, 8, 2))
  const long = new SourceIndex(src, 32, 16, 4, entryHashes(src, 32, 16))
  const matcher = new Matcher(src, tgt, long, short, targetMatches, tgt.length, limit)
  const m = new Matches()
  const ok = matcher.scan(0, tgt.length, m)
  return { m, ok, matcher }
}

test('matcher: matches are ordered, disjoint, verified, and cover an edited target', async (t) => {
  const src = text(30_000, 1)
  const tgt = edit(src, 20, 2)
  const { m, ok } = matches(src, tgt)
  t.ok(ok)
  let end = 0
  let covered = 0
  let verified = true
  for (let j = 0; j < m.count; j++) {
    const p = m.tPos[j]
    const len = m.len[j]
    if (p < end || len < 4) verified = false
    const from = m.fromSource[j] === 1 ? src : tgt
    for (let k = 0; k < len; k++) if (from[m.addr[j] + k] !== tgt[p + k]) verified = false
    if (m.fromSource[j] === 0 && m.addr[j] >= p) verified = false
    end = p + len
    covered += len
  }
  t.ok(verified, 'ordered, disjoint and byte-exact')
  t.ok(covered > tgt.length * 0.95, `covered ${covered} of ${tgt.length}`)
})

test('matcher: self-references into the target when enabled only', async (t) => {
  const src = text(1000, 3)
  const tgt = Buffer.concat([Buffer.alloc(50, 0x41), Buffer.from('0123456789'.repeat(20))])
  const on = matches(src, tgt).m
  t.ok(on.count > 0 && Array.from(on.fromSource.subarray(0, on.count)).every((f) => f === 0))
  t.equal(matches(src, tgt, Infinity, false).m.count, 0)
})

test('matcher: gives up when the delta would not come under the limit', async (t) => {
  const src = text(200_000, 4)
  const r = rng(5)
  const unrelated = Buffer.from(Array.from({ length: 300_000 }, () => Math.floor(r() * 256)))
  const gaveUp = matches(src, unrelated, unrelated.length)
  t.notOk(gaveUp.ok, 'random bytes against text')
  t.ok(gaveUp.matcher.estimate < unrelated.length * 0.2 + 40_000, `stopped early (estimate ${gaveUp.matcher.estimate})`)
  const related = edit(src, 50, 6)
  t.ok(matches(src, related, related.length).ok, 'a helpful source goes through')
  t.notOk(matches(src, related, 100).ok, 'a tiny limit is reached')
})

test('matcher: lazy matching takes a longer match one byte later (RFC 3284 section 3 COPY after a 1-byte ADD)', async (t) => {
  const r = rng(11)
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)))
  // 30 bytes: too short for the long index (32-byte blocks) to see inside the first match.
  const R = bytes(30)
  // The source: "Z" + R[0, 9) at an even (indexed) position, then R itself, also at an even position.
  const source = Buffer.concat([bytes(1000), Buffer.from('Z'), R.subarray(0, 9), bytes(990), R, bytes(1000)])
  t.equal(source.indexOf(R), 2000)
  const target = Buffer.concat([bytes(100), Buffer.from('Z'), R, bytes(100)])
  const { m } = matches(source, target, Infinity, false)
  const found = Array.from({ length: m.count }, (_, j) => [m.tPos[j], m.len[j], m.addr[j]])
  // Greedy would COPY "Z" + R[0, 9) (10 bytes) then R[9, 30) from elsewhere; lazily, R in one COPY.
  t.same(found, [[101, 30, 2000]])
})

test('matcher: a match under 8 bytes is not searched for a long match inside it, yet a long match starting inside it is found after it and replaces it', async (t) => {
  const r = rng(12)
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)))
  const A = bytes(2)
  const R = bytes(300)
  const source = Buffer.concat([bytes(1000), R, bytes(1000)])
  // A + R[0, 4) appears twice in the target: the second time, a 6-byte COPY of the first
  // (RFC 3284 section 3, a target address) starts there, and R runs on from its third byte.
  const target = Buffer.concat([bytes(100), A, R.subarray(0, 4), bytes(50), A, R, bytes(100)])
  const second = 100 + 6 + 50
  const { m } = matches(source, target)
  const found = Array.from({ length: m.count }, (_, j) => [m.tPos[j], m.len[j], m.addr[j], m.fromSource[j]])
  t.same(found, [[second + 2, 300, 1000, 1]], 'R in one COPY from where it starts; the short one erased')
})
