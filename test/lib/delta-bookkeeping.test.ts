// The delta-encoding plugin's bookkeeping beside its store is bounded in bytes, whatever the
// URLs and client addresses: every table counts what it holds against its bound, and names
// representations and clients by fixed-size digests. Clocks are injected.
import { test } from 'tap'
import {
  addressGroup, BUDGET_ENTRY_BYTES, clientKey, digestKey, InsertBudget, RecentInstances, RECENT_ENTRY_BYTES, RECENT_FRESH_MS
} from '../../lib/delta-bookkeeping'

const LONG_URL = '/articles/1?pad=' + 'x'.repeat(15_000)

test('RecentInstances: driven far past its bound with 15 KB URLs, the bytes it counts never exceed it', async (t) => {
  const recent = new RecentInstances({ maxBytes: 64 * 1024 })
  let peak = 0
  for (let i = 0; i < 5000; i++) {
    recent.mark(digestKey(`${LONG_URL}${i}\ntext/plain`), `"v${i}"`)
    peak = Math.max(peak, recent.bytes)
  }
  t.ok(peak <= recent.maxBytes, `peak ${peak} bytes, bound ${recent.maxBytes}`)
  t.ok(recent.size <= Math.floor(64 * 1024 / RECENT_ENTRY_BYTES), `${recent.size} entries: each charged at least its fixed size`)
  t.equal(recent.bytes, recent.size * (RECENT_ENTRY_BYTES + 2 * '"v4999"'.length), 'every entry is charged its fixed size and its entity-tag')
})

test('RecentInstances: an instance stored a moment ago is recent; later it is only known; forgotten, neither', async (t) => {
  const clock = { t: 1_000_000 }
  const recent = new RecentInstances({ now: () => clock.t })
  const key = digestKey('/doc/1\ntext/plain')
  t.equal(recent.known(key), false)
  recent.mark(key, 'v1')
  t.equal(recent.recently(key, 'v1'), true)
  t.equal(recent.recently(key, 'v2'), false, 'another entity-tag is another instance')
  clock.t += RECENT_FRESH_MS
  t.equal(recent.recently(key, 'v1'), false, 'no longer a moment ago')
  t.equal(recent.known(key), true)
  recent.forget(key)
  t.equal(recent.known(key), false)
  t.equal(recent.bytes, 0)
  t.throws(() => new RecentInstances({ maxBytes: 0 }), /maxBytes must be a positive integer/)
})

test('InsertBudget: at most perMinute new representations a client a minute, then the next minute again', async (t) => {
  // A window opens with the first count, here 1 ms before a minute of the clock ends.
  const clock = { t: 60_000 * 1000 - 1 }
  const budget = new InsertBudget({ perMinute: 3, now: () => clock.t })
  const a = clientKey(null, '192.0.2.1')
  t.same([1, 2].map(() => budget.allow(a)), [true, true])
  clock.t += 1
  t.same([3, 4].map(() => budget.allow(a)), [true, false], 'a minute of the clock that ends is no new budget')
  t.equal(budget.allow(clientKey(null, '192.0.2.2')), true, 'another client has its own budget')
  clock.t += 59_998
  t.equal(budget.allow(a), false, 'the window is a minute long')
  clock.t += 1
  t.equal(budget.allow(a), true, 'a new minute')
  t.throws(() => new InsertBudget({ perMinute: 0 }), /perMinute must be a positive integer/)
  t.throws(() => new InsertBudget({ perMinute: 1, maxClients: 1.5 }), /maxClients must be a positive integer/)
})

test('InsertBudget: a table full of clients stays at its bound in bytes; the clients past it share one budget', async (t) => {
  const budget = new InsertBudget({ perMinute: 2, maxClients: 100, now: () => 0 })
  t.equal(budget.maxBytes, 100 * BUDGET_ENTRY_BYTES)
  let allowed = 0
  let peak = 0
  for (let i = 0; i < 10_000; i++) {
    if (budget.allow(clientKey(null, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`))) allowed++
    peak = Math.max(peak, budget.bytes)
  }
  t.ok(peak <= budget.maxBytes, `peak ${peak} bytes, bound ${budget.maxBytes}`)
  t.equal(allowed, 99 + 2, '99 clients of their own, then two for all the others together')
  const one = new InsertBudget({ perMinute: 1, maxClients: 1, now: () => 0 })
  t.same([one.allow('a'), one.allow('b')], [true, false], 'a table of one is the shared budget')
  t.equal(one.bytes, BUDGET_ENTRY_BYTES)
})

test('clients are keyed by principal where there is one, else by network; every key has one size', async (t) => {
  const alice = { scheme: 'digest', subject: 'alice' }
  t.equal(clientKey(alice, '192.0.2.1'), clientKey(alice, '198.51.100.7'), 'the principal, whatever the address')
  t.not(clientKey(alice, '192.0.2.1'), clientKey({ scheme: 'basic', subject: 'alice' }, '192.0.2.1'), 'the scheme is part of the principal')
  t.not(clientKey(alice, '192.0.2.1'), clientKey(null, '192.0.2.1'))
  const long = clientKey({ scheme: 'basic', subject: 'u'.repeat(16_000) }, '192.0.2.1')
  t.equal(long.length, 43, 'a 16 KB user name is a 43-character key')
  t.equal(clientKey(undefined, '2001:db8::1').length, 43)
})

test('RFC 4291 2.5.4: an IPv6 client is counted by its /64; an IPv4-mapped address as IPv4', async (t) => {
  t.equal(addressGroup('192.0.2.1'), '192.0.2.1')
  t.equal(addressGroup('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64')
  t.equal(addressGroup('2001:0DB8:0001:0002::abcd'), '2001:db8:1:2::/64', 'case and leading zeros')
  t.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(addressGroup('2001:db8:1:2::'), '2001:db8:1:2::/64')
  t.equal(addressGroup('::1'), '0:0:0:0::/64')
  t.equal(addressGroup('::'), '0:0:0:0::/64')
  t.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64', 'RFC 4007 11: the zone index is dropped')
  t.equal(addressGroup('::ffff:192.0.2.1'), '192.0.2.1')
  t.equal(addressGroup('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64', 'an embedded IPv4 address fills the last two groups')
  t.equal(clientKey(null, '2001:db8:1:2::a'), clientKey(null, '2001:db8:1:2:ffff::b'), 'one network, one budget')
})
