import { test } from 'tap'
import { MemoryInstanceStore, ENTRY_OVERHEAD } from '../../../lib/io/stores/instance-memory'
import { DEFAULT_INSTANCE_STORE_BYTES } from '../../../lib/io/stores/instance-store'

test('an instance is kept by key, as a copy of its own', async (t) => {
  const store = new MemoryInstanceStore()
  t.equal(store.maxBytes, DEFAULT_INSTANCE_STORE_BYTES, '64 MiB by default')
  const value = Buffer.from('hello')
  await store.set('/a\ntext/plain\nv1', value)
  value[0] = 0x4a
  t.equal((await store.get('/a\ntext/plain\nv1'))?.toString(), 'hello', 'a later change of the caller\'s buffer does not reach the store')
  t.equal(await store.get('/a\ntext/plain\nv2'), undefined)
  t.equal(store.size, 1)
  t.equal(store.bytes, 5 + 2 * '/a\ntext/plain\nv1'.length + ENTRY_OVERHEAD, 'charged: value, key (UTF-16) and overhead')
})

test('a small instance does not keep a shared 8 KiB slab alive', async (t) => {
  const store = new MemoryInstanceStore()
  const pooled = Buffer.from('small')
  t.ok(pooled.buffer.byteLength > pooled.length, 'Buffer.from(string) is a view of a shared slab')
  store.setSync('k', pooled)
  const kept = store.getSync('k') as Buffer
  t.equal(kept.buffer.byteLength, kept.length, 'the kept copy owns exactly its bytes')
})

test('bounded by bytes: the least recently used instances go first', async (t) => {
  const cost = (key: string, n: number): number => n + 2 * key.length + ENTRY_OVERHEAD
  const store = new MemoryInstanceStore({ maxBytes: 3 * cost('k1', 100), maxEntryBytes: 1000 })
  store.setSync('k1', Buffer.alloc(100, 1))
  store.setSync('k2', Buffer.alloc(100, 2))
  store.setSync('k3', Buffer.alloc(100, 3))
  t.equal(store.size, 3)
  t.ok(store.getSync('k1'), 'reading k1 makes it the most recently used')
  store.setSync('k4', Buffer.alloc(100, 4))
  t.equal(store.getSync('k2'), undefined, 'k2, least recently used, was dropped')
  t.ok(store.getSync('k1'))
  t.ok(store.getSync('k3'))
  t.ok(store.getSync('k4'))
  t.ok(store.bytes <= store.maxBytes)
  store.setSync('k5', Buffer.alloc(250, 5))
  t.same([store.getSync('k1'), store.getSync('k3')].map((b) => b === undefined), [true, true], 'a large instance drops as many as it needs')
  t.ok(store.bytes <= store.maxBytes)
})

test('an instance over the per-entry cap is not kept, and replaces nothing but its own key', async (t) => {
  const store = new MemoryInstanceStore({ maxBytes: 10_000, maxEntryBytes: 100 })
  t.equal(store.setSync('big', Buffer.alloc(101)), false)
  t.equal(store.getSync('big'), undefined)
  t.equal(store.setSync('ok', Buffer.alloc(100)), true)
  t.equal(store.setSync('ok', Buffer.alloc(500)), false, 'a too large new value for a key')
  t.equal(store.getSync('ok'), undefined, 'drops the old value: it is no longer the instance under that key')
  t.equal(store.bytes, 0)
  const tiny = new MemoryInstanceStore({ maxBytes: 200 })
  t.equal(tiny.setSync('k', Buffer.alloc(100)), false, 'value + key + overhead over the whole bound')
})

test('replacing a key charges only the new value', async (t) => {
  const store = new MemoryInstanceStore()
  store.setSync('k', Buffer.alloc(1000))
  store.setSync('k', Buffer.alloc(10))
  t.equal(store.bytes, 10 + 2 + ENTRY_OVERHEAD)
  store.delete('k')
  store.delete('k')
  t.equal(store.bytes, 0)
  t.equal(store.size, 0)
})

test('ttl: an expired instance is gone', async (t) => {
  let now = 1000
  const store = new MemoryInstanceStore({ now: () => now })
  await store.set('k', Buffer.from('x'), 500)
  await store.set('forever', Buffer.from('y'))
  now = 1499
  t.ok(await store.get('k'))
  now = 1500
  t.equal(await store.get('k'), undefined)
  t.equal(store.bytes, 1 + 2 * 'forever'.length + ENTRY_OVERHEAD, 'its bytes are released; the other entry stays charged')
  now = 1e12
  t.ok(await store.get('forever'), 'no ttl: kept until evicted')
  t.throws(() => store.setSync('k', Buffer.from('x'), 0), /ttl must be a positive number/)
  t.throws(() => store.setSync('k', Buffer.from('x'), Infinity), /ttl must be a positive number/)
})

test('options are checked', async (t) => {
  t.throws(() => new MemoryInstanceStore({ maxBytes: 0 }), /maxBytes must be a positive integer/)
  t.throws(() => new MemoryInstanceStore({ maxEntryBytes: 1.5 }), /maxEntryBytes must be a positive integer/)
  const capped = new MemoryInstanceStore({ maxBytes: 1000, maxEntryBytes: 1e9 })
  t.equal(capped.setSync('k', Buffer.alloc(1001)), false, 'the per-entry cap is at most the bound')
})

test('memory stays within its byte bound under 10k distinct instances', async (t) => {
  const maxBytes = 4 * 1024 * 1024
  const store = new MemoryInstanceStore({ maxBytes })
  let peak = 0
  for (let i = 0; i < 10_000; i++) {
    // 200 B to 4 KB instances, as articles of different lengths
    const size = 200 + ((i * 7919) % 3900)
    await store.set(`/articles/${i}\napplication/json; charset=utf-8\n${i.toString(16).padStart(16, '0')}`, Buffer.alloc(size, i & 0xff))
    peak = Math.max(peak, store.bytes)
  }
  t.ok(peak <= maxBytes, `peak ${peak} B <= bound ${maxBytes} B`)
  t.ok(store.bytes > maxBytes * 0.9, 'and the store is used: close to its bound')
  t.ok(store.size < 10_000, `older instances were evicted (${store.size} kept)`)
  t.ok(await store.get(`/articles/9999\napplication/json; charset=utf-8\n${(9999).toString(16).padStart(16, '0')}`), 'the newest is kept')
  t.equal(await store.get(`/articles/0\napplication/json; charset=utf-8\n${(0).toString(16).padStart(16, '0')}`), undefined, 'the oldest is gone')
})
