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

/** A cached base: its bytes, and its index once built (a kept target is indexed when the worker is idle). */
interface Entry { source: Uint8Array, prepared: PreparedSource | null, bytes: number }

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

function prepared (entry: Entry): PreparedSource {
  if (entry.prepared === null) {
    entry.prepared = prepareSource(entry.source)
    const bytes = entry.source.length + entry.prepared.indexBytes
    cacheBytes += bytes - entry.bytes
    entry.bytes = bytes
  }
  return entry.prepared
}

/** Kept targets whose index is built between requests (RFC 3229: the next request's base is this version). */
const toPrepare: Entry[] = []
function prepareSoon (): void {
  setImmediate(() => {
    const entry = toPrepare.shift()
    if (entry === undefined) return
    prepared(entry)
    if (toPrepare.length > 0) prepareSoon()
  })
}

function handle (req: EncodeRequest): EncodeReply {
  let entry = cache.get(req.key)
  if (req.base !== undefined) {
    const p = prepareSource(req.base)
    entry = { source: req.base, prepared: p, bytes: req.base.length + p.indexBytes }
    remember(req.key, entry)
  } else if (entry === undefined) {
    return { id: req.id, delta: null, missing: true, evicted: [], cacheBytes, cached: cache.size }
  } else {
    cache.delete(req.key) // most recently used: to the end
    cache.set(req.key, entry)
  }
  const delta = Date.now() > req.deadline ? null : prepared(entry).tryEncode(req.target)
  if (req.targetKey !== undefined && req.targetKey !== req.key) {
    // Charged at twice its size until its index exists (the index is about as large).
    const kept: Entry = { source: req.target, prepared: null, bytes: req.target.length * 2 }
    remember(req.targetKey, kept)
    if (cache.get(req.targetKey) === kept) toPrepare.push(kept)
  }
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
  if (toPrepare.length > 0) prepareSoon()
})
