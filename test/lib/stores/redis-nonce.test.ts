// Runs against a real redis-server that this file starts on 127.0.0.1 (a free port) and stops;
// skipped without redis-server (test/helpers/peers.ts), failed without it under CI=true.
import { test } from 'tap'
import { once } from 'node:events'
import fc from 'fast-check'
import Redis from 'ioredis'
import { RedisNonceStore, type RedisScriptClient } from '../../../lib/io/stores/redis-nonce'
import { createDigest, type DigestUserLookup } from '../../../lib/auth/digest'
import { answer } from '../auth/digest-client'
import { startRedis } from '../../helpers/redis'
import { peer } from '../../helpers/peers'
import { until } from '../../helpers/until'

const TTL = 300_000

test('RedisNonceStore against a real redis-server', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { port, proc } = await startRedis()
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 })
  t.teardown(async () => {
    await redis.quit()
    const exited = once(proc, 'exit')
    proc.kill('SIGTERM')
    await exited
  })
  let prefixCount = 0
  const fresh = (window?: number): RedisNonceStore => new RedisNonceStore(redis, { prefix: `t${++prefixCount}:`, window })

  await t.test('RFC 7616 5.4: a (nonce, nc) pair is new once, then a replay', async (t) => {
    const store = fresh()
    t.equal(await store.seen('n1', 1, TTL), false)
    t.equal(await store.seen('n1', 1, TTL), true)
    t.equal(await store.seen('n2', 1, TTL), false, 'counts are per nonce')
    t.equal(await store.seen('n1', 2, TTL), false)
  })

  await t.test('RFC 7616 3.4: out-of-order counts inside the window are accepted once', async (t) => {
    const store = fresh(8)
    const results = []
    for (const nc of [5, 3, 4, 1, 2, 3, 5, 9, 6, 6, 12, 4, 5, 7, 100, 93, 92]) results.push(await store.seen('n', nc, TTL))
    t.same(results, [false, false, false, false, false, true, true, false, false, true, false, true, true, false, false, false, true])
  })

  await t.test('bounded: a nonce holds at most window + 1 fields', async (t) => {
    const store = new RedisNonceStore(redis, { prefix: 'bounded:', window: 16 })
    for (let nc = 1; nc <= 200; nc++) await store.seen('n', nc, TTL)
    t.ok(await redis.hlen('bounded:n') <= 17, `${await redis.hlen('bounded:n')} fields`)
    await store.seen('n', 5000, TTL)
    t.ok(await redis.hlen('bounded:n') <= 17, 'after a jump past the window')
    t.equal(await redis.hget('bounded:n', 'h'), '5000')
  })

  await t.test('RFC 7616 3.4: nc outside 1..0xffffffff counts as used, without a round trip', async (t) => {
    const store = fresh()
    for (const nc of [0, -1, 1.5, 2 ** 32]) t.equal(await store.seen('n', nc, TTL), true, String(nc))
    t.equal(await store.seen('n', 0xffffffff, TTL), false)
    t.equal(await store.seen('n', 0xffffffff, TTL), true)
  })

  await t.test('the record expires with its nonce', async (t) => {
    const store = new RedisNonceStore(redis, { prefix: 'ttl:' })
    await store.seen('n', 1, 5000)
    const pttl = await redis.pttl('ttl:n')
    // Milliseconds, not seconds (at most 5000), and not a few ms (a loaded machine may take a
    // second or more between the write and this read).
    t.ok(pttl > 1000 && pttl <= 5000, `pttl ${pttl}`)
    await store.seen('short', 1, 40)
    // Redis expires the key on its own clock: wait until it is gone (a deadline, not a sleep).
    await until('the 40 ms record expired', async () => (await redis.exists('ttl:short')) === 0)
    t.equal(await redis.exists('ttl:short'), 0)
    t.equal(await store.seen('short', 1, 40), false, 'forgotten after expiry (the Digest core refuses expired nonces first)')
    await store.seen('zero', 1, 0)
    // 1 ms: gone already (-2), or about to go; never kept without expiry (-1).
    const zero = await redis.pttl('ttl:zero')
    t.ok(zero === -2 || (zero >= 0 && zero <= 1), `a non-positive ttl is sent as 1 ms (pttl ${zero})`)
  })

  await t.test('atomic: of concurrent uses of one pair, from two clients, exactly one is new', async (t) => {
    const other = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 })
    t.teardown(async () => { await other.quit() })
    const a = new RedisNonceStore(redis, { prefix: 'race:' })
    const b = new RedisNonceStore(other, { prefix: 'race:' })
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).seen('n', 7, TTL)))
    t.equal(results.filter((r) => !r).length, 1)
  })

  await t.test('EVALSHA with a fallback to EVAL when the script cache is empty', async (t) => {
    const store = fresh()
    await redis.script('FLUSH')
    t.equal(await store.seen('n', 1, TTL), false, 'NOSCRIPT answered by EVAL')
    t.equal(await store.seen('n', 1, TTL), true, 'then EVALSHA hits the cache')
    const calls: string[] = []
    const evalOnly: RedisScriptClient = {
      eval: async (script, numkeys, ...args) => { calls.push('eval'); return redis.eval(script, numkeys, ...args) }
    }
    const plain = new RedisNonceStore(evalOnly, { prefix: 'evalonly:' })
    t.equal(await plain.seen('n', 1, TTL), false)
    t.equal(await plain.seen('n', 1, TTL), true)
    t.same(calls, ['eval', 'eval'], 'a client without evalsha is served with eval')
  })

  await t.test('errors other than NOSCRIPT propagate', async (t) => {
    const broken: RedisScriptClient = {
      eval: async () => { throw new Error('eval must not run') },
      evalsha: async () => { throw new Error('READONLY You can\'t write against a read only replica') }
    }
    await t.rejects(new RedisNonceStore(broken).seen('n', 1, TTL), /READONLY/)
  })

  await t.test('the client is checked at creation', async (t) => {
    t.throws(() => new RedisNonceStore(null as never), TypeError)
    t.throws(() => new RedisNonceStore({} as never), TypeError)
    t.throws(() => new RedisNonceStore(redis, { window: 0 }), RangeError)
  })

  await t.test('property: Redis agrees with the in-memory reference window model', async (t) => {
    let run = 0
    await t.resolves(fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 32 }), fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 60 }), async (window, ncs) => {
      const store = new RedisNonceStore(redis, { prefix: `model${++run}:`, window })
      const used = new Set<number>()
      let high = 0
      for (const nc of ncs) {
        const expected = used.has(nc) || (high > 0 && nc <= high - window)
        if (!expected) { used.add(nc); high = Math.max(high, nc) }
        if (await store.seen('n', nc, TTL) !== expected) return false
      }
      return true
    }), { numRuns: 60 }), 'model agrees')
  })

  await t.test('fleet: two Digest instances sharing secret and Redis accept each other\'s nonces and refuse replays across them', async (t) => {
    const other = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 })
    t.teardown(async () => { await other.quit() })
    const users: DigestUserLookup = ({ username }) => (username === 'Mufasa' ? { password: 'Circle of Life' } : null)
    const options = { realm: 'fleet@example.org', secret: 'fleet-secret-shared-by-every-instance!', algorithms: ['SHA-256', 'MD5'] as const }
    const storeA = new RedisNonceStore(redis, { prefix: 'fleet:' })
    const storeB = new RedisNonceStore(other, { prefix: 'fleet:' })
    // What the auth plugin does when the app starts: learn the store's generation.
    t.equal(await storeA.refresh(), await storeB.refresh(), 'one generation for the fleet')
    const a = createDigest({ ...options, algorithms: [...options.algorithms], store: storeA })
    const b = createDigest({ ...options, algorithms: [...options.algorithms], store: storeB })
    t.equal(a.opaque, b.opaque, 'same opaque without configuration')

    const fromA = a.challenges()[0]
    const first = answer(fromA, { username: 'Mufasa', password: 'Circle of Life', uri: '/x', nc: 1 })
    t.match(await b.verify(first, 'GET', '/x', users), { ok: true, username: 'Mufasa' }, 'B accepts a nonce A issued')
    t.match(await a.verify(first, 'GET', '/x', users), { ok: false, reason: 'replay', stale: true }, 'A refuses B\'s replay')
    t.match(await b.verify(first, 'GET', '/x', users), { ok: false, reason: 'replay' })
    const second = answer(fromA, { username: 'Mufasa', password: 'Circle of Life', uri: '/x', nc: 2 })
    const third = answer(fromA, { username: 'Mufasa', password: 'Circle of Life', uri: '/x', nc: 3 })
    t.match(await a.verify(third, 'GET', '/x', users), { ok: true }, 'nc 3 before nc 2 on another instance')
    t.match(await b.verify(second, 'GET', '/x', users), { ok: true })

    // the same captured request sent to both instances at once: exactly one wins
    const fromB = b.challenges()[1]
    const captured = answer(fromB, { username: 'Mufasa', password: 'Circle of Life', uri: '/y' })
    const raced = await Promise.all([a.verify(captured, 'GET', '/y', users), b.verify(captured, 'GET', '/y', users)])
    t.equal(raced.filter((r) => r.ok).length, 1, 'one of two concurrent replays is accepted, never both')
  })
})
