/**
 * Instance manipulation (docs/conventions.md (Delta encoding); RFC 3229): A-IM, IM, Delta-Base and 226 IM Used, with
 * VCDIFF deltas (RFC 3284, our encoder in packages/vcdiff) and gzip.
 *
 * A route opts in with `config.deltaEncoding`. Once a request with A-IM has reached such a
 * route, every 200 of it to GET/HEAD keeps the instance it sent in the instance store, under
 * the request URL, the Content-Type and the (strong) ETag of the response; before that, no
 * client of the route asked for deltas and its 200s cost no bookkeeping (no digest, no
 * store write). A client that sends A-IM on every request has its first 200 kept. When a later request lists `vcdiff` in A-IM and names
 * one of the kept instances in If-None-Match, the answer is a 226 whose body is the delta
 * from that base to the current instance; `gzip` compresses the instance (or the delta).
 *
 * The hook runs in onSend, after the conditional plugin's: by then the ETag is final (a
 * provider's, or the payload hash @fastify/etag computed), and an If-None-Match that names
 * the current instance has already been answered with 412 (docs/conventions.md (Conditional requests)) or 304 (RFC 9110).
 * An If-None-Match naming an older instance lets the GET run, and this hook turns its 200
 * into the 226. Whatever goes wrong (unknown base, a delta that is not smaller, a store
 * that fails or does not answer within `storeTimeoutMs`), the answer stays the ordinary
 * 200: a server is never obliged to apply a manipulation (RFC 3229 10.5.3; conventions
 * (Delta encoding)).
 *
 * What the plugin keeps beside the store is bounded in bytes whatever the URLs and client
 * addresses (lib/delta-bookkeeping.ts): the entity-tag last stored per representation and
 * the per-client insert budget are keyed by SHA-256 digests, never by a URL, name or
 * address as it came; the bodies of store writes not yet settled are bounded too.
 */
import { gzip, gzipSync, type ZlibOptions } from 'node:zlib'
import { promisify } from 'node:util'
import fp from 'fastify-plugin'
import { availableParallelism } from 'node:os'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { createEncoderPool, encode, tryEncode, type EncodeOptions, type EncoderPool } from '@http-conventions/vcdiff'
import { type EntityTag, formatEntityTag, parseEntityTag, parseEntityTagList, parseWeightedTokens, splitList } from '@http-conventions/grammar'
import { invalidOption } from '../../lib/errors'
import { type Profile } from '../../lib/profile'
import type { InstanceStore } from '../../lib/io/stores/instance-store'
import { MemoryInstanceStore } from '../../lib/io/stores/instance-memory'
import { DEFAULT_STORE_TIMEOUT_MS, MAX_STORE_TIMEOUT_MS, withDeadline } from '../../lib/io/stores/deadline'
import { clientKey, digestKey, InsertBudget, RecentInstances } from '../../lib/delta-bookkeeping'
import { declareConvention, type PayloadNext, type RouteCompiler } from '../host/suite'
import { CACHE_CONTROL_TEXT, release, replacePayload } from '../services/shared'
import { FUNCTION_SCHEMA, MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { defineConvention } from '../host/suite'
import { AUTHENTICATED } from '../services/capabilities'

/** The instance manipulations this plugin applies (RFC 3229 10.1.1; RFC 3284 for vcdiff). */
export type InstanceManipulation = 'vcdiff' | 'gzip'

/** Options of the Instance manipulation plugin (A-IM, RFC 3229): the store of past instances, the manipulations and their bounds. */
export interface DeltaEncodingOptions {
  /** 'spec' (default) or 'rfc9110': how the routes' error handler renders framing and size errors when no other plugin of the context says. */
  profile?: Profile
  /** Where past instances are kept (default: a MemoryInstanceStore bounded at 64 MiB). */
  store?: InstanceStore
  /** Manipulations the server applies (default both, always vcdiff before gzip). */
  manipulations?: InstanceManipulation[]
  /** How long a stored instance stays a usable base, in ms (default: the store's own rule). */
  ttl?: number
  /** Instances larger than this are neither stored nor manipulated (default 8 MiB). */
  maxInstanceBytes?: number
  /**
   * Options of the VCDIFF encoder (level, window size, hash length, ...). `level`: 'default'
   * or 'fast' for every delta; unset, the plugin encodes against a base of at least 2 MiB at
   * level 'fast' and against smaller bases at level 'default' (docs/plugins.md says why).
   */
  vcdiff?: EncodeOptions
  /** zlib level of the gzip manipulation, 1..9 (default 6). */
  gzipLevel?: number
  /** How many entity-tags of If-None-Match are looked up as bases, in order (default 4). */
  maxBaseLookups?: number
  /**
   * Encoding off the event loop: instances of at least `minBytes` (default 256 KiB) are
   * encoded by a pool of worker threads that keeps each base's index (bounded in bytes); a
   * full queue or a passed deadline answers the plain instance (200), never an unbounded
   * wait. false encodes every delta on the event loop.
   */
  offload?: false | { minBytes?: number, threads?: number, maxQueue?: number, deadlineMs?: number, cacheBytes?: number }
  /**
   * How many representations one client (its principal, else its address; an IPv6 address
   * by its /64) may add to the store per minute (default 120): a client varying a query
   * string cannot flush everyone's bases. A new version of a representation already kept
   * does not count.
   */
  maxInsertsPerClient?: number
  /**
   * Longest wait for one store operation, in ms (default 1000, at most 60000): a store that
   * does not answer in time is a store that failed, and the answer is the plain 200.
   */
  storeTimeoutMs?: number
}

/** `config.deltaEncoding` as an object: the route's manipulations and ttl. */
export interface DeltaEncodingRouteOptions {
  /** Manipulations applied on this route (default: the plugin's). */
  manipulations?: InstanceManipulation[]
  /** Overrides the plugin's `ttl` for this route's instances. */
  ttl?: number
}

/** `config.deltaEncoding`: true (the plugin's settings), an object of overrides, or false. */
export type DeltaEncodingRouteConfig = DeltaEncodingRouteOptions | boolean

const PLUGIN = 'fastify-http-conventions-delta-encoding'

const WHERE = PLUGIN
const SAFE = new Set(['GET', 'HEAD'])
// RFC 3229 10.8.2: an IM-aware cache may keep the 226 (im); every other cache must not (no-store).
const CACHE_CONTROL_226 = 'no-store, im'
/** What the headers of a 226 mean, as a document describes them. */
const DELTA_HEADER_TEXTS = {
  IM: 'The instance manipulations applied (vcdiff, gzip)',
  ETag: 'The current entity tag of the resource',
  'Delta-Base': 'The entity tag of the instance the delta applies to',
  'Cache-Control': CACHE_CONTROL_TEXT
}

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'delta-encoding',
  plugin: PLUGIN,
  configKey: 'deltaEncoding',
  uses: [AUTHENTICATED.name],
  steps: [
    { name: 'delta-encoding', phase: 'onSend', after: ['conditional', 'patch:accept-patch'] } // RFC 3229 10.5.3: the delta is made of the final payload and ETag
  ],
  // RFC 3229 10.5.3 (and 10.6): a 226 is not stored by a cache that does not know IM.
  headers: { 'cache-control': { says: { 226: CACHE_CONTROL_226 } } }
})
const ASYNC_GZIP_BYTES = 64 * 1024
/** Bodies of unsettled store writes are bounded by twice maxInstanceBytes, and at least this. */
const MIN_PENDING_BYTES = 16 * 1024 * 1024
const gzipAsync = promisify(gzip) as (data: Buffer, options: ZlibOptions) => Promise<Buffer>

type OnSendHook = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>

interface Settings {
  vcdiff: boolean
  gzip: boolean
  ttl: number | undefined
  /** The route needs credentials: instances are kept per principal. */
  protectedRoute: boolean
  /** Whether a client has asked this route's path for instance manipulations (shared by its GET and HEAD routes). */
  interest: Interest
}

/**
 * A request with A-IM has reached the route's path (in this registration): from then on its
 * plain 200s are kept as bases too. Until then no client of it asked for deltas, and a 200
 * costs no bookkeeping (RFC 3229 10.5.3: keeping a base is the server's choice).
 */
interface Interest { asked: boolean }

const MANIPULATIONS = { type: 'array', items: { enum: ['vcdiff', 'gzip'] }, [MESSAGE]: "must list 'vcdiff' and/or 'gzip'" } as const
const TTL = { type: 'number', exclusiveMinimum: 0, [MESSAGE]: 'must be a positive number of milliseconds' } as const

/** An integer from 1 to `max`. */
function upTo (max = Number.MAX_SAFE_INTEGER): { type: 'integer', minimum: 1, maximum: number, [MESSAGE]: string } {
  return { type: 'integer', minimum: 1, maximum: max, [MESSAGE]: `must be an integer from 1 to ${max}` }
}

/**
 * The plugin's options as JSON Schema, checked at registration in the order they are
 * documented. The store's methods and the VCDIFF encoder's options are checked after it.
 */
export const deltaEncodingOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    store: { type: 'object', required: ['get', 'set'], properties: { get: FUNCTION_SCHEMA, set: FUNCTION_SCHEMA }, [MESSAGE]: 'must be an instance store: { get(key), set(key, value, ttl?) }' },
    manipulations: MANIPULATIONS,
    ttl: TTL,
    maxInstanceBytes: upTo(),
    gzipLevel: upTo(9),
    maxBaseLookups: upTo(100),
    maxInsertsPerClient: upTo(1_000_000),
    storeTimeoutMs: { type: 'integer', minimum: 1, maximum: MAX_STORE_TIMEOUT_MS, [MESSAGE]: `must be an integer number of milliseconds from 1 to ${MAX_STORE_TIMEOUT_MS}` },
    vcdiff: {
      type: 'object',
      properties: { level: { enum: ['fast', 'default'], [MESSAGE]: "must be 'fast' or 'default', got {value}" } },
      [MESSAGE]: 'must be an object of encoder options'
    },
    offload: {
      type: ['boolean', 'object'],
      not: { const: true },
      additionalProperties: false,
      properties: { minBytes: upTo(), threads: upTo(64), maxQueue: upTo(), deadlineMs: upTo(), cacheBytes: upTo() },
      [MESSAGE]: 'must be false or { minBytes?, threads?, maxQueue?, deadlineMs?, cacheBytes? }'
    }
  }
} as const

/** A route's `config.deltaEncoding` as JSON Schema, checked when the route is added (then, in code, that the route serves GET or HEAD). */
export const deltaEncodingRouteConfigSchema = {
  type: ['boolean', 'object'],
  additionalProperties: false,
  properties: { manipulations: MANIPULATIONS, ttl: TTL },
  [MESSAGE]: 'must be true, false or { manipulations?, ttl? }'
} as const

const checkOptions = optionsChecker(WHERE, deltaEncodingOptionsSchema)
const checkRouteConfig = routeConfigChecker<DeltaEncodingRouteConfig>('deltaEncoding', deltaEncodingRouteConfigSchema)

/** What the client accepts of what the route applies (RFC 3229 10.5.3: q=0 refuses; unknown tokens are ignored). */
function accepted (aim: string, settings: Settings): { vcdiff: boolean, gzip: boolean } {
  let vcdiff: boolean | undefined
  let gzip: boolean | undefined
  for (const { token, q } of parseWeightedTokens(aim)) {
    // The first mention of a token decides (a later repeat does not override it).
    if (token === 'vcdiff') vcdiff ??= q > 0
    else if (token === 'gzip') gzip ??= q > 0
  }
  return { vcdiff: settings.vcdiff && vcdiff === true, gzip: settings.gzip && gzip === true }
}

/** The body of a 200 as bytes (instanceHead took only strings and buffers). */
function bytesOf (payload: unknown): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload as Buffer
}

/**
 * The store key of an instance: request URL (path and query), Content-Type and the
 * entity-tag. The Content-Type keeps two representations of one resource apart, should
 * they share an entity-tag.
 */
function instanceKey (selector: string, etag: EntityTag): string {
  return `${selector}\n${etag.opaque}`
}

/**
 * Everything that selects the representation a request receives, besides its entity-tag:
 * the URL, the Content-Type, the authenticated principal on a protected route (another
 * user's instance is never a base: its delta would leak its content), and the request
 * fields the response names in Vary (RFC 9110 12.5.5). Null when the answer varies on
 * something no key can hold (`Vary: *`) or a protected route has no principal.
 */
function selectorOf (request: FastifyRequest, reply: FastifyReply, protectedRoute: boolean): string | null {
  let key = `${request.url}\n${String(reply.getHeader('content-type'))}`
  if (protectedRoute) {
    const p = request.principal
    if (p === null || p === undefined) return null
    key += `\nprincipal:${p.scheme}:${p.subject.length}:${p.subject}`
  }
  const vary = reply.getHeader('vary')
  if (vary !== undefined) {
    // A Vary this server cannot read is treated as `*`: nothing is kept.
    const names = (splitList(String(vary)) ?? ['*']).map((n) => n.toLowerCase())
    if (names.includes('*')) return null
    for (const name of names.sort()) {
      const value = request.headers[name]
      key += `\n${name}:${value === undefined ? '' : String(value)}`
    }
  }
  return key
}

function deltaEncodingPlugin (fastify: FastifyInstance, opts: DeltaEncodingOptions, done: (err?: Error) => void): void {
  try {
    setup(fastify, opts)
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** How large deltas are encoded off the event loop (the `offload` option); pool null when off. */
interface OffloadPlan {
  /** Instances from this size are encoded by the pool. */
  minBytes: number
  deadlineMs: number
  pool: { threads: number, maxQueue: number, cacheBytes: number, deadlineMs: number } | null
}

/** What the plugin settled from its options, checked once at registration. */
interface DeltaPlan {
  manipulations: InstanceManipulation[]
  ttl: number | undefined
  maxInstanceBytes: number
  gzipLevel: number
  maxBaseLookups: number
  insertsPerMinute: number
  storeTimeoutMs: number
  /** Bodies handed to the store whose write has not settled (a Redis that does not answer holds them). */
  maxPendingBytes: number
  vcdiffOptions: EncodeOptions
  store: InstanceStore
  offload: OffloadPlan
}

/**
 * Bases from this size are encoded at level 'fast' when `vcdiff.level` is not set: the default
 * level is faster than `xdelta3 -1` up to 1 MiB but not on 8 MiB documents edited throughout,
 * where the fast level takes 40-60% of its time for deltas 13-21% larger (bench/vcdiff.js).
 */
const FAST_FROM_BYTES = 2 * 1024 * 1024

/** The encoder options of a delta against `base`: the level set, else by the base's size. */
function encoderOptionsFor (options: EncodeOptions, base: Uint8Array): EncodeOptions {
  return options.level !== undefined || base.length < FAST_FROM_BYTES ? options : { ...options, level: 'fast' }
}

function checkVcdiffOptions (value: unknown): EncodeOptions {
  const vcdiffOptions = value ?? {}
  try {
    // The encoder checks its options on every call: check them once, now (a bad option fails at boot).
    encode(Buffer.alloc(0), Buffer.alloc(0), vcdiffOptions as EncodeOptions)
  } catch (err) {
    throw invalidOption(WHERE, `vcdiff: ${(err as Error).message}`)
  }
  return vcdiffOptions as EncodeOptions
}

function offloadPlan (value: DeltaEncodingOptions['offload']): OffloadPlan {
  const offload = value ?? {}
  const off = offload === false ? {} : offload
  const minBytes = off.minBytes ?? 256 * 1024
  const deadlineMs = off.deadlineMs ?? 1000
  const pool = {
    threads: off.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
    maxQueue: off.maxQueue ?? 64,
    cacheBytes: off.cacheBytes ?? 64 * 1024 * 1024,
    deadlineMs
  }
  return { minBytes, deadlineMs, pool: offload === false ? null : pool }
}

/** Checks the plugin's options, in the order they are documented; throws FST_HTTP_CONVENTIONS_INVALID_OPTION. */
function deltaPlan (opts: DeltaEncodingOptions): DeltaPlan {
  checkOptions(opts)
  const manipulations = opts.manipulations ?? ['vcdiff', 'gzip']
  const ttl = opts.ttl
  const maxInstanceBytes = opts.maxInstanceBytes ?? 8 * 1024 * 1024
  const gzipLevel = opts.gzipLevel ?? 6
  const maxBaseLookups = opts.maxBaseLookups ?? 4
  const insertsPerMinute = opts.maxInsertsPerClient ?? 120
  const storeTimeoutMs = opts.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS
  const maxPendingBytes = Math.max(2 * maxInstanceBytes, MIN_PENDING_BYTES)
  const vcdiffOptions = checkVcdiffOptions(opts.vcdiff)
  const store = opts.store ?? new MemoryInstanceStore()
  const offload = offloadPlan(opts.offload)
  return { manipulations, ttl, maxInstanceBytes, gzipLevel, maxBaseLookups, insertsPerMinute, storeTimeoutMs, maxPendingBytes, vcdiffOptions, store, offload }
}

/** One registration's state: the plan, the bookkeeping beside the store, the writes in flight, the encoder pool. */
interface DeltaState {
  plan: DeltaPlan
  /** Bookkeeping beside the store, bounded in bytes whatever the URLs and addresses (lib/delta-bookkeeping.ts). */
  stored: RecentInstances
  inserts: InsertBudget
  /** Bytes of the bodies whose store write has not settled. */
  pendingBytes: number
  /** The encoder pool, started at the first large delta; null when offload is false. */
  pool: (() => EncoderPool) | null
  /** Per route path: whether a client has sent A-IM there (bounded by the routes, set at boot). */
  interest: Map<string, Interest>
}

function setup (fastify: FastifyInstance, opts: DeltaEncodingOptions): void {
  const plan = deltaPlan(opts)
  let encoderPool: EncoderPool | undefined
  const poolOptions = plan.offload.pool
  const state: DeltaState = {
    plan,
    stored: new RecentInstances(),
    inserts: new InsertBudget({ perMinute: plan.insertsPerMinute }),
    pendingBytes: 0,
    // Started at the first large delta; closed with the app.
    pool: poolOptions === null ? null : () => (encoderPool ??= createEncoderPool({ ...poolOptions, encoder: plan.vcdiffOptions, fastFromBytes: FAST_FROM_BYTES })),
    interest: new Map()
  }
  fastify.addHook('onClose', async function closeEncoderPool () {
    if (encoderPool !== undefined) await encoderPool.close()
  })
  function compile (c: RouteCompiler): void {
    const settings = routeSettings(c, plan, state.interest)
    if (settings === null) return
    c.respond(226, { description: 'IM Used (RFC 3229 10.4.1): the body is the current instance after the manipulations listed in IM (a VCDIFF delta from the instance named in Delta-Base, and/or gzip)', body: 'none', headers: ['IM', 'ETag', 'Delta-Base', 'Cache-Control'] })
    c.describe({ headerTexts: DELTA_HEADER_TEXTS })
    // The pipeline runs this after the conditional step (ETag and 412/304 final) and before
    // Fastify's HEAD handling, so HEAD makes GET's decision and carries the Content-Length of
    // GET's body (RFC 9110 9.3.2).
    const onSend = deltaOnSend(state, settings)
    c.step('onSend', 'delta-encoding', function deltaEncodingStep (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: PayloadNext) {
      // Only strings and buffers become instances (a stream passes as it is); what is replaced is released all the same.
      if (request.headers['a-im'] === undefined) {
        // No client of this route has asked for a delta yet: nothing to keep a base for.
        if (!settings.interest.asked) return next(null, payload)
        return next(null, replacePayload(payload, keepPlain(state, settings, request, reply, payload)))
      }
      settings.interest.asked = true
      onSend(request, reply, payload).then((value) => next(null, replacePayload(payload, value)), (err: Error) => { release(payload); next(err) })
    })
  }
  declareConvention(fastify, { key: 'delta-encoding', plugin: PLUGIN, configKey: 'deltaEncoding', compile }, { profile: opts.profile })
}

/** The settings of a route with `config.deltaEncoding`, or null when it has none. */
function routeSettings (c: RouteCompiler, plan: DeltaPlan, interests: Map<string, Interest>): Settings | null {
  const config = checkRouteConfig(c.where, c.config.deltaEncoding)
  if (config === undefined || config === false) return null
  // Of the route, not of its config: code.
  if (!c.methods.some((m) => SAFE.has(m))) throw invalidOption(c.where, 'config.deltaEncoding belongs on a GET or HEAD route (RFC 3229 10.4.1: 226 answers a GET)')
  const protectedRoute = c.use(AUTHENTICATED) !== undefined
  const { manipulations, ttl } = plan
  // A GET route and the HEAD route Fastify makes of it answer one path: one interest.
  let interest = interests.get(c.route.url)
  if (interest === undefined) interests.set(c.route.url, interest = { asked: false })
  const own = config === true ? manipulations : config.manipulations ?? manipulations
  return { vcdiff: own.includes('vcdiff'), gzip: own.includes('gzip'), ttl: config === true ? ttl : config.ttl ?? ttl, protectedRoute, interest }
}

/** A complete 200 that can be an instance: its bytes, its strong entity-tag, its store selector. */
interface Instance { body: Buffer, current: EntityTag, selector: string }

/**
 * The instance a response carries, or null (the payload is sent unchanged): only a complete 200
 * to GET/HEAD is an instance (RFC 3229 10.4.1): never an error, a 206, a 304.
 */
function instanceOf (state: DeltaState, settings: Settings, request: FastifyRequest, reply: FastifyReply, payload: unknown): Instance | null {
  const head = instanceHead(state, settings, request, reply, payload)
  return head === null ? null : { ...head, body: bytesOf(payload) }
}

/** What makes the response an instance, short of its bytes (never converted here): null when it is none. */
function instanceHead (state: DeltaState, settings: Settings, request: FastifyRequest, reply: FastifyReply, payload: unknown): Omit<Instance, 'body'> | null {
  if (reply.statusCode !== 200 || !SAFE.has(request.method)) return null
  const max = state.plan.maxInstanceBytes
  // A string of n UTF-16 units is at most 3n bytes of UTF-8: most need no count of their bytes.
  const size = typeof payload === 'string' ? (payload.length * 3 <= max ? 0 : Buffer.byteLength(payload)) : Buffer.isBuffer(payload) ? payload.length : -1
  if (size < 0 || size > max) return null
  // RFC 3229 10.7: a content-coded response is not the instance; leave it alone.
  const coding = reply.getHeader('content-encoding')
  if (coding !== undefined && String(coding).toLowerCase() !== 'identity') return null
  if (reply.getHeader('content-range') !== undefined) return null
  const etagValue = reply.getHeader('etag')
  const current = typeof etagValue === 'string' ? parseEntityTag(etagValue) : null
  // RFC 3229 10.4.1: a 226 carries the ETag of the current instance; a weak one does not
  // name one sequence of bytes (RFC 9110 8.8.1), so it can be no delta base either.
  if (current === null || current.weak) return null
  // No Content-Type at all is a key of its own ('undefined').
  const selector = selectorOf(request, reply, settings.protectedRoute)
  return selector === null ? null : { current, selector }
}

/**
 * A request without A-IM: nothing to manipulate, the instance is only kept. The version kept
 * a moment ago (most 200s of a read-mostly route) costs no conversion of the payload to bytes.
 */
function keepPlain (state: DeltaState, settings: Settings, request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const head = instanceHead(state, settings, request, reply, payload)
  if (head === null) return payload
  const recentKey = digestKey(head.selector)
  if (state.stored.recently(recentKey, head.current.opaque)) return payload
  const instance = { ...head, body: bytesOf(payload) }
  keepInstance(state, settings, request, instance, recentKey)
  return instance.body
}

/**
 * Hands the instance to the store, unless it was stored a moment ago (it is not copied again
 * nor counted against the client). A new version of a representation already kept is stored
 * whatever the client's budget: a client that polled a changing document for a while (each
 * 200 a new version) must still get its next instance kept, or it never receives a delta
 * against it. Only a representation new to the store (another URL, Vary value or principal)
 * is counted. Writes not settled yet hold their bodies: past maxPendingBytes of them, nothing
 * more is handed to the store (a store that stopped answering cannot gather every body).
 */
function keepInstance (state: DeltaState, settings: Settings, request: FastifyRequest, instance: Instance, recentKey = digestKey(instance.selector)): void {
  const { body, current, selector } = instance
  const { stored, plan } = state
  if (stored.recently(recentKey, current.opaque) || state.pendingBytes + body.length > plan.maxPendingBytes) return
  if (!stored.known(recentKey) && !state.inserts.allow(clientKey(request.principal, request.ip))) return
  stored.mark(recentKey, current.opaque)
  state.pendingBytes += body.length
  const writing = Promise.resolve().then(() => plan.store.set(instanceKey(selector, current), body, settings.ttl))
  const settled = (): void => { state.pendingBytes -= body.length }
  writing.then(settled, settled)
  const log = request.log
  withDeadline(writing, plan.storeTimeoutMs, 'the instance store').catch(function instanceNotStored (err: Error) {
    stored.forget(recentKey)
    log.warn({ err }, 'delta-encoding: the instance store failed; this instance cannot be a delta base')
  })
}

/** What the vcdiff step decided: send the plain instance now, go on with `out` (a delta from `base`, or the instance). */
type DeltaOutcome = { plain: true } | { plain: false, out: Buffer, base: EntityTag | null }

/** The first stored instance among the strong tags of If-None-Match, or `{ failed }` when the store failed. */
async function findBase (state: DeltaState, request: FastifyRequest, selector: string, tags: EntityTag[]): Promise<{ base: EntityTag, source: Buffer } | null | { failed: true }> {
  const { plan } = state
  for (const tag of tags.filter((t) => !t.weak).slice(0, plan.maxBaseLookups)) {
    let source: Buffer | undefined
    try {
      source = await withDeadline(plan.store.get(instanceKey(selector, tag)), plan.storeTimeoutMs, 'the instance store')
    } catch (err) {
      request.log.warn({ err }, 'delta-encoding: the instance store failed; answering without a delta')
      return { failed: true }
    }
    if (source !== undefined) return { base: tag, source }
  }
  return null
}

/**
 * The vcdiff manipulation (RFC 3229 10.4.1, with RFC 3284 deltas): a delta from the first
 * instance named in If-None-Match that the store still holds, when smaller than the instance.
 */
async function vcdiffStep (state: DeltaState, request: FastifyRequest, instance: Instance, inm: string): Promise<DeltaOutcome> {
  const { body, current, selector } = instance
  const plain: DeltaOutcome = { plain: false, out: body, base: null }
  // Parsed once per request: the conditions the conditional convention parsed on this route, if it ran.
  const tags = request.preconditions?.conditions.ifNoneMatch ?? parseEntityTagList(inm)
  if (!Array.isArray(tags)) return plain
  // The client holds the current instance: nothing to send a delta for (RFC 9110 13.1.2).
  if (tags.some((t) => t.opaque === current.opaque)) return { plain: true }
  const found = await findBase(state, request, selector, tags)
  if (found === null) return plain
  if ('failed' in found) return { plain: true }
  const { offload, vcdiffOptions } = state.plan
  // A delta no smaller than the instance saves nothing: the encoder gives up as soon as
  // it knows (null), and the instance is sent. Large instances are encoded off the event
  // loop; a saturated pool or a passed deadline also means the plain instance.
  const delta = body.length >= offload.minBytes && state.pool !== null
    // The worker keeps this version as the next request's base, indexed between requests.
    ? await state.pool().encode(instanceKey(selector, found.base), found.source, body, { deadlineMs: offload.deadlineMs, affinity: selector, targetKey: instanceKey(selector, current) })
    : tryEncode(found.source, body, { ...encoderOptionsFor(vcdiffOptions, found.source), maxSize: body.length - 1 })
  if (delta === null || delta.length >= body.length) return plain
  return { plain: false, out: Buffer.from(delta.buffer, delta.byteOffset, delta.length), base: found.base }
}

/** The gzip manipulation (RFC 3229 10.4.1): `out` gzipped, or null when that is no smaller. */
async function gzipStep (out: Buffer, level: number): Promise<Buffer | null> {
  // zlib runs on libuv's thread pool for anything but small bodies.
  const gz = out.length < ASYNC_GZIP_BYTES ? gzipSync(out, { level }) : await gzipAsync(out, { level })
  return gz.length < out.length ? gz : null
}

/** Turns the reply into a 226 of the manipulations `applied` to the instance, from `base` when a delta. */
function imUsed (request: FastifyRequest, reply: FastifyReply, applied: InstanceManipulation[], base: EntityTag | null): void {
  // RFC 3229 10.4.1: 226, the current ETag (kept), headers of the instance (Content-Type kept).
  reply.code(226)
  // RFC 3229 10.5.2: IM lists the manipulations in the order they were applied.
  reply.header('im', applied.join(', '))
  // RFC 3229 10.5.1: the base the delta applies to (a MUST with several tags in If-None-Match).
  if (base !== null) reply.header('delta-base', formatEntityTag(base))
  reply.header('cache-control', CACHE_CONTROL_226)
  // A body gzipped by IM is not compressed again by a compression plugin registered beside
  // the suite (@fastify/compress honours this request field); a delta alone still may be,
  // and a client removes the Content-Encoding first, then the IM manipulations in reverse.
  if (applied.includes('gzip')) request.headers['x-no-compression'] = '1'
}

function deltaOnSend (state: DeltaState, settings: Settings): OnSendHook {
  return async function deltaEncodingOnSend (request, reply, payload) {
    const instance = instanceOf(state, settings, request, reply, payload)
    if (instance === null) return payload
    const { body } = instance
    keepInstance(state, settings, request, instance)
    // Only requests with A-IM come here (keepPlain takes the others). Node joins repeated
    // field lines of an unknown field with ", " (RFC 9110 5.3): one string.
    const want = accepted(String(request.headers['a-im']), settings)
    if (!want.vcdiff && !want.gzip) return body
    // A large instance was just converted and stored: other requests run before its delta
    // is looked up and handed to the pool, so the two do not add up to one long block.
    if (body.length >= state.plan.offload.minBytes) await new Promise((resolve) => setImmediate(resolve))
    const inm = request.headers['if-none-match']
    const delta: DeltaOutcome = want.vcdiff && inm !== undefined ? await vcdiffStep(state, request, instance, inm) : { plain: false, out: body, base: null }
    if (delta.plain) return body
    let out = delta.out
    const applied: InstanceManipulation[] = delta.base === null ? [] : ['vcdiff']
    const gz = want.gzip ? await gzipStep(out, state.plan.gzipLevel) : null
    if (gz !== null) {
      out = gz
      applied.push('gzip')
    }
    // The bytes already made are the payload: the string is not converted a second time.
    if (applied.length === 0) return body
    imUsed(request, reply, applied, delta.base)
    return out
  }
}

/** Instance manipulation (docs/conventions.md (Delta encoding), RFC 3229): A-IM, IM, Delta-Base, 226 IM Used; vcdiff and gzip. */
export const httpConventionsDeltaEncoding = fp(deltaEncodingPlugin, { fastify: '^5.10.0', name: PLUGIN })
