/**
 * An app whose Digest nonce counts and delta bases live in Redis, as a fleet's do: `/me`
 * asks for Digest, `/doc` is delta-encoded. Shared by the tests of Redis failures.
 */
import type { Test } from 'tap'
import Redis from 'ioredis'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app'
import { peer } from './peers'
import { startRedis, type RedisServer } from './redis'
import { answer, authorization } from '../lib/auth/digest-client'
import { RedisInstanceStore } from '../../lib/io/stores/instance-redis'
import { RedisNonceStore } from '../../lib/io/stores/redis-nonce'

export async function redisStoresApp (t: Test, redis: Redis, realm: string): Promise<FastifyInstance> {
  const a = await buildApp({
    auth: { realm, digest: { secret: `${realm}-secret-of-32-bytes-or-more`, users: { demo: 'demo-pass' }, store: new RedisNonceStore(redis) } },
    deltaEncoding: { store: new RedisInstanceStore(redis) }
  })
  a.get('/me', { config: { auth: true } }, async () => ({ ok: true }))
  a.get('/doc', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"v2"').send('x'.repeat(4096)))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

/** The status of a Digest request to `/me` that answers the challenge it first got. */
export async function digestStatus (a: FastifyInstance): Promise<number> {
  const first = await a.inject({ url: '/me' })
  const lines = ([] as string[]).concat(first.headers['www-authenticate'] as string | string[])
  const params = answer(lines.find((l) => l.startsWith('Digest')) as string, { username: 'demo', password: 'demo-pass', uri: '/me' })
  return (await a.inject({ url: '/me', headers: { authorization: authorization(params) } })).statusCode
}

/**
 * A redis-server of the test's own (127.0.0.1) and a plain `new Redis(url)` client on it, both
 * stopped at teardown; undefined when redis-server is missing (the test is then skipped, or
 * fails under CI=true: test/helpers/peers.ts).
 */
export async function plainRedis (t: Test): Promise<{ server: RedisServer, redis: Redis } | undefined> {
  if (peer(t, 'redis-server') === undefined) return undefined
  const server = await startRedis()
  t.teardown(() => server.stop())
  const redis = new Redis(server.url)
  redis.on('error', () => {})
  t.teardown(() => redis.disconnect())
  return { server, redis }
}
