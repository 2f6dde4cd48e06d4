/**
 * Conditional requests (docs/conventions.md (Conditional requests), the error table, row 412; RFC 9110 section 13; RFC 6585 3).
 *
 * A route opts in with `config.conditional`. With a `validators` provider, the current
 * ETag / Last-Modified of the resource are read in preHandler, i.e. after auth (a
 * preParsing step) and validation (RFC 9110 13.2.1), and the preconditions are evaluated
 * there, before the handler runs. Without a provider (GET/HEAD routes only), the ETag
 * is computed from the response payload (node:crypto, the value @fastify/etag would give:
 * docs/architecture.md, "Libraries we use") and the preconditions are evaluated in onSend
 * on it: only a safe method may run before its preconditions are
 * known (RFC 9110 13.2.1: deciding a write's preconditions in onSend would be after the write).
 *
 * The parsed preconditions are handed to the handler as `request.preconditions`, so a
 * store can write with a compare-and-set (`UPDATE ... WHERE etag = ?`) and turn a lost
 * race into 412 through the one error handler.
 */
import crypto from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  conditionalHeadersFromRaw, evaluateParsed, hasPrecondition, hasWritePrecondition, parseConditions,
  type ParsedConditions, type PreconditionOutcome, type Validators
} from '../../lib/conditional'
import { formatHttpDate, INVALID, normalizeEntityTag, parseHttpDate } from '@http-conventions/grammar'
import { invalidOption, preconditionFailed, preconditionRequired, type ConventionError } from '../../lib/errors'
import { profileDefaults, type Profile } from '../../lib/profile'
import { writeError, type ErrorFormat } from '../services/errors'
import { prepareError, type PreparedError } from '../../lib/render'
import { declareConvention, type Convention, type HookStep, type Next, type PayloadNext, type RouteCompiler } from '../host/suite'
import { CACHE_CONTROL_TEXT, isThenable, release, replacePayload, type RouteRequest } from '../services/shared'
import { FUNCTION_SCHEMA, MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { kOutcome, kCurrent } from '../services/symbols'
import { isNodeStream, readBounded, replay, type BoundedRead } from '../services/bounded-stream'
import { defineConvention } from '../host/suite'
import { PRECONDITIONS, VALIDATORS } from '../services/capabilities'

/** The validators a route's provider gives for the current state of its resource. */
export interface ProvidedValidators {
  /** Entity-tag, formatted (`"v2"`, `W/"v2"`) or bare (`v2`, taken as strong). */
  etag?: string
  /** Last modification time (sent as an IMF-fixdate, compared at one-second granularity). */
  lastModified?: Date | number
}

/**
 * Reads the current validators (ETag, Last-Modified) of the resource a request targets; null
 * when it does not exist. `R`: the request as the route's handler gets it (its generics, its
 * type provider's schemas), on routes declared with Fastify's route methods.
 */
export type ValidatorsProvider<R = RouteRequest> = (request: R) => ProvidedValidators | null | undefined | PromiseLike<ProvidedValidators | null | undefined>

/** `config.conditional` as an object: where the route's validators come from, and its own 428 and creation rules. */
export interface ConditionalRouteConfig<R = RouteRequest> {
  /** Current validators of the resource, read before the handler. Required on routes with unsafe methods. */
  validators?: ValidatorsProvider<R>
  /** Overrides the plugin's `requirePrecondition` for this route (428, RFC 6585 3). */
  requirePrecondition?: boolean
  /**
   * The route creates the resource when it does not exist (PUT to a new URI). Then the
   * preconditions are evaluated against the missing resource: If-Match fails (412, `*`
   * included), `If-None-Match: *` holds. Otherwise a missing resource goes to the handler's
   * own 404 (RFC 9110 13.2.1), whatever If-Match (`*` too) or If-Unmodified-Since say; only
   * a malformed If-Match is 412.
   * Default: true for PUT, false for other methods.
   */
  creates?: boolean
}

/** Options of the Conditional requests plugin (RFC 9110 13): the "not modified" status and the 428 rule. */
export interface ConditionalOptions {
  profile?: Profile
  /** GET/HEAD "not modified": 412 (docs/conventions.md (Conditional requests), default) or 304 (RFC 9110 13.1.2; the rfc9110 profile). */
  notModifiedStatus?: 412 | 304
  /** Unsafe methods without If-Match or If-Unmodified-Since are refused with 428 (RFC 6585 3). Default false. */
  requirePrecondition?: boolean
  /** Methods `requirePrecondition` applies to. Default PUT, PATCH, DELETE. */
  requirePreconditionMethods?: string[]
  /**
   * How payloads are hashed on routes without a provider: @fastify/etag's `algorithm` and
   * `weak`, and `maxStreamBytes`, the most bytes of a stream body read to hash it (default
   * 1 MiB). A longer stream is sent as it is, without an ETag, and logged once per route.
   */
  etag?: { algorithm?: string, weak?: boolean, maxStreamBytes?: number }
  /**
   * Cache-Control of the 2xx and 304 answers of conditional GET/HEAD routes that set none:
   * `no-store` when "not modified" is a 412 (a browser's cache would revalidate its copy
   * with If-None-Match and hand the page a 412 it never asked for), `no-cache` when it is a
   * 304 (stored, revalidated at every use). A string of your own, or false for none.
   */
  cacheControl?: string | false
}

/** What the handler of a conditional route receives as `request.preconditions`. */
export interface Preconditions {
  /** The request's precondition fields, parsed once (RFC 9110 13.1). */
  readonly conditions: ParsedConditions
  /** The validators the conditions were evaluated against (for payload-hashed routes: known only in onSend). */
  readonly validators: Validators
  /** The current entity-tag exactly as the provider gave it (the value a store keeps), or undefined. */
  readonly etag: string | undefined
  /** True when the request carries any precondition (RFC 9110 13.1). */
  readonly conditional: boolean
  /**
   * For a compare-and-set write: the entity-tag the store must still find
   * (`UPDATE ... SET etag = :new WHERE id = :id AND etag = :expected`), i.e. the
   * provider's ETag when the request was conditional on an existing resource; null
   * when nothing needs to be compared (unconditional request, or a missing resource:
   * then insert only, and a duplicate is a lost race).
   */
  readonly expectedEtag: string | null
  /**
   * For a compare-and-set on dates, when If-Unmodified-Since governs the write (no If-Match,
   * RFC 9110 13.2.2): the date the client held, in ms. The store writes only while the
   * stored version is not later (`... WHERE modified_second <= :expected`). Sound because
   * every write moves Last-Modified to a later second than the version before it (dates have
   * one-second resolution, RFC 9110 8.8.2.2). Null otherwise.
   */
  readonly expectedLastModified: number | null
  /** True when the conditions still hold against validators read inside the write (null: resource gone). */
  holds: (current: ProvidedValidators | null) => boolean
  /** Throws the 412 when the conditions do not hold against `current`. */
  assert: (current: ProvidedValidators | null) => void
  /** The 412 for a compare-and-set that lost a race (0 rows): `throw request.preconditions.failed()`. */
  failed: (message?: string, currentEtag?: string) => ConventionError
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on routes with `config.conditional`; null elsewhere. */
    preconditions: Preconditions | null
  }
}

const PLUGIN = 'fastify-http-conventions-conditional'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'conditional',
  plugin: PLUGIN,
  configKey: 'conditional',
  provides: [PRECONDITIONS],
  uses: [VALIDATORS.name],
  // Brought with its defaults to a route whose conventions need preconditions (a PATCH route).
  byDefault: (profile) => conditionalConvention({ profile }),
  steps: [
    { name: 'conditional', phase: 'preHandler' }, // RFC 9110 13.2.1: after auth and validation, before the handler
    { name: 'conditional:elsewhere', phase: 'onSend', after: ['content-length:close'] }, // a 304 another plugin wrote on an opted-in route becomes the 412
    { name: 'conditional', phase: 'onSend', after: ['content-type:charset'] } // ETag, 412/304 for payload-hashed GET/HEAD
  ]
})

/** The default and the largest `etag.maxStreamBytes`: a stream is read into memory up to it. */
const DEFAULT_STREAM_BYTES = 1024 * 1024
const MAX_STREAM_BYTES = 1024 * 1024 * 1024
const WHERE = PLUGIN

/** The plugin's options as JSON Schema, checked at registration (an unknown etag.algorithm is found when it first hashes). */
export const conditionalOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    notModifiedStatus: { enum: [412, 304], [MESSAGE]: 'must be 412 or 304' },
    requirePrecondition: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
    requirePreconditionMethods: { type: 'array', items: { type: 'string', minLength: 1 }, [MESSAGE]: 'must be an array of method names' },
    etag: {
      type: 'object',
      additionalProperties: false,
      properties: {
        algorithm: { type: 'string', [MESSAGE]: 'must be a hash name' },
        weak: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
        maxStreamBytes: { type: 'integer', minimum: 0, maximum: MAX_STREAM_BYTES, [MESSAGE]: `must be a whole number of bytes from 0 to ${MAX_STREAM_BYTES}` }
      },
      [MESSAGE]: 'must be { algorithm?, weak?, maxStreamBytes? }'
    },
    // RFC 9110 5.5: a field value is visible ASCII and spaces, never CR or LF; not only spaces.
    cacheControl: { type: ['string', 'boolean'], not: { const: true }, pattern: '^[ -~]*[!-~][ -~]*$', [MESSAGE]: 'must be a Cache-Control value or false' }
  }
} as const

/** A route's `config.conditional` as JSON Schema, checked when the route is added. */
export const conditionalRouteConfigSchema = {
  type: ['boolean', 'object'],
  additionalProperties: false,
  properties: {
    validators: { ...FUNCTION_SCHEMA, [MESSAGE]: 'must be a function (request) => { etag?, lastModified? } | null' },
    requirePrecondition: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
    creates: { type: 'boolean', [MESSAGE]: 'must be a boolean' }
  },
  [MESSAGE]: 'must be true, false or { validators?, requirePrecondition?, creates? }'
} as const

const checkOptions = optionsChecker(WHERE, conditionalOptionsSchema)
const checkRouteConfig = routeConfigChecker<ConditionalRouteConfig | boolean>('conditional', conditionalRouteConfigSchema)
const SAFE = new Set(['GET', 'HEAD'])
/** The methods whose success replaces the resource's state: their answer carries the new validators. */
const WRITES = new Set(['PUT', 'PATCH'])
const NO_CONDITIONS: ParsedConditions = Object.freeze({})
const NOT_MODIFIED_ETAG = 'not modified: the current entity-tag matches If-None-Match'
const NOT_MODIFIED_DATE = 'not modified since If-Modified-Since'
const LOST_RACE = 'the resource changed while this request was processed; GET it again and retry with its new ETag'
// RFC 9110 15.4.5: a 304 carries no content and no representation metadata but the cache-related fields.
const NOT_MODIFIED_DROPS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-range', 'transfer-encoding']

interface Current {
  exists: boolean
  /** As the provider gave it. */
  raw: string | undefined
  /** Formatted for the ETag field. */
  etag: string | undefined
  lastModified: number | undefined
}

type Tracked = FastifyRequest & { [kOutcome]: PreconditionOutcome | null, [kCurrent]: Current | null }

type Failed = Exclude<PreconditionOutcome, { outcome: 'proceed' }>

function message (outcome: Failed, conditions: ParsedConditions, exists: boolean): string {
  switch (outcome.header) {
    case 'If-Match':
      if (conditions.ifMatch === INVALID) return 'If-Match is not a valid entity-tag list (RFC 9110 13.1.1); the request was not applied'
      return exists ? 'the current entity-tag of the resource does not match If-Match' : 'the resource does not exist'
    case 'If-Unmodified-Since': return 'the resource was modified after If-Unmodified-Since'
    case 'If-Modified-Since': return NOT_MODIFIED_DATE
    default:
      if (conditions.ifNoneMatch === INVALID) return 'If-None-Match is not a valid entity-tag list (RFC 9110 13.1.2); the request was not applied'
      if (outcome.outcome === 'not-modified') return NOT_MODIFIED_ETAG
      return conditions.ifNoneMatch === '*' ? 'the resource exists (If-None-Match: *)' : 'the current entity-tag of the resource matches If-None-Match'
  }
}

function failedFor (outcome: Failed, conditions: ParsedConditions, current: Current): ConventionError {
  return preconditionFailed(outcome.header, message(outcome, conditions, current.exists), current.exists ? current.etag : undefined)
}

function readProvided (provided: ProvidedValidators | null | undefined): Current {
  if (provided === null || provided === undefined) return { exists: false, raw: undefined, etag: undefined, lastModified: undefined }
  if (typeof provided !== 'object') throw new TypeError('config.conditional.validators must return { etag?, lastModified? } or null')
  const raw = provided.etag
  // A provider's bad ETag is a bug of the route (TypeError, 500), never of the request.
  const etag = raw === undefined ? undefined : normalizeEntityTag(raw)
  let lastModified: number | undefined
  const lm = provided.lastModified
  if (lm !== undefined) {
    lastModified = lm instanceof Date ? lm.getTime() : lm
    if (typeof lastModified !== 'number' || !Number.isFinite(lastModified)) throw new TypeError('config.conditional.validators returned an invalid lastModified')
  }
  return { exists: true, raw, etag, lastModified }
}

function toValidators (c: Current): Validators {
  return { exists: c.exists, etag: c.etag, lastModified: c.lastModified }
}

function headerOf (conditions: ParsedConditions): string {
  if (conditions.ifMatch !== undefined) return 'If-Match'
  if (conditions.ifUnmodifiedSince !== undefined) return 'If-Unmodified-Since'
  if (conditions.ifNoneMatch !== undefined) return 'If-None-Match'
  return 'If-Match'
}

class RequestPreconditions implements Preconditions {
  readonly conditions: ParsedConditions
  readonly method: string
  current: Current

  constructor (method: string, conditions: ParsedConditions, current: Current) {
    this.method = method
    this.conditions = conditions
    this.current = current
  }

  get validators (): Validators { return toValidators(this.current) }
  get etag (): string | undefined { return this.current.raw }
  get conditional (): boolean { return hasPrecondition(this.conditions) }
  get expectedEtag (): string | null {
    const c = this.conditions
    const onState = hasWritePrecondition(c) || c.ifNoneMatch !== undefined
    return onState && this.current.exists && this.current.raw !== undefined ? this.current.raw : null
  }

  get expectedLastModified (): number | null {
    const c = this.conditions
    const ius = c.ifUnmodifiedSince
    return c.ifMatch === undefined && typeof ius === 'number' && this.current.exists ? ius : null
  }

  private outcome (current: ProvidedValidators | null): { outcome: PreconditionOutcome, c: Current } {
    const c = readProvided(current)
    return { outcome: evaluateParsed(this.method, this.conditions, toValidators(c)), c }
  }

  holds (current: ProvidedValidators | null): boolean {
    return this.outcome(current).outcome.outcome === 'proceed'
  }

  assert (current: ProvidedValidators | null): void {
    const { outcome, c } = this.outcome(current)
    if (outcome.outcome !== 'proceed') throw failedFor(outcome, this.conditions, c)
  }

  failed (text: string = LOST_RACE, currentEtag?: string): ConventionError {
    return preconditionFailed(headerOf(this.conditions), text, currentEtag === undefined ? undefined : normalizeEntityTag(currentEtag))
  }
}

/** Parses the request's precondition fields; the common unconditional request costs four lookups. */
function conditionsOf (request: FastifyRequest): ParsedConditions {
  const h = request.headers
  const ims = h['if-modified-since']
  const ius = h['if-unmodified-since']
  if (h['if-match'] === undefined && h['if-none-match'] === undefined && ims === undefined && ius === undefined) return NO_CONDITIONS
  if (ims === undefined && ius === undefined) return parseConditions(h)
  // Node keeps only the first of several If-(Un)Modified-Since lines; several dates are
  // ignored (RFC 9110 13.1.3, 13.1.4), so read every line from rawHeaders.
  return parseConditions(conditionalHeadersFromRaw((request.raw as IncomingMessage).rawHeaders))
}

/** IMF-fixdate (RFC 9110 5.6.7), remembering the last value (most responses repeat it): one per registration, never per process. */
function httpDates (): (ms: number) => string {
  let lastDateMs = NaN
  let lastDate = ''
  return function httpDate (ms: number): string {
    const s = Math.floor(ms / 1000)
    if (s !== lastDateMs) {
      lastDate = formatHttpDate(ms)
      lastDateMs = s
    }
    return lastDate
  }
}

function routeConfig (c: RouteCompiler): ConditionalRouteConfig | null {
  const config = checkRouteConfig(c.where, c.config.conditional)
  if (config === undefined || config === false) return null
  return config === true ? {} : config
}

/**
 * The payload-hashed ETag of a route without a validators provider, with the values
 * @fastify/etag gives (the base64 digest of the payload, quoted; `W/` when weak). That
 * plugin's only public API hashes every payload of a context; the suite hashes only on the
 * routes that opt in, so it hashes here, with node:crypto as @fastify/etag does. An unknown
 * algorithm throws here, at registration.
 */
function payloadHasher (opts: ConditionalOptions['etag'] = {}): (reply: FastifyReply, payload: unknown) => void {
  const algorithm = opts.algorithm ?? 'sha1'
  const open = opts.weak === true ? 'W/"' : '"'
  crypto.hash(algorithm, '')
  return function hashPayload (reply, payload) {
    // A route's own ETag wins; only bodies in memory are hashed (a stream is read first: hashStream).
    if (reply.getHeader('etag') !== undefined) return
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return
    reply.header('etag', open + crypto.hash(algorithm, payload, 'base64') + '"')
  }
}

// ---------------------------------------------------------------------------------------
// Options

/** The plugin's options, resolved once per registration. */
interface Settings {
  readonly httpDate: (ms: number) => string
  readonly hashPayload: (reply: FastifyReply, payload: unknown) => void
  /** The most bytes of a stream body read to hash it. */
  readonly maxStreamBytes: number
  readonly notModifiedStatus: 412 | 304
  readonly cacheControl: string | false
  /** The cacheControl option was given (not the profile's default). */
  readonly cacheControlGiven: boolean
  readonly requireAll: boolean
  readonly requireMethods: ReadonlySet<string>
  /** The "not modified" 412s (If-None-Match, If-Modified-Since), rendered once: answered before the handler, and made of another's 304. */
  readonly notModifiedEtag: PreparedError
  readonly notModifiedDate: PreparedError
  readonly elsewhereEtag: PreparedError
  readonly elsewhereDate: PreparedError
}

function resolveSettings (opts: ConditionalOptions): Settings {
  checkOptions(opts)
  const httpDate = httpDates()
  let hashPayload: (reply: FastifyReply, payload: unknown) => void
  try {
    hashPayload = payloadHasher(opts.etag)
  } catch (err) {
    throw invalidOption(PLUGIN, `etag: ${(err as Error).message}`)
  }
  const notModifiedStatus = opts.notModifiedStatus ?? profileDefaults(opts.profile).notModifiedStatus
  // Conventions (Conditional requests, "Browsers and caches"): under a 412 "not modified" no
  // cache may keep a copy it would revalidate (RFC 9111 5.2.2.5 no-store); under a 304 a cache
  // keeps it and revalidates it at every use (RFC 9111 5.2.2.4 no-cache), so a write is never
  // hidden by a copy its heuristic freshness (RFC 9111 4.2.2) would still serve.
  const cacheControl = opts.cacheControl ?? (notModifiedStatus === 412 ? 'no-store' : 'no-cache')
  const requireAll = opts.requirePrecondition ?? false
  const requireMethods = new Set((opts.requirePreconditionMethods ?? ['PUT', 'PATCH', 'DELETE']).map((m) => m.toUpperCase()))
  const notModifiedEtag = prepareError(preconditionFailed('If-None-Match', NOT_MODIFIED_ETAG))
  const notModifiedDate = prepareError(preconditionFailed('If-Modified-Since', NOT_MODIFIED_DATE))
  const elsewhereEtag = prepareError(preconditionFailed('If-None-Match', elsewhereMessage('If-None-Match')))
  const elsewhereDate = prepareError(preconditionFailed('If-Modified-Since', elsewhereMessage('If-Modified-Since')))
  const maxStreamBytes = opts.etag?.maxStreamBytes ?? DEFAULT_STREAM_BYTES
  return { httpDate, hashPayload, maxStreamBytes, notModifiedStatus, cacheControl, cacheControlGiven: opts.cacheControl !== undefined, requireAll, requireMethods, notModifiedEtag, notModifiedDate, elsewhereEtag, elsewhereDate }
}

// ---------------------------------------------------------------------------------------
// Plan: what a conditional route gets, as data

interface RoutePlan {
  /** The route's validators provider; undefined: the ETag is hashed from the payload (GET/HEAD only). */
  readonly provider: ValidatorsProvider | undefined
  /** requirePrecondition on this route (428, RFC 6585 3). */
  readonly require: boolean
  /** The route's error format, where the kernel tells it (a direct "not modified" answer needs it). */
  readonly errorFormat: ErrorFormat | undefined
  readonly creates: boolean | undefined
  /** The route serves GET or HEAD. */
  readonly safe: boolean
  /** The route serves PUT or PATCH (with a provider, as every unsafe method has): its 2xx carry the stored state's validators. */
  readonly writes: boolean
  readonly head: boolean
  /** Says, once per route, that an answer's body could not be hashed: it went without an ETag. */
  readonly unhashed: (reply: FastifyReply, why: string) => void
}

function planRoute (c: RouteCompiler, s: Settings, own: ConditionalRouteConfig | null, provided: ValidatorsProvider | undefined): RoutePlan {
  const config: ConditionalRouteConfig = own ?? {}
  const methods = c.methods
  const provider = config.validators ?? provided
  const unsafe = methods.filter((m) => !SAFE.has(m))
  if (provider === undefined && unsafe.length > 0) {
    // RFC 9110 13.2.1: an unsafe method's preconditions must be known before it runs.
    throw invalidOption(c.where, `config.conditional needs a validators provider on ${unsafe.join(', ')}: preconditions are evaluated before the handler`)
  }
  const require = config.requirePrecondition ?? s.requireAll
  const errorFormat = c.errorFormat
  const creates = config.creates
  const safe = methods.some((m) => SAFE.has(m))
  const head = methods.includes('HEAD')
  const writes = methods.some((m) => WRITES.has(m))
  return { provider, require, errorFormat, creates, safe, writes, head, unhashed: unhashedLogger(c.where) }
}

/**
 * A hashed route whose body cannot be hashed (a stream over the bound, a web stream) sends
 * it without an ETag: If-Match then fails and If-None-Match never matches (RFC 9110 13.1.1,
 * 13.1.2), so nothing is served against a validator nobody computed. One error line per
 * route says so, with the fix.
 */
function unhashedLogger (where: string): (reply: FastifyReply, why: string) => void {
  let logged = false
  return function logUnhashed (reply, why) {
    if (logged) return
    logged = true
    reply.log.error({ route: where }, `${where}: config.conditional: true sent ${why} without an ETag, so its preconditions cannot match it: give config.conditional.validators (the resource's current ETag), or set an ETag header on the answer`)
  }
}

const ETAG_TEXT = 'The current entity tag of the resource'

/** OpenAPI: what the answers of this route are, in this profile. */
function documentRoute (c: RouteCompiler, s: Settings, plan: RoutePlan): void {
  const { safe, provider } = plan
  const notModifiedIs412 = safe && s.notModifiedStatus === 412
  c.respond(412, {
    description: notModifiedIs412
      ? 'Precondition Failed: If-Match or If-Unmodified-Since does not hold, or (GET/HEAD) the client\'s copy is current: If-None-Match matches, or unchanged since If-Modified-Since (field: the header)'
      : 'Precondition Failed: If-Match, If-None-Match, If-Unmodified-Since or If-Modified-Since does not hold (field: the header)',
    body: 'envelope',
    headers: ['ETag']
  })
  const cached = s.cacheControl === false ? [] : ['Cache-Control']
  c.describe({ headerTexts: { ETag: ETAG_TEXT, 'Last-Modified': 'When the resource last changed (HTTP-date)', 'Cache-Control': CACHE_CONTROL_TEXT } })
  if (safe && s.notModifiedStatus === 304) c.respond(304, { description: 'Not Modified: the client\'s copy is current', body: 'none', headers: ['ETag', ...cached] })
  // RFC 9110 8.8: GET/HEAD answers carry the validators (Last-Modified where a provider gives it).
  if (safe) c.describe({ successHeaders: provider === undefined ? ['ETag', ...cached] : ['ETag', 'Last-Modified', ...cached] })
  if (plan.require && c.methods.some((m) => s.requireMethods.has(m))) c.respond(428, { description: 'Precondition Required: send If-Match with the ETag of a GET', body: 'envelope' })
}

/**
 * requirePrecondition is a context-wide policy: a write of those methods is covered without
 * config.conditional. One that gives no validators cannot say whether If-Match holds
 * (RFC 9110 13.1.1), so it is refused at boot rather than served without preconditions.
 */
function coveredByPolicy (c: RouteCompiler, s: Settings): void {
  const writes = c.methods.filter((m) => s.requireMethods.has(m))
  if (!s.requireAll || c.config.conditional === false || writes.length === 0) return
  throw invalidOption(c.where, `requirePrecondition covers ${writes.join(', ')}, but the route gives no validators: set config.conditional: { validators } (the current ETag or Last-Modified), or config.conditional: false to exempt it`)
}

// ---------------------------------------------------------------------------------------
// Steps

function conditionalPreHandler (request: FastifyRequest, _reply: FastifyReply, done: Next): void {
  // Payload-hashed GET/HEAD: evaluated in onSend; only a malformed If-Match is known now (RFC 9110 13.1.1).
  const conditions = conditionsOf(request)
  const current: Current = { exists: true, raw: undefined, etag: undefined, lastModified: undefined }
  request.preconditions = new RequestPreconditions(request.method, conditions, current)
  if (conditions.ifMatch === INVALID) return done(failedFor({ outcome: 'precondition-failed', header: 'If-Match' }, conditions, current))
  done()
}

function providerPreHandler (s: Settings, plan: RoutePlan, read: ValidatorsProvider): HookStep {
  return function conditionalProviderPreHandler (request: FastifyRequest, reply: FastifyReply, done: Next): void {
    let value
    try {
      value = read(request as RouteRequest)
    } catch (err) {
      return done(err as Error)
    }
    if (isThenable(value)) value.then((v) => decide(s, plan, request, reply, v, done), done)
    else decide(s, plan, request, reply, value, done)
  }
}

/** A provider route's preconditions, evaluated against the validators its provider read. */
function decide (s: Settings, plan: RoutePlan, request: FastifyRequest, reply: FastifyReply, value: ProvidedValidators | null | undefined, done: Next): void {
  let current: Current
  try {
    current = readProvided(value)
  } catch (err) {
    return done(err as Error)
  }
  const method = request.method
  const conditions = conditionsOf(request)
  request.preconditions = new RequestPreconditions(method, conditions, current)
  ;(request as Tracked)[kCurrent] = current
  if (conditions === NO_CONDITIONS) {
    // RFC 6585 3: the write must be conditional on the state it replaces.
    if (plan.require && current.exists && s.requireMethods.has(method)) return done(required(request))
    return done()
  }
  if (!current.exists && conditions.ifMatch !== INVALID && !(plan.creates ?? method === 'PUT')) {
    // RFC 9110 13.2.1: a request that would fail anyway (a 404 here) is answered so, whatever its
    // preconditions: `If-Match: *` as `If-Match: "x"` and If-Unmodified-Since. Only a route that
    // creates the resource evaluates them against the missing one (RFC 9110 13.1.1: 412).
    return done()
  }
  const outcome = evaluateParsed(method, conditions, toValidators(current))
  if (outcome.outcome === 'proceed') {
    if (plan.require && current.exists && s.requireMethods.has(method) && !hasWritePrecondition(conditions)) return done(required(request))
    return done()
  }
  if (outcome.outcome === 'not-modified') {
    if (s.notModifiedStatus === 304) {
      // RFC 9110 15.4.5: the 304 keeps the headers a 200 would carry, so the handler still
      // runs (a safe method) and onSend turns its answer into the 304.
      (request as Tracked)[kOutcome] = outcome
      return done()
    }
    // Conventions (Conditional requests): "not modified" is a 412 answered here, before the
    // handler, as a normal answer (not an error): its envelope is written once per process.
    if (answerNotModified(s, request, reply, outcome.header, current, plan.errorFormat)) return
  }
  // RFC 9110 13.1: 412, before an unsafe method runs; conventions (Conditional requests): also GET/HEAD "not modified".
  done(failedFor(outcome, conditions, current))
}

/** The onSend step of a GET/HEAD route: its validators, and for a payload-hashed route its preconditions. */
function validatorsOnSend (s: Settings, plan: RoutePlan, cacheControl: string | false) {
  return function conditionalOnSend (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
    const status = reply.statusCode
    // Validators describe a 2xx answer: of a GET/HEAD, or of a write (the state it stored); never an error.
    if (status < 200 || status > 299) return done(null, payload)
    if (!SAFE.has(request.method)) return plan.writes && WRITES.has(request.method) ? written(s, plan.provider as ValidatorsProvider, request, reply, payload, done) : done(null, payload)
    // RFC 9110 15.4.5: a 304 made of this answer keeps its Cache-Control too.
    if (cacheControl !== false && reply.getHeader('cache-control') === undefined) reply.header('cache-control', cacheControl)
    const tracked = request as Tracked
    const current = tracked[kCurrent]
    if (current !== null) {
      // Provider route: decided in preHandler; the response carries the validators (RFC 9110 8.8).
      sendValidators(s, reply, current)
      const outcome = tracked[kOutcome]
      if (outcome === null) return done(null, payload)
      return done(null, replacePayload(payload, notModified(plan, request, reply)))
    }
    evaluatePayload(s, plan, request, reply, payload, done)
  }
}

/**
 * RFC 9110 8.8.3 and 9.3.4: a successful PUT or PATCH answers with the validators of the state
 * it wrote, read from the route's provider after the handler (the ones read before it describe
 * the state the write replaced), so a client can make its next write conditional on its own
 * without a GET. An ETag the handler set itself is kept; a provider that finds nothing sends none.
 */
function written (s: Settings, read: ValidatorsProvider, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
  if (reply.getHeader('etag') !== undefined) return done(null, payload)
  // The write is done: a provider that fails now leaves the answer without validators (and
  // says so in the log) rather than turning a stored write into a 500 a client would retry.
  function failed (err: unknown): void {
    reply.log.error({ err }, 'config.conditional.validators failed after the write: the answer goes without the new ETag')
    done(null, payload)
  }
  function send (value: ProvidedValidators | null | undefined): void {
    try {
      sendValidators(s, reply, readProvided(value))
    } catch (err) {
      return failed(err)
    }
    done(null, payload)
  }
  let value
  try {
    value = read(request as RouteRequest)
  } catch (err) {
    return failed(err)
  }
  if (isThenable(value)) value.then(send, failed)
  else send(value)
}

/** RFC 9110 8.8: a provider route's answer carries the validators its provider read. */
function sendValidators (s: Settings, reply: FastifyReply, current: Current): void {
  if (current.etag !== undefined && reply.getHeader('etag') === undefined) reply.header('etag', current.etag)
  if (current.lastModified !== undefined && reply.getHeader('last-modified') === undefined) {
    // RFC 9110 8.8.2.1: never later than the answer's Date. Within the current second
    // Date is set from the same clock reading (Node caches its own Date per second).
    const now = Date.now()
    if (current.lastModified > now - 1000 && reply.getHeader('date') === undefined) reply.header('date', s.httpDate(now))
    reply.header('last-modified', s.httpDate(Math.min(current.lastModified, now)))
  }
}

/** A payload-hashed route: the ETag of the answer (a stream's read first), then the preconditions against it. */
function evaluatePayload (s: Settings, plan: RoutePlan, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
  if (reply.getHeader('etag') === undefined && payload !== null && typeof payload === 'object' && !Buffer.isBuffer(payload)) {
    // RFC 9110 9.3.2: a HEAD's stream may be empty (@fastify/send's, a proxied HEAD's); a field
    // known only from the content, its ETag is omitted rather than made of no bytes.
    if (request.method === 'HEAD') return decidePayload(s, plan, request, reply, payload, done)
    if (isNodeStream(payload)) return hashStream(s, plan, request, reply, payload, done)
    plan.unhashed(reply, 'a body it cannot read (a web stream or a Response)')
  }
  s.hashPayload(reply, payload)
  decidePayload(s, plan, request, reply, payload, done)
}

/**
 * RFC 9110 8.8.3: the ETag of a stream body is the hash of its bytes, read up to
 * `etag.maxStreamBytes`; the bytes read are what is sent. A longer stream is sent whole,
 * the bytes read first, without an ETag.
 */
function hashStream (s: Settings, plan: RoutePlan, request: FastifyRequest, reply: FastifyReply, stream: Readable, done: PayloadNext): void {
  readBounded(stream, s.maxStreamBytes, function streamRead (err: Error | null, read: BoundedRead) {
    if (err !== null) {
      release(stream)
      return done(err)
    }
    if (!read.complete) {
      plan.unhashed(reply, `a stream longer than etag.maxStreamBytes (${s.maxStreamBytes} bytes)`)
      return decidePayload(s, plan, request, reply, replay(read.chunks, stream), done)
    }
    const body = Buffer.concat(read.chunks)
    // RFC 9112 6.1: the body now has a length; an upstream's chunked framing is not this answer's.
    reply.removeHeader('transfer-encoding')
    s.hashPayload(reply, body)
    decidePayload(s, plan, request, reply, body, done)
  })
}

/** The preconditions, evaluated against the ETag (and Last-Modified) of the answer. */
function decidePayload (s: Settings, plan: RoutePlan, request: FastifyRequest, reply: FastifyReply, payload: unknown, done: PayloadNext): void {
  const etag = reply.getHeader('etag')
  const conditions = request.preconditions?.conditions ?? NO_CONDITIONS
  if (conditions === NO_CONDITIONS) return done(null, payload)
  const lm = reply.getHeader('last-modified')
  const lastModified = typeof lm === 'string' ? parseHttpDate(lm) ?? undefined : undefined
  const computed: Current = { exists: true, raw: typeof etag === 'string' ? etag : undefined, etag: undefined, lastModified }
  let outcome: PreconditionOutcome
  try {
    computed.etag = computed.raw === undefined ? undefined : normalizeEntityTag(computed.raw)
    outcome = evaluateParsed(request.method, conditions, toValidators(computed))
  } catch (err) {
    release(payload)
    return done(err as Error)
  }
  ;(request.preconditions as RequestPreconditions).current = computed
  if (outcome.outcome === 'proceed') return done(null, payload)
  // RFC 9110 15.4.5 / 15.5.13: the 304 or the 412 replaces the answer; its body is released.
  if (outcome.outcome === 'not-modified' && s.notModifiedStatus === 304) return done(null, replacePayload(payload, notModified(plan, request, reply)))
  release(payload)
  done(failedFor(outcome, conditions, computed))
}

function notModified (plan: RoutePlan, request: FastifyRequest, reply: FastifyReply): unknown {
  reply.code(304)
  for (const name of NOT_MODIFIED_DROPS) reply.removeHeader(name)
  // RFC 9110 15.4.5: Last-Modified only helps a cache when there is no ETag.
  if (reply.getHeader('etag') !== undefined) reply.removeHeader('last-modified')
  // RFC 9110 8.6: no Content-Length on a 304. Fastify measures a HEAD answer's payload after
  // this hook; an empty stream is one it leaves unmeasured.
  return plan.head && request.method === 'HEAD' ? Readable.from([]) : null
}

/**
 * Conventions (Conditional requests): a GET/HEAD whose current validators say "not modified"
 * is answered 412 from the preHandler step, before the handler, as a normal answer: the
 * envelope is written once (per field), no error object is built and none goes through the
 * error handlers (a failed write precondition, by contrast, is an error). Returns false
 * where the route's error format is not known: the 412 then travels as an error.
 */
function answerNotModified (s: Settings, request: FastifyRequest, reply: FastifyReply, header: string, current: Current, format: ErrorFormat | undefined): boolean {
  if (format === undefined) return false
  if (current.etag !== undefined) reply.header('etag', current.etag)
  // Rendered as every error is (plugins/services/errors.ts, writeError): the format, Accept and Vary alike.
  reply.send(writeError(reply, header === 'If-None-Match' ? s.notModifiedEtag : s.notModifiedDate, format))
  return true
}

function required (request: FastifyRequest): ConventionError {
  return preconditionRequired(`${request.method} ${request.url} must be conditional: GET the resource, then repeat this request with If-Match set to its ETag`)
}

function elsewhereMessage (field: string): string {
  return `not modified: the current representation matches ${field}`
}

type ElsewhereStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => string | undefined

/**
 * Conventions (Conditional requests): "not modified" is a 412 under the spec profile, also
 * where something else answered it (a handler's `reply.sendFile`) on a route that opted in
 * with `config.conditional`: rendered in the route's error format, as every error is.
 */
function notModifiedElsewhereStep (s: Settings, format: ErrorFormat): ElsewhereStep {
  return function notModifiedElsewhere (request, reply, payload) {
    if (reply.statusCode !== 304 || s.notModifiedStatus !== 412) return undefined
    // The catalogue's 412, rendered here: the answer is already on its way through onSend.
    const err = request.headers['if-none-match'] !== undefined ? s.elsewhereEtag : s.elsewhereDate
    return replacePayload(payload, writeError(reply, err, format))
  }
}

/** Puts the plan's steps on the route. */
function compileRoute (c: RouteCompiler, s: Settings, elsewhere: Readonly<Record<ErrorFormat, ElsewhereStep>>): void {
  const own = routeConfig(c)
  // Conventions (Which answers the conditional convention governs): a 304 another plugin
  // writes (@fastify/static, swagger-ui's assets) stays a 304 unless the route opts in.
  if (s.notModifiedStatus === 412 && own !== null) c.check('onSend', 'conditional:elsewhere', elsewhere[c.errorFormat])
  // A PATCH route's loader doubles as its validators provider (one read per request).
  const provided = c.use(VALIDATORS) as ValidatorsProvider | undefined
  if (own === null && provided === undefined) return coveredByPolicy(c, s)
  const plan = planRoute(c, s, own, provided)
  documentRoute(c, s, plan)
  c.step('preHandler', 'conditional', plan.provider === undefined ? conditionalPreHandler : providerPreHandler(s, plan, plan.provider))
  if (plan.safe || plan.writes) c.step('onSend', 'conditional', validatorsOnSend(s, plan, cacheControlOf(c, s)))
}

/**
 * The Cache-Control this convention writes on the route's GET/HEAD answers: its option's, or
 * none where another convention in effect owns the header (plugins/kernel/pipeline.ts:
 * `headers: { 'cache-control': { owns: true } }`). An option given beside that owner is a
 * boot error naming both: one convention says what the header is.
 */
function cacheControlOf (c: RouteCompiler, s: Settings): string | false {
  const owner = c.headerOwner('cache-control')
  if (owner === undefined) return s.cacheControl
  if (s.cacheControlGiven && s.cacheControl !== false) {
    throw invalidOption(PLUGIN, `${c.where}: Cache-Control is owned by the ${owner} convention in this route's context, and the conditional convention's cacheControl option says "${s.cacheControl}"; give that value to ${owner}, or leave conditional.cacheControl unset`)
  }
  return false
}

/** The conditional convention with its options: registered by the plugin, and used by PATCH routes when none is. */
export function conditionalConvention (opts: ConditionalOptions): Convention {
  const s = resolveSettings(opts)
  const elsewhere = { envelope: notModifiedElsewhereStep(s, 'envelope'), problem: notModifiedElsewhereStep(s, 'problem') }
  const policy = s.requireAll ? (methods: readonly string[]) => methods.some((m) => s.requireMethods.has(m)) : undefined
  return { key: 'conditional', plugin: PLUGIN, configKey: 'conditional', compile: (c) => compileRoute(c, s, elsewhere), policy }
}

function conditionalPlugin (fastify: FastifyInstance, opts: ConditionalOptions, done: (err?: Error) => void): void {
  try {
    declareConvention(fastify, conditionalConvention(opts), { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  if (!fastify.hasRequestDecorator('preconditions')) fastify.decorateRequest('preconditions', null)
  done()
}

/** Conditional requests (docs/conventions.md (Conditional requests)): ETag / Last-Modified, If-Match, If-None-Match, If-(Un)Modified-Since, 412, 304, 428. */
export const httpConventionsConditional = fp(conditionalPlugin, { fastify: '^5.10.0', name: PLUGIN })
