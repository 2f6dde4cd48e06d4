/**
 * Worker side of the encoder pool (pool.ts): encodes targets against prepared
 * sources it keeps in a least-recently-used cache bounded in bytes (source plus
 * index). The main thread sends a base only when this worker does not hold it
 * (or says it evicted it); every reply lists the keys evicted since the last.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { prepareSource, type PreparedSource } from './prepared-source'

export interface EncodeRequest {
  id: number
  key: string
  /** Present when the main thread believes this worker lacks the base. */
  base?: Uint8Array
  target: Uint8Array
  /** Date.now() after which the result is no longer wanted. */
  deadline: number
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

interface Entry { prepared: PreparedSource, bytes: number }

/* c8 ignore next 2 */
const port = parentPort
if (port === null) throw new Error('pool-worker.js runs in a worker thread (see pool.ts)')
const limit: number = (workerData as { cacheBytes: number }).cacheBytes
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

function handle (req: EncodeRequest): EncodeReply {
  let entry = cache.get(req.key)
  if (req.base !== undefined) {
    const prepared = prepareSource(req.base)
    entry = { prepared, bytes: req.base.length + prepared.indexBytes }
    remember(req.key, entry)
  } else if (entry === undefined) {
    return { id: req.id, delta: null, missing: true, evicted: [], cacheBytes, cached: cache.size }
  } else {
    cache.delete(req.key) // most recently used: to the end
    cache.set(req.key, entry)
  }
  const delta = Date.now() > req.deadline ? null : entry.prepared.tryEncode(req.target)
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
