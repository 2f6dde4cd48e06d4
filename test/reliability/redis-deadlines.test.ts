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
import { buildApp } from '../helpers/app'
import { startRedis } from '../helpers/redis'
import { peer } from '../helpers/peers'
import { answer, authorization } from '../lib/auth/digest-client'
import { RedisInstanceStore, RedisNonceStore } from '../../plugins/entries/stores'

const SECRET = 'redis-deadline-secret-of-32-bytes-or-more'

async function app (t: Test, redis: Redis): Promise<FastifyInstance> {
  // The deadlines' timers never hold the process open; while a test waits on them, this does.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const a = await buildApp({
    auth: { realm: 'deadline', digest: { secret: SECRET, users: { demo: 'demo-pass' }, store: new RedisNonceStore(redis) } },
    deltaEncoding: { store: new RedisInstanceStore(redis) }
  })
  a.get('/me', { config: { auth: true } }, async () => ({ ok: true }))
  a.get('/doc', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"v2"').send('x'.repeat(4096)))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

async function digestStatus (a: FastifyInstance): Promise<number> {
  const first = await a.inject({ url: '/me' })
  const lines = ([] as string[]).concat(first.headers['www-authenticate'] as string | string[])
  const params = answer(lines.find((l) => l.startsWith('Digest')) as string, { username: 'demo', password: 'demo-pass', uri: '/me' })
  return (await a.inject({ url: '/me', headers: { authorization: authorization(params) } })).statusCode
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
  if (peer(t, 'redis-server') === undefined) return
  const server = await startRedis()
  t.teardown(() => server.stop())
  const redis = new Redis(server.url)
  redis.on('error', () => {})
  t.teardown(() => redis.disconnect())
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
