/**
 * VCDIFF encodes (RFC 3284) off the event loop, in a pool of worker threads.
 *
 * Why Node's own `worker_threads` and no pool library: each job is one-shot
 * CPU work over byte arrays that move between threads as transferable
 * buffers, with no shared state but a per-worker cache; a fixed set of
 * workers, a queue and a timer per job is all it takes.
 *
 * - Targets: a job sent at once is copied into memory its worker shares (one per
 *   worker, reused: a copy at memory speed on the event loop, no allocation);
 *   a job that must wait is copied when queued, so the caller may reuse its
 *   buffer as soon as `encode` returns. The worker copies what it keeps.
 *
 * - Affinity: a base key always goes to the same worker (a hash of the key),
 *   which keeps the base's prepared source (its hash index, built once) in a
 *   least-recently-used cache bounded by `cacheBytes`; the base crosses to the
 *   worker only when the worker does not hold it.
 * - Bounded queue: at most `maxQueue` encodes wait or run in the pool; beyond,
 *   `encode` resolves null at once (the caller sends the plain instance). Also
 *   at once when the encodes ahead of it in its worker would, at that worker's
 *   recent pace, take longer than its deadline: it would time out anyway.
 * - Deadline: every encode resolves by `deadlineMs` (null when it passed); a
 *   job still queued then is dropped, a running one finishes in the worker
 *   and its result is discarded.
 * - null also when the delta would not be smaller than the target (the encoder
 *   gives up early, see `tryEncode`), or when a worker failed.
 *
 * The worker script: `pool-worker.js` next to this file (the package's dist/
 * after `npm run build`). When this file runs as TypeScript (under a loader
 * such as ts-node or tsx), there is no .js next to it: the worker loads
 * `pool-worker.ts`, and since a Worker inherits `process.execArgv`, the same
 * TypeScript loader (`--import`) is registered in the worker.
 *
 * In an app's bundle (esbuild, webpack, ...) this module is part of the app's
 * file: no worker file lies next to it, and `__dirname` names the bundle's
 * directory (CommonJS) or does not exist (ESM). There the worker runs the
 * script of `pool-worker-embedded.js`: pool-worker.ts and the encoder it
 * imports, bundled into one script by esbuild when the package is built
 * (scripts/embed-worker.js) and exported as a string. The app's bundler
 * takes that module in through the static `require` below.
 * test/package/bundle.test.ts runs an ESM and a CommonJS bundle.
 */
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import type { EncodeReply, EncodeRequest, WorkerOptions } from './pool-worker'
import { prepareLazily, type EncodeOptions } from './prepared-source'

/** Options of `createEncoderPool`. */
export interface EncoderPoolOptions {
  /** Worker threads (default: available cores - 1, from 1 to 4). */
  threads?: number
  /** Most encodes waiting or running in the pool; beyond, encode resolves null at once (default 64). */
  maxQueue?: number
  /** Bytes of prepared sources (base + index) each worker keeps (default 64 MiB). */
  cacheBytes?: number
  /** Default deadline of an encode in milliseconds (default 1000). */
  deadlineMs?: number
  /** Options of the encoder, for every base (plain data: they cross to the workers; default {}). */
  encoder?: EncodeOptions
  /**
   * Bases of at least this many bytes are prepared at level 'fast' when `encoder.level` is not
   * set (default: none; see docs/plugins.md for the delta-encoding plugin's choice).
   */
  fastFromBytes?: number
}

/** Options of one `EncoderPool.encode`. */
export interface PoolEncodeOptions {
  /** Resolve null when the delta is not ready after this many milliseconds (default: the pool's). */
  deadlineMs?: number
  /** Which worker: every encode with the same affinity goes to the same worker (default: the base key). */
  affinity?: string
  /**
   * Keep the target in the worker as a future base under this key: when the next version is
   * encoded against it, its bytes are not sent again (its index is built when a target first
   * needs it: a version that differs in a small middle does not).
   */
  targetKey?: string
}

/** Counters of an EncoderPool, from `stats()`. */
export interface EncoderPoolStats {
  threads: number
  /** Encodes waiting for their worker. */
  queued: number
  /** Encodes sent to a worker, not answered yet. */
  running: number
  /** Deltas delivered. */
  encoded: number
  /** Resolved null: the delta would not be smaller than the target. */
  notSmaller: number
  /** Resolved null at once: the queue was full, or its worker's backlog would outlast the deadline. */
  rejected: number
  /** Resolved null: the deadline passed. */
  timedOut: number
  /** Resolved null: a worker failed or the pool closed. */
  failed: number
  /** Prepared sources cached, and their bytes, over all workers (as last reported by them). */
  cachedBases: number
  cacheBytes: number
}

/** A pool of worker threads that encode VCDIFF deltas off the event loop (`createEncoderPool`). */
export interface EncoderPool {
  /** VCDIFF delta of `target` against `base` (identified by `baseKey`), or null (see the file header). */
  encode: (baseKey: string, base: Uint8Array, target: Uint8Array, options?: PoolEncodeOptions) => Promise<Uint8Array | null>
  /** Resolves pending encodes with null and terminates the workers. */
  close: () => Promise<void>
  stats: () => EncoderPoolStats
}

const DEFAULT_MAX_QUEUE = 64
const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
const DEFAULT_DEADLINE_MS = 1000

interface Job {
  id: number
  key: string
  targetKey: string | undefined
  targetLength: number
  base: Uint8Array
  /** The caller's target until the job is sent or queued, then a private copy, or empty once staged. */
  target: Uint8Array
  /** The target in its worker's shared memory, once sent. */
  staged: Uint8Array | null
  deadline: number
  /** When it was last sent to its worker (ms, monotonic). */
  sentAt: number
  timer: NodeJS.Timeout
  resolve: (delta: Uint8Array | null) => void
  settled: boolean
}

/** The compiled worker next to this file, else its TypeScript source (see the file header). */
export function workerScript (dir = __dirname): string {
  const js = join(dir, 'pool-worker.js')
  return existsSync(js) ? js : join(dir, 'pool-worker.ts')
}

/**
 * The directory of this module's own file (pool.js or pool.ts), or null when the module is
 * part of an app's bundle: there `__filename` names the bundle, or is not defined at all.
 */
function ownDirectory (): string | null {
  /* c8 ignore next 2: bundled apps only, run by test/package/bundle.test.ts in child processes */
  if (typeof __filename !== 'string') return null
  const name = basename(__filename)
  return name === 'pool.js' || name === 'pool.ts' ? dirname(__filename) : null
}

/** What a worker runs: the worker file next to this module, else (bundled) the embedded script. */
export type WorkerSource = { file: string } | { code: string }

export function workerSource (dir: string | null = ownDirectory()): WorkerSource {
  // Written by the build beside the compiled pool.js only (dist/): only an app's bundle of the package asks for it.
  return dir === null ? { code: require('./pool-worker-embedded.js') as string } : { file: workerScript(dir) }
}

function checkInt (name: string, v: number | undefined, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`)
  return v
}

/** FNV-1a of the key: the worker a base key is bound to. */
function keyHash (key: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** A fresh copy: its buffer can be transferred without detaching the caller's. */
function copyOf (bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes)
}

const EMPTY = new Uint8Array(0)
/** Smallest shared staging memory of a worker. */
const MIN_STAGE = 64 * 1024

class Slot {
  worker: Worker | null = null
  /** Jobs waiting for this worker, oldest first. */
  readonly queue: Job[] = []
  /** The job sent to the worker, if any (one at a time, so that queued jobs can still be dropped). */
  current: Job | null = null
  /** Base keys this worker holds, as it last told us, with the base length. */
  readonly known = new Map<string, number>()
  cacheBytes = 0
  cached = 0
  /** Memory shared with the worker, where the target of the job sent to it is copied. */
  stage: SharedArrayBuffer | null = null
  /** Recent time from sending a job to its answer (ms, moving average; 0 until one answered). */
  paceMs = 0
  constructor (readonly pool: Pool, readonly index: number) {}
}

class Pool implements EncoderPool {
  private readonly slots: Slot[]
  private readonly maxQueue: number
  private readonly cacheBytes: number
  private readonly deadlineMs: number
  private readonly encoder: WorkerOptions
  private readonly source = workerSource()
  private nextId = 1
  private pending = 0
  private closed = false
  private readonly counts = { encoded: 0, notSmaller: 0, rejected: 0, timedOut: 0, failed: 0 }

  constructor (options: EncoderPoolOptions) {
    const threads = checkInt('threads', options.threads, 1, 256, Math.max(1, Math.min(4, availableParallelism() - 1)))
    this.maxQueue = checkInt('maxQueue', options.maxQueue, 1, 1 << 20, DEFAULT_MAX_QUEUE)
    this.cacheBytes = checkInt('cacheBytes', options.cacheBytes, 0, Number.MAX_SAFE_INTEGER, DEFAULT_CACHE_BYTES)
    this.deadlineMs = checkInt('deadlineMs', options.deadlineMs, 0, 0x7fffffff, DEFAULT_DEADLINE_MS)
    const encoder = { ...options.encoder }
    // A bad encoder option fails here, not in every worker.
    prepareLazily(EMPTY, encoder)
    this.encoder = { encoder, fastFromBytes: checkInt('fastFromBytes', options.fastFromBytes, 0, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) }
    this.slots = Array.from({ length: threads }, (_, i) => new Slot(this, i))
    // Workers start now, so that the first encodes do not wait for them.
    for (const slot of this.slots) slot.worker = this.spawn(slot)
  }

  encode (baseKey: string, base: Uint8Array, target: Uint8Array, options: PoolEncodeOptions = {}): Promise<Uint8Array | null> {
    const deadlineMs = checkInt('deadlineMs', options.deadlineMs, 0, 0x7fffffff, this.deadlineMs)
    if (this.closed) return Promise.resolve(null)
    if (deadlineMs === 0) {
      this.counts.timedOut++
      return Promise.resolve(null)
    }
    if (this.pending >= this.maxQueue) {
      this.counts.rejected++
      return Promise.resolve(null)
    }
    const slot = this.slots[keyHash(options.affinity ?? baseKey) % this.slots.length]
    const ahead = slot.queue.length + (slot.current !== null ? 1 : 0)
    if (ahead * slot.paceMs > deadlineMs) {
      this.counts.rejected++
      return Promise.resolve(null)
    }
    return new Promise((resolve) => {
      const job: Job = {
        id: this.nextId++,
        key: baseKey,
        targetKey: options.targetKey,
        targetLength: target.length,
        base,
        target,
        staged: null,
        deadline: Date.now() + deadlineMs,
        sentAt: 0,
        timer: setTimeout(() => this.expire(slot, job), deadlineMs),
        resolve,
        settled: false
      }
      this.pending++
      slot.queue.push(job)
      this.pump(slot)
      // Waiting behind another job: its own copy, as the caller may reuse its buffer.
      if (job.staged === null) job.target = copyOf(target)
    })
  }

  private settle (job: Job, delta: Uint8Array | null, outcome: keyof Pool['counts']): void {
    if (job.settled) return
    job.settled = true
    clearTimeout(job.timer)
    this.pending--
    this.counts[outcome]++
    job.resolve(delta)
  }

  private expire (slot: Slot, job: Job): void {
    const at = slot.queue.indexOf(job)
    if (at >= 0) slot.queue.splice(at, 1)
    this.settle(job, null, 'timedOut')
  }

  private spawn (slot: Slot): Worker {
    const src = this.source
    const worker = new Worker('code' in src ? src.code : src.file, { eval: 'code' in src, workerData: { cacheBytes: this.cacheBytes, ...this.encoder } })
    worker.unref()
    worker.on('message', (reply: EncodeReply) => this.onReply(slot, reply))
    const fail = (): void => {
      if (slot.worker !== worker) return
      slot.worker = null
      slot.known.clear()
      slot.cacheBytes = 0
      slot.cached = 0
      const job = slot.current
      slot.current = null
      if (job !== null) this.settle(job, null, 'failed')
      this.pump(slot)
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    return worker
  }

  /** Sends the oldest live job to the worker when it is idle. */
  private pump (slot: Slot): void {
    if (this.closed || slot.current !== null) return
    let job = slot.queue.shift()
    while (job !== undefined && job.settled) job = slot.queue.shift()
    if (job === undefined) return
    slot.worker ??= this.spawn(slot)
    slot.current = job
    this.send(slot, job, slot.known.get(job.key) !== job.base.length)
  }

  /** The job's target in the worker's shared memory (copied there once; still there if the job is sent again). */
  private stage (slot: Slot, job: Job): Uint8Array {
    if (job.staged === null) {
      const n = job.target.length
      if (slot.stage === null || slot.stage.byteLength < n) slot.stage = new SharedArrayBuffer(Math.max(MIN_STAGE, n + (n >> 3)))
      job.staged = new Uint8Array(slot.stage, 0, n)
      job.staged.set(job.target)
      job.target = EMPTY
    }
    return job.staged
  }

  private send (slot: Slot, job: Job, withBase: boolean): void {
    const req: EncodeRequest = { id: job.id, key: job.key, target: this.stage(slot, job), deadline: job.deadline }
    job.sentAt = performance.now()
    if (job.targetKey !== undefined) req.targetKey = job.targetKey
    const transfer: ArrayBuffer[] = []
    if (withBase) {
      req.base = copyOf(job.base)
      transfer.push(req.base.buffer as ArrayBuffer)
      slot.known.set(job.key, job.base.length)
    }
    ;(slot.worker as Worker).postMessage(req, transfer)
  }

  private onReply (slot: Slot, reply: EncodeReply): void {
    const answered = slot.current
    // The worker kept the target as a base (unless it says it evicted it, just below).
    if (answered !== null && answered.id === reply.id && reply.missing !== true && answered.targetKey !== undefined && reply.error === undefined) {
      slot.known.set(answered.targetKey, answered.targetLength)
    }
    for (const k of reply.evicted) slot.known.delete(k)
    slot.cacheBytes = reply.cacheBytes
    slot.cached = reply.cached
    const job = slot.current
    /* c8 ignore next */
    if (job === null || job.id !== reply.id) return
    if (reply.missing === true && !job.settled) {
      // The worker evicted the base since: send it again with the base.
      slot.known.delete(job.key)
      this.send(slot, job, true)
      return
    }
    slot.current = null
    const ms = performance.now() - job.sentAt
    slot.paceMs = slot.paceMs === 0 ? ms : 0.75 * slot.paceMs + 0.25 * ms
    if (reply.error !== undefined) this.settle(job, null, 'failed')
    else if (reply.delta === null) this.settle(job, null, Date.now() > job.deadline ? 'timedOut' : 'notSmaller')
    else this.settle(job, reply.delta, 'encoded')
    this.pump(slot)
  }

  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    const workers: Worker[] = []
    for (const slot of this.slots) {
      for (const job of slot.queue) this.settle(job, null, 'failed')
      slot.queue.length = 0
      if (slot.current !== null) this.settle(slot.current, null, 'failed')
      slot.current = null
      if (slot.worker !== null) workers.push(slot.worker)
      slot.worker = null
    }
    await Promise.all(workers.map(async (w) => await w.terminate()))
  }

  stats (): EncoderPoolStats {
    let queued = 0
    let running = 0
    let cachedBases = 0
    let cacheBytes = 0
    for (const s of this.slots) {
      queued += s.queue.filter((j) => !j.settled).length
      if (s.current !== null && !s.current.settled) running++
      cachedBases += s.cached
      cacheBytes += s.cacheBytes
    }
    return { threads: this.slots.length, queued, running, ...this.counts, cachedBases, cacheBytes }
  }
}

/** A pool of encoder workers (see the file header), started at once; a failed worker is replaced on next use. */
export function createEncoderPool (options: EncoderPoolOptions = {}): EncoderPool {
  return new Pool(options)
}
