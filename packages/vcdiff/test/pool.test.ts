import { test } from 'tap'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createEncoderPool, workerScript } from '../src/pool'
import { decode } from '../src'
import { equalBytes, edit, rng, text } from './fixtures/helpers'

/**
 * Deadline of the encodes expected to complete: generous, as workers here load
 * TypeScript through tap's loader (seconds on a busy machine), not dist/.
 */
const SLOW = 120_000

test('pool: the worker script is the compiled .js next to pool.js, else the TypeScript source', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vcdiff-pool-'))
  try {
    t.equal(workerScript(dir), join(dir, 'pool-worker.ts'))
    writeFileSync(join(dir, 'pool-worker.js'), '')
    t.equal(workerScript(dir), join(dir, 'pool-worker.js'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  t.ok(existsSync(workerScript()), `found ${workerScript()}`)
})

test('pool: deltas decode exactly; a base key keeps its prepared source in one worker', async (t) => {
  const pool = createEncoderPool({ threads: 2, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const bases = [text(50_000, 1), text(80_000, 2), text(20_000, 3)]
  const jobs: Array<Promise<boolean>> = []
  for (let round = 0; round < 3; round++) {
    bases.forEach((base, b) => {
      const target = edit(base, 10 + round, b * 10 + round)
      jobs.push(pool.encode(`base-${b}`, base, target).then((delta) => delta !== null && equalBytes(decode(base, delta), target)))
    })
  }
  t.same(await Promise.all(jobs), jobs.map(() => true), 'every delta decodes to its target')
  const s = pool.stats()
  t.equal(s.encoded, 9)
  t.equal(s.cachedBases, 3, 'each base prepared once, in one worker')
  t.equal(s.queued + s.running, 0)
  // The caller's buffers are not detached by the transfer to the worker.
  const base = bases[0]
  const target = edit(base, 3, 99)
  await pool.encode('base-0', base, target)
  t.equal(target.length > 0 && base.length, 50_000, 'buffers intact')
  // A base key whose base changed length is sent again.
  const other = text(30_000, 4)
  const t2 = edit(other, 2, 5)
  const d2 = await pool.encode('base-0', other, t2)
  t.ok(d2 !== null && equalBytes(decode(other, d2), t2))
})

test('pool: null when the delta would not be smaller than the target', async (t) => {
  const pool = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const r = rng(6)
  const noise = Buffer.from(Array.from({ length: 100_000 }, () => Math.floor(r() * 256)))
  t.equal(await pool.encode('text', text(100_000, 7), noise), null)
  t.equal(pool.stats().notSmaller, 1)
})

/** A target that keeps one worker busy for a while: many heavy edits of a large base. */
function busy (): { base: Buffer, target: Buffer } {
  const base = text(4 << 20, 8)
  return { base, target: edit(base, 3000, 9) }
}

test('pool: a full queue resolves null at once; a passed deadline resolves null', async (t) => {
  const pool = createEncoderPool({ threads: 1, maxQueue: 2, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const { base, target } = busy()
  const small = text(10_000, 10)
  const first = pool.encode('big', base, target, { deadlineMs: SLOW })
  // Queued behind the first (one worker): its deadline passes while it waits.
  const late = pool.encode('small', small, edit(small, 2, 11), { deadlineMs: 1 })
  // The queue holds two encodes: a third is refused at once.
  t.equal(await pool.encode('small', small, small), null, 'saturated')
  t.equal(pool.stats().rejected, 1)
  t.equal(await late, null, 'deadline passed')
  t.equal(pool.stats().timedOut, 1)
  const delta = await first
  t.ok(delta !== null && equalBytes(decode(base, delta), target), 'the first one completes')
  // With room again, encodes go through.
  const d = await pool.encode('small', small, edit(small, 2, 12))
  t.ok(d !== null)
  t.equal(await pool.encode('small', small, edit(small, 2, 12), { deadlineMs: 0 }), null, 'a deadline of 0 ms')
})

test('pool: an encode whose worker has more ahead of it than its deadline allows resolves null at once', async (t) => {
  const pool = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const { base, target } = busy()
  // One encode answered: the worker's pace is known.
  const d = await pool.encode('big', base, target)
  t.ok(d !== null && equalBytes(decode(base, d), target))
  const next = edit(target, 2000, 13)
  let answered = false
  const running = pool.encode('big', base, next).then((x) => { answered = true; return x })
  const small = text(2000, 14)
  t.equal(await pool.encode('small', small, edit(small, 2, 15), { deadlineMs: 1 }), null, 'refused')
  t.notOk(answered, 'at once, not when the encode ahead of it was answered')
  t.equal(pool.stats().rejected, 1)
  t.equal(pool.stats().timedOut, 0)
  const d2 = await running
  t.ok(d2 !== null && equalBytes(decode(base, d2), next), 'the encode ahead completes')
  // With the worker idle, the same encode goes through.
  t.ok(await pool.encode('small', small, edit(small, 2, 15), { deadlineMs: SLOW }) !== null)
})

test('pool: the prepared-source cache of a worker is bounded in bytes; evicted bases are sent again', async (t) => {
  const cacheBytes = 1 << 20
  const pool = createEncoderPool({ threads: 1, cacheBytes, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  for (let i = 0; i < 12; i++) {
    const base = text(60_000, 20 + i)
    const target = edit(base, 5, 40 + i)
    const delta = await pool.encode(`b${i}`, base, target)
    t.ok(delta !== null && equalBytes(decode(base, delta), target))
    t.ok(pool.stats().cacheBytes <= cacheBytes, `cache ${pool.stats().cacheBytes} bytes after ${i + 1} bases`)
  }
  const s = pool.stats()
  t.ok(s.cachedBases < 12 && s.cachedBases > 0, `${s.cachedBases} bases kept`)
  // The first base was evicted: it is sent again and still encodes.
  const base = text(60_000, 20)
  const target = edit(base, 5, 60)
  const delta = await pool.encode('b0', base, target)
  t.ok(delta !== null && equalBytes(decode(base, delta), target))
  // A base larger than the cache is used once and not kept.
  const tiny = createEncoderPool({ threads: 1, cacheBytes: 1000, deadlineMs: SLOW })
  const d = await tiny.encode('x', base, target)
  t.ok(d !== null)
  t.equal(tiny.stats().cachedBases, 0)
  t.equal(tiny.stats().cacheBytes, 0)
  await tiny.close()
})

test('pool: close() resolves pending encodes with null and terminates the workers', async (t) => {
  const pool = createEncoderPool({ threads: 2 })
  const { base, target } = busy()
  const pending = pool.encode('big', base, target, { deadlineMs: SLOW })
  await pool.close()
  t.equal(await pending, null)
  t.equal(await pool.encode('big', base, target), null, 'closed: null at once')
  const s = pool.stats()
  t.equal(s.running + s.queued, 0)
  t.equal(s.failed, 1)
  await pool.close()
  t.throws(() => createEncoderPool({ threads: 0 }), RangeError)
  t.throws(() => createEncoderPool({ maxQueue: 1.5 }), RangeError)
})
