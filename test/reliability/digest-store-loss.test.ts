/**
 * RFC 7616 5.4 (replay) and 3.3 (stale=true) across a loss of the nonce-count store. A
 * captured Digest `Authorization` must never be accepted again because the store forgot
 * that its count was used: after a Redis restart (no persistence) or FLUSHALL, and after a
 * process restart that keeps the Digest secret but starts a new memory store, the replay is
 * a 401 with `stale=true`, and the client that answers the challenge of that 401 gets in.
 * The Redis rows run a real redis-server (skipped without it, failed under CI=true).
 */
import { test, type Test } from 'tap'
import Redis from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers/app'
import { startRedis } from '../helpers/redis'
import { peer } from '../helpers/peers'
import { answer, authorization } from '../lib/auth/digest-client'
import { RedisNonceStore, type NonceCountStore } from '../../plugins/entries/stores'

const SECRET = 'store-loss-secret-shared-by-the-fleet!'
const USER = { username: 'demo', password: 'demo-password' }

async function app (t: Test, store?: NonceCountStore): Promise<FastifyInstance> {
  const a = await buildApp({ auth: { realm: 'loss', digest: { secret: SECRET, users: { demo: 'demo-password' }, store } } })
  a.post('/articles', { config: { auth: true } }, async (_request, reply) => reply.code(201).send({ ok: true }))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

function digestChallenge (www: string | string[] | undefined): string {
  const lines = Array.isArray(www) ? www : [String(www)]
  return lines.find((l) => l.startsWith('Digest')) as string
}

async function post (a: FastifyInstance, header?: string): Promise<{ status: number, challenge: string }> {
  const res = await a.inject({ method: 'POST', url: '/articles', payload: { title: 'x' }, headers: header === undefined ? {} : { authorization: header } })
  return { status: res.statusCode, challenge: digestChallenge(res.headers['www-authenticate']) }
}

/** A captured request: the Authorization of a POST that was accepted. */
async function capture (t: Test, a: FastifyInstance): Promise<string> {
  const header = authorization(answer((await post(a)).challenge, { ...USER, method: 'POST', uri: '/articles' }))
  t.equal((await post(a, header)).status, 201, 'the original request is accepted')
  const replay = await post(a, header)
  t.equal(replay.status, 401, 'its replay is refused while the store remembers')
  t.match(replay.challenge, /stale=true/)
  return header
}

/** The replay after the loss: 401 stale=true, and the client's retry on that challenge is accepted. */
async function replayIsStale (t: Test, a: FastifyInstance, header: string): Promise<void> {
  const replay = await post(a, header)
  t.equal(replay.status, 401, 'the captured request is refused after the store lost its state')
  t.match(replay.challenge, /stale=true/, 'RFC 7616 3.3: stale=true, the client retries without asking the user')
  const retry = authorization(answer(replay.challenge, { ...USER, method: 'POST', uri: '/articles' }))
  t.equal((await post(a, retry)).status, 201, 'the retry with the fresh nonce is accepted')
  t.equal((await post(a, retry)).status, 401, 'and cannot be replayed either')
}

test('RFC 7616 5.4: a process restarted with the same secret and a new memory store refuses every nonce issued before (stale=true)', async (t) => {
  const before = await app(t)
  const header = await capture(t, before)
  await before.close()
  const after = await app(t)
  await replayIsStale(t, after, header)
})

test('RFC 7616 5.4: after a Redis restart without persistence, a captured request is refused (stale=true), never accepted again', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  let redis = await startRedis()
  t.teardown(() => redis.stop())
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 1000 })
  client.on('error', () => {})
  t.teardown(() => client.disconnect())
  const a = await app(t, new RedisNonceStore(client))
  t.match((await post(a)).challenge, /nonce="[^"]+"/)
  const header = await capture(t, a)

  // Not events.once: it rejects on the 'error' events ioredis emits while Redis is down.
  const closed = new Promise((resolve) => client.once('close', resolve))
  await redis.stop()
  await closed
  const reconnected = new Promise((resolve) => client.once('ready', resolve))
  redis = await startRedis(redis.port)
  await reconnected
  t.equal(await client.dbsize(), 0, 'the restarted Redis holds nothing')
  await replayIsStale(t, a, header)
})

test('RFC 7616 5.4: after FLUSHALL, a captured request is refused (stale=true); a second instance of the fleet learns the new state', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const redis = await startRedis()
  t.teardown(() => redis.stop())
  const clients = [0, 1].map(() => new Redis(redis.url, { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: 1000 }))
  t.teardown(() => { for (const c of clients) c.disconnect() })
  const a = await app(t, new RedisNonceStore(clients[0]))
  const b = await app(t, new RedisNonceStore(clients[1]))
  const header = await capture(t, a)
  t.equal((await post(b, header)).status, 401, 'the other instance refuses the replay too')
  await clients[0].flushall()
  await replayIsStale(t, b, header)
  await replayIsStale(t, a, header)
})
