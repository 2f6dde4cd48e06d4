/**
 * Delta encoding's bookkeeping is bounded in bytes (docs/conventions.md, Delta encoding;
 * RFC 3229 leaves to the server which instances it keeps): 10,080 GETs of one route, each
 * with another 15 KB query string and from another client address, leave the instance
 * store within its byte bound and the process's heap, after a full collection, within the
 * sum of the documented bounds and a generous margin. What is counted is bytes held, not
 * time taken. Real sockets: `inject()` keeps every request it made reachable for as long
 * as the app lives (about 25 KB a request with such URLs, measured with a bare Fastify),
 * which would hide what the plugin keeps. The addresses come through X-Forwarded-For from
 * a trusted proxy (Fastify's `trustProxy`), as behind a load balancer.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { test } from 'tap'
import { Pool } from 'undici'
import { buildApp, listen } from '../helpers/app'
import { MemoryInstanceStore } from '../../plugins/entries/stores'
import { BUDGET_ENTRY_BYTES, DEFAULT_BUDGET_CLIENTS, DEFAULT_RECENT_BYTES } from '../../lib/delta-bookkeeping'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const MiB = 1024 * 1024
const REQUESTS = 10_080
const PAD = 'x'.repeat(15_000)
const STORE_BYTES = 8 * MiB

function heapAfterGc (): number {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

test('delta bookkeeping stays within its byte bounds: 10,080 GETs with 15 KB URLs from as many addresses', async (t) => {
  const store = new MemoryInstanceStore({ maxBytes: STORE_BYTES })
  const app = await buildApp({ deltaEncoding: { store } }, { logger: false, trustProxy: true })
  const article = JSON.stringify({ id: '1', title: 'Hello', body: 'p1\n\np2\n\n'.repeat(20) })
  app.get('/articles/:id', { config: { deltaEncoding: true } }, async (_request, reply) =>
    reply.type('application/json').header('etag', '"v1"').send(article))
  t.teardown(() => app.close())
  const pool = new Pool(`http://127.0.0.1:${await listen(app)}`, { connections: 4 })
  t.teardown(() => pool.close())
  let ok = 0
  const get = async (path: string, address: string): Promise<void> => {
    const res = await pool.request({ path, method: 'GET', headers: { 'x-forwarded-for': address } })
    await res.body.dump()
    if (res.statusCode === 200) ok++
  }
  // One request first, so that lazily built parts of the app are in the baseline.
  await get('/articles/0?pad=warm', '10.255.255.254')
  const before = heapAfterGc()

  for (let i = 0; i < REQUESTS; i += 4) {
    await Promise.all([0, 1, 2, 3].map((k) => get(`/articles/${(i + k) % 100}?pad=${PAD}${i + k}`, `10.${((i + k) >> 16) & 255}.${((i + k) >> 8) & 255}.${(i + k) & 255}`)))
  }
  t.equal(ok, REQUESTS + 1, 'every request is answered')
  t.ok(store.bytes <= store.maxBytes, `the store counts ${(store.bytes / MiB).toFixed(1)} MiB, bound ${store.maxBytes / MiB} MiB`)

  const retained = heapAfterGc() - before
  const bounds = STORE_BYTES + DEFAULT_RECENT_BYTES + DEFAULT_BUDGET_CLIENTS * BUDGET_ENTRY_BYTES
  t.comment(`retained heap after GC: ${(retained / MiB).toFixed(1)} MiB; bounds ${(bounds / MiB).toFixed(1)} MiB (URLs sent: ${(REQUESTS * PAD.length / MiB).toFixed(0)} MiB)`)
  // Generous: the bounds twice over, plus 16 MiB for V8's own bookkeeping of what is kept.
  t.ok(retained <= 2 * bounds + 16 * MiB, `retained ${(retained / MiB).toFixed(1)} MiB <= ${((2 * bounds + 16 * MiB) / MiB).toFixed(1)} MiB`)
})
