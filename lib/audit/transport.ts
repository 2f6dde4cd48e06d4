/**
 * The auditor's transport: one HTTP/1.1 exchange per TCP connection, written byte for byte
 * (node:net), so that framing cases an HTTP client would repair (no Content-Length, two of
 * them, chunked, a wrong version) reach the service as written. Requests go one at a time
 * (one connection open at once) and at most `rate` a second.
 */
import net from 'node:net'

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

/** Where a complete response ends in `buf`, or -1 while more is needed; `closed`: no more will come. */
export function parseResponse (buf: Buffer, method: string, closed: boolean): WireResponse | null {
  const end = buf.indexOf('\r\n\r\n')
  if (end === -1) return null
  const head = buf.subarray(0, end).toString('latin1')
  const lines = head.split('\r\n')
  const statusLine = lines[0]
  const status = Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0)
  const headerLines: Array<[string, string]> = []
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon > 0) headerLines.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()])
  }
  const rest = buf.subarray(end + 4)
  const res: WireResponse = { statusLine, status, headerLines, body: Buffer.alloc(0), head }
  // RFC 9112 6.3: no content for HEAD, 1xx, 204, 304
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) return res
  const te = header(res, 'transfer-encoding')
  if (te !== undefined && /chunked\s*$/i.test(te)) {
    const body = dechunk(rest)
    if (body === null) return closed ? { ...res, body: rest } : null
    return { ...res, body }
  }
  const cl = header(res, 'content-length')
  if (cl !== undefined && /^\d+$/.test(cl)) {
    const len = Number(cl)
    if (rest.length < len) return closed ? { ...res, body: rest } : null
    return { ...res, body: rest.subarray(0, len) }
  }
  // RFC 9112 6.3 rule 8: the body runs to the close of the connection
  return closed ? { ...res, body: rest } : null
}

/** The content of a complete chunked body, or null while it is incomplete. */
export function dechunk (buf: Buffer): Buffer | null {
  const parts: Buffer[] = []
  let i = 0
  while (true) {
    const eol = buf.indexOf('\r\n', i)
    if (eol === -1) return null
    const size = parseInt(buf.subarray(i, eol).toString('latin1').split(';')[0].trim(), 16)
    if (Number.isNaN(size)) return Buffer.concat(parts)
    if (size === 0) return Buffer.concat(parts)
    if (buf.length < eol + 2 + size + 2) return null
    parts.push(buf.subarray(eol + 2, eol + 2 + size))
    i = eol + 2 + size + 2
  }
}

export interface TransportOptions {
  host: string
  port: number
  /** requests a second at most; 0 for no limit */
  rate: number
  /** give up on an answer after this many ms */
  timeoutMs: number
  /** clock and timer, replaceable in tests */
  now?: () => number
  wait?: (ms: number) => Promise<void>
}

export interface Transport {
  send: (req: WireRequest) => Promise<Exchange>
  readonly exchanges: Exchange[]
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
  async function one (req: WireRequest): Promise<Exchange> {
    const delay = nextAt - now()
    if (delay > 0) await wait(delay)
    nextAt = Math.max(now(), nextAt) + gap
    const rawRequest = serializeRequest(req, hostHeader)
    const ex: Exchange = { n: exchanges.length + 1, request: req, rawRequest, response: null }
    exchanges.push(ex)
    const { response, error } = await exchange(options.host, options.port, rawRequest, req.method, req.endAfterWrite === true, options.timeoutMs)
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

function exchange (host: string, port: number, data: string, method: string, end: boolean, timeoutMs: number): Promise<{ response: WireResponse | null, error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host)
    const chunks: Buffer[] = []
    let settled = false
    let closed = false
    const settle = (ended: boolean, error?: string): void => {
      if (settled) return
      const buf = Buffer.concat(chunks)
      const response = parseResponse(buf, method, ended)
      if (response === null && !ended) return
      settled = true
      clearTimeout(timer)
      const result = response === null ? { response, error: error ?? 'closed' } : { response }
      // the next request opens its connection only once this one is closed
      if (closed) resolve(result)
      else { socket.once('close', () => resolve(result)); socket.destroy() }
    }
    const timer = setTimeout(() => settle(true, 'timeout'), timeoutMs)
    socket.on('data', (d: Buffer) => { chunks.push(d); settle(false) })
    socket.on('error', (err: Error) => settle(true, err.message))
    socket.on('close', () => { closed = true; settle(true) })
    socket.on('connect', () => {
      socket.write(Buffer.from(data, 'latin1'))
      if (end) socket.end()
    })
  })
}
