// How RedisNonceStore speaks to its client, with a recording client in place of Redis: the
// script's semantics are proven against a real redis-server in redis-nonce.test.ts; these
// rows hold on a machine with only Node.
import { test } from 'tap'
import { RedisNonceStore, type RedisScriptClient } from '../../../lib/stores/redis-nonce'

type Call = [string, ...unknown[]]

function client (answers: { evalsha?: (() => Promise<unknown>) | null, eval: () => Promise<unknown> }): { client: RedisScriptClient, calls: Call[] } {
  const calls: Call[] = []
  const c: RedisScriptClient = {
    eval: async (...args) => { calls.push(['eval', ...args]); return await answers.eval() }
  }
  if (answers.evalsha !== null && answers.evalsha !== undefined) {
    const evalsha = answers.evalsha
    c.evalsha = async (...args) => { calls.push(['evalsha', ...args]); return await evalsha() }
  }
  return { client: c, calls }
}

test('the script runs by its SHA-1 first; a reply of 0 is a new count, anything else a replay', async (t) => {
  const { client: c, calls } = client({ evalsha: async () => 0, eval: async () => { throw new Error('not called') } })
  const store = new RedisNonceStore(c, { prefix: 'p:', window: 16 })
  t.equal(await store.seen('abc', 7, 1500.5), false)
  t.equal(calls.length, 1)
  t.match(calls[0], ['evalsha', /^[0-9a-f]{40}$/, 1, 'p:abc', '7', 16, 1501], 'key, nc, window and a whole ttl in ms')
})

test('after a Redis restart (NOSCRIPT) the script is sent whole, and its answer counts', async (t) => {
  const { client: c, calls } = client({ evalsha: async () => { throw new Error('NOSCRIPT No matching script') }, eval: async () => 1 })
  const store = new RedisNonceStore(c)
  t.equal(await store.seen('n', 1, 1000), true, 'a replay')
  t.same(calls.map((x) => x[0]), ['evalsha', 'eval'])
  t.match(String(calls[1][1]), /HSETNX/, 'the script itself')
  t.equal(calls[1][3], 'fhc:digest-nc:n', 'the default prefix')
})

test('a store failure other than NOSCRIPT reaches the caller (the auth plugin refuses the request)', async (t) => {
  const { client: c } = client({ evalsha: async () => { throw new Error('ECONNREFUSED') }, eval: async () => 0 })
  await t.rejects(new RedisNonceStore(c).seen('n', 1, 1000), /ECONNREFUSED/)
})

test('a client without evalsha gets the script whole', async (t) => {
  const { client: c, calls } = client({ evalsha: null, eval: async () => '0' })
  t.equal(await new RedisNonceStore(c).seen('n', 2, 1000), false)
  t.same(calls.map((x) => x[0]), ['eval'])
})

test('RFC 7616 3.4: a count that is not 1..2^32-1 is a replay without asking Redis', async (t) => {
  const { client: c, calls } = client({ evalsha: async () => 0, eval: async () => 0 })
  const store = new RedisNonceStore(c)
  for (const nc of [0, -1, 1.5, 2 ** 32, Number.NaN]) t.equal(await store.seen('n', nc, 1000), true, String(nc))
  t.equal(calls.length, 0)
})

test('a client without eval is refused when the store is made', async (t) => {
  t.throws(() => new RedisNonceStore({} as RedisScriptClient), /needs a client with an eval/)
  t.throws(() => new RedisNonceStore(null as unknown as RedisScriptClient), /needs a client with an eval/)
})
