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
 * The worker script: `pool-worker.js` next to this file (dist/lib/vcdiff/
 * after `npm run build`). When this file runs as TypeScript (under a loader
 * such as ts-node or tsx), there is no .js next to it: the worker loads
 * `pool-worker.ts`, and since a Worker inherits `process.execArgv`, the same
 * TypeScript loader (`--import`) is registered in the worker.
 *
 * In an app's bundle (esbuild, webpack, ...) this module is part of the app's
 * file: no worker file lies next to it, and `__dirname` names the bundle's
 * directory (CommonJS) or does not exist (ESM). There the worker runs
 * EMBEDDED_WORKER (end of this file): pool-worker.ts and the encoder it
 * imports, bundled into one script by esbuild. test/package/bundle.test.ts
 * checks that it is pool-worker.ts as it is now (and rewrites it with
 * UPDATE_EMBEDDED_WORKER=1), and runs an ESM and a CommonJS bundle.
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
  return dir === null ? { code: EMBEDDED_WORKER } : { file: workerScript(dir) }
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

/**
 * pool-worker.ts and the encoder modules it imports as one CommonJS script, for bundled apps
 * (see the file header). Generated by esbuild (bundle, minify, platform node, target node20):
 * do not edit; `npm run test:build && UPDATE_EMBEDDED_WORKER=1 npx tap .test-build/test/package/bundle.test.js` rewrites it.
 */
/* eslint-disable no-template-curly-in-string -- minified code, not a template */
// BEGIN EMBEDDED_WORKER
const EMBEDDED_WORKER = '"use strict";var gt=Object.defineProperty;var Yt=Object.getOwnPropertyDescriptor;var Xt=Object.getOwnPropertyNames;var Kt=Object.prototype.hasOwnProperty;var Gt=(r,t,n,e)=>{if(t&&typeof t=="object"||typeof t=="function")for(let i of Xt(t))!Kt.call(r,i)&&i!==n&&gt(r,i,{get:()=>t[i],enumerable:!(e=Yt(t,i))||e.enumerable});return r};var Zt=r=>Gt(gt({},"__esModule",{value:!0}),r);var ge={};module.exports=Zt(ge);var K=require("node:worker_threads");function Et(r,t){return r[t]|r[t+1]<<8|r[t+2]<<16|r[t+3]<<24}function $(r){let t=0;for(;1<<t<r;)t++;return t}function Q(r){let t=1;for(let n=0;n<r;n++)t=Math.imul(t,16777619);return t}var jt=Buffer.prototype.compare,Wt=128,V=256;function q(r,t,n,e,i,s=0){let o=s,a=Math.min(i,Wt);for(;o<a&&r[t+o]===n[e+o];)o++;if(o<a)return o;for(;o+V<=i&&jt.call(r,n,e+o,e+o+V,t+o,t+o+V)===0;)o+=V;for(;o<i&&r[t+o]===n[e+o];)o++;return o}var wt=Q(4);function k(r,t){return Math.imul(Math.imul(Math.imul(r[t],16777619)+r[t+1]|0,16777619)+r[t+2]|0,16777619)+r[t+3]|0}function J(r,t,n){let e=0;if((n&3)===0){for(let i=t;i<t+n;i+=4)e=Math.imul(e,wt)+k(r,i)|0;return e}for(let i=t;i<t+n;i++)e=Math.imul(e,16777619)+r[i]|0;return e}function ut(r,t,n){let e=new Int32Array(Math.floor((r.length-t)/n)+1);if(n%4===0&&t%4===0&&t<=16){let o=wt,a=t/4;if(n>=t){for(let h=0,f=0;h<e.length;h++,f+=n){let m=k(r,f);for(let b=1;b<a;b++)m=Math.imul(m,o)+k(r,f+4*b)|0;e[h]=m}return e}if(n===4&&a===2){let h=k(r,0);for(let f=0,m=4;f<e.length;f++,m+=4){let b=k(r,m);e[f]=Math.imul(h,o)+b|0,h=b}return e}let l=new Int32Array((e.length-1)*n/4+a);for(let h=0;h<l.length;h++)l[h]=k(r,4*h);let u=n/4;for(let h=0,f=0;h<e.length;h++,f+=u){let m=l[f];for(let b=1;b<a;b++)m=Math.imul(m,o)+l[f+b]|0;e[h]=m}return e}if(n>=t){for(let o=0,a=0;o<e.length;o++,a+=n)e[o]=J(r,a,t);return e}let i=Q(t-1),s=J(r,0,t);for(let o=0,a=0;o<e.length;o++,a+=n)if(e[o]=s,o+1<e.length)for(let l=a;l<a+n;l++)s=Math.imul(s-Math.imul(r[l],i),16777619)+r[l+t]|0;return e}function _t(r,t,n,e,i,s){let o=new Int32Array(Math.floor((s-e*n)/i)+1),a=Q(n),l=n/t;for(let u=0;u<o.length;u++){let h=0;for(let f=0,m=u*i/t;f<e;f++,m+=l)h=Math.imul(h,a)+r[m]|0;o[u]=h}return o}function Ot(){return new Int32Array(4)}function ct(r,t){let n=r-t,e=n>=0?n:r;return e<128?1:e<16384?2:e<2097152?3:4}function It(r,t){return 1<<(r>>>t-5&31)|1<<(r>>>t-10&31)}var Y=class{constructor(t,n,e,i,s,o=0,a=null){this.src=t;this.look=n;this.step=e;this.maxProbes=i;this.start=o;this.rehash=a;let l=s.length,u=Math.min(Math.max($(l+1)-1,0),19);this.head=new Int32Array(1<<u).fill(-1),this.chain=new Int32Array(l),this.shift=32-u,this.outMul=Q(n-1);let h=Math.min(Math.max($(l)+3,10),24);this.filterShift=32-(h-5),this.hashes=a===null?s:null;let{head:f,chain:m,shift:b}=this;for(let d=0;d<l;d++){let c=Math.imul(s[d],-1640531535)>>>b;m[d]=f[c],f[c]=d}}src;look;step;maxProbes;start;rehash;shift;head;chain;outMul;bloom=null;hashes;filterShift;get filter(){if(this.bloom===null){let t=this.hashes??this.rehash(),n=this.filterShift,e=new Int32Array(1<<32-n);for(let i=0;i<t.length;i++){let s=Math.imul(t[i],-2048144789);e[s>>>n]|=It(s,n)}this.bloom=e,this.hashes=null}return this.bloom}get byteLength(){return this.head.byteLength+this.chain.byteLength+(this.bloom?.byteLength??this.hashes?.byteLength??0)}mayHold(t){let n=Math.imul(t,-2048144789),e=It(n,this.filterShift);return((this.bloom??this.filter)[n>>>this.filterShift]&e)===e}},X=class{constructor(t,n,e){this.index=t;this.tgt=n;this.best=e;this.filterAfter=t.src.length>4194304?t.chain.length>>4:0}index;tgt;best;h=0;at=-1;verified=0;unfiltered=0;filterAfter;passes(t){return this.unfiltered<this.filterAfter?(this.unfiltered++,!0):this.index.mayHold(t)}lookup(t,n,e,i,s,o=0){let{index:a,tgt:l,best:u}=this;if(this.at!==t){if(this.at>=0&&this.at<t&&2*(t-this.at)<a.look){let S=a.outMul,y=a.look,A=this.h;for(let x=this.at;x<t;x++)A=Math.imul(A-Math.imul(l[x],S),16777619)+l[x+y]|0;this.h=A}else this.h=J(l,t,a.look);this.at=t}let h=this.h;if(!this.passes(h))return!1;let f=a.src,m=a.chain,b=a.step,d=a.start,c=f.length,M=a.head[Math.imul(h,-1640531535)>>>a.shift],p=s,g=p*2,w=!1,_=Et(l,t),E=n-t;for(;M>=0&&g-- >0;){let S=d+M*b;if(M=m[M],S===i||Et(f,S)!==_)continue;this.verified++;let y=q(l,t,f,S,Math.min(E,c-S),4);if(y>=4){let A=0;for(;t-A>e&&S-A>0&&l[t-A-1]===f[S-A-1];)A++;let x=ct(S-A,o);if(y+A-x>u[0]-u[3]&&(u[0]=y+A,u[1]=t-A,u[2]=S-A,u[3]=x,w=!0,y>=256))break}if(--p===0)break}return w}nextPass(t,n){if(t+1>=n)return n;let{index:e,tgt:i}=this,s=e.look,o=e.outMul,a=this.at===t?this.h:J(i,t,s),l=!1;for(;!l&&t+1<n;)a=Math.imul(a-Math.imul(i[t],o),16777619)+i[t+s]|0,t++,l=this.passes(a);return this.h=a,this.at=t,l?t:n}roll(t,n){let e=this.index.look;if(this.at===t&&t+e<n){let i=this.tgt;this.h=Math.imul(this.h-Math.imul(i[t],this.index.outMul),16777619)+i[t+e]|0,this.at=t+1}}};function I(r){return r<128?1:r<16384?2:r<2097152?3:r<268435456?4:5}var T=class{buf;pos=0;constructor(t){this.buf=new Uint8Array(Math.max(t,16))}ensure(t){if(this.pos+t<=this.buf.length)return;let n=this.buf.length*2;for(;n<this.pos+t;)n*=2;let e=new Uint8Array(n);e.set(this.buf.subarray(0,this.pos)),this.buf=e}byte(t){this.pos>=this.buf.length&&this.ensure(1),this.buf[this.pos++]=t}int(t){if(t<128){this.byte(t);return}let n=I(t);this.ensure(n);let e=this.buf,i=this.pos+n-1;for(e[i]=t&127,t=Math.floor(t/128);i>this.pos;)e[--i]=t&127|128,t=Math.floor(t/128);this.pos+=n}bytes(t,n,e){this.ensure(e-n),this.buf.set(t.subarray(n,e),this.pos),this.pos+=e-n}result(){return this.buf.slice(0,this.pos)}};var P=64,$t=64,Jt=1,Qt=36,qt=4,te=8,Ut=8,Lt=16*1024,ee=1/8,ne=32*1024;function Pt(r,t,n){return t<n&&r<P?r-(n-t):r}var tt=class{constructor(t,n,e,i,s,o,a,l=!0){this.src=t;this.tgt=n;this.targetMatches=s;this.limit=a;this.maxLazy=l?qt:0,this.long=e===null?null:new X(e,n,this.best),this.short=i===null?null:new X(i,n,this.best);let u=Math.min(Math.max($(Math.min(n.length,o)),10),16);this.tTable=new Int32Array(1<<u).fill(-1),this.tShift=32-u}src;tgt;targetMatches;limit;best=Ot();long;short;tTable;tShift;estimate=0;maxLazy;scan(t,n,e,i=t){let{best:s,long:o,short:a}=this,l=o!==null?n-o.index.look:-1,{limit:u,maxLazy:h}=this,f=this.estimate,m=f,b=u===1/0?2147483647:t+Lt,d=t,c=t,M=t,p=0,g=0,w=0;for(;d<=n-4;){if(d>=b){let x=m+(d-c),L=d-t;if(x>=u||L>=ne&&L>=(n-t)*ee&&x-f+(x-f)/L*(n-d)+f>=u)return this.estimate=x,!1;b=d+Lt}let _=Math.max(M,c-$t),E=this.probe(d,i,n,_,p,g,w);for(let x=0;x<h&&s[0]>=4&&s[0]<Qt&&d+1<=n-4;x++){let L=s[0],v=s[1],G=s[2],Z=s[3],j=Pt(L,v,c)-Z;if(j<3)break;let z=this.probe(d+1,i,n,_,p,g,w);if(s[0]>=4&&Pt(s[0],s[1],c)-s[3]>j){E=z,d++;continue}s[0]=L,s[1]=v,s[2]=G,s[3]=Z;break}let S=s[3];if(s[0]>=te&&s[0]<P&&o!==null){let x=Math.min(s[1]+s[0],l+1),L=s[0],v=s[1],G=s[2],Z=s[3],j=Math.min(Jt,o.index.maxProbes);for(let z=o.nextPass(d,x);z<x;z=o.nextPass(z,x))if(o.lookup(z,n,_,-1,j,w)){let F=Math.max(v,c),W=s[1]-F,St=W>=4&&W>=S+3;if(s[0]>=L+Ut+(St||W<=0?0:Ut*W)){St&&(e.push(F,s[1]-F,G+F-v,E),m+=F-c+1+S,c=s[1]),E=1,S=s[3];break}s[0]=L,s[1]=v,s[2]=G,s[3]=Z}}let y=s[0],A=s[1];if(A<c&&y<P&&(s[2]+=c-A,y-=c-A,A=c),y>=4&&y>=S+3){if(A<c){for(;e.count>0&&e.tPos[e.count-1]>=A;)e.count--;let x=e.count-1;x>=0&&e.tPos[x]+e.len[x]>A&&(e.len[x]=A-e.tPos[x],e.len[x]<4&&e.count--)}else m+=A-c;e.push(A,y,s[2],E),m+=1+S,y>=P&&(M=A+y),d=A+y,c=d,E===1&&(p=s[2]-A,w=s[2]+y,y>=P&&(g=p));continue}o!==null&&o.roll(d,n),a!==null&&a.roll(d,n),d++}return this.estimate=m+(n-c),this.estimate<u}probe(t,n,e,i,s,o,a){let{src:l,tgt:u,best:h,long:f,short:m}=this,b=l.length,d=f!==null?e-f.index.look:-1,c=m!==null?e-m.index.look:-1,M=this.targetMatches;h[0]=0,h[3]=0;let p=0,g=0,w=t+s;for(let _=0,E=w;_<2&&!(_===1&&(o===s||h[0]>=P));_++,E=t+o)if(E>=0&&E<b&&l[E]===u[t]){let S=q(u,t,l,E,Math.min(e-t,b-E),1);if(S>=4){let y=0;for(;t-y>i&&E-y>0&&u[t-y-1]===l[E-y-1];)y++;S+y>h[0]&&(h[0]=S+y,h[1]=t-y,h[2]=E-y,h[3]=ct(E-y,a),p=1)}}return t<=d&&h[0]<P&&f.lookup(t,e,i,w,f.index.maxProbes,a)&&(p=1),t<=c&&h[0]<P&&m.lookup(t,e,i,w,m.index.maxProbes,a)&&(p=1),p===1&&(g=h[3]),M&&this.probeTarget(t,n,e,i,g)&&(p=0),p}probeTarget(t,n,e,i,s){let{tgt:o,best:a,tTable:l,tShift:u}=this,h=o[t]|o[t+1]<<8|o[t+2]<<16|o[t+3]<<24,f=Math.imul(h,-1640531535)>>>u,m=l[f];if(l[f]=t,m<n||m>=t||a[0]>=P)return!1;let b=q(o,t,o,m,e-t);if(b<4)return!1;let d=0;for(;t-d>i&&m-d>n&&o[t-d-1]===o[m-d-1];)d++;let c=I(t-m);return b+d-c<=a[0]-s?!1:(a[0]=b+d,a[1]=t-d,a[2]=m-d,a[3]=c,!0)}};function re(){let r={type1:new Uint8Array(256),size1:new Uint8Array(256),mode1:new Uint8Array(256),type2:new Uint8Array(256),size2:new Uint8Array(256),mode2:new Uint8Array(256)},t=0;r.type1[t++]=2;for(let n=0;n<=17;n++)r.type1[t]=1,r.size1[t++]=n;for(let n=0;n<9;n++)for(let e=0;e<=18;e=e===0?4:e+1)r.type1[t]=3,r.size1[t]=e,r.mode1[t++]=n;for(let n=0;n<9;n++){let e=n<6?6:4;for(let i=1;i<=4;i++)for(let s=4;s<=e;s++)r.type1[t]=1,r.size1[t]=i,r.type2[t]=3,r.size2[t]=s,r.mode2[t++]=n}for(let n=0;n<9;n++)r.type1[t]=3,r.size1[t]=4,r.mode1[t]=n,r.type2[t]=1,r.size2[t++]=1;if(t!==256)throw new Error("default code table does not have 256 entries");return r}var se=re(),ft=17,dt=18,mt=4,et=new Int16Array(ft+1).fill(-1),nt=new Int16Array(171).fill(-1),bt=new Int16Array(855).fill(-1),pt=new Int16Array(855).fill(-1),oe=-1;{let r=se;for(let t=0;t<256;t++)r.type2[t]===0?r.type1[t]===1?et[r.size1[t]]=t:r.type1[t]===3?nt[r.mode1[t]*19+r.size1[t]]=t:oe=t:r.type1[t]===1?bt[(r.mode2[t]*5+r.size1[t])*19+r.size2[t]]=t:pt[(r.mode1[t]*19+r.size1[t])*5+r.size2[t]]=t}var rt=3*256,st=class{near=new Int32Array(4);same=new Int32Array(rt);nextSlot=0;mode=0;value=0;reset(){this.near.fill(0),this.same.fill(0),this.nextSlot=0}encode(t,n){let e=this.near,i=0,s=t,o=I(t),a=I(n-t);a<o&&(i=1,s=n-t,o=a);for(let u=0;u<4;u++){let h=t-e[u];h>=0&&(a=I(h),a<o&&(i=2+u,s=h,o=a))}let l=t%rt;return o>1&&this.same[l]===t&&(i=6+(l>>8),s=l&255,o=1),this.update(t),this.mode=i,this.value=s,o}cost(t,n){let e=Math.min(I(t),I(n-t));if(e===1||this.same[t%rt]===t)return 1;for(let i=0;i<4;i++){let s=t-this.near[i];s>=0&&(e=Math.min(e,I(s)))}return e}update(t){this.near[this.nextSlot]=t,this.nextSlot=(this.nextSlot+1)%4,this.same[t%rt]=t}};function Tt(r){return r>=6}var Ct=[214,195,196,0,0],ae=1,ot=class{count=0;tPos=new Int32Array(256);len=new Int32Array(256);addr=new Int32Array(256);fromSource=new Uint8Array(256);push(t,n,e,i){if(this.count===this.tPos.length){let o=this.count*2,a=(l,u)=>(u.set(l),u);this.tPos=a(this.tPos,new Int32Array(o)),this.len=a(this.len,new Int32Array(o)),this.addr=a(this.addr,new Int32Array(o)),this.fromSource=a(this.fromSource,new Uint8Array(o))}let s=this.count++;this.tPos[s]=t,this.len[s]=n,this.addr[s]=e,this.fromSource[s]=i}},it=class{data=new T(1024);inst=new T(1024);addr=new T(1024);cache=new st;lastOpPos=-1;lastType=0;lastSize=0;lastMode=0;reset(){this.data.pos=0,this.inst.pos=0,this.addr.pos=0,this.cache.reset(),this.lastType=0}add(t,n,e){if(this.data.bytes(t,n,n+e),this.lastType===3&&e<=mt){let i=pt[(this.lastMode*19+this.lastSize)*5+e];if(i>=0){this.inst.buf[this.lastOpPos]=i,this.lastType=0;return}}e<=ft?(this.lastOpPos=this.inst.pos,this.inst.byte(et[e]),this.lastType=1,this.lastSize=e):(this.inst.byte(et[0]),this.inst.int(e),this.lastType=0)}copy(t,n,e){let i=this.cache;i.encode(n,e);let s=i.mode;if(Tt(s)?this.addr.byte(i.value):this.addr.int(i.value),this.lastType===1&&this.lastSize<=mt&&t<=dt){let a=bt[(s*5+this.lastSize)*19+t];if(a>=0){this.inst.buf[this.lastOpPos]=a,this.lastType=0;return}}let o=t<=dt?nt[s*19+t]:-1;o>=0?(this.lastOpPos=this.inst.pos,this.inst.byte(o),this.lastType=3,this.lastSize=t,this.lastMode=s):(this.inst.byte(nt[s*19]),this.inst.int(t),this.lastType=0)}write(t,n,e,i,s){this.reset();let o=2147483647,a=0;for(let c=0;c<s.count;c++)if(s.fromSource[c]===1){let M=s.addr[c];M<o&&(o=M),M+s.len[c]>a&&(a=M+s.len[c])}let l=a>o?a-o:0,u=e;for(let c=0;c<s.count;c++){let M=s.tPos[c];M>u&&this.add(n,u,M-u);let p=s.len[c],g=s.fromSource[c]===1?s.addr[c]-o:l+s.addr[c]-e;this.copy(p,g,l+M-e),u=M+p}i>u&&this.add(n,u,i-u);let h=i-e,f=this.data.pos,m=this.inst.pos,b=this.addr.pos,d=I(h)+1+I(f)+I(m)+I(b)+f+m+b;t.ensure(32+d),l>0?(t.byte(ae),t.int(l),t.int(o)):t.byte(0),t.int(d),t.int(h),t.byte(0),t.int(f),t.int(m),t.int(b),t.bytes(this.data.buf,0,f),t.bytes(this.inst.buf,0,m),t.bytes(this.addr.buf,0,b)}};var kt=8*1024*1024,R=32,le=4*1024*1024,Ht=512*1024,vt=64,he=4*1024,ue=64*1024,ce=1/4,D=64*1024,C=256,fe=4*1024*1024,de=16,me=new Set(["fast","default"]),lt=Buffer.prototype.compare;function at(r,t,n,e,i){if(t===void 0)return i;if(!Number.isInteger(t)||t<n||t>e)throw new RangeError(`${r} must be an integer from ${n} to ${e}`);return t}function zt(r){at("windowSize",r.windowSize,1,64*1024*1024,kt)}function be(r,t){let n=Math.min(r.length,t.length),e=0;for(;e+D<=n&&lt.call(r,t,e,e+D,e,e+D)===0;)e+=D;for(;e+C<=n&&lt.call(r,t,e,e+C,e,e+C)===0;)e+=C;for(;e<n&&r[e]===t[e];)e++;return e}function pe(r,t,n){let e=r.length,i=t.length,s=Math.min(n,e,i),o=0;for(;o+D<=s&&lt.call(r,t,i-o-D,i-o,e-o-D,e-o)===0;)o+=D;for(;o+C<=s&&lt.call(r,t,i-o-C,i-o,e-o-C,e-o)===0;)o+=C;for(;o<s&&r[e-o-1]===t[i-o-1];)o++;return o}var ye={long:null,short:null},yt=class{constructor(t,n,e){this.source=t;this.options=n;if(n.level!==void 0&&!me.has(n.level))throw new RangeError("level must be \'fast\' or \'default\'");this.fast=n.level==="fast"&&t.length>Ht,this.look=at("hashLength",n.hashLength,4,64,8),at("sourceStep",n.sourceStep,1,64,2),this.maxProbes=at("maxProbes",n.maxProbes,1,1024,this.fast?1:4),zt(n),e&&this.wholeIndexes()}source;options;whole=null;look;maxProbes;fast;get indexBytes(){let t=this.whole;return t===null?0:(t.long?.byteLength??0)+(t.short?.byteLength??0)}wholeIndexes(){return this.whole??=this.build(0,this.source.length),this.whole}build(t,n){let e=this.source,i=n-t,s=t===0&&n===e.length?e:e.subarray(t,n),o=i>Ht,a=this.look,l=this.options.sourceStep??(this.fast&&i>fe?de:o?4:2),u=this.maxProbes,h=()=>ut(s,a,l),f=i>=a?h():null,m=e.length>le?h:null,b=f!==null?new Y(e,a,l,u,f,t,m):null,d=null;if(i>=R){let c=o?R:R/2,M=f!==null&&R%a===0&&a%l===0&&c%l===0?_t(f,l,a,R/a,c,i):ut(s,R,c);d=new Y(e,R,c,u,M,t)}return{long:d,short:b}}indexesFor(t,n,e,i){if(n-t<4)return ye;let s=this.source.length;if(i){let o=Math.min(Math.max(4*(n-t),he),ue),a=Math.max(0,t-o)&-R,l=Math.min(s,e+o);if(l-a<=s*ce)return this.build(a,l)}return this.wholeIndexes()}encode(t,n={}){return this.run(t,n,1/0)}tryEncode(t,n={}){let e=n.maxSize??t.length;if(typeof e!="number"||Number.isNaN(e)||e<0)throw new RangeError("maxSize must be a non-negative number");return this.run(t,n,e)}run(t,n,e){let i=this.source,s=n.windowSize??this.options.windowSize??kt,o=n.targetMatches??this.options.targetMatches??!0;if(zt(n),i.length>2147483647-s)throw new RangeError("source is too large");let a=be(i,t),l=pe(i,t,Math.min(i.length,t.length)-a);a<vt&&(a=0),l<vt&&(l=0);let u=t.length-l,h=t.length-i.length,{long:f,short:m}=this.indexesFor(a,u,i.length-l,a+l>0),b=new T((Math.min(t.length,1<<20)>>2)+64);for(let g of Ct)b.byte(g);let d=new tt(i,t,f,m,o,s,e,!this.fast),c=new ot,M=new it,p=0;do{let g=Math.min(p+s,t.length);c.count=0;let w=Math.min(Math.max(p,a),g),_=Math.max(w,Math.min(g,u));if(w>p&&(c.push(p,w-p,p,1),d.estimate+=1+I(p)),_>w&&!d.scan(w,_,c,p)||(g>_&&(c.push(_,g-_,_-h,1),d.estimate+=1+I(_-h)),M.write(b,t,p,g,c),b.pos>=e))return null;p=g}while(p<t.length);return b.result()}};function Nt(r,t={}){return new yt(r,t,!1)}var At=K.parentPort;if(At===null)throw new Error("pool-worker.js runs in a worker thread (see pool.ts)");var Bt=K.workerData.cacheBytes,{encoder:xt,fastFromBytes:Ae}=K.workerData,xe={...xt,level:"fast"},O=new Map,H=0,ht=[];function Mt(r,t){let n=O.get(r);if(n!==void 0&&(O.delete(r),H-=n.bytes),t.bytes>Bt){ht.push(r);return}for(let[e,i]of O){if(H+t.bytes<=Bt)break;O.delete(e),H-=i.bytes,ht.push(e)}O.set(r,t),H+=t.bytes}function Ft(r){let t=xt.level===void 0&&r.length>=Ae?xe:xt;return{prepared:Nt(r,t),bytes:r.length}}function Me(r,t){let n=t.prepared.source.length+t.prepared.indexBytes;n!==t.bytes&&(O.delete(r),H-=t.bytes,t.bytes=n,Mt(r,t))}function Se(r){let t=O.get(r.key);if(r.base!==void 0)t=Ft(r.base),Mt(r.key,t);else{if(t===void 0)return{id:r.id,delta:null,missing:!0,evicted:[],cacheBytes:H,cached:O.size};O.delete(r.key),O.set(r.key,t)}let n=r.targetKey!==void 0&&r.targetKey!==r.key,e=n?new Uint8Array(r.target):r.target,i=Date.now()>r.deadline?null:t.prepared.tryEncode(e);return O.get(r.key)===t&&Me(r.key,t),n&&Mt(r.targetKey,Ft(e)),{id:r.id,delta:i,evicted:[],cacheBytes:H,cached:O.size}}At.on("message",r=>{let t;try{t=Se(r)}catch(e){t={id:r.id,delta:null,error:String(e),evicted:[],cacheBytes:H,cached:O.size}}t.evicted=ht,ht=[];let n=t.delta!==null?[t.delta.buffer]:[];At.postMessage(t,n)});\n'
// END EMBEDDED_WORKER
/* eslint-enable no-template-curly-in-string */
