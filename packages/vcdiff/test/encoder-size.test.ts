/**
 * Delta sizes against xdelta3 -3 (same RFC 3284 format, no secondary
 * compression): edited JSON records and prose over 512 KiB, where the source
 * index is sparser. Sizes are deterministic; the bounds are the encoder's goals.
 * Every test needs xdelta3: without it each is skipped (failed under CI=true), see
 * test/helpers/peers.ts.
 */
import { test } from 'tap'
import { gzipSync } from 'node:zlib'
import { encode, decode } from '../src'
import { equalBytes, rng, text, edit, xdelta3Decode, xdelta3Encode } from './fixtures/helpers'
import { peer } from '../../../test/helpers/peers'

const SYLLABLES = 'ka ri to na me lu so pe vi do ra ne mi ta lo ku se fa zo bi'.split(' ')

const COMMON = 'the of and to in is that for it as was with be by on not he this are or his from at which but'.split(' ')

/** A word of 2 to 4 syllables (a vocabulary of thousands, as in prose). */
function syllables (r: () => number): string {
  let w = ''
  for (let j = 2 + Math.floor(r() * 3); j > 0; j--) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)]
  return w
}

/** Sentences of common and rarer words, in paragraphs. */
function prose (size: number, r: () => number): Buffer {
  const parts: string[] = []
  let len = 0
  while (len < size) {
    const words = Array.from({ length: 5 + Math.floor(r() * 15) }, () => r() < 0.5 ? COMMON[Math.floor(r() * COMMON.length)] : syllables(r))
    const s = words.join(' ') + (r() < 0.2 ? '.\n\n' : '. ')
    parts.push(s)
    len += s.length
  }
  return Buffer.from(parts.join('').slice(0, size))
}

/** `n` runs of prose replaced, inserted or deleted. */
function editProse (doc: Buffer, n: number, r: () => number): Buffer {
  const cuts = Array.from({ length: n }, () => Math.floor(r() * doc.length)).sort((a, b) => a - b)
  const out: Buffer[] = []
  let at = 0
  for (const c of cuts) {
    if (c < at) continue
    out.push(doc.subarray(at, c))
    const kind = r()
    if (kind < 0.7) out.push(prose(20 + Math.floor(r() * 60), r))
    at = kind < 0.4 || kind >= 0.7 ? c + Math.floor(r() * 50) : c
  }
  out.push(doc.subarray(Math.min(at, doc.length)))
  return Buffer.concat(out)
}

function records (n: number, r: () => number): Array<Record<string, unknown>> {
  const word = (): string => syllables(r)
  return Array.from({ length: n }, (_, id) => ({
    id,
    name: `${word()}-${Math.floor(r() * 1e6)}`,
    price: Math.round(r() * 1e5) / 100,
    active: r() < 0.5,
    tags: [word(), word()],
    author: { name: word(), rank: Math.floor(r() * 100) },
    summary: Array.from({ length: 5 + Math.floor(r() * 10) }, word).join(' ')
  }))
}

/** `edits` records changed in place (price and flag), inserted or removed. */
function editRecords (recs: Array<Record<string, unknown>>, edits: number, r: () => number): Array<Record<string, unknown>> {
  const next = recs.slice()
  const fresh = records(edits, r)
  for (let i = 0; i < edits; i++) {
    const k = Math.floor(r() * next.length)
    const kind = r()
    if (kind < 0.6) next[k] = { ...next[k], price: Math.round(r() * 1e5) / 100, active: next[k].active !== true }
    else if (kind < 0.8) next.splice(k, 0, { ...fresh[i], id: 1e6 + i })
    else next.splice(k, 1)
  }
  return next
}

function ratios (source: Buffer, target: Buffer): { raw: number, gz: number } {
  const ours = encode(source, target)
  const theirs = xdelta3Encode(source, target, ['-3', '-S', 'none', '-A', '-n'])
  if (!equalBytes(decode(source, ours), target) || !equalBytes(xdelta3Decode(source, ours), target)) throw new Error('round trip')
  return { raw: ours.length / theirs.length, gz: gzipSync(ours).length / gzipSync(theirs).length }
}

test('size: edited JSON records over 512 KiB, no larger than xdelta3 -3 (gzipped), within 1.1x raw', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const r = rng(61)
  const recs = records(3600, r)
  const source = Buffer.from(JSON.stringify(recs, null, 2))
  t.ok(source.length > 512 * 1024, `source of ${source.length} bytes`)
  for (const edits of [3, 60, 900]) {
    const target = Buffer.from(JSON.stringify(editRecords(recs, edits, r), null, 2))
    const { raw, gz } = ratios(source, target)
    t.ok(raw <= 1.1 && gz <= 1, `${edits} edits: raw ${raw.toFixed(3)}, gzipped ${gz.toFixed(3)} of xdelta3 -3`)
  }
})

test('size: edited prose over 512 KiB, no larger than xdelta3 -3 (gzipped), within 1.1x raw', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const r = rng(62)
  const source = prose(700_000, r)
  for (const edits of [5, 400, 4000]) {
    const { raw, gz } = ratios(source, editProse(source, edits, r))
    t.ok(raw <= 1.1 && gz <= 1, `${edits} edits: raw ${raw.toFixed(3)}, gzipped ${gz.toFixed(3)} of xdelta3 -3`)
  }
})

test('size: a small vocabulary with numbers (highly repetitive) stays within 1.05x of xdelta3 -3', async (t) => {
  if (peer(t, 'xdelta3') === undefined) return
  const source = text(700_000, 62)
  for (const edits of [5, 400, 4000]) {
    const { raw, gz } = ratios(source, edit(source, edits, 63 + edits))
    t.ok(raw <= 1.05 && gz <= 1.05, `${edits} edits: raw ${raw.toFixed(3)}, gzipped ${gz.toFixed(3)} of xdelta3 -3`)
  }
})
