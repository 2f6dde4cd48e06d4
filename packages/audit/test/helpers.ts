/**
 * The audit tests' harness: the reference service in this process (example/app.ts) with one
 * mutation applied to what it answers, and the auditor run against a URL in this process.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { buildService, authFromEnv } from '../../../example/app'
import { main } from '../src/cli'
import type { Profile } from '../src/run'

/** An answer about to be written: a mutation changes it in place. */
export interface Answer {
  status: number
  /** lower-case names */
  headers: Record<string, string | string[] | number>
  /** a replacement body */
  body?: Buffer
  /** the body the service wrote (when it wrote it in one piece) */
  received?: Buffer
  /** do not send Date */
  noDate?: boolean
}

/** One way to break a service: `when` picks the answers (by the request's text and the status), `change` breaks them. */
export interface Mutation {
  when: (request: string, status: number) => boolean
  change: (a: Answer, request: string) => void
  /** changes the request before the service reads it */
  request?: (req: IncomingMessage) => void
  /** answers in front of the service (which then never sees the request): true when it did */
  front?: (req: IncomingMessage, res: ServerResponse) => boolean
}

export const CREDENTIALS = ['--basic', 'demo:demo-password', '--bearer', 'demo-write-token', '--digest', 'demo:demo-password']

function requestText (req: IncomingMessage): string {
  const lines = [`${req.method ?? ''} ${req.url ?? ''} HTTP/${req.httpVersion}`]
  for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
  return lines.join('\r\n') + '\r\n\r\n'
}

function lower (headers: unknown): Record<string, string | string[] | number> {
  const out: Record<string, string | string[] | number> = {}
  if (headers !== null && typeof headers === 'object') for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v as string
  return out
}

/**
 * Mutates answers the app writes through ServerResponse (Fastify's replies and Node's own 417).
 * The head of a picked answer waits for its body, so that a mutation can read what the service
 * wrote (`received`).
 */
function patchResponse (req: IncomingMessage, res: ServerResponse, m: Mutation, viaResponse: WeakSet<Socket>): void {
  const writeHead = res.writeHead
  const end = res.end
  const write = res.write
  let pending: { status: number, given: unknown } | undefined
  let ending = false
  let body: Buffer | undefined
  const flush = (self: ServerResponse, received: Buffer | undefined): void => {
    const { status, given } = pending as { status: number, given: unknown }
    pending = undefined
    const a: Answer = { status, headers: { ...lower(res.getHeaders()), ...lower(given) }, ...(received === undefined ? {} : { received }) }
    m.change(a, requestText(req))
    for (const name of res.getHeaderNames()) res.removeHeader(name)
    if (a.noDate === true) res.sendDate = false
    if (a.body !== undefined) { body = a.body; a.headers['content-length'] = a.body.length }
    ;(writeHead as (...x: unknown[]) => ServerResponse).call(self, a.status, STATUS_CODES[a.status] ?? 'Status', a.headers)
  }
  res.writeHead = function mutatedWriteHead (this: ServerResponse, status: number, ...args: unknown[]) {
    const given = args.find((x) => x !== null && typeof x === 'object')
    if (!m.when(requestText(req), status)) return writeHead.call(this, status, given as Record<string, string>)
    pending = { status, given }
    if (ending) flush(this, undefined)
    return this
  } as ServerResponse['writeHead']
  // what the response writes on the socket (within these calls) is its own, not a raw answer
  const own = <T>(f: () => T): T => { viaResponse.add(req.socket); try { return f() } finally { viaResponse.delete(req.socket) } }
  res.write = function mutatedWrite (this: ServerResponse, ...args: unknown[]) {
    if (pending !== undefined) flush(this, undefined)
    return own(() => (write as (...a: unknown[]) => boolean).apply(this, args))
  } as ServerResponse['write']
  res.end = function mutatedEnd (this: ServerResponse, ...args: unknown[]) {
    const chunk = args.length > 0 && typeof args[0] !== 'function' ? args[0] : undefined
    if (pending !== undefined) flush(this, typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : undefined)
    if (body !== undefined && chunk !== undefined) args[0] = body
    ending = true
    return own(() => (end as (...a: unknown[]) => ServerResponse).apply(this, args))
  } as ServerResponse['end']
}

/**
 * Mutates answers written straight to the socket: to requests Node's parser refused, and to
 * requests whose body ended short (the suite writes its 411 on the socket, past the response).
 */
function patchSocket (socket: Socket, m: Mutation, handled: WeakSet<Socket>, refused: WeakMap<Socket, string>): void {
  const rewrite = (chunk: unknown): unknown => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1') : undefined
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text ?? '')?.[1] ?? 0)
    if (handled.has(socket) || text === undefined || status === 0 || !m.when(refused.get(socket) ?? '', status)) return chunk
    const end = text.indexOf('\r\n\r\n')
    const lines = text.slice(0, end).split('\r\n').slice(1)
    const a: Answer = { status, headers: {} }
    for (const line of lines) { const i = line.indexOf(':'); a.headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim() }
    let payload = text.slice(end + 4)
    m.change(a, refused.get(socket) ?? '')
    if (a.body !== undefined) { payload = a.body.toString('latin1'); a.headers['content-length'] = a.body.length }
    if (a.noDate === true) delete a.headers.date
    const head = [`HTTP/1.1 ${a.status} ${STATUS_CODES[a.status] ?? 'Status'}`, ...Object.entries(a.headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${String(x)}`))]
    return Buffer.from(head.join('\r\n') + '\r\n\r\n' + payload, 'latin1')
  }
  const write = socket.write
  socket.write = function mutatedWrite (this: Socket, chunk: unknown, ...rest: unknown[]) {
    return (write as (...a: unknown[]) => boolean).call(this, rewrite(chunk), ...rest)
  } as Socket['write']
  const end = socket.end
  socket.end = function mutatedEnd (this: Socket, ...args: unknown[]) {
    if (args.length > 0 && typeof args[0] !== 'function') args[0] = rewrite(args[0])
    return (end as (...a: unknown[]) => Socket).apply(this, args)
  } as Socket['end']
}

export function mutate (server: Server, m: Mutation): void {
  const handled = new WeakSet<Socket>()
  // Node's parser reads the socket's handle directly (no 'data' events): the bytes of a request
  // it refused come with the error
  const refused = new WeakMap<Socket, string>()
  server.prependListener('clientError', (err: Error & { rawPacket?: Buffer }, socket: Socket) => { if (err.rawPacket !== undefined || !refused.has(socket)) refused.set(socket, err.rawPacket?.toString('latin1') ?? '') })
  server.prependListener('connection', (socket: Socket) => patchSocket(socket, m, handled, refused))
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    refused.set(req.socket, requestText(req))
    m.request?.(req)
    patchResponse(req, res, m, handled)
  })
  const front = m.front
  if (front === undefined) return
  const emit = server.emit
  server.emit = function frontEmit (this: Server, event: string, ...args: unknown[]) {
    if (event === 'request' && front(args[0] as IncomingMessage, args[1] as ServerResponse)) return true
    return (emit as (...a: unknown[]) => boolean).call(this, event, ...args)
  } as Server['emit']
}

export interface Started { url: string, close: () => Promise<void> }

/** The reference service (docs/reference-service.md) on a free port of 127.0.0.1, in this process. */
export async function startReference (profile: Profile, mutation?: Mutation): Promise<Started> {
  const app = await buildService({ database: ':memory:', bodyLimit: 1048576, profile, auth: authFromEnv({}) })
  if (mutation !== undefined) mutate(app.server, mutation)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { url, close: () => app.close() }
}

export interface RunResult { code: number, report: { requests: number, rules: Array<{ id: string, outcome: string, failures: unknown[], partials: unknown[], reason?: string }> }, stderr: string }

/** The CLI in this process (`--json`): its exit code and report. */
export async function runAudit (args: string[]): Promise<RunResult> {
  let out = ''
  let err = ''
  const code = await main(['audit', ...args, '--json'], { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s } } })
  return { code, report: code === 2 ? { requests: 0, rules: [] } : JSON.parse(out), stderr: err }
}

export function failing (r: RunResult): string[] {
  return r.report.rules.filter((x) => x.outcome === 'fail' || x.outcome === 'partial').map((x) => x.id).sort()
}

/** The reference service's redirects are `/v1/...` (not in its OpenAPI document). */
export const REFERENCE_CONFIG = { redirects: ['/v1/articles'] }

/** Mutations applied one after the other, each to the answers it picks. */
export function compose (...parts: Mutation[]): Mutation {
  return {
    when: (q, s) => parts.some((p) => p.when(q, s)),
    change: (a, q) => { for (const p of parts) if (p.when(q, a.status)) p.change(a, q) },
    request: (req) => { for (const p of parts) p.request?.(req) },
    front: (req, res) => parts.some((p) => p.front?.(req, res) === true)
  }
}
