/**
 * Redis that does not answer: the suite's own deadlines bound every wait, whatever the
 * ioredis options. A server that accepts connections and never replies, and a Redis that
 * was stopped while ioredis (with its defaults: 20 retries a command, backing off) keeps
 * reconnecting: Digest refuses (fail closed, 401: RFC 7616 5.4 cannot be checked), delta
 * encoding answers the plain 200 (RFC 3229 10.5.3), and the answer comes while ioredis is
 * still retrying, not when it gives up. The Redis row needs redis-server (skipped without
 * it, failed under CI=true).
 */
import { test, type Test } from 'tap'
import net from 'node:net'
import { once } from 'node:events'
import Redis from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { digestStatus, plainRedis, redisStoresApp } from '../helpers/redis-app'

async function app (t: Test, redis: Redis): Promise<FastifyInstance> {
  // The deadlines' timers never hold the process open; while a test waits on them, this does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  return await redisStoresApp(t, redis, 'deadline')
}

test('a Redis that accepts and never answers: Digest refuses (401), deltas fall back to 200, the app starts', async (t) => {
  const sockets = new Set<net.Socket>()
  const silent = net.createServer((socket) => { sockets.add(socket); socket.resume() })
  silent.listen(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    silent.close()
    await once(silent, 'close')
  })
  // The options the docs show; the suite's deadlines hold even without commandTimeout.
  const redis = new Redis({ host: '127.0.0.1', port: (silent.address() as net.AddressInfo).port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
  redis.on('error', () => {})
  t.teardown(() => redis.disconnect())
  const a = await app(t, redis)
  t.equal(await digestStatus(a), 401, 'Digest fails closed')
  const delta = await a.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  t.equal(delta.statusCode, 200, 'no base can be read: the plain instance')
  t.equal(delta.headers.im, undefined)
})

test('Redis stopped, ioredis with its defaults: Digest refuses (401) while ioredis still retries, not after its 20 retries', async (t) => {
  const peerRedis = await plainRedis(t)
  if (peerRedis === undefined) return
  const { server, redis } = peerRedis
  const a = await app(t, redis)
  t.equal(await digestStatus(a), 200, 'Digest works while Redis runs')
  const closed = once(redis, 'close')
  await server.stop()
  await closed
  let reconnects = 0
  redis.on('reconnecting', () => { reconnects++ })
  t.equal(await digestStatus(a), 401, 'Digest fails closed')
  t.ok(reconnects < 20, `answered after ${reconnects} reconnection attempts, before ioredis gives up on the command (maxRetriesPerRequest 20)`)
  const delta = await a.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  t.equal(delta.statusCode, 200)
})
