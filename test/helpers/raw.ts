import net from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  headerLines: Array<[string, string]>
  body: string
  /** Everything the server wrote on the connection. */
  raw: string
  /** True when the server closed the connection. */
  closed: boolean
}

export interface RawOptions {
  /** Half-close (FIN) the connection this many ms after writing. */
  endAfterMs?: number
  /** Give up waiting after this many ms (default 2000) and report what arrived. */
  waitMs?: number
  /** Write `data` in these pieces, `pauseMs` apart. */
  pieces?: string[]
  pauseMs?: number
  /** Stop as soon as this many complete responses arrived (default: wait for close or waitMs). */
  responses?: number
}

export function parseResponses (raw: string): RawResponse[] {
  const out: RawResponse[] = []
  let rest = raw
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const head = rest.slice(0, end).split('\r\n')
    const status = Number(head[0].split(' ')[1])
    const headers: Record<string, string> = {}
    const headerLines: Array<[string, string]> = []
    for (const line of head.slice(1)) {
      const i = line.indexOf(':')
      const name = line.slice(0, i).toLowerCase()
      const value = line.slice(i + 1).trim()
      headerLines.push([name, value])
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
    }
    rest = rest.slice(end + 4)
    const len = headers['content-length'] !== undefined ? Number(headers['content-length']) : (headers['transfer-encoding'] === undefined ? 0 : rest.length)
    const bodyBuf = Buffer.from(rest, 'latin1').subarray(0, len)
    out.push({ status, headers, headerLines, body: bodyBuf.toString('utf8'), raw: '', closed: false })
    rest = Buffer.from(rest, 'latin1').subarray(len).toString('latin1')
  }
  return out
}

function complete (raw: string): number {
  let n = 0
  let rest = raw
  while (true) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) return n
    const m = /\r\ncontent-length: *(\d+)/i.exec(rest.slice(0, end + 2))
    const len = m === null ? 0 : Number(m[1])
    if (Buffer.byteLength(rest.slice(end + 4), 'latin1') < len) return n
    n++
    rest = Buffer.from(rest.slice(end + 4), 'latin1').subarray(len).toString('latin1')
  }
}

/** Sends bytes on a fresh TCP connection and collects the answer(s), over Node's real HTTP parser. */
export function rawExchange (port: number, data: string, opts: RawOptions = {}): Promise<{ responses: RawResponse[], raw: string, closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let closed = false
    let finished = false
    const finish = (): void => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      const raw = Buffer.concat(chunks).toString('latin1')
      resolve({ responses: parseResponses(raw), raw, closed })
    }
    const timer = setTimeout(finish, opts.waitMs ?? 2000)
    socket.on('data', (d) => {
      chunks.push(d)
      if (opts.responses !== undefined && complete(Buffer.concat(chunks).toString('latin1')) >= opts.responses) setImmediate(finish)
    })
    socket.on('error', () => { closed = true; finish() })
    socket.on('close', () => { closed = true; finish() })
    socket.on('connect', async () => {
      try {
        if (opts.pieces !== undefined) {
          for (const piece of opts.pieces) {
            if (socket.destroyed) break
            socket.write(piece)
            await new Promise((resolve) => setTimeout(resolve, opts.pauseMs ?? 5))
          }
        } else {
          socket.write(data)
        }
        if (opts.endAfterMs !== undefined) setTimeout(() => { if (!socket.destroyed) socket.end() }, opts.endAfterMs)
      } catch (err) {
        reject(err)
      }
    })
  })
}

export async function rawRequest (port: number, data: string, opts: RawOptions = {}): Promise<RawResponse> {
  const { responses, raw, closed } = await rawExchange(port, data, { responses: 1, ...opts })
  const first = responses[0] ?? { status: 0, headers: {}, headerLines: [], body: '', raw: '', closed }
  return { ...first, raw, closed }
}
