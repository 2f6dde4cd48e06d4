/**
 * An undici interceptor that frames every request body as the conventions ask: with a
 * `Content-Length` (conventions (Content-Length): a body without one is refused with 411),
 * never chunked, and with a `Content-Type` (conventions (Content-Type)).
 *
 * A string or bytes is sent as it is, its length declared. A stream or async iterable is
 * read first, up to `maxBufferBytes`, then sent as bytes with its length; one that runs
 * over the bound is refused before anything is sent (`BODY_TOO_LARGE`), never sent
 * chunked. A body without a Content-Type gets `defaultContentType`.
 */
import type { Dispatcher } from 'undici'
import { failBeforeSend, headerRecord } from './dispatch'
import { ConventionsClientError, clientErrorCodes } from './errors'

/** Options of `framingInterceptor`. */
export interface FramingInterceptorOptions {
  /** Largest stream body read into memory to learn its length (default 1 MiB, the service's default body limit). */
  maxBufferBytes?: number
  /** Content-Type of a body sent without one (default `application/octet-stream`). */
  defaultContentType?: string
}

type Body = NonNullable<Dispatcher.DispatchOptions['body']>

/** Reads a stream body into one buffer, refusing it past `limit` bytes (the stream is closed then). */
export async function readBounded (body: AsyncIterable<unknown>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let total = 0
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array)
    total += bytes.length
    // Leaving the loop early closes the stream (its return() is called)
    if (total > limit) throw new ConventionsClientError(clientErrorCodes.BODY_TOO_LARGE, `the request body is over maxBufferBytes (${limit} bytes); it is not sent chunked`)
    chunks.push(bytes)
  }
  return Buffer.concat(chunks, total)
}

export function isAsyncIterable (body: Body): body is Body & AsyncIterable<unknown> {
  return typeof (body as unknown as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function'
}

/** An undici interceptor that sends every body with Content-Length (never chunked) and a Content-Type. */
export function framingInterceptor (options: FramingInterceptorOptions = {}): Dispatcher.DispatcherComposeInterceptor {
  const limit = options.maxBufferBytes ?? 1024 * 1024
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('maxBufferBytes must be a non-negative integer')
  const defaultType = options.defaultContentType ?? 'application/octet-stream'

  function framed (opts: Dispatcher.DispatchOptions, bytes: string | Uint8Array): Dispatcher.DispatchOptions {
    const headers = headerRecord(opts.headers)
    delete headers['transfer-encoding']
    headers['content-length'] = String(typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength)
    if (headers['content-type'] === undefined) headers['content-type'] = defaultType
    return { ...opts, body: bytes, headers }
  }

  return (dispatch) => function framingDispatch (opts, handler) {
    const body = opts.body
    if (body === undefined || body === null) return dispatch(opts, handler)
    if (typeof body === 'string' || body instanceof Uint8Array) return dispatch(framed(opts, body), handler)
    if (!isAsyncIterable(body)) {
      failBeforeSend(handler, new TypeError('the request body is a string, bytes, a stream or an async iterable'))
      return true
    }
    readBounded(body, limit).then((bytes) => {
      try {
        dispatch(framed(opts, bytes), handler)
      } catch (err) {
        failBeforeSend(handler, err as Error)
      }
    }, (err: Error) => failBeforeSend(handler, err))
    return true
  }
}
