/**
 * docs/fleet.md (When a shared store fails): with a plain `new Redis(url)` and Redis
 * stopped, requests do not pile commands up in ioredis's offline queue. Counted on a real
 * redis-server (127.0.0.1) by what Redis runs once it is back (`INFO commandstats` of the
 * restarted server): ioredis sends it everything it queued. Skipped without redis-server,
 * failed without it under CI=true.
 */
import { test, type Test } from 'tap'
import { once } from 'node:events'
import Redis from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { startRedis } from '../../helpers/redis'
import { until } from '../../helpers/until'
import { digestStatus, plainRedis, redisStoresApp } from '../../helpers/redis-app'
import { MAX_OFFLINE_COMMANDS, MAX_STARTING_COMMANDS, OfflineGate, StoreUnavailableError } from '../../../lib/io/stores/offline'

async function app (t: Test, redis: Redis): Promise<FastifyInstance> {
  return await redisStoresApp(t, redis, 'offline')
}

/** Calls of each command the server ran since it started (INFO commandstats). */
async function commandCalls (redis: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const [, name, calls] of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[name] = Number(calls)
  return out
}

test('docs/fleet.md (When a shared store fails): Redis stopped, a plain new Redis(url): 40 requests leave at most one command per store in the offline queue', async (t) => {
  const peerRedis = await plainRedis(t)
  if (peerRedis === undefined) return
  const { server, redis } = peerRedis
  const a = await app(t, redis)
  // RFC 7616 3.3: a nonce issued before the store learned Redis's generation is stale once.
  t.equal(await until('Digest works while Redis runs', async () => await digestStatus(a) === 200, 10_000), true)

  const closed = once(redis, 'close')
  await server.stop()
  await closed
  const N = 20
  const [digest, delta] = await Promise.all([
    Promise.all(Array.from({ length: N }, async () => await digestStatus(a))),
    Promise.all(Array.from({ length: N }, async () => (await a.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })).statusCode))
  ])
  t.same(new Set(digest), new Set([401]), 'Digest fails closed')
  t.same(new Set(delta), new Set([200]), 'deltas fall back to the whole instance')

  // Redis back on the same port: once ready, ioredis sends what it queued, then this INFO
  // (one connection, in order), before anything the app sends later.
  // (not events.once: ioredis emits 'error' for each failed reconnection)
  const ready = new Promise((resolve) => redis.once('ready', resolve))
  const back = await startRedis(server.port)
  t.teardown(() => back.stop())
  await ready
  const calls = await commandCalls(redis)
  const scripts = (calls.evalsha ?? 0) + (calls.eval ?? 0)
  const instances = (calls.get ?? 0) + (calls.set ?? 0)
  t.comment(`commands run when Redis came back: ${JSON.stringify(calls)}`)
  t.ok(scripts <= MAX_OFFLINE_COMMANDS, `${scripts} nonce-store scripts`)
  t.ok(instances <= MAX_OFFLINE_COMMANDS, `${instances} instance-store commands`)
  // RFC 7616 3.3: the restarted Redis holds a new generation; the nonce of before is stale once.
  t.equal(await until('Digest works again', async () => await digestStatus(a) === 200, 10_000), true)
})

test('OfflineGate: every command while ready or without a status; once started, one waits while not ready and the others fail at once', async (t) => {
  const client: { status?: string } = { status: 'ready' }
  const gate = new OfflineGate(client)
  let sent = 0
  const send = async (): Promise<number> => ++sent
  t.equal(await gate.run('x', send), 1)
  client.status = 'connecting'
  let release: (v: number) => void = () => {}
  const waiting = gate.run('GET', async () => await new Promise<number>((resolve) => { release = resolve }))
  const refused = await gate.run('Redis GET', send).catch((e: unknown) => e)
  t.ok(refused instanceof StoreUnavailableError)
  t.match(refused, { code: 'ERR_STORE_UNAVAILABLE', message: 'Redis GET was not sent: the Redis client is connecting, not ready, and already holds a command of this store' })
  t.equal(sent, 1, 'the refused command was not sent')
  release(7)
  t.equal(await waiting, 7)
  await t.rejects(gate.run('x', async () => { throw new Error('down') }), /down/, 'the waiting one may fail')
  t.equal(await gate.run('x', send), 2, 'a settled command frees its place')
  const plain = new OfflineGate({})
  t.equal(await plain.run('x', send), 3, 'a client without status: sent')
})

test('OfflineGate: during the first connection MAX_STARTING_COMMANDS wait; a lost connection seen first makes it one', async (t) => {
  const client: { status?: string } = { status: 'wait' }
  const gate = new OfflineGate(client)
  const releases: Array<() => void> = []
  const hold = async (): Promise<void> => await new Promise<void>((resolve) => { releases.push(resolve) })
  const waiting = Array.from({ length: MAX_STARTING_COMMANDS }, () => gate.run('x', hold))
  client.status = 'connect'
  await t.rejects(gate.run('Redis SET', hold), { message: `Redis SET was not sent: the Redis client is connect, not ready, and already holds ${MAX_STARTING_COMMANDS} commands of this store` })
  await Promise.resolve()
  for (const r of releases) r()
  await Promise.all(waiting)
  const lost = new OfflineGate({ status: 'reconnecting' })
  const one = lost.run('x', async () => 1)
  await t.rejects(lost.run('x', async () => 2), StoreUnavailableError)
  t.equal(await one, 1)
})
