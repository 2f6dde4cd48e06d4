/**
 * Memory per body byte, before any credential (docs/conventions.md, Content-Length): a body
 * sent as one-byte chunks (RFC 9112 7.1) is held in memory at about one byte per body byte
 * while it is read, never as one buffer per chunk, on every path that reads it; under the
 * spec profile a chunked body is refused without being read, on routes and on the not-found
 * path alike. A real server, raw sockets, and the process's own memory figures.
 */
import net from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { test, type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { parseResponses, type RawResponse } from '../helpers/raw'
import type { HttpConventionsOptions } from '../../plugins/index'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const MiB = 1024 * 1024
/** Body bytes per connection, and connections at once. */
const BODY = Number(process.env.BODY_MEMORY_BYTES ?? MiB / 8)
const CONNECTIONS = 4
/** Allowed growth: at most this many bytes of memory per body byte held… */
const PER_BYTE = 3
/** …plus this much per request (a request, its hooks, a parser's buffers). */
const PER_REQUEST = 256 * 1024

interface Measured {
  /** Memory held while every body was read but for its last chunk, less the baseline, per body byte. */
  perByte: number
  growth: number
  /** Of which buffers (the body bytes themselves), per body byte. */
  buffersPerByte: number
  responses: RawResponse[]
  closed: boolean[]
}

/** The JavaScript heap and the memory of buffers, after a full collection. */
function used (): { heap: number, buffers: number } {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heap: m.heapUsed, buffers: m.arrayBuffers }
}

/**
 * One-byte chunks (`1\r\nx\r\n`) of a JSON, text or XML body of BODY bytes, made once for
 * the whole file: no client-side buffer is freed between a baseline and a measurement.
 */
const payloads = new Map<string, Buffer>()
function oneByteChunks (type: string): Buffer {
  const made = payloads.get(type)
  if (made !== undefined) return made
  const open = type === 'application/json' ? '{"text":"' : type === 'application/xml' ? '<article><text>' : ''
  const close = type === 'application/json' ? '"}' : type === 'application/xml' ? '</text></article>' : ''
  const body = open + 'x'.repeat(BODY - open.length - close.length) + close
  const out = Buffer.allocUnsafe(body.length * 6)
  for (let i = 0; i < body.length; i++) out.write(`1\r\n${body[i]}\r\n`, i * 6, 'latin1')
  payloads.set(type, out)
  return out
}

/** Resolves once the server has read `expected` bytes, or closed every connection. */
function untilAllRead (sockets: net.Socket[], expected: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const poll = (): void => {
      const read = sockets.reduce((n, s) => n + s.bytesRead, 0)
      if (read >= expected || (sockets.length === CONNECTIONS && sockets.every((s) => s.destroyed))) return resolve()
      // A safety net for a broken server, not a timing assertion.
      if (Date.now() - started > 60_000) return reject(new Error(`the server read ${read} of ${expected} bytes`))
      setTimeout(poll, 20)
    }
    poll()
  })
}

/**
 * Sends CONNECTIONS chunked bodies of one-byte chunks to `path`, holds back each body's last
 * chunk until the server has read everything else, and measures the memory held then.
 */
async function measure (t: Test, app: FastifyInstance, path: string, types: string[]): Promise<Measured> {
  const serverSockets: net.Socket[] = []
  app.server.on('connection', (s: net.Socket) => serverSockets.push(s))
  const port = await listen(app)
  const clients = Array.from({ length: CONNECTIONS }, (_, i) => {
    const type = types[i % types.length]
    const head = Buffer.from(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, 'latin1')
    return { head, chunks: oneByteChunks(type), data: [] as Buffer[], closed: false, socket: null as net.Socket | null }
  })
  const before = used()
  await Promise.all(clients.map((c) => new Promise<void>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(c.head)
      s.write(c.chunks, () => resolve())
    })
    c.socket = s
    s.on('data', (d) => c.data.push(d))
    s.on('error', () => { c.closed = true; resolve() })
    s.on('close', () => { c.closed = true; resolve() })
  })))
  await untilAllRead(serverSockets, clients.reduce((n, c) => n + c.head.length + c.chunks.length, 0))
  const after = used()
  const growth = after.heap + after.buffers - before.heap - before.buffers
  await Promise.all(clients.map((c) => new Promise<void>((resolve) => {
    const s = c.socket as net.Socket
    if (c.closed) return resolve()
    s.on('close', () => resolve())
    s.end('0\r\n\r\n')
  })))
  const responses = clients.map((c) => parseResponses(Buffer.concat(c.data).toString('latin1'))[0])
  // Closed before the next test takes its baseline.
  await app.close()
  return { perByte: growth / (CONNECTIONS * BODY), growth, buffersPerByte: (after.buffers - before.buffers) / (CONNECTIONS * BODY), responses, closed: clients.map((c) => c.closed) }
}

/** Body bytes per connection when each byte is its own TCP segment (one round trip per byte). */
const SEGMENTED = Number(process.env.BODY_MEMORY_SEGMENTED_BYTES ?? 48 * 1024)

/** Resolves once the server has read `expected` bytes of its connections (their number is CONNECTIONS). */
function untilRead (sockets: net.Socket[], expected: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      const read = sockets.reduce((n, s) => n + s.bytesRead, 0)
      if (sockets.length === CONNECTIONS && read >= expected) return resolve()
      if (sockets.length === CONNECTIONS && sockets.some((s) => s.destroyed)) return reject(new Error(`a connection closed after ${read} of ${expected} bytes`))
      setImmediate(poll)
    }
    poll()
  })
}

/**
 * Sends CONNECTIONS bodies of SEGMENTED bytes with Content-Length to `path`, one byte per TCP
 * segment: each byte is written only once the server has read the one before (so every read
 * the server makes holds one byte), holds back each body's last byte, and measures the memory
 * held then.
 */
async function measureSegmented (t: Test, app: FastifyInstance, path: string, types: string[]): Promise<Measured> {
  const serverSockets: net.Socket[] = []
  app.server.on('connection', (s: net.Socket) => serverSockets.push(s))
  const port = await listen(app)
  const clients = types.length === CONNECTIONS ? types : Array.from({ length: CONNECTIONS }, (_, i) => types[i % types.length])
  const bodies = clients.map((type) => {
    const open = type === 'application/json' ? '{"text":"' : ''
    const close = type === 'application/json' ? '"}' : ''
    return Buffer.from(open + 'x'.repeat(SEGMENTED - open.length - close.length) + close, 'latin1')
  })
  const data: Buffer[][] = clients.map(() => [])
  const closed = clients.map(() => false)
  const sockets = await Promise.all(clients.map((type, i) => new Promise<net.Socket>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.setNoDelay(true)
      s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${SEGMENTED}\r\nConnection: close\r\n\r\n`, 'latin1', () => resolve(s))
    })
    s.on('data', (d) => data[i].push(d))
    s.on('error', () => { closed[i] = true })
    s.on('close', () => { closed[i] = true })
  })))
  const sent = (): number => sockets.reduce((n, s) => n + s.bytesWritten, 0)
  await untilRead(serverSockets, sent())
  const before = used()
  for (let at = 0; at < SEGMENTED - 1; at++) {
    for (let i = 0; i < CONNECTIONS; i++) sockets[i].write(bodies[i].subarray(at, at + 1))
    await untilRead(serverSockets, sent())
  }
  const after = used()
  const growth = after.heap + after.buffers - before.heap - before.buffers
  await Promise.all(sockets.map((s, i) => new Promise<void>((resolve) => {
    s.on('close', () => resolve())
    s.end(bodies[i].subarray(SEGMENTED - 1))
  })))
  const responses = data.map((d) => parseResponses(Buffer.concat(d).toString('latin1'))[0])
  await app.close()
  t.comment(`${path}: ${CONNECTIONS} bodies of ${SEGMENTED} bytes, one byte per segment`)
  return { perByte: growth / (CONNECTIONS * SEGMENTED), growth, buffersPerByte: (after.buffers - before.buffers) / (CONNECTIONS * SEGMENTED), responses, closed }
}

/**
 * What the engine itself keeps once the first bodies went through a path: compiled code and
 * type feedback, in the heap, the same whatever the body's size (Node 26: up to 1.3 MiB at
 * 48 KiB a body and at 192 KiB alike; Node 20 to 24: a few KiB). One buffer per one-byte
 * piece, the fault this bounds, holds some 32 bytes per body byte: 6 MiB here.
 */
const ENGINE = 2 * MiB

function boundedSegmented (t: Test, name: string, m: Measured): void {
  t.comment(`${name}: ${m.perByte.toFixed(2)} bytes of memory per body byte, ${m.buffersPerByte.toFixed(2)} of them in buffers (${(m.growth / MiB).toFixed(2)} MiB for ${CONNECTIONS} x ${SEGMENTED} bytes)`)
  t.ok(m.buffersPerByte <= 1.1, `${name}: about one byte of buffers per body byte (${m.buffersPerByte.toFixed(2)})`)
  t.ok(m.growth <= PER_BYTE * CONNECTIONS * SEGMENTED + CONNECTIONS * PER_REQUEST + ENGINE,
    `${name}: at most ${PER_BYTE} bytes per body byte plus ${PER_REQUEST / 1024} KiB per request and the engine's ${ENGINE / MiB} MiB (got ${m.perByte.toFixed(2)} per byte)`)
}

async function server (opts: HttpConventionsOptions, routeConfig: Record<string, unknown> = {}): Promise<FastifyInstance> {
  const app = await buildApp(opts, { bodyLimit: 2 * BODY })
  app.post('/articles', {
    config: routeConfig,
    schema: { body: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }
  }, async (req) => ({ length: (req.body as { text: string }).text.length }))
  // An app's own parser, read by Fastify's reader (which keeps one buffer per piece it receives).
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
  app.post('/blobs', async (req) => ({ length: (req.body as Buffer).length }))
  // Another of the app's own parsers: Fastify's reader decoding text as it comes.
  app.addContentTypeParser('text/csv', { parseAs: 'string' }, (_req, body, done) => { done(null, body) })
  app.post('/rows', async (req) => ({ length: (req.body as string).length }))
  return app
}

function bounded (t: Test, name: string, m: Measured): void {
  t.comment(`${name}: ${m.perByte.toFixed(2)} bytes of memory per body byte, ${m.buffersPerByte.toFixed(2)} of them in buffers (${(m.growth / MiB).toFixed(1)} MiB for ${CONNECTIONS} x ${BODY} bytes)`)
  t.ok(m.growth <= PER_BYTE * CONNECTIONS * BODY + CONNECTIONS * PER_REQUEST,
    `${name}: at most ${PER_BYTE} bytes per body byte plus ${PER_REQUEST / 1024} KiB per request and the engine's ${ENGINE / MiB} MiB (got ${m.perByte.toFixed(2)} per byte)`)
}

const JSON_TYPE = ['application/json']

test('spec profile, not-found path: the chunked body is Fastify\'s to read (the suite runs no hook there), in bounded memory, then 404', async (t) => {
  const app = await server({})
  const m = await measure(t, app, '/nothing/here', JSON_TYPE)
  bounded(t, 'spec, not found', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(404))
})

test('spec profile, a route: a chunked body is refused with 411, unread, and the connection closes', async (t) => {
  const app = await server({})
  const m = await measure(t, app, '/articles', JSON_TYPE)
  bounded(t, 'spec, route', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(411))
  t.same(m.closed, Array(CONNECTIONS).fill(true))
})

test('rfc9110 profile, not-found path: chunked JSON, text and XML bodies are read in bounded memory, then 404', async (t) => {
  const app = await server({ profile: 'rfc9110' })
  const m = await measure(t, app, '/nothing/here', ['application/json', 'text/plain', 'application/xml'])
  bounded(t, 'rfc9110, not found', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(404))
})

test('rfc9110 profile, a route with a body schema: one-byte chunks are held in bounded memory and the body arrives whole', async (t) => {
  const app = await server({ profile: 'rfc9110' })
  const m = await measure(t, app, '/articles', JSON_TYPE)
  bounded(t, 'rfc9110, route', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(200))
  t.same(m.responses.map((r) => JSON.parse(r?.body ?? '{}').length), Array(CONNECTIONS).fill(BODY - 11))
})

test('spec profile, a route with config.contentLength false: the chunked body is read in bounded memory', async (t) => {
  const app = await server({}, { contentLength: false })
  const m = await measure(t, app, '/articles', JSON_TYPE)
  bounded(t, 'spec, contentLength: false', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(200))
})

test('rfc9110 profile, a route with the app\'s own parser (Fastify\'s reader, parseAs buffer): one-byte chunks are held in bounded memory', async (t) => {
  const app = await server({ profile: 'rfc9110' })
  const m = await measure(t, app, '/blobs', ['application/octet-stream'])
  bounded(t, 'rfc9110, app parser', m)
  t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(200))
  t.same(m.responses.map((r) => JSON.parse(r?.body ?? '{}').length), Array(CONNECTIONS).fill(BODY))
})

test('Content-Length bodies sent one byte per TCP segment are held in about one byte per body byte, whichever parser reads them: the app\'s own (Fastify\'s reader, as bytes and as text) and the suite\'s', async (t) => {
  for (const [path, types] of [['/blobs', ['application/octet-stream']], ['/rows', ['text/csv']], ['/articles', ['application/json']]] as const) {
    const app = await server({})
    const m = await measureSegmented(t, app, path, [...types])
    boundedSegmented(t, `${path} (${types[0]})`, m)
    t.same(m.responses.map((r) => r?.status), Array(CONNECTIONS).fill(200), `${path}: every body was read whole`)
    const expected = types[0] === 'application/json' ? SEGMENTED - 11 : SEGMENTED
    t.same(m.responses.map((r) => JSON.parse(r?.body ?? '{}').length), Array(CONNECTIONS).fill(expected))
  }
})
