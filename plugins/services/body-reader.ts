/**
 * How the suite reads request bodies, whichever parser reads them: in about one byte of
 * memory per body byte, however small the pieces a body arrives in (one-byte chunks, RFC
 * 9112 7.1, or one byte per TCP segment under Content-Length, RFC 9112 6.2).
 *
 * - The suite's own parsers (JSON, text, HTML, XML, JSON Patch, merge patch) read the body
 *   with `readBody`, into one buffer that grows with the bytes received (never set aside at
 *   the declared length: a client's number, not memory it sent).
 * - Every other parser (an app's own, Fastify's reader, which keeps one buffer per piece it
 *   receives: some 190 bytes of memory per byte of a body sent one byte at a time) reads it
 *   through `coalesceBody`, a preParsing step that joins the pieces into blocks first, once
 *   the parser starts reading (one that reads `request.raw` itself gets it untouched).
 * Which media types the suite reads is kept per encapsulation context, where its parsers
 * were set, so the step knows which requests it can leave as they are.
 *
 * Memory that cannot be had while a body is read is an answer, never an exception thrown from
 * a stream's 'data' listener (which would end the process): 503 with Retry-After
 * (noRoomForBody), and the connection closes; the process goes on serving.
 */
import { Readable } from 'node:stream'
import { errorCodes as fastifyErrors, type FastifyInstance, type FastifyReply, type FastifyRequest, type RequestPayload } from 'fastify'
import { BlockJoiner, BodyBytes, isAllocationFailure, noRoomForBody, type Allocate } from '../../lib/json-body'
import { MAX_MEDIA_TYPE_LENGTH } from '@http-conventions/grammar'
import { requestMediaType } from './media-type'
import { kReadBySuite } from './symbols'
import { routeOptionsOf } from '../kernel/index'

/** The request body as Fastify hands it to a parser that reads it itself. */
export type BodyStream = NodeJS.ReadableStream & { receivedEncodedLength?: number }
export type Done = (err: Error | null, value?: unknown) => void

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = fastifyErrors
/**
 * Sets the suite's parser for `types` in `fastify`'s context, replacing one the context may
 * have inherited, and records that the suite reads those types there. Each is set as a
 * RegExp of the type with any parameters: Fastify tries the parsers set for a media type
 * itself first, so a plugin that adds its own for the type in a context below (as
 * @fastify/http-proxy does for `application/json`) takes it there instead of failing with
 * FST_ERR_CTP_ALREADY_PRESENT.
 */
export function setSuiteParser (fastify: FastifyInstance, types: string[], parser: (request: FastifyRequest, payload: BodyStream, next: Done) => void): void {
  for (const type of types) {
    const pattern = essencePattern(type)
    if (fastify.hasContentTypeParser(type)) fastify.removeContentTypeParser(type)
    if (fastify.hasContentTypeParser(pattern)) fastify.removeContentTypeParser(pattern)
    fastify.addContentTypeParser(pattern, parser as never)
  }
  // A decorator of the context: a child context that sets parsers of its own gets its own set
  // (assigned on the child, as Fastify documents for encapsulated decorators).
  const known = fastify.hasDecorator(kReadBySuite) ? readBy(fastify) : undefined
  const own = new Set([...(known ?? []), ...types])
  if (known === undefined) fastify.decorate(kReadBySuite, own)
  else (fastify as unknown as Record<symbol, Set<string>>)[kReadBySuite] = own
}

/** The media type `type` with any parameters, as a pattern: a parser another plugin adds for `type` itself, in a child context, is taken before it. */
function essencePattern (type: string): RegExp {
  return new RegExp(`^${type.replace(/[.+*?^$()[\]{}|\\/]/g, '\\$&')}(?:;|$)`)
}

function readBy (instance: FastifyInstance): Set<string> | undefined {
  return (instance as unknown as Record<symbol, Set<string> | undefined>)[kReadBySuite]
}

/**
 * RFC 9110 8.3.1: a Content-Type that is only `type "/" subtype`, lower-case tokens without
 * whitespace or parameters (`application/json`, as most clients send it), is its own
 * essence: parsing it would give the same string and no parameters. Such a value is read as
 * it is, without the parse (a parameters object, lower-cased copies and the essence string:
 * some 450 bytes a request). Any other value (upper case, parameters, whitespace) is parsed.
 */
const BARE_ESSENCE = /^[a-z0-9!#$%&'*+.^_`|~-]+\/[a-z0-9!#$%&'*+.^_`|~-]+$/

/** True when `value` is a media type's essence as parseMediaType would return it: lower-case `type/subtype`, nothing else. No allocation. */
export function isBareEssence (value: string): boolean {
  return value.length <= MAX_MEDIA_TYPE_LENGTH && BARE_ESSENCE.test(value)
}

/** True when the request's body goes to one of the suite's parsers (its route's context set one for its media type). */
function readBySuite (request: FastifyRequest): boolean {
  const types = readBy(request.server)
  if (types === undefined) return false
  const value = request.headers['content-type']
  if (value !== undefined && isBareEssence(value)) return types.has(value)
  const mt = requestMediaType(request)
  return mt !== null && types.has(mt.essence)
}

/**
 * preParsing: a body that Fastify will read (chunked, or with a Content-Length on a method
 * whose body is parsed) and that no parser of the suite reads goes through CoalescedBody,
 * in blocks. A body the suite reads is left as it is (readBody collects it).
 */
export function coalesceBody (request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload, done: (err: Error | null, body?: RequestPayload) => void): void {
  const headers = request.headers
  let expected = 0
  if (headers['transfer-encoding'] === undefined) {
    const cl = headers['content-length']
    // Fastify reads no body of GET or HEAD; a body of 0 bytes has no pieces.
    if (cl === undefined || cl === '0' || request.method === 'GET' || request.method === 'HEAD' || readBySuite(request)) return done(null, payload)
    expected = Number(cl)
  }
  done(null, new CoalescedBody(expected, payload))
}

/**
 * The request's body, joined into blocks (BlockJoiner), as a readable stream. It starts
 * reading the request only when its reader first asks for data: a parser that reads the raw
 * request itself (@fastify/multipart hands `request.raw` to busboy) finds it untouched. It
 * listens to the request directly and pauses it while its reader is behind: no Transform
 * and no pipeline, which cost a POST some 15 KB of allocation; this costs about 2 KB
 * (`node bench/allocation.js --post`).
 */
export class CoalescedBody extends Readable {
  private readonly joiner: BlockJoiner
  private started = false
  private readonly handOn = (block: Buffer): void => { if (!this.push(block)) this.source.pause() }

  /** `allocate`: how block buffers are made (lib/json-body.ts Allocate). */
  constructor (expected: number, private readonly source: RequestPayload, allocate?: Allocate) {
    super()
    this.joiner = new BlockJoiner(expected, allocate)
  }

  /** The bytes that came in, for the body limit of Fastify's reader (a "zip bomb" check). */
  get receivedEncodedLength (): number { return this.joiner.received }

  override _read (): void {
    if (this.started) {
      this.source.resume()
      return
    }
    this.started = true
    const source = this.source
    const onData = (chunk: Buffer): void => {
      try {
        this.joiner.add(chunk, this.handOn)
      } catch (err) {
        source.removeListener('data', onData)
        // Fastify's reader answers a stream error with its statusCode (503 here).
        this.destroy(readFailure(err))
      }
    }
    source.on('data', onData)
    source.once('end', () => {
      this.joiner.end(this.handOn)
      this.push(null)
    })
    // An aborted request emits 'error' (ECONNRESET): it fails the body stream, so the parser ends with an error.
    source.once('error', (err: Error) => { this.destroy(err) })
  }
}

/**
 * Reads a body off the request's stream with the checks of Fastify's own reader: the
 * route's body limit (before and while reading, and the encoded length behind a decoding
 * stream), the bytes received against Content-Length, a stream error answered 400. The bytes
 * are collected in memory that grows with the bytes received, about one byte per body byte
 * however small the pieces they arrive in, and never more than about two (BodyBytes): the
 * declared length sets no memory aside. Memory that cannot be had is a 503 (noRoomForBody);
 * a body too long to be decoded as one string (`ERR_STRING_TOO_LONG`) is over the body
 * limit. A body that arrived in one chunk reaches `parse` as it is: Fastify copies it for a
 * parser that asks for a Buffer, and that copy was measured at several µs per request
 * (bench/RESULTS.md). `parse` must not keep it; it is handed `done` too, so a parser made once
 * (not a closure per request) can answer. `allocate`: how the body's buffer is made.
 */
export function readBody (request: FastifyRequest, payload: BodyStream, done: Done, parse: (bytes: Buffer, done: Done) => void, allocate?: Allocate): void {
  const limit = routeOptionsOf(request).bodyLimit
  const contentLength = Number(request.headers['content-length'])
  if (contentLength > limit) return done(new FST_ERR_CTP_BODY_TOO_LARGE())
  // Behind a decoding stream (another plugin's preParsing) the declared length says nothing of the decoded one.
  const body = new BodyBytes(payload === request.raw && contentLength > 0 ? contentLength : 0, allocate)
  function onData (chunk: Buffer | string): void {
    // A preParsing stream of another plugin may emit strings.
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    // The decoded length and, behind a decompressing stream, the encoded one (a "zip bomb").
    if (body.length + bytes.length > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      stopReading(payload, onData, onEnd)
      return done(new FST_ERR_CTP_BODY_TOO_LARGE())
    }
    try {
      body.push(bytes)
    } catch (err) {
      stopReading(payload, onData, onEnd)
      return done(readFailure(err))
    }
  }
  function onEnd (err?: Error & { statusCode?: number }): void {
    stopReading(payload, onData, onEnd)
    if (err != null) {
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400
      return done(err)
    }
    // RFC 9112 6.3: the body ends where Content-Length says.
    if (!Number.isNaN(contentLength) && ((payload.receivedEncodedLength ?? 0) || body.length) !== contentLength) return done(new FST_ERR_CTP_INVALID_CONTENT_LENGTH())
    try {
      parse(body.bytes(), done)
    } catch (err) {
      // Thrown from here it would end the process ('end' listener): decoding a body of the
      // accepted size when its memory, or a string that long, cannot be had; else a fault.
      done(readFailure(err))
    }
  }
  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnd)
  payload.resume()
}

/** Takes readBody's listeners off the body stream. */
function stopReading (payload: BodyStream, onData: (chunk: Buffer | string) => void, onEnd: (err?: Error) => void): void {
  payload.removeListener('data', onData)
  payload.removeListener('end', onEnd)
  payload.removeListener('error', onEnd)
}

/** The error a failure while a body is collected or decoded is answered with. */
function readFailure (err: unknown): Error {
  if (isAllocationFailure(err)) return noRoomForBody()
  // V8's longest string (about 512 MiB): a body longer is larger than this server can read.
  if ((err as { code?: unknown } | null)?.code === 'ERR_STRING_TOO_LONG') return new FST_ERR_CTP_BODY_TOO_LARGE()
  return err instanceof Error ? err : new Error(`the body could not be read: ${String(err)}`)
}
