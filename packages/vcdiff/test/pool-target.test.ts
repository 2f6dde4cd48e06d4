import { test } from 'tap'
import { createEncoderPool } from '../src/pool'
import { decode } from '../src'
import { equalBytes, edit, text } from './fixtures/helpers'

const SLOW = 120_000

test('pool: a target kept as the next base (targetKey) serves the next version without its bytes being sent again', async (t) => {
  const pool = createEncoderPool({ threads: 2, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const v1 = text(60_000, 7)
  const v2 = edit(v1, 3, 11)
  const v3 = edit(v2, 3, 12)
  const d2 = await pool.encode('doc v1', v1, v2, { affinity: 'doc', targetKey: 'doc v2' })
  t.ok(d2 !== null)
  t.ok(equalBytes(decode(v1, d2 as Uint8Array), v2), 'v1 -> v2 decodes exactly')
  t.equal(pool.stats().cachedBases, 2, 'the worker holds v1 and, as the next base, v2')
  // The worker holds v2 already: the pool sends the target only, not the base.
  const d3 = await pool.encode('doc v2', v2, v3, { affinity: 'doc', targetKey: 'doc v3' })
  t.ok(d3 !== null)
  t.ok(equalBytes(decode(v2, d3 as Uint8Array), v3), 'v2 -> v3 decodes exactly, against the kept target')
  t.equal(pool.stats().encoded, 2)
})

/** The pool's per-worker state, as the tests below disturb it (not part of the API). */
interface SlotView { worker: { terminate: () => Promise<number> } | null, known: Map<string, number> }
const slotsOf = (pool: unknown): SlotView[] => (pool as { slots: SlotView[] }).slots

test('pool: a worker that lacks a base it was believed to hold gets it with the target sent again', async (t) => {
  const pool = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const v1 = text(60_000, 13)
  const v2 = edit(v1, 3, 14)
  // The main thread believes the worker holds v1 (as after a report lost in a race).
  slotsOf(pool)[0].known.set('ghost', v1.length)
  const d = await pool.encode('ghost', v1, v2)
  t.ok(d !== null && equalBytes(decode(v1, d), v2), 'decodes exactly after the base was sent')
  t.equal(pool.stats().encoded, 1)
  t.equal(pool.stats().cachedBases, 1, 'the worker holds it now')
})

test('pool: a worker that exits fails its encode; the next encode gets a new worker', async (t) => {
  const pool = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const v1 = text(400_000, 15)
  const v2 = edit(v1, 2000, 16)
  const pending = pool.encode('doc', v1, v2)
  await slotsOf(pool)[0].worker?.terminate()
  t.equal(await pending, null, 'the encode in flight resolves null')
  t.equal(pool.stats().failed, 1)
  t.equal(pool.stats().cachedBases, 0, 'what the worker held is forgotten')
  const d = await pool.encode('doc', v1, v2)
  t.ok(d !== null && equalBytes(decode(v1, d), v2), 'a new worker encodes it')
})

test('pool: the caller may reuse its target buffer once encode returns, whether the job is sent at once or waits', async (t) => {
  const pool = createEncoderPool({ threads: 1, deadlineMs: SLOW })
  t.teardown(() => pool.close())
  const v1 = text(300_000, 17)
  const targets = [edit(v1, 3, 18), edit(v1, 300, 19), edit(v1, 5, 20)]
  const buffers = targets.map((x) => Buffer.from(x))
  // The first is sent at once (staged in the worker's shared memory), the others wait behind it.
  const pending = buffers.map((b, i) => pool.encode('doc', v1, b, { targetKey: `doc t${i}` }))
  for (const b of buffers) b.fill(0x2a)
  const deltas = await Promise.all(pending)
  deltas.forEach((d, i) => t.ok(d !== null && equalBytes(decode(v1, d), targets[i]), `target ${i} as it was when encode was called`))
  // A larger target than any before: the shared memory grows.
  const big = Buffer.concat([v1, v1, text(1000, 21)])
  const d = await pool.encode('doc', v1, big)
  t.ok(d !== null && equalBytes(decode(v1, d), big))
  // A kept target is the worker's own copy: the next version encodes against it exactly.
  const next = edit(targets[2], 2, 22)
  const d3 = await pool.encode('doc t2', targets[2], next)
  t.ok(d3 !== null && equalBytes(decode(targets[2], d3), next))
  t.equal(pool.stats().encoded, 5)
})
