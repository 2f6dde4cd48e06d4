/**
 * `fastify-http-conventions/stores`: where the suite keeps shared state. Instance stores
 * hold the delta bases of A-IM (`deltaEncoding.store`); nonce stores hold Digest nonce
 * counts (`auth.digest.store`). Memory stores serve one process, Redis stores a fleet.
 *
 * @module fastify-http-conventions/stores
 */
export { MemoryInstanceStore } from '../../lib/stores/instance-memory'
export type { MemoryInstanceStoreOptions } from '../../lib/stores/instance-memory'
export { RedisInstanceStore } from '../../lib/stores/instance-redis'
export type { RedisInstanceStoreOptions, RedisBufferClient } from '../../lib/stores/instance-redis'
export type { InstanceStore } from '../../lib/stores/instance-store'
export { MemoryNonceStore } from '../../lib/stores/memory-nonce'
export type { MemoryNonceStoreOptions } from '../../lib/stores/memory-nonce'
export { RedisNonceStore } from '../../lib/stores/redis-nonce'
export type { RedisNonceStoreOptions, RedisScriptClient } from '../../lib/stores/redis-nonce'
export type { NonceCountStore } from '../../lib/stores/nonce-store'
