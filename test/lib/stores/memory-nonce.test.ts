import { test } from 'tap'
import fc from 'fast-check'
import { MemoryNonceStore } from '../../../lib/io/stores/memory-nonce'
import { checkWindow, MAX_NONCE_COUNT } from '../../../lib/io/stores/nonce-store'

const TTL = 300_000

/** Reference model of the window rule: every count ever used, and the highest. */
function model (window: number): (nc: number) => boolean {
  const used = new Set<number>()
  let high = 0
  return (nc) => {
    if (used.has(nc) || (high > 0 && nc <= high - window)) return true
    used.add(nc)
    if (nc > high) high = nc
    return false
  }
}

test('RFC 7616 5.4: a (nonce, nc) pair is new once, then a replay', async (t) => {
  const store = new MemoryNonceStore()
  t.equal(await store.seen('n1', 1, TTL), false)
  t.equal(await store.seen('n1', 1, TTL), true)
  t.equal(await store.seen('n2', 1, TTL), false, 'counts are per nonce')
  t.equal(await store.seen('n1', 2, TTL), false)
  t.equal(store.size, 2)
})

test('RFC 7616 3.4: out-of-order counts inside the window are accepted once', async (t) => {
  const store = new MemoryNonceStore({ window: 8 })
  const results = []
  for (const nc of [5, 3, 4, 1, 2, 3, 5, 9, 6, 6, 12]) results.push(store.seenSync('n', nc, TTL))
  t.same(results, [false, false, false, false, false, true, true, false, false, true, false])
  t.equal(store.seenSync('n', 4, TTL), true, '4 is at the window edge (12 - 8) and refused')
  t.equal(store.seenSync('n', 5, TTL), true, '5 was used')
  t.equal(store.seenSync('n', 7, TTL), false, '7 is inside the window and unused')
  t.equal(store.seenSync('n', 100, TTL), false, 'a jump past the window')
  t.equal(store.seenSync('n', 93, TTL), false, 'cleared bits: 93 was never used')
  t.equal(store.seenSync('n', 92, TTL), true, 'below the window')
})

test('RFC 7616 3.4: nc outside 1..0xffffffff counts as used', async (t) => {
  const store = new MemoryNonceStore()
  for (const nc of [0, -1, 1.5, NaN, MAX_NONCE_COUNT + 1]) t.equal(store.seenSync('n', nc, TTL), true, String(nc))
  t.equal(store.seenSync('n', MAX_NONCE_COUNT, TTL), false)
  t.equal(store.size, 1)
})

test('a record lives as long as its nonce; after that the nonce is forgotten', async (t) => {
  const clock = { t: 1000 }
  const store = new MemoryNonceStore({ now: () => clock.t })
  t.equal(store.seenSync('n', 1, 500), false)
  clock.t += 499
  t.equal(store.seenSync('n', 1, 1), true)
  clock.t += 1
  t.equal(store.seenSync('n', 1, 500), false, 'expired record dropped (the Digest core refuses expired nonces first)')
})

test('bounded: the least recently used nonce is evicted at maxNonces', async (t) => {
  const clock = { t: 0 }
  const store = new MemoryNonceStore({ maxNonces: 3, now: () => clock.t })
  store.seenSync('a', 1, TTL)
  clock.t += 10
  store.seenSync('b', 1, TTL)
  clock.t += 10
  store.seenSync('c', 1, TTL)
  clock.t += 10
  store.seenSync('a', 2, TTL) // touch a: b is now the oldest
  clock.t += 10
  store.seenSync('d', 1, TTL)
  t.equal(store.size, 3)
  t.equal(store.seenSync('a', 2, TTL), true, 'a kept its counts')
  t.equal(store.seenSync('c', 1, TTL), true, 'c kept its counts')
})

test('eviction never opens a replay: unknown nonces that expire no later than an evicted one are refused', async (t) => {
  const clock = { t: 0 }
  const store = new MemoryNonceStore({ maxNonces: 2, now: () => clock.t })
  t.equal(store.seenSync('a', 1, TTL), false) // expires at 300000
  clock.t = 5000
  t.equal(store.seenSync('b', 1, TTL - 5000), false) // issued at 0 too: expires at 300000
  clock.t = 10_000
  t.equal(store.seenSync('c', 1, TTL), false) // expires at 310000; evicts a
  t.equal(store.seenSync('a', 1, TTL - 10_000), true, 'replay of the evicted nonce is refused')
  t.equal(store.seenSync('a2', 1, TTL - 10_000 + 500), true, 'an unknown nonce issued before the eviction is refused too (stale, retry)')
  t.equal(store.seenSync('e', 1, TTL), false, 'a nonce issued after the eviction is accepted')
})

test('eviction of an expired record does not refuse anything', async (t) => {
  const clock = { t: 0 }
  const store = new MemoryNonceStore({ maxNonces: 1, now: () => clock.t })
  store.seenSync('a', 1, 100)
  clock.t = 200
  t.equal(store.seenSync('b', 1, 100), false)
  t.equal(store.seenSync('c', 1, 50), false, 'a had expired: no horizon')
})

test('atomic: of concurrent uses of one pair exactly one is new', async (t) => {
  const store = new MemoryNonceStore()
  const results = await Promise.all(Array.from({ length: 50 }, () => store.seen('n', 7, TTL)))
  t.equal(results.filter((r) => !r).length, 1)
})

test('options are checked at creation', async (t) => {
  t.throws(() => new MemoryNonceStore({ maxNonces: 0 }), RangeError)
  t.throws(() => new MemoryNonceStore({ maxNonces: 1.5 }), RangeError)
  t.throws(() => new MemoryNonceStore({ window: 0 }), RangeError)
  t.throws(() => new MemoryNonceStore({ window: 65537 }), RangeError)
  t.equal(checkWindow(1), 1)
})

test('property: the store agrees with the reference window model', async (t) => {
  const sequence = fc.array(fc.integer({ min: 1, max: 120 }), { maxLength: 300 })
  t.doesNotThrow(() => fc.assert(fc.property(fc.integer({ min: 1, max: 64 }), sequence, (window, ncs) => {
    const store = new MemoryNonceStore({ window })
    const ref = model(window)
    return ncs.every((nc) => store.seenSync('n', nc, TTL) === ref(nc))
  }), { numRuns: 500 }), 'model agrees')
})

test('RFC 7616 5.4: a nonce of another store generation is refused whatever its count (a restarted process has no record of it)', async (t) => {
  const before = new MemoryNonceStore()
  const after = new MemoryNonceStore()
  t.match(before.generation(), /^[0-9a-f]{16}$/)
  t.not(after.generation(), before.generation(), 'every store state has its own generation')
  t.equal(await before.seen('n', 1, TTL, before.generation()), false)
  t.equal(await after.seen('n', 2, TTL, before.generation()), true, 'a count never seen by this store is no proof of a fresh nonce')
  t.equal(after.seenSync('m', 1, TTL, '0000000000000000'), true, 'the unknown generation is never current')
  t.equal(after.seenSync('n', 2, TTL, after.generation()), false, 'a nonce of this generation is judged by its counts')
  t.equal(after.seenSync('k', 1, TTL), false, 'a caller that names no generation is judged by counts alone')
})
