// Runs against a real redis-server that this file starts on 127.0.0.1 (a free port) and stops;
// skipped without redis-server (test/helpers/peers.ts), failed without it under CI=true.
import { test } from 'tap'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import Redis from 'ioredis'
import { RedisInstanceStore, DEFAULT_REDIS_INSTANCE_TTL_MS, type RedisBufferClient } from '../../../lib/io/stores/instance-redis'
import { httpConventions, serverOptions } from '../../../plugins/index'
import { decode } from '../../../packages/vcdiff/src/index'
import { startRedis } from '../../helpers/redis'
import { peer } from '../../helpers/peers'
import { until } from '../../helpers/until'

async function stop (proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = once(proc, 'exit')
  proc.kill('SIGTERM')
  await exited
}

const text = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `${tag} paragraph ${i}: ${'word '.repeat(30 + (i % 7))}`).join('\n')

test('RedisInstanceStore against a real redis-server', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { port, proc } = await startRedis()
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 })
  t.teardown(async () => {
    await redis.quit()
    await stop(proc)
  })

  await t.test('an instance is kept by key, byte for byte', async (t) => {
    const store = new RedisInstanceStore(redis, { prefix: 't1:' })
    const bytes = Buffer.from([0, 1, 2, 255, 0xc3, 0x28, 10, 13])
    await store.set('/a\ntext/plain\nv1', bytes)
    t.same(await store.get('/a\ntext/plain\nv1'), bytes, 'binary-safe')
    t.equal(await store.get('/a\ntext/plain\nv2'), undefined)
    t.not(store.redisKey('/a\ntext/plain\nv1'), store.redisKey('/b\ntext/plain\nv1'), 'two URLs, two keys')
    t.match(store.redisKey('/a'.repeat(5000)), /^t1:[A-Za-z0-9_-]{43}$/, 'a long URL makes a short key')
  })

  await t.test('every key expires: the ttl given, else the default', async (t) => {
    const store = new RedisInstanceStore(redis, { prefix: 't2:' })
    await store.set('a', Buffer.from('x'), 5000)
    await store.set('b', Buffer.from('x'))
    const pa = await redis.pttl(store.redisKey('a'))
    const pb = await redis.pttl(store.redisKey('b'))
    // Milliseconds, with seconds of slack for a loaded machine between the write and the read.
    t.ok(pa > 1000 && pa <= 5000, `PTTL ${pa}`)
    t.ok(pb > DEFAULT_REDIS_INSTANCE_TTL_MS - 10_000 && pb <= DEFAULT_REDIS_INSTANCE_TTL_MS, `PTTL ${pb}`)
    const own = new RedisInstanceStore(redis, { prefix: 't2b:', ttlMs: 60_000 })
    await own.set('c', Buffer.from('x'))
    const pc = await redis.pttl(own.redisKey('c'))
    t.ok(pc > 50_000 && pc <= 60_000, `the store's own ttlMs: PTTL ${pc}`)
    await store.set('short', Buffer.from('x'), 1)
    // Redis expires the key on its own clock: wait until it is gone (a deadline, not a sleep).
    await until('the 1 ms instance expired', async () => (await redis.exists(store.redisKey('short'))) === 0)
    t.equal(await store.get('short'), undefined, 'an expired instance is gone')
  })

  await t.test('an instance over maxEntryBytes is not kept', async (t) => {
    const store = new RedisInstanceStore(redis, { prefix: 't3:', maxEntryBytes: 10 })
    await store.set('big', Buffer.alloc(11))
    t.equal(await redis.exists(store.redisKey('big')), 0)
    await store.set('ok', Buffer.alloc(10))
    t.equal(await redis.exists(store.redisKey('ok')), 1)
  })

  await t.test('a fleet shares its bases: one instance serves the 200, another the 226', async (t) => {
    let doc = text(100, 'v1')
    let etag = 'v1'
    const make = async (): Promise<FastifyInstance> => {
      const app = Fastify(serverOptions)
      await app.register(httpConventions, { deltaEncoding: { store: new RedisInstanceStore(redis, { prefix: 'fleet:' }) } })
      app.get('/doc', { config: { conditional: { validators: () => ({ etag }) }, deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').send(doc))
      return app
    }
    const a = await make()
    const b = await make()
    t.teardown(async () => { await a.close(); await b.close() })
    const first = await a.inject({ url: '/doc', headers: { 'a-im': 'vcdiff' } })
    t.equal(first.statusCode, 200)
    const v1 = doc
    doc = v1.replace('v1 paragraph 50:', 'an edited paragraph 50:')
    etag = 'v2'
    const res = await b.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
    t.equal(res.statusCode, 226, 'instance b found the base instance a kept')
    t.equal(Buffer.from(decode(Buffer.from(v1), res.rawPayload)).toString(), doc)
  })
})

test('a Redis that is down: the plugin answers an ordinary 200 and logs a warning, never a 5xx', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { port, proc } = await startRedis()
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 50 })
  redis.on('error', () => {})
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(String(chunk)); cb() } })
  const app = Fastify({ ...serverOptions, logger: { level: 'warn', stream } })
  await app.register(httpConventions, { deltaEncoding: { store: new RedisInstanceStore(redis, { prefix: 'down:', timeoutMs: 10_000 }) } })
  let doc = text(100, 'v1')
  let etag = 'v1'
  app.get('/doc', { config: { conditional: { validators: () => ({ etag }) }, deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').send(doc))
  t.teardown(async () => {
    await app.close()
    redis.disconnect()
    await stop(proc)
  })
  t.equal((await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff' } })).statusCode, 200)
  doc = doc.replace('v1 paragraph 5:', 'edited 5:')
  etag = 'v2'
  const up = await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  t.equal(up.statusCode, 226, 'while Redis is up: a delta')

  await stop(proc)
  doc = doc.replace('paragraph 7:', 'edited 7:')
  etag = 'v3'
  const started = Date.now()
  const down = await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff, gzip', 'if-none-match': '"v2"' } })
  t.equal(down.statusCode, 200, 'Redis down: an ordinary 200')
  t.equal(down.headers.im, undefined)
  t.equal(down.body, doc, 'the whole current instance')
  t.comment(`answered in ${Date.now() - started} ms (ioredis gave up its one retry)`)
  const plain = await app.inject({ url: '/doc' })
  t.equal(plain.statusCode, 200, 'a GET whose instance cannot be stored is a 200 too')
  // The failed write is logged once the store's command gives up, after the answer.
  const warningsNow = (): string[] => lines.map((l) => JSON.parse(l) as { level: number, msg: string }).filter((l) => l.level === 40).map((l) => l.msg)
  const warnings = await until('the failed write logged', () => warningsNow().some((m) => /cannot be a delta base/.test(m)) && warningsNow(), 10_000)
  t.ok(warnings.some((m) => /answering without a delta/.test(m)), 'the failed read is logged')
  t.ok(warnings.some((m) => /cannot be a delta base/.test(m)), 'the failed write is logged')
})

test('RedisInstanceStore bounds every command by timeoutMs', async (t) => {
  // The store's timers are unref'd (they never hold a process open), and nothing else here
  // keeps the event loop alive when the tests above were skipped: this interval does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const hanging: RedisBufferClient = {
    getBuffer: () => new Promise(() => {}),
    set: () => new Promise(() => {})
  }
  const store = new RedisInstanceStore(hanging, { timeoutMs: 30 })
  await t.rejects(store.get('k'), /Redis GET did not answer within 30 ms/)
  await t.rejects(store.set('k', Buffer.from('x')), /Redis SET did not answer within 30 ms/)
  let failedLate: () => void = () => {}
  const lateFailure = new Promise<void>((resolve) => { failedLate = resolve })
  const late: RedisBufferClient = {
    getBuffer: () => new Promise((_resolve, reject) => setTimeout(() => { reject(new Error('late failure')); failedLate() }, 60)),
    set: async () => 'OK'
  }
  const lateStore = new RedisInstanceStore(late, { timeoutMs: 20 })
  await t.rejects(lateStore.get('k'), /did not answer/)
  // The client's failure comes after the timeout; one more turn lets an unhandled rejection surface.
  await lateFailure
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(await lateStore.set('k', Buffer.from('x')), undefined, 'a failure after the timeout is not an unhandled rejection')
})

test('RedisInstanceStore checks its client and options', async (t) => {
  const ok: RedisBufferClient = { getBuffer: async () => null, set: async () => 'OK' }
  t.throws(() => new RedisInstanceStore(null as unknown as RedisBufferClient), /needs a client with getBuffer/)
  t.throws(() => new RedisInstanceStore({ getBuffer: async () => null } as unknown as RedisBufferClient), /needs a client with getBuffer/)
  t.throws(() => new RedisInstanceStore({ set: async () => 'OK' } as unknown as RedisBufferClient), /needs a client with getBuffer/)
  t.throws(() => new RedisInstanceStore(ok, { ttlMs: -1 }), /ttl must be a positive number/)
  t.throws(() => new RedisInstanceStore(ok, { maxEntryBytes: 0 }), /maxEntryBytes must be a positive integer/)
  t.throws(() => new RedisInstanceStore(ok, { timeoutMs: 0.5 }), /timeoutMs must be an integer number of milliseconds/)
  const store = new RedisInstanceStore(ok)
  t.match(store.redisKey('k'), /^fhc:instance:/, 'default prefix')
  t.equal(await store.get('k'), undefined, 'null from Redis is no instance')
  await t.rejects(store.set('k', Buffer.from('x'), 0), /ttl must be a positive number/)
})
