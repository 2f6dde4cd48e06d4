/**
 * `fastify-http-conventions/stores`: where the suite keeps shared state. Instance stores
 * hold the delta bases of A-IM (`deltaEncoding.store`); nonce stores hold Digest nonce
 * counts (`auth.digest.store`). Memory stores serve one process, Redis stores a fleet.
 *
 * @module fastify-http-conventions/stores
 */
export { MemoryInstanceStore } from '../../lib/io/stores/instance-memory'
export type { MemoryInstanceStoreOptions } from '../../lib/io/stores/instance-memory'
export { RedisInstanceStore } from '../../lib/io/stores/instance-redis'
export type { RedisInstanceStoreOptions, RedisBufferClient } from '../../lib/io/stores/instance-redis'
export type { InstanceStore } from '../../lib/io/stores/instance-store'
export { MemoryNonceStore } from '../../lib/io/stores/memory-nonce'
export type { MemoryNonceStoreOptions } from '../../lib/io/stores/memory-nonce'
export { RedisNonceStore } from '../../lib/io/stores/redis-nonce'
export type { RedisNonceStoreOptions, RedisScriptClient } from '../../lib/io/stores/redis-nonce'
export type { NonceCountStore } from '../../lib/io/stores/nonce-store'
