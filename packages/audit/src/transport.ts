/**
 * The auditor's transport: one HTTP/1.1 exchange per TCP connection, written byte for byte
 * (node:net), so that framing cases an HTTP client would repair (no Content-Length, two of
 * them, chunked, a wrong version) reach the service as written. Requests go one at a time
 * (one connection open at once) and at most `rate` a second.
 */
import net from 'node:net'
import { LIMITS, size } from './bounds'

export interface WireRequest {
  method: string
  /** origin-form target, `/path?query` */
  target: string
  /** header lines in order, as written (a name may repeat) */
  headers: Array<[string, string]>
  body?: Buffer | string
  /** Bytes to send instead of the request built from the fields above (framing probes). */
  raw?: string
  /** Half-close the connection after writing (the request ends there). */
  endAfterWrite?: boolean
  /** body bytes of the answer kept at most (default LIMITS.body) */
  maxBody?: number
}

export interface WireResponse {
  /** `HTTP/1.1 200 OK` */
  statusLine: string
  status: number
  /** names lower case, in order */
  headerLines: Array<[string, string]>
  body: Buffer
  /** The head as received (status line and header lines). */
  head: string
  /** why the body is not whole: a bound of the auditor (docs/audit.md, Limits), the timeout */
  cut?: string
}

export interface Exchange {
  /** sequence number of the request within the run, from 1 */
  n: number
  request: WireRequest
  /** the request's bytes, as sent (latin1) */
  rawRequest: string
  response: WireResponse | null
  /** why no response: `timeout`, `closed`, or a socket error */
  error?: string
}

/** The values of a header (lower-case name), each line once. */
export function headerValues (res: WireResponse | null, name: string): string[] {
  if (res === null) return []
  const out: string[] = []
  for (const [n, v] of res.headerLines) if (n === name) out.push(v)
  return out
}

/** The header's lines joined by `, ` (RFC 9110 5.3), or undefined when absent. */
export function header (res: WireResponse | null, name: string): string | undefined {
  const values = headerValues(res, name)
  return values.length === 0 ? undefined : values.join(', ')
}

export function serializeRequest (req: WireRequest, host: string): string {
  if (req.raw !== undefined) return req.raw
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `Host: ${host}`]
  for (const [name, value] of req.headers) lines.push(`${name}: ${value}`)
  lines.push('Connection: close')
  const body = req.body === undefined ? '' : Buffer.from(req.body).toString('latin1')
  return lines.join('\r\n') + '\r\n\r\n' + body
}

/** How the body of an answer is delimited (RFC 9112 6.3). */
type Framing = { kind: 'none' } | { kind: 'length', left: number } | { kind: 'chunked', chunks: ChunkDecoder } | { kind: 'close' }

/** The status line and the header lines of a head (without its final CRLF CRLF). */
function parseHead (head: string): WireResponse {
  const lines = head.split('\r\n')
  const statusLine = lines[0]
  const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0)
  const headerLines: Array<[string, string]> = []
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon > 0) headerLines.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()])
  }
  return { statusLine, status, headerLines, body: Buffer.alloc(0), head }
}

function framingOf (res: WireResponse, method: string): Framing {
  // RFC 9112 6.3: no content for HEAD, 1xx, 204, 304
  if (method === 'HEAD' || res.status === 204 || res.status === 304 || (res.status >= 100 && res.status < 200)) return { kind: 'none' }
  const te = header(res, 'transfer-encoding')
  if (te !== undefined && /chunked\s*$/i.test(te)) return { kind: 'chunked', chunks: new ChunkDecoder() }
  const cl = header(res, 'content-length')
  if (cl !== undefined && /^\d+$/.test(cl)) return { kind: 'length', left: Number(cl) }
  // RFC 9112 6.3 rule 8: the body runs to the close of the connection
  return { kind: 'close' }
}

/**
 * The content of a chunked body (RFC 9112 7.1), decoded as its bytes arrive: each byte is
 * looked at once, and a chunk-size line longer than LIMITS.chunkLine ends the body.
 */
export class ChunkDecoder {
  /** decoded content, in pieces */
  readonly parts: Buffer[] = []
  done = false
  /** why the body ended before its last chunk */
  problem: string | undefined
  private line: Buffer[] = []
  private lineBytes = 0
  private left = 0
  /** CRLF bytes still to skip after a chunk's data */
  private skip = 0

  /** Takes the next bytes; returns how many of them the body used (the rest follows it). */
  push (data: Buffer): number {
    let i = 0
    while (i < data.length && !this.done) {
      if (this.skip > 0) { const n = Math.min(this.skip, data.length - i); this.skip -= n; i += n; continue }
      if (this.left > 0) {
        const n = Math.min(this.left, data.length - i)
        this.parts.push(data.subarray(i, i + n))
        this.left -= n
        i += n
        if (this.left === 0) this.skip = 2
        continue
      }
      i = this.sizeLine(data, i)
    }
    return i
  }

  /** Reads the chunk-size line from `i`; returns where reading goes on. */
  private sizeLine (data: Buffer, i: number): number {
    const lf = data.indexOf(0x0a, i)
    const end = lf === -1 ? data.length : lf + 1
    this.line.push(data.subarray(i, end))
    this.lineBytes += end - i
    if (this.lineBytes > LIMITS.chunkLine) { this.finish(`a chunk-size line over ${size(LIMITS.chunkLine)} (limit): the body ends there`); return end }
    if (lf === -1) return end
    const text = Buffer.concat(this.line).toString('latin1')
    this.line = []
    this.lineBytes = 0
    const n = parseInt(text.split(';')[0].trim(), 16)
    if (Number.isNaN(n)) this.finish('a chunk-size that is not a number: the body ends there')
    else if (n === 0) this.finish(undefined)
    else this.left = n
    return end
  }

  private finish (problem: string | undefined): void {
    this.done = true
    this.problem = problem
  }
}

/**
 * One answer read as its bytes arrive, in linear time (no byte is parsed twice), keeping at
 * most LIMITS.head bytes of head and `maxBody` bytes of body: past a bound it is complete,
 * marked `cut`, and the connection can be closed.
 */
export class ResponseReader {
  response: WireResponse | null = null
  /** the answer is whole, or cut at a bound: read no more */
  done = false
  /** why no answer: its head is over the bound */
  error: string | undefined
  private headParts: Buffer = Buffer.alloc(0)
  private framing: Framing = { kind: 'none' }
  private readonly parts: Buffer[] = []
  private kept = 0

  constructor (private readonly method: string, private readonly maxBody: number = LIMITS.body) {}

  push (data: Buffer): void {
    if (this.done) return
    if (this.response === null) { this.pushHead(data); return }
    this.pushBody(data)
  }

  private pushHead (data: Buffer): void {
    const from = Math.max(0, this.headParts.length - 3)
    this.headParts = Buffer.concat([this.headParts, data])
    const end = this.headParts.indexOf('\r\n\r\n', from)
    if (end === -1) {
      if (this.headParts.length > LIMITS.head) { this.error = `an answer head over ${size(LIMITS.head)} (limit)`; this.done = true }
      return
    }
    if (end > LIMITS.head) { this.error = `an answer head over ${size(LIMITS.head)} (limit)`; this.done = true; return }
    this.response = parseHead(this.headParts.subarray(0, end).toString('latin1'))
    this.framing = framingOf(this.response, this.method)
    const rest = this.headParts.subarray(end + 4)
    this.headParts = Buffer.alloc(0)
    if (this.framing.kind === 'none') { this.done = true; return }
    this.pushBody(rest)
  }

  private pushBody (data: Buffer): void {
    const f = this.framing
    if (f.kind === 'length') {
      const piece = data.subarray(0, f.left)
      f.left -= piece.length
      this.keep(piece)
      if (f.left === 0) this.done = true
    } else if (f.kind === 'chunked') {
      const before = f.chunks.parts.length
      f.chunks.push(data)
      for (const p of f.chunks.parts.splice(before)) this.keep(p)
      if (f.chunks.done) { this.done = true; if (f.chunks.problem !== undefined) this.mark(f.chunks.problem) }
    } else this.keep(data)
  }

  private keep (piece: Buffer): void {
    if (this.done || piece.length === 0) return
    const room = this.maxBody - this.kept
    if (piece.length <= room) { this.parts.push(piece); this.kept += piece.length; return }
    this.parts.push(piece.subarray(0, room))
    this.kept += room
    this.done = true
    this.mark(`body over ${size(this.maxBody)} (limit): the first ${size(this.maxBody)} kept, the rest not read`)
  }

  private mark (cut: string): void {
    (this.response as WireResponse).cut = cut
  }

  /**
   * The answer: when done, as read; else what arrived before the connection ended (`why`:
   * `timeout`, `closed` or a socket error), marked cut unless the body runs to the close.
   */
  finish (why: string): WireResponse | null {
    const res = this.response
    if (res === null) return null
    if (!this.done) {
      this.done = true
      if (this.framing.kind !== 'close' || why !== 'closed') this.mark(`${why === 'timeout' ? 'cut by the timeout' : `cut (${why})`} after ${this.kept} body bytes`)
    }
    res.body = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts)
    return res
  }
}

/** A complete response in `buf`, or null while more is needed; `closed`: no more will come. */
export function parseResponse (buf: Buffer, method: string, closed: boolean): WireResponse | null {
  const reader = new ResponseReader(method, Infinity)
  reader.push(buf)
  return reader.done || closed ? reader.finish('closed') : null
}

/** The content of a complete chunked body, or null while it is incomplete. */
export function dechunk (buf: Buffer): Buffer | null {
  const d = new ChunkDecoder()
  d.push(buf)
  return d.done ? Buffer.concat(d.parts) : null
}

export interface TransportOptions {
  host: string
  port: number
  /** requests a second at most; 0 for no limit */
  rate: number
  /** give up on an answer after this many ms */
  timeoutMs: number
  /** the audited URL's path (`/api`): every origin-form target is sent below it */
  prefix?: string
  /** clock and timer, replaceable in tests */
  now?: () => number
  wait?: (ms: number) => Promise<void>
}

export interface Transport {
  send: (req: WireRequest) => Promise<Exchange>
  readonly exchanges: Exchange[]
}

/** `target` below `prefix` (`/api` + `/x`), unless it is there already or is not a path (`*`). */
export function prefixTarget (target: string, prefix: string): string {
  if (prefix === '' || !target.startsWith('/')) return target
  if (target === prefix || target.startsWith(prefix + '/') || target.startsWith(prefix + '?')) return target
  return prefix + target
}

/** The request with its target below `prefix`; a raw request has its request line's target moved. */
export function withPrefix (req: WireRequest, prefix: string): WireRequest {
  if (prefix === '') return req
  if (req.raw === undefined) return { ...req, target: prefixTarget(req.target, prefix) }
  return { ...req, raw: req.raw.replace(/^(\S+ )(\S+)/, (_, method: string, target: string) => method + prefixTarget(target, prefix)) }
}

/** One request a connection, sequential, paced to `rate` a second. */
export function createTransport (options: TransportOptions): Transport {
  const exchanges: Exchange[] = []
  const now = options.now ?? Date.now
  const wait = options.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const gap = options.rate > 0 ? 1000 / options.rate : 0
  let nextAt = 0
  let queue: Promise<unknown> = Promise.resolve()
  const hostHeader = `${options.host}:${options.port}`
  const prefix = (options.prefix ?? '').replace(/\/+$/, '')
  async function one (req: WireRequest): Promise<Exchange> {
    const delay = nextAt - now()
    if (delay > 0) await wait(delay)
    nextAt = Math.max(now(), nextAt) + gap
    const rawRequest = serializeRequest(withPrefix(req, prefix), hostHeader)
    const ex: Exchange = { n: exchanges.length + 1, request: req, rawRequest, response: null }
    exchanges.push(ex)
    const { response, error } = await exchange({ host: options.host, port: options.port, timeoutMs: options.timeoutMs }, rawRequest, req)
    ex.response = response
    if (error !== undefined) ex.error = error
    return ex
  }
  return {
    exchanges,
    send (req) {
      const p = queue.then(() => one(req))
      queue = p.catch(() => undefined)
      return p
    }
  }
}

/** One exchange on its own connection, read by a ResponseReader: closed as soon as the answer is whole or cut at a bound. */
function exchange (to: { host: string, port: number, timeoutMs: number }, data: string, req: WireRequest): Promise<{ response: WireResponse | null, error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(to.port, to.host)
    const reader = new ResponseReader(req.method, req.maxBody ?? LIMITS.body)
    let settled = false
    let closed = false
    const settle = (why: string | undefined): void => {
      if (settled || (why === undefined && !reader.done)) return
      settled = true
      clearTimeout(timer)
      const response = reader.finish(why ?? 'closed')
      const error = reader.error ?? why ?? 'closed'
      const result = response === null ? { response, error } : { response }
      // the next request opens its connection only once this one is closed
      if (closed) resolve(result)
      else { socket.once('close', () => resolve(result)); socket.destroy() }
    }
    const timer = setTimeout(() => settle('timeout'), to.timeoutMs)
    socket.on('data', (d: Buffer) => { reader.push(d); settle(undefined) })
    socket.on('error', (err: Error) => settle(err.message))
    socket.on('close', () => { closed = true; settle('closed') })
    socket.on('connect', () => {
      socket.write(Buffer.from(data, 'latin1'))
      if (req.endAfterWrite === true) socket.end()
    })
  })
}

/** Each bound an exchange of the run hit (a body or a head over its limit, a body cut by the timeout), once a request. */
export function boundsHit (exchanges: readonly Exchange[]): string[] {
  const out: string[] = []
  for (const ex of exchanges) {
    const why = ex.response?.cut ?? (ex.error !== undefined && ex.error.includes('(limit)') ? ex.error : undefined)
    if (why !== undefined) out.push(`${ex.request.method} ${ex.request.target}: ${why}`)
  }
  return out
}
