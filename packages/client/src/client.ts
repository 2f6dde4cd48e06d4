/**
 * The facade for the common case: one undici dispatcher composed with the client's four
 * interceptors (deltas, auth, redirects, framing, in that order, so each redirect hop is
 * answered with its own origin's credentials and every repeat carries the framed body),
 * JSON in and out, and the conventions' writes:
 *
 * - `update(url, change)`: GET (ETag), apply `change`, PUT with `If-Match`; a 412 means
 *   another writer came first, so it reads again and applies `change` to the fresh
 *   version, at most `maxAttempts` times (RFC 9110 13.1.1; no update is lost).
 * - `patch(url, change)`: the same loop, sending the difference as a JSON Patch (RFC 6902,
 *   computed with fast-json-patch's `compare`) or a merge patch (RFC 7396), whichever the
 *   resource's `Accept-Patch` lists (RFC 5789 3.1; a 415 names them too).
 * - a write refused with 428 (RFC 6585 3) is repeated once with the `If-Match` of a HEAD.
 *
 * Answers that are not 2xx become a ConventionsClientError with a code a caller can act on.
 */
import type { Dispatcher } from 'undici'
import { compare } from 'fast-json-patch'
import { parseMediaType, splitList } from '@http-conventions/grammar'
import { authInterceptor, type AuthEvent, type ClientCredential, type WeakestAuth } from './auth'
import { DeltaClientError, BODY_TOO_LARGE } from './delta-client'
import { deltaInterceptor, type DeltaEvent, type DeltaInterceptorOptions } from './delta'
import { firstHeader } from './dispatch'
import { ConventionsClientError, clientErrorCodes, type ClientErrorEntry } from './errors'
import { framingInterceptor } from './framing'
import { redirectInterceptor } from './redirect'

/** Options of `createConventionsClient`. */
export interface ConventionsClientOptions {
  /** Credentials, each for one origin (Digest and Basic from a password, Bearer from a token provider). */
  credentials?: readonly ClientCredential[]
  /**
   * The weakest answer to a challenge over plain http (default: Digest MD5 to a host that is
   * not loopback, anything to a loopback host): a 401 offering only weaker ones is
   * WEAK_CHALLENGE, and no credential is sent.
   */
  weakestAuth?: WeakestAuth
  /** The dispatcher to compose on (default: a new undici Agent, closed by `close()`). */
  dispatcher?: Dispatcher
  /** Largest request stream buffered (framing, redirects) and largest response body read (default 1 MiB and 16 MiB). */
  maxBufferBytes?: number
  maxResponseBytes?: number
  /** Redirects followed for one request (default 5). */
  maxRedirections?: number
  /** Tries of one conditional update or patch (default 10). */
  maxAttempts?: number
  /** Delta encoding options, or false to read whole instances. */
  delta?: DeltaInterceptorOptions | false
  /** Sent with every request (e.g. `accept`). */
  headers?: Record<string, string>
  /** Called for each challenge answered and each delta read: never a credential. */
  onEvent?: (event: ClientEvent) => void
}

/** What the facade reports to `onEvent`: a challenge answered, or a delta read; never a credential. */
export type ClientEvent = AuthEvent | ({ type: 'delta' } & DeltaEvent)

/** A 2xx answer as the facade returns it: status, headers, parsed body, ETag and Location. */
export interface ClientResponse<T = unknown> {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The body: parsed when it is JSON, else text (undefined when empty). */
  body: T
  etag: string | undefined
  /** `Location`, resolved against the request URL. */
  location: string | undefined
  /** Requests the operation sent (conditional updates count their re-reads' writes). */
  attempts: number
}

/** What the facade sends: headers, and a JSON value or a body with its Content-Type. */
export interface RequestOptions {
  headers?: Record<string, string>
  /** A JSON value, sent as `application/json`. */
  json?: unknown
  /** Bytes or text sent as they are, with `contentType`. */
  body?: string | Uint8Array
  contentType?: string
}

/** Makes the new version from the current one (for `update`, what is written may be a different shape: no read-only fields). */
export type Change<T, U = T> = (current: T) => U | Promise<U>

/** Options of one `update` or `patch` of the facade. */
export interface UpdateOptions {
  /** Tries before a 412 is the caller's (default: the client's maxAttempts). */
  maxAttempts?: number
}

/** What the conditional loop writes for `next`, or undefined when no format fits (`refused`: the 415 of a first try). */
type Write<T, U> = (current: ClientResponse<T>, next: U, refused?: ClientResponse) => { method: string, request: RequestOptions } | undefined

/** The PATCH media types the client writes: JSON Patch (RFC 6902) or JSON Merge Patch (RFC 7396). */
export type PatchFormat = 'application/json-patch+json' | 'application/merge-patch+json'

const JSON_PATCH: PatchFormat = 'application/json-patch+json'
const MERGE_PATCH: PatchFormat = 'application/merge-patch+json'

/** The media types of an Accept-Patch value (RFC 5789 3.1), essence only. */
export function acceptPatchOf (value: string | string[] | undefined): string[] {
  const text = Array.isArray(value) ? value.join(', ') : value
  if (text === undefined) return []
  const out: string[] = []
  for (const element of splitList(text) ?? []) {
    const mt = parseMediaType(element)
    if (mt !== null) out.push(mt.essence)
  }
  return out
}

function isObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function hasNull (v: unknown): boolean {
  if (v === null) return true
  if (typeof v !== 'object') return false
  return Object.values(v as object).some(hasNull)
}

/** RFC 7396: the merge patch that turns `from` into `to` (members removed are null; arrays are replaced whole). */
export function mergePatchBetween (from: unknown, to: unknown): unknown {
  if (!isObject(from) || !isObject(to)) return to
  const patch: Record<string, unknown> = {}
  for (const key of Object.keys(from)) if (!(key in to)) patch[key] = null
  for (const [key, value] of Object.entries(to)) {
    if (key in from && JSON.stringify(from[key]) === JSON.stringify(value)) continue
    patch[key] = key in from ? mergePatchBetween(from[key], value) : value
  }
  return patch
}

function envelopeOf (body: unknown): ClientErrorEntry[] {
  if (!isObject(body) || !Array.isArray(body.errors)) return []
  return body.errors.filter(isObject).map((e) => ({
    message: String(e.message),
    ...(typeof e.field === 'string' ? { field: e.field } : {}),
    ...(typeof e.code === 'string' ? { code: e.code } : {})
  }))
}

/** The typed error of an answer that is not 2xx. */
export function errorOf (method: string, url: string, res: ClientResponse, attempts: number): ConventionsClientError {
  const details = { status: res.status, method, url, errors: envelopeOf(res.body), etag: res.etag, attempts, acceptPatch: acceptPatchOf(res.headers['accept-patch']) }
  switch (res.status) {
    case 401: return new ConventionsClientError(clientErrorCodes.UNAUTHORIZED, 'the credentials were refused (401)', details)
    case 412: return new ConventionsClientError(clientErrorCodes.PRECONDITION_FAILED, `the resource kept changing: 412 after ${attempts} tries`, details)
    case 415: return new ConventionsClientError(clientErrorCodes.UNSUPPORTED_MEDIA_TYPE, `415: the server accepts ${details.acceptPatch.join(', ') || 'another format'}`, details)
    case 422: return new ConventionsClientError(clientErrorCodes.UNPROCESSABLE, `422: ${details.errors.map((e) => (e.field === undefined ? '' : e.field + ' ') + e.message).join('; ')}`, details)
    case 428: return new ConventionsClientError(clientErrorCodes.PRECONDITION_REQUIRED, '428: the resource gives no validator to make the write conditional', details)
    default: return new ConventionsClientError(clientErrorCodes.HTTP_STATUS, `the server answered ${res.status}`, details)
  }
}

function isJson (type: string | undefined): boolean {
  const mt = type === undefined ? null : parseMediaType(type)
  return mt !== null && (mt.essence === 'application/json' || mt.essence.endsWith('+json'))
}

const ok = (status: number): boolean => status >= 200 && status < 300

/** DeltaClient's default bound of the instances it keeps (its maxBytes). */
const DEFAULT_DELTA_BYTES = 64 * 1024 * 1024

/** A client of a conventions service: the four interceptors composed, JSON in and out, conditional `update` and `patch`. Made by `createConventionsClient`. */
export class ConventionsClient {
  readonly #dispatcher: Dispatcher | Promise<Dispatcher>
  readonly #own: boolean
  readonly #maxResponseBytes: number
  /** The bound the delta interceptor was given, as an error names it. */
  readonly #deltaBound: string = ''
  readonly #maxAttempts: number
  readonly #headers: Record<string, string>

  constructor (options: ConventionsClientOptions = {}) {
    const onEvent = options.onEvent
    this.#maxResponseBytes = options.maxResponseBytes ?? 16 * 1024 * 1024
    if (!Number.isSafeInteger(this.#maxResponseBytes) || this.#maxResponseBytes < 1) throw new RangeError('maxResponseBytes must be a positive integer')
    const interceptors: Dispatcher.DispatcherComposeInterceptor[] = []
    if (options.delta !== false) {
      const delta = options.delta ?? {}
      // The delta interceptor reads, gunzips and decodes whole instances before this client
      // sees a byte: it is given the response bound, so a small 226 is refused while it is
      // decoded (RFC 3284 4.3: before the target is allocated), not after.
      const given = delta.maxInstanceBytes ?? delta.maxBytes ?? DEFAULT_DELTA_BYTES
      const maxInstanceBytes = Math.min(given, this.#maxResponseBytes)
      this.#deltaBound = maxInstanceBytes === this.#maxResponseBytes
        ? `maxResponseBytes (${maxInstanceBytes} bytes)`
        : `delta.${delta.maxInstanceBytes !== undefined ? 'maxInstanceBytes' : 'maxBytes'} (${maxInstanceBytes} bytes)`
      interceptors.push(deltaInterceptor({ ...delta, maxInstanceBytes, onResponse: (e) => { delta.onResponse?.(e); onEvent?.({ type: 'delta', ...e }) } }))
    }
    interceptors.push(
      authInterceptor({ credentials: options.credentials ?? [], weakestAuth: options.weakestAuth, onEvent }),
      redirectInterceptor({ maxRedirections: options.maxRedirections, maxBodyBytes: options.maxBufferBytes }),
      framingInterceptor({ maxBufferBytes: options.maxBufferBytes })
    )
    this.#own = options.dispatcher === undefined
    // undici is an optional peer dependency: loaded only when no dispatcher is given
    this.#dispatcher = options.dispatcher !== undefined
      ? options.dispatcher.compose(interceptors)
      : import('undici').then(({ Agent }) => new Agent().compose(interceptors))
    this.#maxAttempts = options.maxAttempts ?? 10
    if (!Number.isSafeInteger(this.#maxAttempts) || this.#maxAttempts < 1) throw new RangeError('maxAttempts must be a positive integer')
    this.#headers = { accept: 'application/json', ...options.headers }
  }

  /** Sends one request through the interceptors; any status is returned (nothing thrown for 4xx). */
  async send<T = unknown> (method: string, url: string, options: RequestOptions = {}): Promise<ClientResponse<T>> {
    const target = new URL(url)
    const headers: Record<string, string> = { ...this.#headers, ...options.headers }
    let body: string | Uint8Array | undefined = options.body
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] = options.contentType ?? 'application/json'
    } else if (options.contentType !== undefined) {
      headers['content-type'] = options.contentType
    }
    const dispatcher = await this.#dispatcher
    const res = await dispatcher.request({ origin: target.origin, path: target.pathname + target.search, method: method as Dispatcher.HttpMethod, headers, body })
      .catch((err: unknown) => { throw this.#overBound(err, method, url) })
    const chunks: Buffer[] = []
    let total = 0
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      total += chunk.length
      if (total > this.#maxResponseBytes) {
        res.body.destroy()
        throw new ConventionsClientError(clientErrorCodes.HTTP_STATUS, `the response body is over maxResponseBytes (${this.#maxResponseBytes} bytes)`, { status: res.statusCode, method, url })
      }
      chunks.push(chunk)
    }
    const text = Buffer.concat(chunks, total).toString('utf8')
    const type = firstHeader(res.headers, 'content-type')
    const location = firstHeader(res.headers, 'location')
    return {
      status: res.statusCode,
      headers: res.headers,
      body: (text === '' ? undefined : isJson(type) ? JSON.parse(text) : text) as T,
      etag: firstHeader(res.headers, 'etag'),
      location: location === undefined ? undefined : new URL(location, url).toString(),
      attempts: 1
    }
  }

  /** A body the delta interceptor refused past its bound is the client's bound error; anything else as it is. */
  #overBound (err: unknown, method: string, url: string): unknown {
    if (!(err instanceof DeltaClientError) || err.code !== BODY_TOO_LARGE) return err
    return new ConventionsClientError(clientErrorCodes.HTTP_STATUS, `the response body is over ${this.#deltaBound}`, { method, url })
  }

  /** Sends a request and throws a ConventionsClientError for an answer that is not 2xx. */
  async request<T = unknown> (method: string, url: string, options: RequestOptions = {}): Promise<ClientResponse<T>> {
    let res = await this.send<T>(method, url, options)
    const given = Object.keys(options.headers ?? {}).map((h) => h.toLowerCase())
    if (res.status === 428 && !given.includes('if-match') && !given.includes('if-unmodified-since')) {
      // RFC 6585 3: the server wants a conditional write; the precondition it lacked is the current ETag
      const head = await this.send('HEAD', url)
      if (head.etag !== undefined) res = { ...await this.send<T>(method, url, { ...options, headers: { ...options.headers, 'if-match': head.etag } }), attempts: 2 }
    }
    if (!ok(res.status)) throw errorOf(method, url, res, res.attempts)
    return res
  }

  get<T = unknown> (url: string, options?: RequestOptions): Promise<ClientResponse<T>> {
    return this.request<T>('GET', url, options)
  }

  /** POST `value` as JSON (to a collection: the answer's `location` names what was created). */
  create<T = unknown> (url: string, value: unknown, options?: RequestOptions): Promise<ClientResponse<T>> {
    return this.request<T>('POST', url, { ...options, json: value })
  }

  put<T = unknown> (url: string, value: unknown, options?: RequestOptions): Promise<ClientResponse<T>> {
    return this.request<T>('PUT', url, { ...options, json: value })
  }

  delete (url: string, options?: RequestOptions): Promise<ClientResponse> {
    return this.request('DELETE', url, options)
  }

  /** Reads, applies `change`, writes the result with PUT and If-Match; on 412 again from a fresh read. */
  update<T = unknown> (url: string, change: Change<T, unknown>, options: UpdateOptions = {}): Promise<ClientResponse<T>> {
    return this.#conditional(url, change, options, (_current, next, refused) => refused === undefined ? { method: 'PUT', request: { json: next } } : undefined)
  }

  /** Like update, but sends the difference as a JSON Patch or a merge patch, as the resource accepts. */
  patch<T = unknown> (url: string, change: Change<T>, options: UpdateOptions = {}): Promise<ClientResponse<T>> {
    return this.#conditional(url, change, options, (current, next, refused) => {
      // RFC 5789 3.1: Accept-Patch of the read, or of the 415 that refused the first try
      const formats = acceptPatchOf((refused ?? current).headers['accept-patch'])
      const format = formats.length === 0 || formats.includes(JSON_PATCH) ? JSON_PATCH : formats.includes(MERGE_PATCH) && !hasNull(next) ? MERGE_PATCH : undefined
      if (format === undefined) return undefined
      const body = format === JSON_PATCH ? compare(current.body as object, next as object) : mergePatchBetween(current.body, next)
      return { method: 'PATCH', request: { json: body, contentType: format } }
    })
  }

  /**
   * The loop of update and patch: read, change, write with the read's validator; a 412 reads
   * again (at most `maxAttempts` writes); a 415 asks `write` once more with the 415's answer.
   */
  async #conditional<T, U> (url: string, change: Change<T, U>, options: UpdateOptions, write: Write<T, U>): Promise<ClientResponse<T>> {
    const max = options.maxAttempts ?? this.#maxAttempts
    let attempts = 0
    for (;;) {
      const current = await this.get<T>(url)
      const next = await change(structuredClone(current.body))
      const lastModified = firstHeader(current.headers, 'last-modified')
      // RFC 9110 13.1.1 (If-Match with the ETag), else 13.1.4 (If-Unmodified-Since with Last-Modified)
      const validator: Record<string, string> = current.etag !== undefined ? { 'if-match': current.etag } : lastModified !== undefined ? { 'if-unmodified-since': lastModified } : {}
      let refused: ClientResponse | undefined
      let plan = write(current, next)
      let res: ClientResponse<T>
      for (;;) {
        if (plan === undefined) {
          const answer = refused ?? current
          throw new ConventionsClientError(clientErrorCodes.UNSUPPORTED_MEDIA_TYPE, 'the resource accepts no format this client can write for this change',
            { status: refused?.status, method: 'PATCH', url, acceptPatch: acceptPatchOf(answer.headers['accept-patch']), attempts })
        }
        attempts++
        res = await this.send<T>(plan.method, url, { ...plan.request, headers: validator })
        if (res.status !== 415 || refused !== undefined) break
        // RFC 5789 2.2: a 415 lists the patch formats the resource accepts: one more try with one of them
        refused = res
        plan = write(current, next, res)
      }
      if (ok(res.status)) return { ...res, attempts }
      if (res.status === 412 && attempts < max) continue
      throw errorOf(plan.method, url, res, attempts)
    }
  }

  /** Closes the dispatcher the client made (a dispatcher given to it is the caller's to close). */
  async close (): Promise<void> {
    if (this.#own) await (await this.#dispatcher).close()
  }
}

/** A client of a conventions service: see ConventionsClientOptions. */
export function createConventionsClient (options?: ConventionsClientOptions): ConventionsClient {
  return new ConventionsClient(options)
}
