import { test } from 'tap'
import { createEncoderPool } from '../../../lib/vcdiff/pool'
import { decode } from '../../../lib/vcdiff'
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
