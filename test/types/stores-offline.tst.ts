// Type tests of the Redis stores' clients: ioredis fits as it is (its status is read), and so
// does a client without any status.
import { expect, test } from 'tstyche'
import { Redis } from 'ioredis'
import { RedisInstanceStore, RedisNonceStore, type RedisBufferClient, type RedisScriptClient } from 'fastify-http-conventions/stores'

test('stores: an ioredis client, or a client without status', () => {
  expect(RedisInstanceStore).type.toBeConstructableWith(new Redis())
  expect(RedisNonceStore).type.toBeConstructableWith(new Redis())
  expect<RedisBufferClient>().type.toBeAssignableFrom({ getBuffer: async () => null, set: async () => 'OK' })
  expect<RedisScriptClient>().type.toBeAssignableFrom({ eval: async () => 0 })
  expect<RedisScriptClient>().type.not.toBeAssignableFrom({ eval: async () => 0, status: 1 })
})
