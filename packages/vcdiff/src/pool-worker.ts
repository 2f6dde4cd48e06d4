/**
 * Worker side of the encoder pool (pool.ts): encodes targets against prepared
 * sources it keeps in a least-recently-used cache bounded in bytes (source plus
 * index). The main thread sends a base only when this worker does not hold it
 * (or says it evicted it); every reply lists the keys evicted since the last.
 * Bases are prepared lazily: the whole index of a base is built only when a
 * target first needs it (a close version, differing in a small middle, does not),
 * and is charged to the cache from then on.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { prepareLazily, type EncodeOptions, type PreparedSource } from './prepared-source'

/** The encoder options of a pool (see `EncoderPoolOptions`), in the worker's `workerData`. */
export interface WorkerOptions {
  encoder: EncodeOptions
  /** Bases of at least this many bytes are prepared at level 'fast' when `encoder.level` is not set. */
  fastFromBytes: number
}

export interface EncodeRequest {
  id: number
  key: string
  /** Present when the main thread believes this worker lacks the base. */
  base?: Uint8Array
  /** In memory shared with the main thread, which reuses it once this request is answered. */
  target: Uint8Array
  /** Date.now() after which the result is no longer wanted. */
  deadline: number
  /** Keep the target as a future base under this key (the next version is encoded against it). */
  targetKey?: string
}

export interface EncodeReply {
  id: number
  /** The delta, null when it would not be smaller than the target (or the deadline passed first). */
  delta: Uint8Array | null
  /** The base was not cached here: resend with it. */
  missing?: boolean
  error?: string
  evicted: string[]
  cacheBytes: number
  cached: number
}

/** A cached base, prepared lazily, and the bytes it is charged (source, and index once built). */
interface Entry { prepared: PreparedSource, bytes: number }

/* c8 ignore next 2 */
const port = parentPort
if (port === null) throw new Error('pool-worker.js runs in a worker thread (see pool.ts)')
const limit: number = (workerData as { cacheBytes: number }).cacheBytes
const { encoder, fastFromBytes } = workerData as WorkerOptions
const fastEncoder: EncodeOptions = { ...encoder, level: 'fast' }
/** Map iteration order is insertion order: the first key is the least recently used. */
const cache = new Map<string, Entry>()
let cacheBytes = 0
let evicted: string[] = []

function remember (key: string, entry: Entry): void {
  const old = cache.get(key)
  if (old !== undefined) {
    cache.delete(key)
    cacheBytes -= old.bytes
  }
  // A base larger than the whole cache is used once and not kept.
  if (entry.bytes > limit) {
    evicted.push(key)
    return
  }
  for (const [k, e] of cache) {
    if (cacheBytes + entry.bytes <= limit) break
    cache.delete(k)
    cacheBytes -= e.bytes
    evicted.push(k)
  }
  cache.set(key, entry)
  cacheBytes += entry.bytes
}

function entryOf (source: Uint8Array): Entry {
  const options = encoder.level === undefined && source.length >= fastFromBytes ? fastEncoder : encoder
  return { prepared: prepareLazily(source, options), bytes: source.length }
}

/** Charges a cached entry its index, once an encode built it (evicting others, or itself, beyond the limit). */
function charge (key: string, entry: Entry): void {
  const bytes = entry.prepared.source.length + entry.prepared.indexBytes
  if (bytes === entry.bytes) return
  cache.delete(key)
  cacheBytes -= entry.bytes
  entry.bytes = bytes
  remember(key, entry)
}

function handle (req: EncodeRequest): EncodeReply {
  let entry = cache.get(req.key)
  if (req.base !== undefined) {
    entry = entryOf(req.base)
    remember(req.key, entry)
  } else if (entry === undefined) {
    return { id: req.id, delta: null, missing: true, evicted: [], cacheBytes, cached: cache.size }
  } else {
    cache.delete(req.key) // most recently used: to the end
    cache.set(req.key, entry)
  }
  // A target kept as a base is copied out of the shared memory (the main thread reuses it).
  const keep = req.targetKey !== undefined && req.targetKey !== req.key
  const target = keep ? new Uint8Array(req.target) : req.target
  const delta = Date.now() > req.deadline ? null : entry.prepared.tryEncode(target)
  if (cache.get(req.key) === entry) charge(req.key, entry)
  // RFC 3229: the next request's base is this version; its index is built when a target needs it.
  if (keep) remember(req.targetKey as string, entryOf(target))
  return { id: req.id, delta, evicted: [], cacheBytes, cached: cache.size }
}

port.on('message', (req: EncodeRequest) => {
  let reply: EncodeReply
  try {
    reply = handle(req)
  } catch (err) {
    /* c8 ignore next */
    reply = { id: req.id, delta: null, error: String(err), evicted: [], cacheBytes, cached: cache.size }
  }
  reply.evicted = evicted
  evicted = []
  const transfer = reply.delta !== null ? [reply.delta.buffer as ArrayBuffer] : []
  port.postMessage(reply, transfer)
})
