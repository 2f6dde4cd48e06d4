/**
 * Content-Length (docs/conventions.md, Content-Length): POST, PUT and PATCH need a valid Content-Length; a
 * body over the limit is refused from its declared length before any byte is read;
 * framing errors that Node's HTTP parser catches itself are answered with 411 too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badFraming, contentTooLarge, invalidOption, lengthRequired, notImplemented, type ConventionError } from '../lib/errors'
import { profileDefaults, type Profile } from '../lib/profile'
import { rawResponse } from './errors'
import { contextHeaders, declareConvention, type RouteCompiler } from './kernel/index'
import { assertProfile, rejectUnknownKeys, declaresBody } from './shared'
import { kRefused, markRefused } from './connection'
import { lingerOnClose } from './adapter'
import { coalesceBody } from './body-reader'

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

export interface ContentLengthRouteConfig {
  bodyLimit?: number
}

const PLUGIN = 'fastify-http-conventions-content-length'
const OPTIONS: ReadonlyArray<keyof ContentLengthOptions> = ['profile', 'bodyLimit', 'methods', 'requireContentLength', 'limitStatus', 'mismatchStatus']
const kMisframed = Symbol('http-conventions.misframed')
const kHadBody = Symbol('http-conventions.had-body')
const kCurrent = Symbol('http-conventions.current-request')
// Requests are numbered per connection. When one is refused without its body being read,
// the connection closes after that answer, and requests pipelined behind it must never run.
/** On a socket: the first request on it that was refused without its body being read. */
const kCurrentResponse = Symbol('http-conventions.current-response')
const kHosts = Symbol('http-conventions.host-lines')
const kListening = Symbol.for('fastify-http-conventions.content-length-listeners')

type TrackedRequest = IncomingMessage & { [kMisframed]?: boolean, [kHosts]?: number }
type TrackedSocket = Socket & { [kHadBody]?: boolean, [kRefused]?: IncomingMessage, [kCurrent]?: TrackedRequest, [kCurrentResponse]?: ServerResponse }

// Parser errors that are about the message's framing (RFC 9112 6.1-6.3).
const FRAMING_ERRORS = new Set(['HPE_UNEXPECTED_CONTENT_LENGTH', 'HPE_INVALID_CONTENT_LENGTH', 'HPE_INVALID_TRANSFER_ENCODING'])
// Errors that follow a body longer than its Content-Length: the excess reads as a broken next request.
const TRAILING_ERRORS = new Set(['HPE_INVALID_METHOD', 'HPE_INVALID_CONSTANT', 'HPE_INVALID_URL', 'HPE_INVALID_VERSION', 'HPE_CR_EXPECTED', 'HPE_LF_EXPECTED', 'HPE_INVALID_HEADER_TOKEN'])

function isPositiveInt (n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
}

function validate (opts: ContentLengthOptions): void {
  const where = 'http-conventions/content-length'
  assertProfile(where, opts.profile)
  rejectUnknownKeys(where, opts, OPTIONS, 'option')
  if (opts.bodyLimit !== undefined && !isPositiveInt(opts.bodyLimit)) throw invalidOption(where, 'bodyLimit must be a non-negative integer')
  if (opts.methods !== undefined && (!Array.isArray(opts.methods) || opts.methods.some((m) => typeof m !== 'string'))) throw invalidOption(where, 'methods must be an array of method names')
  if (opts.requireContentLength !== undefined && typeof opts.requireContentLength !== 'boolean') throw invalidOption(where, 'requireContentLength must be a boolean')
  if (opts.limitStatus !== undefined && opts.limitStatus !== 411 && opts.limitStatus !== 413) throw invalidOption(where, 'limitStatus must be 411 or 413')
  if (opts.mismatchStatus !== undefined && opts.mismatchStatus !== 411 && opts.mismatchStatus !== 400) throw invalidOption(where, 'mismatchStatus must be 411 or 400')
}

function contentLengthPlugin (fastify: FastifyInstance, opts: ContentLengthOptions, done: (err?: Error) => void): void {
  try { validate(opts) } catch (err) { return done(err as Error) }
  const defaults = profileDefaults(opts.profile)
  const requireLength = opts.requireContentLength ?? defaults.requireContentLength
  const limitStatus = opts.limitStatus ?? defaults.limitStatus
  const mismatchStatus = opts.mismatchStatus ?? defaults.mismatchStatus
  const serverLimit = fastify.initialConfig.bodyLimit ?? 1048576
  const pluginLimit = opts.bodyLimit ?? serverLimit
  const methods = new Set((opts.methods ?? ['POST', 'PUT', 'PATCH']).map((m) => m.toUpperCase()))
  const tooLarge = limitStatus === 413 ? contentTooLarge : lengthRequired
  const mismatch = mismatchStatus === 400 ? badFraming : lengthRequired

  installServerListeners(fastify, mismatch)
  fastify.addHook('preParsing', coalesceBody)

  // Any answer that closes its connection (a redirect or a 401 that left the body unread)
  // ends the connection's pipeline too: later requests on it must not run.
  function markClosingConnection (request: FastifyRequest, reply: FastifyReply): void {
    // The suite closes connections after refusals and redirects only; a 2xx read its body.
    if (reply.statusCode < 300) return
    if (reply.getHeader('connection') === 'close') {
      // RFC 9113 8.2.2: HTTP/2 has no connection-specific fields; each stream is framed on its own.
      if (request.raw.httpVersionMajor >= 2) {
        reply.removeHeader('connection')
        return
      }
      markRefused(request)
      if (declaresBody(request.headers)) lingerOnClose(request.raw.socket)
    }
  }

  function routeLimit (c: RouteCompiler): number | false {
    const route = c.route
    const config = c.config.contentLength as ContentLengthRouteConfig | false | undefined
    if (config === false) return false
    if (config !== undefined) {
      if (typeof config !== 'object' || config === null) throw invalidOption(c.where, 'config.contentLength must be false or { bodyLimit }')
      rejectUnknownKeys(c.where, config, ['bodyLimit'], 'config.contentLength option')
      if (config.bodyLimit !== undefined) {
        if (!isPositiveInt(config.bodyLimit)) throw invalidOption(c.where, 'config.contentLength.bodyLimit must be a non-negative integer')
        return config.bodyLimit
      }
    }
    if (route.bodyLimit !== undefined && route.bodyLimit !== serverLimit) return route.bodyLimit
    return pluginLimit
  }

  function compile (c: RouteCompiler): void {
    c.errorPolicy({ limitStatus, mismatchStatus })
    const routeValue = routeLimit(c)
    if (routeValue === false) return
    const limit: number = routeValue
    const route = c.route
    // The route's own bodyLimit follows ours, so Fastify's reader enforces the same number on chunked bodies.
    if (route.bodyLimit === undefined || route.bodyLimit > limit) route.bodyLimit = limit
    // GET and HEAD bodies are never read (Fastify skips them): refused all the same when chunked or over the limit.
    // Any answer that closes its connection ends the connection's pipeline too.
    c.check('onSend', 'content-length:close', markClosingConnection)
    if (c.methods.every((m) => m === 'GET' || m === 'HEAD')) {
      c.check('onRequest', 'content-length', (request) => checkHostLines(request) ?? unreadBodyProblem(request))
      return
    }
    if (c.methods.some((m) => methods.has(m))) {
      c.respond(requireLength || mismatchStatus === 411 ? 411 : 400, { description: 'Length Required: the body lacks a valid Content-Length, or is over the limit', body: 'text' })
      if (limitStatus === 413) c.respond(413, { description: 'Content Too Large: the body is over the limit', body: 'text' })
    }
    c.check('onRequest', 'content-length', function checkLength (request: FastifyRequest): Error | undefined {
      const hosts = checkHostLines(request)
      if (hosts !== undefined) return hosts
      // RFC 9112 9.3.2: bytes pipelined behind a request whose body was never read cannot be framed.
      const raw = request.raw as TrackedRequest
      const refused = (raw.socket as TrackedSocket | null)?.[kRefused]
      if (refused !== undefined && refused !== raw) {
        return refuse(request, lengthRequired('an earlier request on this connection was refused; send this one on a new connection'))
      }
      const problem = bodyProblem(request, limit, true)
      if (problem !== null) return refuse(request, problem)
      return undefined
    })
    c.check('onRequest', 'content-length:continue', sendContinue)
    c.check('preValidation', 'content-length:framing', refuseMisframed)
  }

  function sendContinue (request: FastifyRequest, reply: FastifyReply): undefined {
    const expect = request.headers.expect
    if (expect !== undefined && expect.toLowerCase() === '100-continue' && !reply.raw.headersSent) reply.raw.writeContinue()
  }

  /** Refuses a request whose body will not be read: its connection closes after the answer. */
  function refuse (request: FastifyRequest, err: ConventionError): ConventionError {
    markRefused(request)
    return err
  }

  function refuseMisframed (request: FastifyRequest): ConventionError | undefined {
    // The parser found bytes beyond the declared body: the body this handler would see is wrong.
    return (request.raw as TrackedRequest)[kMisframed] === true ? mismatch('the body is longer than its Content-Length') : undefined
  }

  /** Every request of the context (RFC 9112 3.2): more than one Host line is a 400. */
  function checkHostLines (request: FastifyRequest): Error | undefined {
    if ((request.raw as TrackedRequest)[kHosts] === undefined) return undefined
    markRefused(request)
    return badFraming('the request carries more than one Host field (RFC 9112 3.2)')
  }

  /** The body of a GET or HEAD, never read: refused (its connection closes) when chunked or over the limit. */
  function unreadBodyProblem (request: FastifyRequest): ConventionError | undefined {
    const problem = bodyProblem(request, pluginLimit, false)
    if (problem === null) return undefined
    markRefused(request)
    return problem
  }

  /**
   * Why the body a request declares is refused, or null: `limit` is the route's; `readsBody`
   * is false for GET and HEAD, whose bodies Fastify never reads.
   */
  function bodyProblem (request: FastifyRequest, limit: number, readsBody: boolean): ConventionError | null {
    const headers = request.headers
    const te = headers['transfer-encoding']
    if (te !== undefined) {
      // Conventions (Content-Length): a body without Content-Length is refused (RFC 9112 6.1 would accept chunked).
      if (requireLength) return lengthRequired('a request body must be sent with Content-Length, not chunked')
      // RFC 9112 6.1: a transfer coding the server does not understand is 501; only chunked is read.
      if (readsBody && te.trim().toLowerCase() !== 'chunked') return notImplemented(`transfer coding ${JSON.stringify(te)} is not supported; send the body chunked or with Content-Length`)
      // A limit of 0 admits no body at all (Fastify would read it up to the server's limit).
      return limit === 0 ? tooLarge('the body is larger than the limit of 0 bytes') : null
    }
    const cl = headers['content-length']
    if (cl === undefined) {
      // Body bytes may follow all the same (an HTTP/1.0 client reading until close): they must
      // never be read as a next request, so the connection closes after the 411.
      return readsBody && requireLength && methods.has(request.method) ? lengthRequired(`${request.method} requires a Content-Length header`) : null
    }
    // Node's parser already refused anything but 1*DIGIT (RFC 9110 8.6) and duplicates.
    return Number(cl) > limit ? tooLarge(`the body is larger than the limit of ${limit} bytes`) : null
  }

  try {
    declareConvention(fastify, {
      key: 'content-length',
      plugin: PLUGIN,
      configKey: 'contentLength',
      compile
    }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/**
 * Node's parser refuses duplicate or malformed Content-Length, and CL with TE, before Fastify
 * sees the request (its default answer is a generic 400). Answer those here, once per server:
 * no route is known for them, so the first registration's statuses apply.
 */
function installServerListeners (fastify: FastifyInstance, mismatch: (reason: string) => ConventionError): void {
  const server = fastify.server as typeof fastify.server & { [kListening]?: boolean }
  if (server[kListening] === true) return
  server[kListening] = true
  // RFC 9110 10.1.1: a request with `Expect: 100-continue` gets its 100 only once it passed
  // the length limit and authentication (the route's onRequest steps); until then the client
  // holds the body back, so a refused upload costs no bytes. Node would otherwise send 100 at once.
  if (server.listenerCount('checkContinue') === 0) {
    server.on('checkContinue', function deferContinue (req: IncomingMessage, res: ServerResponse) {
      server.emit('request', req, res)
    })
  }
  server.prependListener('request', function trackRequestFraming (req: TrackedRequest, res: ServerResponse) {
    const socket = req.socket as TrackedSocket
    socket[kCurrentResponse] = res
    socket[kHadBody] = declaresBody(req.headers)
    socket[kCurrent] = req
    // RFC 9112 3.2: more than one Host line is a 400 (Node keeps the first and drops the rest).
    const raw = req.rawHeaders
    let hosts = 0
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]
      if (name.length === 4 && name.toLowerCase() === 'host') hosts++
    }
    if (hosts > 1) req[kHosts] = hosts
  })
  server.prependListener('clientError', function answerFramingError (err: Error & { code?: string }, socket: TrackedSocket) {
    const code = err.code ?? ''
    // RFC 9112 9.6: one answer per request. Bytes that break the framing after a request was
    // answered (a body it refused, then a bad chunk size or an unknown coding; a body without
    // Content-Length read as a next request) end the connection without a second answer.
    const res = socket[kCurrentResponse]
    // The request was answered before its body was complete (a 401 or 415 from its headers):
    // a body that then ends short of its Content-Length gets no second answer either.
    if (res !== undefined && res.headersSent && (socket[kRefused] !== undefined || !res.writableFinished || socket[kCurrent]?.complete === false)) {
      socket.destroy()
      return
    }
    let reply: ConventionError | null = null
    if (FRAMING_ERRORS.has(code)) {
      // RFC 9112 6.3: an invalid Content-Length (duplicate, non-digit, overflow, or with Transfer-Encoding) is unrecoverable.
      reply = code === 'HPE_INVALID_TRANSFER_ENCODING'
        ? mismatch('Content-Length and Transfer-Encoding must not both be present')
        : mismatch('Content-Length is not one valid decimal number')
    } else if (code === 'HPE_INVALID_EOF_STATE' && socket[kHadBody] === true) {
      reply = mismatch('the connection ended before the body reached its Content-Length')
    } else if (TRAILING_ERRORS.has(code) && socket[kHadBody] === true) {
      reply = mismatch('the body is longer than its Content-Length')
    }
    if (reply === null) return
    const current = socket[kCurrent]
    if (current !== undefined) current[kMisframed] = true
    if (socket.writable) socket.end(rawResponse(reply, contextHeaders(fastify)))
    socket.destroy()
  })
}

export const httpConventionsContentLength = fp(contentLengthPlugin, { fastify: '5.x', name: PLUGIN })
