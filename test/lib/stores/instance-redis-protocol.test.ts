// How RedisInstanceStore speaks to its client, with a recording client in place of Redis: the
// store's behaviour against a real redis-server is in instance-redis.test.ts; these rows hold
// on a machine with only Node.
import { test } from 'tap'
import { RedisInstanceStore, DEFAULT_REDIS_INSTANCE_TTL_MS, type RedisBufferClient } from '../../../lib/io/stores/instance-redis'

function client (answers: Partial<RedisBufferClient> = {}): { client: RedisBufferClient, calls: unknown[][] } {
  const calls: unknown[][] = []
  const kept = new Map<string, Buffer>()
  return {
    calls,
    client: {
      getBuffer: answers.getBuffer ?? (async (key) => { calls.push(['get', key]); return kept.get(key) ?? null }),
      set: answers.set ?? (async (key, value, mode, ms) => { calls.push(['set', key, value.length, mode, ms]); kept.set(key, value); return 'OK' })
    }
  }
}

test('instances are kept under a hashed key with the prefix, for the store\'s ttl in ms, and read back', async (t) => {
  const { client: c, calls } = client()
  const store = new RedisInstanceStore(c, { prefix: 'p:', ttlMs: 1500.2 })
  await store.set('GET /a "v1"', Buffer.from('hello'))
  t.same(await store.get('GET /a "v1"'), Buffer.from('hello'))
  t.equal(await store.get('GET /b'), undefined, 'a missing key is undefined')
  t.match(calls[0], ['set', /^p:[A-Za-z0-9_-]{43}$/, 5, 'PX', 1501])
  t.equal(store.redisKey('x'), store.redisKey('x'), 'one key for one instance')
  t.not(store.redisKey('x'), store.redisKey('y'))
})

test('the default ttl is a day; a per-call ttl wins; an instance over maxEntryBytes is not sent', async (t) => {
  const { client: c, calls } = client()
  const store = new RedisInstanceStore(c, { maxEntryBytes: 4 })
  await store.set('k', Buffer.from('1234'))
  await store.set('k', Buffer.from('1234'), 10)
  await store.set('big', Buffer.from('12345'))
  t.same(calls.map((x) => x[4]), [DEFAULT_REDIS_INSTANCE_TTL_MS, 10])
})

test('a command that does not answer in time fails (the plugin then answers without a delta), and its late failure is not unhandled', async (t) => {
  // The store's timer does not hold the process open (unref): this test does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const never = new Promise<never>(() => {})
  let fail: (err: Error) => void = () => {}
  const late = new Promise<null>((_resolve, reject) => { fail = reject })
  const store = new RedisInstanceStore(client({ getBuffer: async () => await late, set: async () => await never }).client, { timeoutMs: 20 })
  await t.rejects(store.get('k'), /Redis GET did not answer within 20 ms/)
  await t.rejects(store.set('k', Buffer.from('x')), /Redis SET did not answer within 20 ms/)
  fail(new Error('late'))
  await new Promise((resolve) => setImmediate(resolve))
})

test('a client without getBuffer and set is refused when the store is made', async (t) => {
  t.throws(() => new RedisInstanceStore({} as RedisBufferClient), /needs a client with getBuffer/)
  t.throws(() => new RedisInstanceStore(null as unknown as RedisBufferClient), /needs a client with getBuffer/)
})
