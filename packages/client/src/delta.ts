/**
 * `DeltaClient` as an undici interceptor: a GET is sent with `A-IM` and `If-None-Match`
 * naming the instance kept for the URL, and a 226 (or a "not modified") reaches the caller
 * as a plain 200 with the whole current instance (RFC 3229 10.5). The keeping, the keys,
 * the bounds and the decoding are DeltaClient's (delta-client.ts), unchanged; this
 * file only carries its requests through the dispatch below and hands its results to
 * the caller's handler.
 *
 * Bases are kept per user: DeltaClient keys instances by Authorization, and a Digest
 * Authorization changes with every request (nonce count, cnonce), so the key is the
 * principal it names (user name and realm) instead; Basic and Bearer credentials are
 * their own key. Only plain GETs are taken: one with a body, its own `A-IM`,
 * `If-None-Match` or `Range` passes untouched.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Dispatcher } from 'undici'
import { DeltaClient, DeltaClientError, BODY_TOO_LARGE, type DeltaClientOptions } from './delta-client'
import { parseAuthorization } from '@http-conventions/grammar'
import { firstHeader, headerRecord, noop, urlOf, type RequestHeaders, withQuery } from './dispatch'
import { safeUrl } from './errors'

/** What one GET the interceptor took gave (for logs and counters): no header values. */
export interface DeltaEvent {
  /** without userinfo, secret query values redacted */
  url: string
  /** what the caller got: 200 for a whole instance however it travelled */
  status: number
  /** what the server sent: 200, 226, 304, 412, ... */
  wireStatus: number
  /** the manipulations undone (IM), in the order the server applied them */
  im: string[]
  /** the kept instance was current */
  notModified: boolean
  wireBytes: number
  bytes: number
}

/** Options of `deltaInterceptor`: those of `DeltaClient` but `fetch`, and a callback per response. */
export interface DeltaInterceptorOptions extends Omit<DeltaClientOptions, 'fetch'> {
  /** Called for each GET the interceptor took, once its instance is known. */
  onResponse?: (event: DeltaEvent) => void
}

/** The response's fields as the dispatch below gave them (DeltaClient reads them through `get`). */
interface WireHeaders { get: (name: string) => string | null, raw: ResponseHeaders }

/** Fields of the wire response that do not describe what the caller gets. */
const DROPPED = ['im', 'delta-base', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']

type ResponseHeaders = Record<string, string | string[] | undefined>

/** One GET under way: what the dispatch below is asked, and how the caller aborts it. */
interface Call {
  dispatch: Dispatcher.Dispatch
  opts: Dispatcher.DispatchOptions
  /** the request's own Authorization (DeltaClient is given the principal instead) */
  authorization: string | string[] | undefined
  controller: Dispatcher.DispatchController | undefined
  reason: Error | null
}

/** The key of the user an Authorization names: Digest's user name and realm, else the value itself. */
export function principalOf (authorization: string): string {
  const parsed = parseAuthorization(authorization)
  if (parsed.ok && parsed.scheme === 'digest' && parsed.params !== undefined) {
    const p = parsed.params
    return `Digest ${JSON.stringify([p.username ?? p['username*'] ?? '', p.realm ?? '', p.userhash ?? ''])}`
  }
  return authorization
}

const TAKEN_OVER = ['a-im', 'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'range']

function takes (opts: Dispatcher.DispatchOptions, headers: RequestHeaders): boolean {
  return opts.method === 'GET' && (opts.body === undefined || opts.body === null) && (opts.upgrade ?? false) === false &&
    TAKEN_OVER.every((name) => headers[name] === undefined)
}

/** A controller for the caller's handler: aborting it aborts the request under way. */
function callerController (call: Call): Dispatcher.DispatchController {
  const controller = {
    aborted: false,
    paused: false,
    reason: null as Error | null,
    abort (reason: Error) {
      controller.aborted = true
      controller.reason = call.reason = reason
      call.controller?.abort(reason)
    },
    pause: noop,
    resume: noop
  }
  return controller
}

type FetchedResponse = { status: number, headers: WireHeaders, body: null, arrayBuffer: () => Promise<ArrayBuffer> }

/** Sends a request through the dispatch of `call`, with `headers`, and collects the response body (at most `limit` bytes). */
function dispatchCollected (call: Call, headers: RequestHeaders, limit: number): Promise<FetchedResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    let status = 0
    let wire: ResponseHeaders = {}
    call.dispatch({ ...call.opts, headers }, {
      onRequestStart (controller) {
        call.controller = controller
        if (call.reason !== null) controller.abort(call.reason)
      },
      onResponseStart (_controller, statusCode, responseHeaders) {
        status = statusCode
        wire = responseHeaders
      },
      onResponseData (controller, chunk) {
        total += chunk.length
        chunks.push(chunk)
        // DeltaClient's bound, enforced while reading: the rest is never read
        if (total > limit) controller.abort(new DeltaClientError(`the response body is over maxInstanceBytes (${limit} bytes)`, BODY_TOO_LARGE))
      },
      onResponseEnd () {
        const body = Buffer.concat(chunks, total)
        resolve({
          status,
          headers: { get: (name) => { const v = wire[name.toLowerCase()]; return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v }, raw: wire } as WireHeaders,
          body: null,
          arrayBuffer: async () => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer
        })
      },
      onResponseError (_controller, err) {
        reject(err)
      }
    })
  })
}

/** The Content-Type of each instance seen (URL and ETag), at most `maxTypes`, for a "not modified" answer, whose own type is its error body's. */
function typeMemory (maxTypes: number): { remember: (url: string, etag: string | undefined, type: string | undefined) => void, get: (url: string, etag: string) => string | undefined } {
  const types = new Map<string, string>()
  return {
    remember (url, etag, type) {
      if (etag === undefined || type === undefined) return
      const key = `${url} ${etag}`
      types.delete(key)
      types.set(key, type)
      if (types.size > maxTypes) types.delete(types.keys().next().value as string)
    },
    get: (url, etag) => types.get(`${url} ${etag}`)
  }
}

type DeltaGetResult = Awaited<ReturnType<DeltaClient['get']>>

/** The headers the caller gets for a DeltaClient result: a 226 or a "not modified" is the instance, with its validator and type. */
function callerHeaders (result: DeltaGetResult, url: string, types: ReturnType<typeof typeMemory>): ResponseHeaders {
  const out: ResponseHeaders = { ...(result.headers as WireHeaders).raw }
  for (const name of DROPPED) delete out[name]
  if (result.status === 200 && result.wireStatus !== 200) {
    out.etag = result.etag
    if (result.notModified) {
      const type = types.get(url, result.etag as string)
      if (type === undefined) delete out['content-type']
      else out['content-type'] = type
    }
  }
  if (result.status === 200) types.remember(url, result.etag, firstHeader(out, 'content-type'))
  out['content-length'] = String(result.body.length)
  return out
}

/** The request headers DeltaClient keys its instances by: one string each, the principal for Authorization. */
function keyedHeaders (headers: RequestHeaders): Record<string, string> {
  const keyed: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) keyed[name] = Array.isArray(value) ? value.join(', ') : value
  if (typeof keyed.authorization === 'string') keyed.authorization = principalOf(keyed.authorization)
  return keyed
}

/** An undici interceptor for A-IM delta encoding (RFC 3229): a 226 or "not modified" reaches the caller as a 200 with the whole instance. */
export function deltaInterceptor (options: DeltaInterceptorOptions = {}): Dispatcher.DispatcherComposeInterceptor {
  const calls = new AsyncLocalStorage<Call>()
  const limit = options.maxInstanceBytes ?? options.maxBytes ?? 64 * 1024 * 1024
  const types = typeMemory(options.maxEntries ?? 256)

  /** The fetch DeltaClient is given: it sends through the dispatch of the call in whose context it runs. */
  function fetchThrough (_url: string, init?: { headers?: Record<string, string> }): Promise<FetchedResponse> {
    const call = calls.getStore() as Call
    const headers: RequestHeaders = { ...init?.headers }
    delete headers.authorization
    if (call.authorization !== undefined) headers.authorization = call.authorization
    return dispatchCollected(call, headers, limit)
  }
  const client = new DeltaClient({ ...options, fetch: fetchThrough })

  return (dispatch) => function deltaDispatch (given, handler) {
    const opts = withQuery(given)
    const headers = headerRecord(opts.headers)
    if (!takes(opts, headers)) return dispatch(opts, handler)
    const url = urlOf(opts)
    const call: Call = { dispatch, opts, authorization: headers.authorization, controller: undefined, reason: null }
    const controller = callerController(call)
    handler.onRequestStart?.(controller, {})
    calls.run(call, () => client.get(url, keyedHeaders(headers))).then((result) => {
      const out = callerHeaders(result, url, types)
      options.onResponse?.({ url: safeUrl(url), status: result.status, wireStatus: result.wireStatus, im: result.im, notModified: result.notModified, wireBytes: result.wireBytes, bytes: result.body.length })
      // the caller may have given up once the instance was known
      if (call.reason !== null) throw call.reason
      handler.onResponseStart?.(controller, result.status, out, result.status === 200 ? 'OK' : '')
      if (result.body.length > 0) handler.onResponseData?.(controller, result.body)
      handler.onResponseEnd?.(controller, {})
    }).catch((err: Error) => handler.onResponseError?.(controller, err))
    return true
  }
}
