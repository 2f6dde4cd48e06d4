/**
 * The encoder's two levels (`level` option): 'default', byte for byte what the encoder wrote
 * before levels existed, and 'fast', a cheaper search over 512 KiB of source. Both decode
 * exactly in every decoder; speed and size against xdelta3 are the bench's (bench/vcdiff.js).
 */
import { test } from 'tap'
import { createHash } from 'node:crypto'
import { decode as ablyDecode } from '@ably/vcdiff-decoder'
import { encode, tryEncode, prepareSource, decode, createEncoderPool, type EncodeOptions } from '../src'
import { equalBytes, edit, rng, text, withXdelta3, xdelta3Decode } from './fixtures/helpers'

const SLOW = 120_000
const sha = (b: Uint8Array | null): string => b === null ? 'null' : createHash('sha256').update(b).digest('hex').slice(0, 16)

const small = text(40_000, 1)
const large = text(700_000, 4)
const huge = text(5_000_000, 7)
const r = rng(9)
const random = Buffer.from(Array.from({ length: 300_000 }, () => Math.floor(r() * 256)))

/** [name, source, target]: sources below 512 KiB, above, and above 4 MiB (the fast level's thresholds). */
const CASES: Array<[string, Buffer, Buffer]> = [
  ['40 KB, small edits', small, edit(small, 20, 2)],
  ['40 KB, heavy edits', small, edit(small, 400, 3)],
  ['700 KB, small edits', large, edit(large, 30, 5)],
  ['700 KB, heavy edits', large, edit(large, 3000, 6)],
  ['5 MB, edits', huge, edit(huge, 60, 8)],
  ['5 MB, reordered halves', huge, Buffer.concat([huge.subarray(2_500_000), huge.subarray(0, 2_500_000)])]
]

/**
 * sha256 (first 16 hex digits) of `encode(source, target)` for each case, written by the
 * encoder as it was before the `level` option: the default level must not change a byte.
 */
const BEFORE_LEVELS: Record<string, string> = {
  '40 KB, small edits': '3c1e95fd63c6d26b',
  '40 KB, heavy edits': '697986c2f0a3d9a3',
  '700 KB, small edits': '523be3c41bcfd606',
  '700 KB, heavy edits': '4139804a892147ae',
  '5 MB, edits': '49bf0eeb9a9e47db',
  '5 MB, reordered halves': '16046de46838a5ed'
}

test('level default (and no level) writes the same bytes as the encoder before levels existed', async (t) => {
  for (const [name, source, target] of CASES) {
    const before = BEFORE_LEVELS[name]
    t.equal(sha(encode(source, target)), before, `${name}: no level`)
    t.equal(sha(encode(source, target, { level: 'default' })), before, `${name}: level default`)
    t.equal(sha(prepareSource(source, { level: 'default' }).encode(target)), before, `${name}: prepared, level default`)
  }
  t.equal(tryEncode(large, random, { level: 'default' }), null, 'tryEncode still gives up on unrelated bytes')
})

test('level fast: every delta decodes exactly in our decoder and @ably/vcdiff-decoder, and in xdelta3 -d', async (t) => {
  const cases: Array<[string, Uint8Array, Uint8Array]> = [
    ...CASES,
    ['empty source and target', Buffer.alloc(0), Buffer.alloc(0)],
    ['700 KB, empty target', large, Buffer.alloc(0)],
    ['700 KB, identical', large, large],
    ['700 KB, unrelated target', large, random]
  ]
  const deltas = cases.map(([name, source, target]) => ({ name, source, target, delta: encode(source, target, { level: 'fast' }) }))
  for (const { name, source, target, delta } of deltas) {
    t.ok(equalBytes(decode(source, delta), target), `${name}: our decoder`)
    t.ok(equalBytes(ablyDecode(delta, source), target), `${name}: @ably/vcdiff-decoder`)
  }
  await withXdelta3(t, 'xdelta3 -d decodes every fast-level delta', async (t) => {
    for (const { name, source, target, delta } of deltas) t.ok(equalBytes(xdelta3Decode(source, delta), target), name)
  })
})

test('level fast is the default search below 512 KiB of source and a cheaper one above', async (t) => {
  for (const [name, source, target] of CASES) {
    const fast = encode(source, target, { level: 'fast' })
    const dflt = encode(source, target)
    if (source.length <= 512 * 1024) t.ok(equalBytes(fast, dflt), `${name}: the same bytes`)
    else if (name.includes('edits')) t.notOk(equalBytes(fast, dflt), `${name}: another search, another delta`)
    t.equal(sha(prepareSource(source, { level: 'fast' }).encode(target)), sha(fast), `${name}: prepared or not, the same delta`)
  }
  t.equal(tryEncode(large, random, { level: 'fast' }), null, 'the fast level gives up on unrelated bytes too')
  const edited = CASES[3][2]
  t.ok(equalBytes(tryEncode(large, edited, { level: 'fast' }) as Uint8Array, encode(large, edited, { level: 'fast' })), 'tryEncode writes what encode writes')
})

test('a level other than fast or default is a RangeError, wherever options are taken', async (t) => {
  const bad = { level: 'turbo' } as unknown as EncodeOptions
  t.throws(() => encode(small, small, bad), { name: 'RangeError', message: "level must be 'fast' or 'default'" })
  t.throws(() => tryEncode(small, small, bad), RangeError)
  t.throws(() => prepareSource(small, bad), RangeError)
  t.throws(() => createEncoderPool({ threads: 1, encoder: bad }), RangeError)
  t.throws(() => createEncoderPool({ threads: 1, fastFromBytes: -1 }), /fastFromBytes must be an integer/)
})

test('pool: bases from fastFromBytes on are encoded at level fast unless the encoder options set a level', async (t) => {
  const target = CASES[3][2]
  const fast = encode(large, target, { level: 'fast' })
  const dflt = encode(large, target)
  const bySize = createEncoderPool({ threads: 1, deadlineMs: SLOW, fastFromBytes: 600_000 })
  const never = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  const pinned = createEncoderPool({ threads: 1, deadlineMs: SLOW, fastFromBytes: 1, encoder: { level: 'default' } })
  t.teardown(async () => { await Promise.all([bySize.close(), never.close(), pinned.close()]) })
  t.equal(sha(await bySize.encode('large', large, target)), sha(fast), 'a base over fastFromBytes: level fast')
  t.equal(sha(await bySize.encode('small', small, CASES[1][2])), sha(encode(small, CASES[1][2])), 'a smaller base: the encoder options (default)')
  t.equal(sha(await never.encode('large', large, target)), sha(dflt), 'no fastFromBytes: level default')
  t.equal(sha(await pinned.encode('large', large, target)), sha(dflt), 'encoder.level set: that level, whatever the size')
})
