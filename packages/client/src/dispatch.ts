/**
 * What the client's undici interceptors share: request headers as one lower-case record,
 * the origin of a request, and a handler that passes a response through to the caller's
 * handler or swallows it and sends the request again (the shape of undici's own
 * redirect handler: one handler object follows the request through every repeat).
 */
import { stringify } from 'node:querystring'
import type { Dispatcher } from 'undici'

export type RequestHeaders = Record<string, string | string[]>
type AnyHeaders = Dispatcher.DispatchOptions['headers']

/** The request's headers as one record with lower-case names (undici accepts objects, flat arrays and iterables of pairs). */
export function headerRecord (headers: AnyHeaders): RequestHeaders {
  const out: RequestHeaders = {}
  const add = (name: string, value: string | string[] | undefined): void => {
    if (value === undefined) return
    const key = name.toLowerCase()
    const prior = out[key]
    out[key] = prior === undefined ? value : ([] as string[]).concat(prior, value)
  }
  if (headers === null || headers === undefined) return out
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) add(String(headers[i]), String(headers[i + 1]))
  } else if (Symbol.iterator in headers) {
    for (const [name, value] of headers as Iterable<[string, string | string[] | undefined]>) add(name, value)
  } else {
    for (const [name, value] of Object.entries(headers)) add(name, value)
  }
  return out
}

/**
 * The request with its `query` written into its path, as undici would send it: the target is
 * then one string (a Digest `uri`, a delta key, a redirect's starting point).
 */
export function withQuery (opts: Dispatcher.DispatchOptions): Dispatcher.DispatchOptions {
  if (opts.query === undefined || opts.query === null) return opts
  const query = stringify(opts.query)
  return { ...opts, path: query === '' ? opts.path : `${opts.path}?${query}`, query: undefined }
}

/** The first value of a response header (undici gives an array for a repeated one). */
export function firstHeader (headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}

/** RFC 6454 4: the origin of the request (scheme, host, port), as `URL#origin` writes it. */
export function originOf (opts: Dispatcher.DispatchOptions): string {
  return new URL(String(opts.origin ?? 'http://invalid')).origin
}

/** The absolute URL of the request. */
export function urlOf (opts: Dispatcher.DispatchOptions): string {
  return new URL(opts.path, String(opts.origin ?? 'http://invalid')).toString()
}

/** Does nothing: what a controller does when there is nothing to abort, pause or resume. */
export function noop (): void {}

/** A controller for errors raised before any request was sent (nothing to abort). */
const IDLE: Dispatcher.DispatchController = { aborted: false, paused: false, reason: null, abort: noop, pause: noop, resume: noop }

/** Reports `err` to the caller's handler when no request is under way. */
export function failBeforeSend (handler: Dispatcher.DispatchHandler, err: Error): void {
  handler.onResponseError?.(IDLE, err)
}

/** What `replay` decides for an answer: undefined passes it to the caller; a function gives the next request. */
export type Replay = (() => Dispatcher.DispatchOptions | Promise<Dispatcher.DispatchOptions>) | undefined

/**
 * Passes the caller's handler every event of the answer, except answers `replay` takes:
 * their body is dropped and, once it has ended, the request `replay` gives is sent
 * through the same dispatch with this handler again (so the next answer is judged too).
 */
export abstract class ReplayingHandler implements Dispatcher.DispatchHandler {
  readonly #dispatch: Dispatcher.Dispatch
  protected readonly handler: Dispatcher.DispatchHandler
  protected opts: Dispatcher.DispatchOptions
  #next: Replay

  constructor (dispatch: Dispatcher.Dispatch, opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
    this.#dispatch = dispatch
    this.opts = opts
    this.handler = handler
  }

  /** Decides, from the status and headers of an answer, whether to send the request again. */
  protected abstract replay (statusCode: number, headers: Record<string, string | string[] | undefined>): Replay

  /** Sends `opts` through the dispatch below, with this handler. */
  send (opts: Dispatcher.DispatchOptions): void {
    this.opts = opts
    try {
      this.#dispatch(opts, this)
    } catch (err) {
      failBeforeSend(this.handler, err as Error)
    }
  }

  onRequestStart (controller: Dispatcher.DispatchController, context: unknown): void {
    this.handler.onRequestStart?.(controller, context)
  }

  onRequestUpgrade (controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, socket: import('node:stream').Duplex): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket)
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    this.#next = this.replay(statusCode, headers)
    if (this.#next === undefined) this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#next === undefined) this.handler.onResponseData?.(controller, chunk)
  }

  onResponseEnd (controller: Dispatcher.DispatchController, trailers: Record<string, string | string[] | undefined>): void {
    const next = this.#next
    if (next === undefined) {
      this.handler.onResponseEnd?.(controller, trailers)
      return
    }
    this.#next = undefined
    Promise.resolve().then(next).then((opts) => this.send(opts), (err: Error) => this.handler.onResponseError?.(controller, err))
  }

  onResponseError (controller: Dispatcher.DispatchController, err: Error): void {
    this.handler.onResponseError?.(controller, err)
  }
}
