// How RedisNonceStore speaks to its client, with a recording client in place of Redis: the
// script's semantics are proven against a real redis-server in redis-nonce.test.ts; these
// rows hold on a machine with only Node.
import { test } from 'tap'
import { RedisNonceStore, type RedisScriptClient } from '../../../lib/io/stores/redis-nonce'

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

const G1 = '1111111111111111'
const G2 = '2222222222222222'

test('the script runs by its SHA-1 first; a reply of 0 is a new count, anything else a replay', async (t) => {
  const { client: c, calls } = client({ evalsha: async () => [0, G1], eval: async () => { throw new Error('not called') } })
  const store = new RedisNonceStore(c, { prefix: 'p:', window: 16 })
  t.equal(await store.seen('abc', 7, 1500.5, G1), false)
  t.equal(calls.length, 1)
  t.match(calls[0], ['evalsha', /^[0-9a-f]{40}$/, 2, 'p:#generation', 'p:abc', /^[0-9a-f]{16}$/, G1, '7', 16, 1501],
    'the generation key, the nonce key, a candidate generation, the nonce\'s generation, nc, window and a whole ttl in ms')
  t.equal(calls[0][5] === G1, false, 'the candidate is random')
})

test('RFC 7616 5.4: the store learns the generation Redis names, and a nonce of another one is a replay (stale)', async (t) => {
  let current = G1
  const { client: c, calls } = client({ evalsha: async () => (calls.length === 1 ? current : [current === G1 ? 0 : 2, current]), eval: async () => 0 })
  const store = new RedisNonceStore(c)
  t.equal(await store.refresh(), G1, 'refresh asks Redis')
  t.equal(calls[0][2], 1, 'the generation script reads one key')
  t.equal(store.generation(), G1)
  current = G2 // Redis lost its state; another instance made the next generation
  t.equal(await store.seen('n', 1, 1000, G1), true, 'a nonce of the lost state is refused')
  t.equal(store.generation(), G2, 'new nonces carry the new generation')
  t.equal(await store.seen('m', 1, 1000), true, 'code 2 without a generation sent is a refusal too')
})

test('before Redis names a generation new nonces carry the unknown one; a generation older than a second is asked for again, in the background', async (t) => {
  const answers: Array<(v: unknown) => void> = []
  const { client: c, calls } = client({ evalsha: async () => await new Promise((resolve) => answers.push(resolve)), eval: async () => 0 })
  const clock = { t: 1_000_000 }
  const store = new RedisNonceStore(c, { now: () => clock.t })
  const asked = async (): Promise<number> => { await new Promise((resolve) => setImmediate(resolve)); return calls.length }
  t.equal(store.generation(), '0000000000000000')
  t.equal(store.generation(), '0000000000000000', 'one refresh at a time')
  t.equal(await asked(), 1)
  const pending = store.refresh()
  answers[0](G1)
  t.equal(await pending, G1, 'a refresh asked for while one runs shares its answer')
  t.equal(store.generation(), G1)
  clock.t += 999
  t.equal(store.generation(), G1)
  t.equal(await asked(), 1, 'a generation learnt less than a second ago is not asked for')
  clock.t += 1
  t.equal(store.generation(), G1, 'the known one serves while Redis is asked')
  t.equal(await asked(), 2)
  answers[1](G2)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(store.generation(), G2, 'another instance\'s generation is learnt without a check of this one')
  const again = store.refresh()
  t.equal(await asked(), 3)
  answers[2]('not a generation')
  t.equal(await again, G2, 'an answer that is no generation changes nothing')
})

test('a store that does not answer within timeoutMs fails the check (StoreTimeoutError)', async (t) => {
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const { client: c } = client({ evalsha: async () => await new Promise(() => {}), eval: async () => 0 })
  const store = new RedisNonceStore(c, { timeoutMs: 20 })
  await t.rejects(store.seen('n', 1, 1000, G1), { code: 'ERR_STORE_TIMEOUT', message: /Redis nonce-count check did not answer within 20 ms/ })
  await t.rejects(store.refresh(), { code: 'ERR_STORE_TIMEOUT' })
  t.throws(() => new RedisNonceStore(c, { timeoutMs: 0 }), /timeoutMs must be an integer number of milliseconds from 1 to 60000/)
  t.throws(() => new RedisNonceStore(c, { timeoutMs: 1.5 }), RangeError)
})

test('after a Redis restart (NOSCRIPT) the script is sent whole, and its answer counts', async (t) => {
  const { client: c, calls } = client({ evalsha: async () => { throw new Error('NOSCRIPT No matching script') }, eval: async () => 1 })
  const store = new RedisNonceStore(c)
  t.equal(await store.seen('n', 1, 1000), true, 'a replay')
  t.same(calls.map((x) => x[0]), ['evalsha', 'eval'])
  t.match(String(calls[1][1]), /HSETNX/, 'the script itself')
  t.equal(calls[1][4], 'fhc:digest-nc:n', 'the default prefix')
  t.equal(calls[1][3], 'fhc:digest-nc:#generation')
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
