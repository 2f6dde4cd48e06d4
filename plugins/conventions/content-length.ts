/**
 * Content-Length (docs/conventions.md, Content-Length): POST, PUT and PATCH need a valid Content-Length; a
 * body over the limit is refused from its declared length before any byte is read;
 * framing errors that Node's HTTP parser catches itself are answered with 411 too, by the
 * `clientErrorHandler` of `serverOptions` (plugins/edge/framing.ts).
 *
 * Three parts: the options (validated at registration), a plan per route (pure data), and
 * the named hooks the plan selects. A GET or HEAD without a body runs one check (repeated
 * Host lines) and allocates nothing.
 */
import type { Server } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badFraming, contentTooLarge, lengthRequired, notImplemented, type ConventionError } from '../../lib/errors'
import { profileDefaults, type Profile } from '../../lib/profile'
import { declareConvention, type RouteCompiler } from '../host/suite'
import { declaresBody, hostLines } from '../services/shared'
import { MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { continueRequestsOnFirstRead, lingerOnClose } from '../infrastructure/adapter'
import { coalesceBody } from '../services/body-reader'
import { behindClosing, isMisframed, markClosing, setFramingPolicy, trackBody } from '../edge/framing'
import { answerAtServer } from '../edge/server-answers'
import { defineConvention } from '../host/suite'

/** Options of the Content-Length plugin (RFC 9110 8.6, 15.5.12): the body limit and the statuses of its refusals. */
export interface ContentLengthOptions {
  profile?: Profile
  /** Largest accepted body in bytes. Default: the server's `bodyLimit`. A route's own `bodyLimit` or `config.contentLength.bodyLimit` overrides it. */
  bodyLimit?: number
  /** Methods that must declare their body length. Default POST, PUT, PATCH. */
  methods?: string[]
  /** Refuse bodies without Content-Length (chunked, or none at all on the methods above). Spec: true; rfc9110: false. */
  requireContentLength?: boolean
  /** Status for a body over the limit: 411 (spec) or 413 (rfc9110). */
  limitStatus?: 411 | 413
  /** Status for a Content-Length that does not match the body: 411 (spec) or 400 (rfc9110). */
  mismatchStatus?: 411 | 400
}

/** `config.contentLength`: the route's own body limit. */
export interface ContentLengthRouteConfig {
  bodyLimit?: number
}

const PLUGIN = 'fastify-http-conventions-content-length'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'content-length',
  plugin: 'fastify-http-conventions-content-length',
  configKey: 'contentLength',
  steps: [
    // RFC 9112 6: 411/413 and repeated Host lines before any byte of the body is read, before credentials
    { name: 'content-length', phase: 'preParsing', after: ['redirect'] },
    // the body another parser reads, joined into blocks: its stream, once every refusal passed (RFC 9110 10.1.1: 100 Continue then)
    { name: 'content-length:body', phase: 'preParsing', after: ['redirect', 'content-length', 'auth', 'content-type', 'patch:media-type'] },
    { name: 'content-length:framing', phase: 'preValidation' }, // RFC 9112 6.3: a body longer than its Content-Length
    { name: 'content-length:close', phase: 'onSend', after: ['auth:challenges'] } // an answer that closes its connection ends the connection's pipeline
  ]
})

const WHERE = 'http-conventions/content-length'

/** The plugin's options as JSON Schema, checked at registration. */
export const contentLengthOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    bodyLimit: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be a non-negative integer' },
    methods: { type: 'array', items: { type: 'string' }, [MESSAGE]: 'must be an array of method names' },
    requireContentLength: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
    limitStatus: { enum: [411, 413], [MESSAGE]: 'must be 411 or 413' },
    mismatchStatus: { enum: [411, 400], [MESSAGE]: 'must be 411 or 400' }
  }
} as const

/** A route's `config.contentLength` as JSON Schema, checked when the route is added. */
export const contentLengthRouteConfigSchema = {
  type: ['boolean', 'object'],
  not: { const: true },
  additionalProperties: false,
  properties: {
    bodyLimit: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be a non-negative integer' }
  },
  [MESSAGE]: 'must be false or { bodyLimit }'
} as const

// ---------------------------------------------------------------------------------------
// Options

/** The plugin's options, resolved once at registration. */
interface Settings {
  readonly requireLength: boolean
  readonly limitStatus: 411 | 413
  readonly mismatchStatus: 411 | 400
  readonly serverLimit: number
  readonly pluginLimit: number
  readonly methods: ReadonlySet<string>
  readonly tooLarge: (reason: string) => ConventionError
  readonly mismatch: (reason: string) => ConventionError
  /** The server speaks HTTP/2 (RFC 9113 8.2.2: no connection-specific fields). */
  readonly http2: boolean
}

const validate = optionsChecker(WHERE, contentLengthOptionsSchema)
const checkRouteConfig = routeConfigChecker<ContentLengthRouteConfig | false>('contentLength', contentLengthRouteConfigSchema)

function resolveSettings (fastify: FastifyInstance, opts: ContentLengthOptions): Settings {
  validate(opts)
  const defaults = profileDefaults(opts.profile)
  const limitStatus = opts.limitStatus ?? defaults.limitStatus
  const mismatchStatus = opts.mismatchStatus ?? defaults.mismatchStatus
  const serverLimit = fastify.initialConfig.bodyLimit ?? 1048576
  return {
    requireLength: opts.requireContentLength ?? defaults.requireContentLength,
    limitStatus,
    mismatchStatus,
    serverLimit,
    pluginLimit: opts.bodyLimit ?? serverLimit,
    methods: new Set((opts.methods ?? ['POST', 'PUT', 'PATCH']).map((m) => m.toUpperCase())),
    tooLarge: limitStatus === 413 ? contentTooLarge : lengthRequired,
    mismatch: mismatchStatus === 400 ? badFraming : lengthRequired,
    http2: fastify.initialConfig.http2 === true
  }
}

// ---------------------------------------------------------------------------------------
// Plan: what a route gets, as data

interface RoutePlan {
  /** The route's body limit; false: `config.contentLength: false` (no rule at all). */
  readonly limit: number | false
  /** GET/HEAD only: Fastify never reads their bodies. */
  readonly unreadBody: boolean
  /** Statuses documented for the route (OpenAPI). */
  readonly documents: readonly number[]
}

function configuredLimit (c: RouteCompiler, s: Settings): number | false {
  const config = checkRouteConfig(c.where, c.config.contentLength)
  if (config === false) return false
  if (config?.bodyLimit !== undefined) return config.bodyLimit
  const own = c.route.bodyLimit
  return own !== undefined && own !== s.serverLimit ? own : s.pluginLimit
}

function planRoute (c: RouteCompiler, s: Settings): RoutePlan {
  const limit = configuredLimit(c, s)
  const unreadBody = c.methods.every((m) => m === 'GET' || m === 'HEAD')
  const documents: number[] = []
  if (limit !== false && !unreadBody && c.methods.some((m) => s.methods.has(m))) {
    documents.push(s.requireLength || s.mismatchStatus === 411 ? 411 : 400)
    if (s.limitStatus === 413) documents.push(413)
  }
  return { limit, unreadBody, documents }
}

// ---------------------------------------------------------------------------------------
// Hooks

/** Refuses a request whose body will not be read: its connection closes after the answer (RFC 9112 9.6). */
function refuse (request: FastifyRequest, reply: FastifyReply, err: ConventionError): ConventionError {
  markClosing(request.raw, reply.raw)
  // RFC 9112 9.6: keep reading the unread body for a while after the answer, so the client sees it.
  if (request.raw.httpVersionMajor === 1 && declaresBody(request.headers)) lingerOnClose(request.raw.socket)
  return err
}

function refuseHosts (request: FastifyRequest, reply: FastifyReply): ConventionError {
  return refuse(request, reply, badFraming('the request carries more than one Host field (RFC 9112 3.2)'))
}

/**
 * Why the body a request declares is refused, or null: `limit` is the route's; `readsBody`
 * is false for GET and HEAD, whose bodies Fastify never reads.
 */
function bodyProblem (s: Settings, request: FastifyRequest, limit: number, readsBody: boolean): ConventionError | null {
  const headers = request.headers
  const te = headers['transfer-encoding']
  if (te !== undefined) {
    // Conventions (Content-Length): a body without Content-Length is refused (RFC 9112 6.1 would accept chunked).
    if (s.requireLength) return lengthRequired('a request body must be sent with Content-Length, not chunked')
    // RFC 9112 6.1: a transfer coding the server does not understand is 501; only chunked is read.
    if (readsBody && te.trim().toLowerCase() !== 'chunked') return notImplemented(`transfer coding ${JSON.stringify(te)} is not supported; send the body chunked or with Content-Length`)
    // A limit of 0 admits no body at all (Fastify would read it up to the server's limit).
    return limit === 0 ? s.tooLarge('the body is larger than the limit of 0 bytes') : null
  }
  const cl = headers['content-length']
  if (cl === undefined) {
    // RFC 9112 6.3: body bytes may follow all the same (an HTTP/1.0 client reading until close):
    // they must never be read as a next request, so the connection closes after the 411.
    return readsBody && s.requireLength && s.methods.has(request.method) ? lengthRequired(`${request.method} requires a Content-Length header`) : null
  }
  // Node's parser already refused anything but 1*DIGIT (RFC 9110 8.6) and duplicates.
  return Number(cl) > limit ? s.tooLarge(`the body is larger than the limit of ${limit} bytes`) : null
}

function makeHooks (s: Settings) {
  return {
    /** preParsing of GET/HEAD: Host lines; a body (never read) refused when chunked or over the limit. */
    checkUnreadBody (limit: number) {
      return function checkUnreadBody (request: FastifyRequest, reply: FastifyReply): ConventionError | undefined {
        if (hostLines(request.raw.rawHeaders, 2) > 1) return refuseHosts(request, reply)
        const headers = request.headers
        if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return undefined
        const problem = bodyProblem(s, request, limit, false)
        return problem === null ? undefined : refuse(request, reply, problem)
      }
    },
    /** preParsing of a route that reads bodies: Host lines, the connection's pipeline, the declared body. */
    checkLength (limit: number) {
      return function checkLength (request: FastifyRequest, reply: FastifyReply): ConventionError | undefined {
        const raw = request.raw
        if (hostLines(raw.rawHeaders, 2) > 1) return refuseHosts(request, reply)
        // RFC 9112 9.3.2: bytes pipelined behind a request whose body was never read cannot be framed.
        if (behindClosing(raw)) return refuse(request, reply, lengthRequired('an earlier request on this connection was refused; send this one on a new connection'))
        const problem = bodyProblem(s, request, limit, true)
        if (problem !== null) return refuse(request, reply, problem)
        if (declaresBody(request.headers)) trackBody(raw, reply.raw)
        return undefined
      }
    },
    /** preValidation: the parser found bytes beyond the declared body (RFC 9112 6.3); the body this handler would see is wrong. */
    refuseMisframed (request: FastifyRequest): ConventionError | undefined {
      return isMisframed(request.raw) ? s.mismatch('the body is longer than its Content-Length') : undefined
    },
    /** onSend: an answer that closes its connection (a 307, 401 or 415 that left the body unread) ends the pipeline. */
    closingAnswer (request: FastifyRequest, reply: FastifyReply): undefined {
      if (reply.statusCode < 300 || reply.getHeader('connection') !== 'close') return
      // RFC 9113 8.2.2: HTTP/2 has no connection-specific fields; each stream is framed on its own.
      if (request.raw.httpVersionMajor >= 2) {
        reply.removeHeader('connection')
        return
      }
      markClosing(request.raw, reply.raw)
      if (declaresBody(request.headers)) lingerOnClose(request.raw.socket)
    }
  }
}

type Hooks = ReturnType<typeof makeHooks>

/** Puts the plan's hooks on the route. */
function compileRoute (c: RouteCompiler, s: Settings, hooks: Hooks): void {
  c.errorPolicy({ limitStatus: s.limitStatus, mismatchStatus: s.mismatchStatus })
  const plan = planRoute(c, s)
  for (const status of plan.documents) {
    c.respond(status, status === 413
      ? { description: 'Content Too Large: the body is over the limit', body: 'text' }
      : { description: 'Length Required: the body lacks a valid Content-Length, or is over the limit', body: 'text' })
  }
  // On HTTP/1 a GET or HEAD route gets no onSend step: its refusals close the connection themselves.
  if (plan.limit !== false && (!plan.unreadBody || s.http2)) c.check('onSend', 'content-length:close', hooks.closingAnswer)
  // `config.contentLength: false`: no framing rule on this route, the Host check included.
  if (plan.limit === false) return
  const limit = plan.limit
  const route = c.route
  // The route's own bodyLimit follows ours, so Fastify's reader enforces the same number on chunked bodies.
  if (route.bodyLimit === undefined || route.bodyLimit > limit) route.bodyLimit = limit
  if (plan.unreadBody) {
    c.check('preParsing', 'content-length', hooks.checkUnreadBody(limit))
    return
  }
  c.check('preParsing', 'content-length', hooks.checkLength(limit))
  c.check('preValidation', 'content-length:framing', hooks.refuseMisframed)
  // Bodies another parser reads are joined into blocks (plugins/services/body-reader.ts); only routes that read bodies.
  c.body('content-length:body', coalesceBody)
}

function contentLengthPlugin (fastify: FastifyInstance, opts: ContentLengthOptions, done: (err?: Error) => void): void {
  try {
    const settings = resolveSettings(fastify, opts)
    const hooks = makeHooks(settings)
    // Parser errors have no route: the first registration's statuses answer them (serverOptions.clientErrorHandler).
    setFramingPolicy(fastify.server, { mismatch: settings.mismatch })
    declareConvention(fastify, {
      key: 'content-length',
      plugin: PLUGIN,
      configKey: 'contentLength',
      compile: (c) => compileRoute(c, settings, hooks),
      refusesBodies: true
    }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  // RFC 9110 10.1.1: `100 (Continue)` only when the body is first read, which is once every
  // check of the headers passed (the suite's length, credentials and media type, and Fastify's
  // own choice of a parser: a media type no parser reads is 415 without a 100). A refusal
  // reads nothing, so its answer is the final status the client waits for, and the client
  // does not send the body (plugins/infrastructure/adapter.ts).
  continueRequestsOnFirstRead(fastify.server as unknown as Server)
  // RFC 9112 2.3 / 3.2, RFC 9110 10.1.1: the answers written before Fastify routes a request (plugins/edge/server-answers.ts).
  answerAtServer(fastify)
  done()
}

/** The Content-Length plugin: 411 for a body without a valid Content-Length or over the limit (RFC 9110 15.5.12), the body checked against its length. */
export const httpConventionsContentLength = fp(contentLengthPlugin, { fastify: '^5.10.0', name: PLUGIN })
