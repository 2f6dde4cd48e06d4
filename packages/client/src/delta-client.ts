/**
 * A small client of RFC 3229 instance manipulation, framework-free: it keeps the last
 * instance of each URL it fetched, asks for the next one with `A-IM` and
 * `If-None-Match: <its ETag>`, and undoes a 226's manipulations (vcdiff with our RFC 3284
 * decoder, gzip with zlib), so the caller always sees the whole current instance.
 *
 * Kept instances are keyed as a cache keys stored responses (RFC 9111 4.1): by URL and by
 * the request's values of the fields the response's Vary names, and always by
 * Authorization and Cookie, so one client used for two principals never hands one of
 * them the other's instance. The wire body is read as a stream and refused past
 * `maxInstanceBytes`.
 *
 * Works with Node's global fetch or undici's (any WHATWG-style `fetch`).
 */
import { gunzipSync } from 'node:zlib'
import { kMaxLength } from 'node:buffer'
import { decode, VcdiffError, VCDIFF_TARGET_TOO_LARGE } from '@http-conventions/vcdiff'
import { parseEntityTag, parseWeightedTokens, splitList } from '@http-conventions/grammar'

type FetchLike = (input: string, init?: { method?: string, headers?: Record<string, string> }) => Promise<FetchResponse>

interface FetchResponse {
  status: number
  headers: { get: (name: string) => string | null }
  /** The WHATWG stream of the body: read chunk by chunk, within the bound. */
  body?: { getReader: () => { read: () => Promise<{ done: boolean, value?: Uint8Array }>, cancel: (reason?: unknown) => Promise<void> } } | null
  /** Used only when there is no `body` stream (the length is then checked after reading). */
  arrayBuffer: () => Promise<ArrayBuffer>
}

/** Options of `DeltaClient` (and of `deltaInterceptor`). */
export interface DeltaClientOptions {
  /** The fetch to use (default: the global fetch). */
  fetch?: FetchLike
  /** A-IM sent with every request (default `vcdiff, gzip`). */
  aim?: string
  /** URLs whose last instance is kept (default 256); the least recently used is dropped. */
  maxEntries?: number
  /** Bound of the bytes of all kept instances (default 64 MiB). */
  maxBytes?: number
  /**
   * Bound of one instance (default `maxBytes`): the body on the wire is read as a stream
   * and refused past it (a Content-Length over it before reading), gunzip stops at it
   * (zlib maxOutputLength) and a vcdiff delta declaring a larger target is refused before
   * it is decoded, so a small hostile response cannot inflate into gigabytes. Each is
   * a DeltaClientError with code BODY_TOO_LARGE, and the instance is not asked for again.
   */
  maxInstanceBytes?: number
}

/** The answer to `DeltaClient.get`: the whole instance, however it travelled. */
export interface DeltaResult {
  /** 200 for a whole instance however it travelled (200, 226, or "not modified"); else the server's status. */
  status: number
  /** The status on the wire: 200, 226, 304, 412, ... */
  wireStatus: number
  /** The current instance (for a status other than 200: the response body as sent). */
  body: Buffer
  /** ETag of the instance, when the server sent one. */
  etag: string | undefined
  /** The manipulations the server applied (the IM header), in the order it applied them. */
  im: string[]
  /** True when the server said "not modified" (304, or 412 for If-None-Match, conventions (Conditional requests)) and the kept instance was returned. */
  notModified: boolean
  /** Bytes of the body on the wire. */
  wireBytes: number
  headers: FetchResponse['headers']
}

interface Kept { etag: string, body: Buffer }

/** A kept instance, with the request fields (lower case) it was selected by. */
interface Entry extends Kept { url: string, fields: readonly string[] }

/** The code of the DeltaClientError for a body over `maxInstanceBytes`. */
export const BODY_TOO_LARGE = 'ERR_DELTA_CLIENT_BODY_TOO_LARGE'

/** A response DeltaClient cannot turn into an instance: a malformed delta, a missing base, a body over its bound. */
export class DeltaClientError extends Error {
  /** BODY_TOO_LARGE when the response body was over `maxInstanceBytes`. */
  readonly code: string | undefined
  constructor (message: string, code?: string) {
    super(message)
    this.name = 'DeltaClientError'
    this.code = code
  }
}

/**
 * Fields that always select a kept instance, whatever the Vary: the credentials of the
 * principal (RFC 9110 11.6.2; RFC 6265 for the session cookie). One principal's instance
 * is never another's base, nor their "not modified" answer.
 */
const PRINCIPAL_FIELDS: readonly string[] = ['authorization', 'cookie']
// The client's own conditional field is not part of the selection (it names the kept instance).
const NOT_SELECTING = new Set(['if-none-match'])

function lowerCased (headers: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>()
  for (const [name, value] of Object.entries(headers)) out.set(name.toLowerCase(), String(value))
  return out
}

/** RFC 9111 4.1: the fields a response varies on, or null for "*" (it selects on what is not in the request). */
function varyFields (vary: string | null): string[] | null {
  const fields = new Set(PRINCIPAL_FIELDS)
  const names = vary === null ? [] : splitList(vary) ?? ['*']
  for (const name of names) {
    if (name === '*') return null
    const lower = name.toLowerCase()
    if (!NOT_SELECTING.has(lower)) fields.add(lower)
  }
  return [...fields].sort()
}

/** The key of an instance: its URL and the request's value (or absence) of each selecting field. */
function keyOf (url: string, fields: readonly string[], sent: Map<string, string>): string {
  return JSON.stringify([url, fields.map((f) => sent.get(f) ?? null)])
}

function tooLarge (limit: number): DeltaClientError {
  return new DeltaClientError(`the response body is over maxInstanceBytes (${limit} bytes)`, BODY_TOO_LARGE)
}

/** An error of gunzip or the vcdiff decoder that says the output would pass the instance bound. */
function isOverBound (err: unknown): boolean {
  // zlib's maxOutputLength: RangeError ERR_BUFFER_TOO_LARGE, thrown before the output passes it
  if (err instanceof RangeError && (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return true
  // RFC 3284 4.3: a window size over what is left of the bound, refused before any allocation
  return err instanceof VcdiffError && err.code === VCDIFF_TARGET_TOO_LARGE
}

/** Reads a response body as a stream, refusing it past `limit` bytes without reading the rest. */
async function readBounded (res: FetchResponse, limit: number): Promise<Buffer> {
  const declared = res.headers.get('content-length')
  const stream = res.body
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
    await stream?.getReader().cancel().catch(() => {})
    throw tooLarge(limit)
  }
  if (stream === undefined || stream === null) {
    const whole = Buffer.from(await res.arrayBuffer())
    if (whole.length > limit) throw tooLarge(limit)
    return whole
  }
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (value === undefined) continue
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  return chunks.length === 1 ? Buffer.from(chunks[0].buffer, chunks[0].byteOffset, chunks[0].byteLength) : Buffer.concat(chunks, total)
}

/** A client of A-IM delta encoding (RFC 3229) over any fetch: it keeps the last instance of each URL and applies the deltas the server sends, so `get` always gives the whole instance. */
export class DeltaClient {
  readonly #fetch: FetchLike
  readonly #aim: string
  readonly #maxEntries: number
  readonly #maxBytes: number
  readonly #maxInstanceBytes: number
  /** By key (keyOf), least recently used first. */
  readonly #kept = new Map<string, Entry>()
  /** The keys kept for each URL. */
  readonly #byUrl = new Map<string, Set<string>>()
  #bytes = 0

  constructor (options: DeltaClientOptions = {}) {
    const f = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined)
    if (typeof f !== 'function') throw new TypeError('DeltaClient needs a fetch function')
    this.#fetch = f
    this.#aim = options.aim ?? 'vcdiff, gzip'
    this.#maxEntries = options.maxEntries ?? 256
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1) throw new RangeError('maxEntries must be a positive integer')
    if (!Number.isSafeInteger(this.#maxBytes) || this.#maxBytes < 1) throw new RangeError('maxBytes must be a positive integer')
    this.#maxInstanceBytes = options.maxInstanceBytes ?? this.#maxBytes
    // zlib's maxOutputLength is at most buffer.kMaxLength; so is any Buffer this client could hold.
    if (!Number.isSafeInteger(this.#maxInstanceBytes) || this.#maxInstanceBytes < 1 || this.#maxInstanceBytes > kMaxLength) {
      throw new RangeError('maxInstanceBytes must be a positive integer, at most buffer.kMaxLength')
    }
  }

  /** Bytes of the instances kept. */
  get bytes (): number {
    return this.#bytes
  }

  /** The instance kept for `url` requested with `headers` (the same principal and Vary'd fields), if any. */
  cached (url: string, headers: Record<string, string> = {}): { etag: string, body: Buffer } | undefined {
    const key = this.#find(url, this.#sent(headers))
    const entry = key === undefined ? undefined : this.#kept.get(key)
    return entry === undefined ? undefined : { etag: entry.etag, body: entry.body }
  }

  /** Forgets every instance kept for `url`, whoever requested it. */
  forget (url: string): void {
    const keys = this.#byUrl.get(url)
    if (keys === undefined) return
    for (const key of [...keys]) this.#drop(key)
  }

  /** GET `url`; `headers` are sent too (A-IM and If-None-Match are the client's own). */
  async get (url: string, headers: Record<string, string> = {}): Promise<DeltaResult> {
    const sent = this.#sent(headers)
    const key = this.#find(url, sent)
    const kept = key === undefined ? undefined : this.#kept.get(key)
    try {
      return await this.#get(url, headers, sent, key, kept)
    } catch (err) {
      if (!(err instanceof DeltaClientError) || err.code === BODY_TOO_LARGE || key === undefined) throw err
      // The kept base did not give a valid instance: ask for the whole instance once.
      this.#drop(key)
      return await this.#get(url, headers, sent, undefined, undefined)
    }
  }

  /** The request's fields as sent (lower case), the client's own A-IM included. */
  #sent (headers: Record<string, string>): Map<string, string> {
    const sent = lowerCased(headers)
    sent.set('a-im', this.#aim)
    return sent
  }

  /** RFC 9111 4.1: the kept instance of `url` whose selecting fields the request matches. */
  #find (url: string, sent: Map<string, string>): string | undefined {
    const keys = this.#byUrl.get(url)
    if (keys === undefined) return undefined
    for (const key of keys) {
      const entry = this.#kept.get(key) as Entry
      if (keyOf(url, entry.fields, sent) === key) return key
    }
    return undefined
  }

  async #get (url: string, extra: Record<string, string>, sent: Map<string, string>, key: string | undefined, kept: Entry | undefined): Promise<DeltaResult> {
    const headers: Record<string, string> = { ...extra, 'a-im': this.#aim }
    if (kept !== undefined) headers['if-none-match'] = kept.etag
    const res = await this.#fetch(url, { method: 'GET', headers })
    const wire = await readBounded(res, this.#maxInstanceBytes)
    const etag = res.headers.get('etag') ?? undefined
    const result: DeltaResult = { status: res.status, wireStatus: res.status, body: wire, etag, im: [], notModified: false, wireBytes: wire.length, headers: res.headers }
    if (kept !== undefined && key !== undefined && (res.status === 304 || (res.status === 412 && etag === kept.etag))) {
      // RFC 9110 15.4.5 (304), conventions (Conditional requests) (412 for a matching If-None-Match): the kept instance is current.
      this.#touch(key, kept)
      return { ...result, status: 200, body: kept.body, etag: kept.etag, notModified: true }
    }
    if (res.status === 226) {
      const im = parseWeightedTokens(res.headers.get('im') ?? '').map((m) => m.token)
      const body = this.#undo(im, wire, kept, res.headers.get('delta-base'))
      if (etag === undefined) throw new DeltaClientError('a 226 response must carry the ETag of the instance (RFC 3229 10.4.1)')
      this.#keep(url, sent, key, res.headers.get('vary'), etag, body)
      return { ...result, status: 200, body, im }
    }
    if (res.status === 200) {
      const tag = etag === undefined ? null : parseEntityTag(etag)
      if (tag !== null && !tag.weak) this.#keep(url, sent, key, res.headers.get('vary'), etag as string, wire)
      else if (key !== undefined) this.#drop(key)
    }
    return result
  }

  /** RFC 3229 10.5.2: the manipulations were applied in IM's order; undo them in reverse. */
  #undo (im: string[], wire: Buffer, kept: Entry | undefined, deltaBase: string | null): Buffer {
    if (im.length === 0) throw new DeltaClientError('a 226 response without IM')
    let data = wire
    for (let i = im.length - 1; i >= 0; i--) {
      const m = im[i]
      try {
        if (m === 'gzip') {
          // RFC 1952 gives no bound to the inflated size: zlib stops at the instance bound.
          data = gunzipSync(data, { maxOutputLength: this.#maxInstanceBytes })
        } else if (m === 'vcdiff') {
          // RFC 3229 10.5.1: Delta-Base names the base; it must be the instance this client holds.
          if (kept === undefined || (deltaBase !== null && deltaBase !== kept.etag)) throw new DeltaClientError(`a delta against ${String(deltaBase)}, which this client does not hold`)
          // RFC 3284 4.3: the target window sizes are declared up front; the decoder refuses
          // a total over the instance bound before it allocates.
          const out = decode(kept.body, data, { maxTargetSize: this.#maxInstanceBytes })
          data = Buffer.from(out.buffer, out.byteOffset, out.length)
        } else {
          throw new DeltaClientError(`unknown instance manipulation ${JSON.stringify(m)}`)
        }
      } catch (err) {
        if (err instanceof DeltaClientError) throw err
        // The instance is over the bound: refused as a body over it is, not asked for again
        // whole (the whole instance is as large).
        if (isOverBound(err)) throw tooLarge(this.#maxInstanceBytes)
        throw new DeltaClientError(`${m}: ${(err as Error).message}`)
      }
    }
    return data
  }

  #touch (key: string, entry: Entry): void {
    this.#kept.delete(key)
    this.#kept.set(key, entry)
  }

  #drop (key: string): void {
    const entry = this.#kept.get(key)
    if (entry === undefined) return
    this.#kept.delete(key)
    this.#bytes -= entry.body.length
    const keys = this.#byUrl.get(entry.url) as Set<string>
    keys.delete(key)
    if (keys.size === 0) this.#byUrl.delete(entry.url)
  }

  /**
   * Keeps `body` as the instance of `url` for requests with the same selecting fields as
   * this one (RFC 9111 4.1: those the response's Vary names, and always the principal's).
   * The instance the request was sent against (`previous`) is replaced; "Vary: *" keeps nothing.
   */
  #keep (url: string, sent: Map<string, string>, previous: string | undefined, vary: string | null, etag: string, body: Buffer): void {
    if (previous !== undefined) this.#drop(previous)
    const fields = varyFields(vary)
    if (fields === null || body.length > this.#maxBytes) return
    const key = keyOf(url, fields, sent)
    this.#drop(key)
    this.#kept.set(key, { url, fields, etag, body })
    let keys = this.#byUrl.get(url)
    if (keys === undefined) this.#byUrl.set(url, keys = new Set())
    keys.add(key)
    this.#bytes += body.length
    while (this.#kept.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      this.#drop(this.#kept.keys().next().value as string)
    }
  }
}
