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
import type { EncodeReply, EncodeRequest } from './pool-worker'

export interface EncoderPoolOptions {
  /** Worker threads (default: available cores - 1, from 1 to 4). */
  threads?: number
  /** Most encodes waiting or running in the pool; beyond, encode resolves null at once (default 64). */
  maxQueue?: number
  /** Bytes of prepared sources (base + index) each worker keeps (default 64 MiB). */
  cacheBytes?: number
  /** Default deadline of an encode in milliseconds (default 1000). */
  deadlineMs?: number
}

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
    const worker = new Worker('code' in src ? src.code : src.file, { eval: 'code' in src, workerData: { cacheBytes: this.cacheBytes } })
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
const EMBEDDED_WORKER = '"use strict";var Mt=Object.defineProperty;var Nt=Object.getOwnPropertyDescriptor;var Bt=Object.getOwnPropertyNames;var Yt=Object.prototype.hasOwnProperty;var Ft=(r,t,n,e)=>{if(t&&typeof t=="object"||typeof t=="function")for(let i of Bt(t))!Yt.call(r,i)&&i!==n&&Mt(r,i,{get:()=>t[i],enumerable:!(e=Nt(t,i))||e.enumerable});return r};var Xt=r=>Ft(Mt({},"__esModule",{value:!0}),r);var be={};module.exports=Xt(be);var lt=require("node:worker_threads");function St(r,t){return r[t]|r[t+1]<<8|r[t+2]<<16|r[t+3]<<24}function W(r){let t=0;for(;1<<t<r;)t++;return t}function $(r){let t=1;for(let n=0;n<r;n++)t=Math.imul(t,16777619);return t}var Kt=Buffer.prototype.compare,Gt=128,j=256;function J(r,t,n,e,i,s=0){let o=s,a=Math.min(i,Gt);for(;o<a&&r[t+o]===n[e+o];)o++;if(o<a)return o;for(;o+j<=i&&Kt.call(r,n,e+o,e+o+j,t+o,t+o+j)===0;)o+=j;for(;o<i&&r[t+o]===n[e+o];)o++;return o}var It=$(4);function k(r,t){return Math.imul(Math.imul(Math.imul(r[t],16777619)+r[t+1]|0,16777619)+r[t+2]|0,16777619)+r[t+3]|0}function V(r,t,n){let e=0;if((n&3)===0){for(let i=t;i<t+n;i+=4)e=Math.imul(e,It)+k(r,i)|0;return e}for(let i=t;i<t+n;i++)e=Math.imul(e,16777619)+r[i]|0;return e}function ht(r,t,n){let e=new Int32Array(Math.floor((r.length-t)/n)+1);if(n%4===0&&t%4===0&&t<=16){let o=It,a=t/4;if(n>=t){for(let h=0,f=0;h<e.length;h++,f+=n){let m=k(r,f);for(let u=1;u<a;u++)m=Math.imul(m,o)+k(r,f+4*u)|0;e[h]=m}return e}if(n===4&&a===2){let h=k(r,0);for(let f=0,m=4;f<e.length;f++,m+=4){let u=k(r,m);e[f]=Math.imul(h,o)+u|0,h=u}return e}let l=new Int32Array((e.length-1)*n/4+a);for(let h=0;h<l.length;h++)l[h]=k(r,4*h);let c=n/4;for(let h=0,f=0;h<e.length;h++,f+=c){let m=l[f];for(let u=1;u<a;u++)m=Math.imul(m,o)+l[f+u]|0;e[h]=m}return e}if(n>=t){for(let o=0,a=0;o<e.length;o++,a+=n)e[o]=V(r,a,t);return e}let i=$(t-1),s=V(r,0,t);for(let o=0,a=0;o<e.length;o++,a+=n)if(e[o]=s,o+1<e.length)for(let l=a;l<a+n;l++)s=Math.imul(s-Math.imul(r[l],i),16777619)+r[l+t]|0;return e}function Et(r,t,n,e,i,s){let o=new Int32Array(Math.floor((s-e*n)/i)+1),a=$(n),l=n/t;for(let c=0;c<o.length;c++){let h=0;for(let f=0,m=c*i/t;f<e;f++,m+=l)h=Math.imul(h,a)+r[m]|0;o[c]=h}return o}function wt(){return new Int32Array(4)}function ut(r,t){let n=r-t,e=n>=0?n:r;return e<128?1:e<16384?2:e<2097152?3:4}function gt(r,t){return 1<<(r>>>t-5&31)|1<<(r>>>t-10&31)}var Y=class{constructor(t,n,e,i,s,o=0,a=null){this.src=t;this.look=n;this.step=e;this.maxProbes=i;this.start=o;this.rehash=a;let l=s.length,c=Math.min(Math.max(W(l+1)-1,0),19);this.head=new Int32Array(1<<c).fill(-1),this.chain=new Int32Array(l),this.shift=32-c,this.outMul=$(n-1);let h=Math.min(Math.max(W(l)+3,10),24);this.filterShift=32-(h-5),this.hashes=a===null?s:null;let{head:f,chain:m,shift:u}=this;for(let d=0;d<l;d++){let b=Math.imul(s[d],-1640531535)>>>u;m[d]=f[b],f[b]=d}}src;look;step;maxProbes;start;rehash;shift;head;chain;outMul;bloom=null;hashes;filterShift;get filter(){if(this.bloom===null){let t=this.hashes??this.rehash(),n=this.filterShift,e=new Int32Array(1<<32-n);for(let i=0;i<t.length;i++){let s=Math.imul(t[i],-2048144789);e[s>>>n]|=gt(s,n)}this.bloom=e,this.hashes=null}return this.bloom}get byteLength(){return this.head.byteLength+this.chain.byteLength+(this.bloom?.byteLength??this.hashes?.byteLength??0)}mayHold(t){let n=Math.imul(t,-2048144789),e=gt(n,this.filterShift);return((this.bloom??this.filter)[n>>>this.filterShift]&e)===e}},F=class{constructor(t,n,e){this.index=t;this.tgt=n;this.best=e;this.filterAfter=t.src.length>4194304?t.chain.length>>4:0}index;tgt;best;h=0;at=-1;verified=0;unfiltered=0;filterAfter;passes(t){return this.unfiltered<this.filterAfter?(this.unfiltered++,!0):this.index.mayHold(t)}lookup(t,n,e,i,s,o=0){let{index:a,tgt:l,best:c}=this;if(this.at!==t){if(this.at>=0&&this.at<t&&2*(t-this.at)<a.look){let M=a.outMul,y=a.look,p=this.h;for(let w=this.at;w<t;w++)p=Math.imul(p-Math.imul(l[w],M),16777619)+l[w+y]|0;this.h=p}else this.h=V(l,t,a.look);this.at=t}let h=this.h;if(!this.passes(h))return!1;let f=a.src,m=a.chain,u=a.step,d=a.start,b=f.length,x=a.head[Math.imul(h,-1640531535)>>>a.shift],A=s,S=A*2,_=!1,g=St(l,t),I=n-t;for(;x>=0&&S-- >0;){let M=d+x*u;if(x=m[x],M===i||St(f,M)!==g)continue;this.verified++;let y=J(l,t,f,M,Math.min(I,b-M),4);if(y>=4){let p=0;for(;t-p>e&&M-p>0&&l[t-p-1]===f[M-p-1];)p++;let w=ut(M-p,o);if(y+p-w>c[0]-c[3]&&(c[0]=y+p,c[1]=t-p,c[2]=M-p,c[3]=w,_=!0,y>=256))break}if(--A===0)break}return _}nextPass(t,n){if(t+1>=n)return n;let{index:e,tgt:i}=this,s=e.look,o=e.outMul,a=this.at===t?this.h:V(i,t,s),l=!1;for(;!l&&t+1<n;)a=Math.imul(a-Math.imul(i[t],o),16777619)+i[t+s]|0,t++,l=this.passes(a);return this.h=a,this.at=t,l?t:n}roll(t,n){let e=this.index.look;if(this.at===t&&t+e<n){let i=this.tgt;this.h=Math.imul(this.h-Math.imul(i[t],this.index.outMul),16777619)+i[t+e]|0,this.at=t+1}}};function E(r){return r<128?1:r<16384?2:r<2097152?3:r<268435456?4:5}var L=class{buf;pos=0;constructor(t){this.buf=new Uint8Array(Math.max(t,16))}ensure(t){if(this.pos+t<=this.buf.length)return;let n=this.buf.length*2;for(;n<this.pos+t;)n*=2;let e=new Uint8Array(n);e.set(this.buf.subarray(0,this.pos)),this.buf=e}byte(t){this.pos>=this.buf.length&&this.ensure(1),this.buf[this.pos++]=t}int(t){if(t<128){this.byte(t);return}let n=E(t);this.ensure(n);let e=this.buf,i=this.pos+n-1;for(e[i]=t&127,t=Math.floor(t/128);i>this.pos;)e[--i]=t&127|128,t=Math.floor(t/128);this.pos+=n}bytes(t,n,e){this.ensure(e-n),this.buf.set(t.subarray(n,e),this.pos),this.pos+=e-n}result(){return this.buf.slice(0,this.pos)}};var P=64,jt=64,Wt=1,Vt=36,$t=4,Jt=8,_t=8,Ot=16*1024,Qt=1/8,qt=32*1024;function Ut(r,t,n){return t<n&&r<P?r-(n-t):r}var Q=class{constructor(t,n,e,i,s,o,a){this.src=t;this.tgt=n;this.targetMatches=s;this.limit=a;this.long=e===null?null:new F(e,n,this.best),this.short=i===null?null:new F(i,n,this.best);let l=Math.min(Math.max(W(Math.min(n.length,o)),10),16);this.tTable=new Int32Array(1<<l).fill(-1),this.tShift=32-l}src;tgt;targetMatches;limit;best=wt();long;short;tTable;tShift;estimate=0;scan(t,n,e,i=t){let{best:s,long:o,short:a}=this,l=o!==null?n-o.index.look:-1,c=this.limit,h=this.estimate,f=h,m=c===1/0?2147483647:t+Ot,u=t,d=t,b=t,x=0,A=0,S=0;for(;u<=n-4;){if(u>=m){let p=f+(u-d),w=u-t;if(p>=c||w>=qt&&w>=(n-t)*Qt&&p-h+(p-h)/w*(n-u)+h>=c)return this.estimate=p,!1;m=u+Ot}let _=Math.max(b,d-jt),g=this.probe(u,i,n,_,x,A,S);for(let p=0;p<$t&&s[0]>=4&&s[0]<Vt&&u+1<=n-4;p++){let w=s[0],C=s[1],X=s[2],K=s[3],G=Ut(w,C,d)-K;if(G<3)break;let z=this.probe(u+1,i,n,_,x,A,S);if(s[0]>=4&&Ut(s[0],s[1],d)-s[3]>G){g=z,u++;continue}s[0]=w,s[1]=C,s[2]=X,s[3]=K;break}let I=s[3];if(s[0]>=Jt&&s[0]<P&&o!==null){let p=Math.min(s[1]+s[0],l+1),w=s[0],C=s[1],X=s[2],K=s[3],G=Math.min(Wt,o.index.maxProbes);for(let z=o.nextPass(u,p);z<p;z=o.nextPass(z,p))if(o.lookup(z,n,_,-1,G,S)){let B=Math.max(C,d),Z=s[1]-B,xt=Z>=4&&Z>=I+3;if(s[0]>=w+_t+(xt||Z<=0?0:_t*Z)){xt&&(e.push(B,s[1]-B,X+B-C,g),f+=B-d+1+I,d=s[1]),g=1,I=s[3];break}s[0]=w,s[1]=C,s[2]=X,s[3]=K}}let M=s[0],y=s[1];if(y<d&&M<P&&(s[2]+=d-y,M-=d-y,y=d),M>=4&&M>=I+3){if(y<d){for(;e.count>0&&e.tPos[e.count-1]>=y;)e.count--;let p=e.count-1;p>=0&&e.tPos[p]+e.len[p]>y&&(e.len[p]=y-e.tPos[p],e.len[p]<4&&e.count--)}else f+=y-d;e.push(y,M,s[2],g),f+=1+I,M>=P&&(b=y+M),u=y+M,d=u,g===1&&(x=s[2]-y,S=s[2]+M,M>=P&&(A=x));continue}o!==null&&o.roll(u,n),a!==null&&a.roll(u,n),u++}return this.estimate=f+(n-d),this.estimate<c}probe(t,n,e,i,s,o,a){let{src:l,tgt:c,best:h,long:f,short:m}=this,u=l.length,d=f!==null?e-f.index.look:-1,b=m!==null?e-m.index.look:-1,x=this.targetMatches;h[0]=0,h[3]=0;let A=0,S=0,_=t+s;for(let g=0,I=_;g<2&&!(g===1&&(o===s||h[0]>=P));g++,I=t+o)if(I>=0&&I<u&&l[I]===c[t]){let M=J(c,t,l,I,Math.min(e-t,u-I),1);if(M>=4){let y=0;for(;t-y>i&&I-y>0&&c[t-y-1]===l[I-y-1];)y++;M+y>h[0]&&(h[0]=M+y,h[1]=t-y,h[2]=I-y,h[3]=ut(I-y,a),A=1)}}return t<=d&&h[0]<P&&f.lookup(t,e,i,_,f.index.maxProbes,a)&&(A=1),t<=b&&h[0]<P&&m.lookup(t,e,i,_,m.index.maxProbes,a)&&(A=1),A===1&&(S=h[3]),x&&this.probeTarget(t,n,e,i,S)&&(A=0),A}probeTarget(t,n,e,i,s){let{tgt:o,best:a,tTable:l,tShift:c}=this,h=o[t]|o[t+1]<<8|o[t+2]<<16|o[t+3]<<24,f=Math.imul(h,-1640531535)>>>c,m=l[f];if(l[f]=t,m<n||m>=t||a[0]>=P)return!1;let u=J(o,t,o,m,e-t);if(u<4)return!1;let d=0;for(;t-d>i&&m-d>n&&o[t-d-1]===o[m-d-1];)d++;let b=E(t-m);return u+d-b<=a[0]-s?!1:(a[0]=u+d,a[1]=t-d,a[2]=m-d,a[3]=b,!0)}};function te(){let r={type1:new Uint8Array(256),size1:new Uint8Array(256),mode1:new Uint8Array(256),type2:new Uint8Array(256),size2:new Uint8Array(256),mode2:new Uint8Array(256)},t=0;r.type1[t++]=2;for(let n=0;n<=17;n++)r.type1[t]=1,r.size1[t++]=n;for(let n=0;n<9;n++)for(let e=0;e<=18;e=e===0?4:e+1)r.type1[t]=3,r.size1[t]=e,r.mode1[t++]=n;for(let n=0;n<9;n++){let e=n<6?6:4;for(let i=1;i<=4;i++)for(let s=4;s<=e;s++)r.type1[t]=1,r.size1[t]=i,r.type2[t]=3,r.size2[t]=s,r.mode2[t++]=n}for(let n=0;n<9;n++)r.type1[t]=3,r.size1[t]=4,r.mode1[t]=n,r.type2[t]=1,r.size2[t++]=1;if(t!==256)throw new Error("default code table does not have 256 entries");return r}var ee=te(),ct=17,ft=18,dt=4,q=new Int16Array(ct+1).fill(-1),tt=new Int16Array(171).fill(-1),mt=new Int16Array(855).fill(-1),bt=new Int16Array(855).fill(-1),ne=-1;{let r=ee;for(let t=0;t<256;t++)r.type2[t]===0?r.type1[t]===1?q[r.size1[t]]=t:r.type1[t]===3?tt[r.mode1[t]*19+r.size1[t]]=t:ne=t:r.type1[t]===1?mt[(r.mode2[t]*5+r.size1[t])*19+r.size2[t]]=t:bt[(r.mode1[t]*19+r.size1[t])*5+r.size2[t]]=t}var et=3*256,nt=class{near=new Int32Array(4);same=new Int32Array(et);nextSlot=0;mode=0;value=0;reset(){this.near.fill(0),this.same.fill(0),this.nextSlot=0}encode(t,n){let e=this.near,i=0,s=t,o=E(t),a=E(n-t);a<o&&(i=1,s=n-t,o=a);for(let c=0;c<4;c++){let h=t-e[c];h>=0&&(a=E(h),a<o&&(i=2+c,s=h,o=a))}let l=t%et;return o>1&&this.same[l]===t&&(i=6+(l>>8),s=l&255,o=1),this.update(t),this.mode=i,this.value=s,o}cost(t,n){let e=Math.min(E(t),E(n-t));if(e===1||this.same[t%et]===t)return 1;for(let i=0;i<4;i++){let s=t-this.near[i];s>=0&&(e=Math.min(e,E(s)))}return e}update(t){this.near[this.nextSlot]=t,this.nextSlot=(this.nextSlot+1)%4,this.same[t%et]=t}};function Pt(r){return r>=6}var Dt=[214,195,196,0,0],se=1,rt=class{count=0;tPos=new Int32Array(256);len=new Int32Array(256);addr=new Int32Array(256);fromSource=new Uint8Array(256);push(t,n,e,i){if(this.count===this.tPos.length){let o=this.count*2,a=(l,c)=>(c.set(l),c);this.tPos=a(this.tPos,new Int32Array(o)),this.len=a(this.len,new Int32Array(o)),this.addr=a(this.addr,new Int32Array(o)),this.fromSource=a(this.fromSource,new Uint8Array(o))}let s=this.count++;this.tPos[s]=t,this.len[s]=n,this.addr[s]=e,this.fromSource[s]=i}},st=class{data=new L(1024);inst=new L(1024);addr=new L(1024);cache=new nt;lastOpPos=-1;lastType=0;lastSize=0;lastMode=0;reset(){this.data.pos=0,this.inst.pos=0,this.addr.pos=0,this.cache.reset(),this.lastType=0}add(t,n,e){if(this.data.bytes(t,n,n+e),this.lastType===3&&e<=dt){let i=bt[(this.lastMode*19+this.lastSize)*5+e];if(i>=0){this.inst.buf[this.lastOpPos]=i,this.lastType=0;return}}e<=ct?(this.lastOpPos=this.inst.pos,this.inst.byte(q[e]),this.lastType=1,this.lastSize=e):(this.inst.byte(q[0]),this.inst.int(e),this.lastType=0)}copy(t,n,e){let i=this.cache;i.encode(n,e);let s=i.mode;if(Pt(s)?this.addr.byte(i.value):this.addr.int(i.value),this.lastType===1&&this.lastSize<=dt&&t<=ft){let a=mt[(s*5+this.lastSize)*19+t];if(a>=0){this.inst.buf[this.lastOpPos]=a,this.lastType=0;return}}let o=t<=ft?tt[s*19+t]:-1;o>=0?(this.lastOpPos=this.inst.pos,this.inst.byte(o),this.lastType=3,this.lastSize=t,this.lastMode=s):(this.inst.byte(tt[s*19]),this.inst.int(t),this.lastType=0)}write(t,n,e,i,s){this.reset();let o=2147483647,a=0;for(let b=0;b<s.count;b++)if(s.fromSource[b]===1){let x=s.addr[b];x<o&&(o=x),x+s.len[b]>a&&(a=x+s.len[b])}let l=a>o?a-o:0,c=e;for(let b=0;b<s.count;b++){let x=s.tPos[b];x>c&&this.add(n,c,x-c);let A=s.len[b],S=s.fromSource[b]===1?s.addr[b]-o:l+s.addr[b]-e;this.copy(A,S,l+x-e),c=x+A}i>c&&this.add(n,c,i-c);let h=i-e,f=this.data.pos,m=this.inst.pos,u=this.addr.pos,d=E(h)+1+E(f)+E(m)+E(u)+f+m+u;t.ensure(32+d),l>0?(t.byte(se),t.int(l),t.int(o)):t.byte(0),t.int(d),t.int(h),t.byte(0),t.int(f),t.int(m),t.int(u),t.bytes(this.data.buf,0,f),t.bytes(this.inst.buf,0,m),t.bytes(this.addr.buf,0,u)}};var Ct=8*1024*1024,T=32,oe=4*1024*1024,ie=512*1024,Ht=64,ae=4*1024,le=64*1024,he=1/4,D=64*1024,H=256,it=Buffer.prototype.compare;function ot(r,t,n,e,i){if(t===void 0)return i;if(!Number.isInteger(t)||t<n||t>e)throw new RangeError(`${r} must be an integer from ${n} to ${e}`);return t}function Rt(r){ot("windowSize",r.windowSize,1,64*1024*1024,Ct)}function ue(r,t){let n=Math.min(r.length,t.length),e=0;for(;e+D<=n&&it.call(r,t,e,e+D,e,e+D)===0;)e+=D;for(;e+H<=n&&it.call(r,t,e,e+H,e,e+H)===0;)e+=H;for(;e<n&&r[e]===t[e];)e++;return e}function ce(r,t,n){let e=r.length,i=t.length,s=Math.min(n,e,i),o=0;for(;o+D<=s&&it.call(r,t,i-o-D,i-o,e-o-D,e-o)===0;)o+=D;for(;o+H<=s&&it.call(r,t,i-o-H,i-o,e-o-H,e-o)===0;)o+=H;for(;o<s&&r[e-o-1]===t[i-o-1];)o++;return o}var fe={long:null,short:null},pt=class{constructor(t,n,e){this.source=t;this.options=n;this.look=ot("hashLength",n.hashLength,4,64,8),ot("sourceStep",n.sourceStep,1,64,2),this.maxProbes=ot("maxProbes",n.maxProbes,1,1024,4),Rt(n),e&&this.wholeIndexes()}source;options;whole=null;look;maxProbes;get indexBytes(){let t=this.whole;return t===null?0:(t.long?.byteLength??0)+(t.short?.byteLength??0)}wholeIndexes(){return this.whole??=this.build(0,this.source.length),this.whole}build(t,n){let e=this.source,i=n-t,s=t===0&&n===e.length?e:e.subarray(t,n),o=i>ie,a=this.look,l=this.options.sourceStep??(o?4:2),c=this.maxProbes,h=()=>ht(s,a,l),f=i>=a?h():null,m=e.length>oe?h:null,u=f!==null?new Y(e,a,l,c,f,t,m):null,d=null;if(i>=T){let b=o?T:T/2,x=f!==null&&T%a===0&&a%l===0&&b%l===0?Et(f,l,a,T/a,b,i):ht(s,T,b);d=new Y(e,T,b,c,x,t)}return{long:d,short:u}}indexesFor(t,n,e,i){if(n-t<4)return fe;let s=this.source.length;if(i){let o=Math.min(Math.max(4*(n-t),ae),le),a=Math.max(0,t-o)&-T,l=Math.min(s,e+o);if(l-a<=s*he)return this.build(a,l)}return this.wholeIndexes()}encode(t,n={}){return this.run(t,n,1/0)}tryEncode(t,n={}){let e=n.maxSize??t.length;if(typeof e!="number"||Number.isNaN(e)||e<0)throw new RangeError("maxSize must be a non-negative number");return this.run(t,n,e)}run(t,n,e){let i=this.source,s=n.windowSize??this.options.windowSize??Ct,o=n.targetMatches??this.options.targetMatches??!0;if(Rt(n),i.length>2147483647-s)throw new RangeError("source is too large");let a=ue(i,t),l=ce(i,t,Math.min(i.length,t.length)-a);a<Ht&&(a=0),l<Ht&&(l=0);let c=t.length-l,h=t.length-i.length,{long:f,short:m}=this.indexesFor(a,c,i.length-l,a+l>0),u=new L((Math.min(t.length,1<<20)>>2)+64);for(let S of Dt)u.byte(S);let d=new Q(i,t,f,m,o,s,e),b=new rt,x=new st,A=0;do{let S=Math.min(A+s,t.length);b.count=0;let _=Math.min(Math.max(A,a),S),g=Math.max(_,Math.min(S,c));if(_>A&&(b.push(A,_-A,A,1),d.estimate+=1+E(A)),g>_&&!d.scan(_,g,b,A)||(S>g&&(b.push(g,S-g,g-h,1),d.estimate+=1+E(g-h)),x.write(u,t,A,S,b),u.pos>=e))return null;A=S}while(A<t.length);return u.result()}};function zt(r,t={}){return new pt(r,t,!1)}var yt=lt.parentPort;if(yt===null)throw new Error("pool-worker.js runs in a worker thread (see pool.ts)");var kt=lt.workerData.cacheBytes,O=new Map,R=0,at=[];function At(r,t){let n=O.get(r);if(n!==void 0&&(O.delete(r),R-=n.bytes),t.bytes>kt){at.push(r);return}for(let[e,i]of O){if(R+t.bytes<=kt)break;O.delete(e),R-=i.bytes,at.push(e)}O.set(r,t),R+=t.bytes}function vt(r){return{prepared:zt(r),bytes:r.length}}function de(r,t){let n=t.prepared.source.length+t.prepared.indexBytes;n!==t.bytes&&(O.delete(r),R-=t.bytes,t.bytes=n,At(r,t))}function me(r){let t=O.get(r.key);if(r.base!==void 0)t=vt(r.base),At(r.key,t);else{if(t===void 0)return{id:r.id,delta:null,missing:!0,evicted:[],cacheBytes:R,cached:O.size};O.delete(r.key),O.set(r.key,t)}let n=r.targetKey!==void 0&&r.targetKey!==r.key,e=n?new Uint8Array(r.target):r.target,i=Date.now()>r.deadline?null:t.prepared.tryEncode(e);return O.get(r.key)===t&&de(r.key,t),n&&At(r.targetKey,vt(e)),{id:r.id,delta:i,evicted:[],cacheBytes:R,cached:O.size}}yt.on("message",r=>{let t;try{t=me(r)}catch(e){t={id:r.id,delta:null,error:String(e),evicted:[],cacheBytes:R,cached:O.size}}t.evicted=at,at=[];let n=t.delta!==null?[t.delta.buffer]:[];yt.postMessage(t,n)});\n'
// END EMBEDDED_WORKER
/* eslint-enable no-template-curly-in-string */
