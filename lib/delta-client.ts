/**
 * A small client of RFC 3229 instance manipulation, framework-free: it keeps the last
 * instance of each URL it fetched, asks for the next one with `A-IM` and
 * `If-None-Match: <its ETag>`, and undoes a 226's manipulations (vcdiff with our RFC 3284
 * decoder, gzip with zlib), so the caller always sees the whole current instance.
 *
 * Works with Node's global fetch or undici's (any WHATWG-style `fetch`).
 */
import { gunzipSync } from 'node:zlib'
import { kMaxLength } from 'node:buffer'
import { decode } from './vcdiff/index'
import { parseEntityTag } from './headers/etag'
import { parseWeightedTokens } from './headers/qlist'

type FetchLike = (input: string, init?: { method?: string, headers?: Record<string, string> }) => Promise<FetchResponse>

interface FetchResponse {
  status: number
  headers: { get: (name: string) => string | null }
  arrayBuffer: () => Promise<ArrayBuffer>
}

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
   * Bound of one instance rebuilt from a 226 (default `maxBytes`): gunzip stops at it
   * (zlib maxOutputLength) and a vcdiff delta declaring a larger target is refused before
   * it is decoded, so a small hostile response cannot inflate into gigabytes.
   */
  maxInstanceBytes?: number
}

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

export class DeltaClientError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'DeltaClientError'
  }
}

export class DeltaClient {
  readonly #fetch: FetchLike
  readonly #aim: string
  readonly #maxEntries: number
  readonly #maxBytes: number
  readonly #maxInstanceBytes: number
  readonly #kept = new Map<string, Kept>()
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

  /** The instance kept for `url`, if any. */
  cached (url: string): { etag: string, body: Buffer } | undefined {
    return this.#kept.get(url)
  }

  /** Forgets the instance kept for `url`. */
  forget (url: string): void {
    const old = this.#kept.get(url)
    if (old === undefined) return
    this.#kept.delete(url)
    this.#bytes -= old.body.length
  }

  /** GET `url`; `headers` are sent too (A-IM and If-None-Match are the client's own). */
  async get (url: string, headers: Record<string, string> = {}): Promise<DeltaResult> {
    const kept = this.#kept.get(url)
    try {
      return await this.#get(url, headers, kept)
    } catch (err) {
      if (!(err instanceof DeltaClientError) || kept === undefined) throw err
      // The kept base did not give a valid instance: ask for the whole instance once.
      this.forget(url)
      return await this.#get(url, headers, undefined)
    }
  }

  async #get (url: string, extra: Record<string, string>, kept: Kept | undefined): Promise<DeltaResult> {
    const headers: Record<string, string> = { ...extra, 'a-im': this.#aim }
    if (kept !== undefined) headers['if-none-match'] = kept.etag
    const res = await this.#fetch(url, { method: 'GET', headers })
    const wire = Buffer.from(await res.arrayBuffer())
    const etag = res.headers.get('etag') ?? undefined
    const result: DeltaResult = { status: res.status, wireStatus: res.status, body: wire, etag, im: [], notModified: false, wireBytes: wire.length, headers: res.headers }
    if (kept !== undefined && (res.status === 304 || (res.status === 412 && etag === kept.etag))) {
      // RFC 9110 15.4.5 (304), conventions (Conditional requests) (412 for a matching If-None-Match): the kept instance is current.
      this.#touch(url, kept)
      return { ...result, status: 200, body: kept.body, etag: kept.etag, notModified: true }
    }
    if (res.status === 226) {
      const im = parseWeightedTokens(res.headers.get('im') ?? '').map((m) => m.token)
      const body = this.#undo(im, wire, kept, res.headers.get('delta-base'))
      if (etag === undefined) throw new DeltaClientError('a 226 response must carry the ETag of the instance (RFC 3229 10.4.1)')
      this.#keep(url, etag, body)
      return { ...result, status: 200, body, im }
    }
    if (res.status === 200) {
      const tag = etag === undefined ? null : parseEntityTag(etag)
      if (tag !== null && !tag.weak) this.#keep(url, etag as string, wire)
      else this.forget(url)
    }
    return result
  }

  /** RFC 3229 10.5.2: the manipulations were applied in IM's order; undo them in reverse. */
  #undo (im: string[], wire: Buffer, kept: Kept | undefined, deltaBase: string | null): Buffer {
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
        throw new DeltaClientError(`${m}: ${(err as Error).message}`)
      }
    }
    return data
  }

  #touch (url: string, kept: Kept): void {
    this.#kept.delete(url)
    this.#kept.set(url, kept)
  }

  #keep (url: string, etag: string, body: Buffer): void {
    this.forget(url)
    if (body.length > this.#maxBytes) return
    this.#kept.set(url, { etag, body })
    this.#bytes += body.length
    while (this.#kept.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      this.forget(this.#kept.keys().next().value as string)
    }
  }
}
