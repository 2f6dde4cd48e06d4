/**
 * A declared length is not memory (docs/security-model.md, Memory per body byte): a client
 * that declares a large Content-Length and sends two bytes costs the server what it sent, not
 * what it declared, on every path that reads bodies (the suite's parsers, and every other
 * parser through Fastify's reader); and memory that cannot be had while a body is read is a
 * 503 to that client, never an exception that ends the process. A real server, raw sockets,
 * and the process's own memory figures.
 */
import net from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { test } from 'tap'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { parseResponses, type RawResponse } from '../helpers/raw'
import { until } from '../helpers/until'
import { CoalescedBody, readBody, setSuiteParser, type BodyStream, type Done } from '../../plugins/services/body-reader'
import type { Allocate } from '../../lib/json-body'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const MiB = 1024 * 1024
/** Connections at once, each declaring DECLARED bytes and sending two. */
const CONNECTIONS = Number(process.env.DECLARED_LENGTH_CONNECTIONS ?? 200)
const DECLARED = MiB
/** Memory of buffers allowed per connection: what it sent, and the first buffer a body is given (1 KiB), with room to spare. */
const BUFFERS_PER_CONNECTION = 4 * 1024
/**
 * All memory (heap and buffers) allowed per connection: the socket, the request and its
 * reply, the hooks' state. One buffer of the declared length, the fault this bounds, is 1 MiB.
 */
const MEMORY_PER_CONNECTION = 64 * 1024

function used (): { heap: number, buffers: number } {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heap: m.heapUsed, buffers: m.arrayBuffers }
}

async function server (bodyLimit: number, setup?: (app: FastifyInstance) => Promise<unknown>): Promise<{ app: FastifyInstance, port: number, sockets: net.Socket[] }> {
  const app = await buildApp({}, { bodyLimit })
  app.post('/articles', async (req) => ({ got: typeof req.body }))
  app.post('/notes', async (req) => ({ got: typeof req.body }))
  // An app's own parser, read by Fastify's reader (through the suite's block joiner).
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => { done(null, body) })
  app.post('/blobs', async (req) => ({ length: (req.body as Buffer).length }))
  app.get('/ping', async () => 'pong')
  await setup?.(app)
  const sockets: net.Socket[] = []
  app.server.on('connection', (s: net.Socket) => sockets.push(s))
  return { app, port: await listen(app), sockets }
}

/** Resolves once the server's `count` connections have read `expected` bytes in all. */
function untilRead (sockets: net.Socket[], count: number, expected: number): Promise<number> {
  return until(`the server reading ${expected} bytes on ${count} connections`, () => {
    const read = sockets.reduce((n, s) => n + s.bytesRead, 0)
    return sockets.length === count && read >= expected && read
  }, 60_000, 10)
}

interface Client { socket: net.Socket, data: Buffer[], closed: Promise<void>, isClosed: () => boolean }

function connect (port: number, head: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const data: Buffer[] = []
    let done = false
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.setNoDelay(true)
      socket.write(head, 'latin1', () => resolve({ socket, data, closed, isClosed: () => done }))
    })
    const closed = new Promise<void>((resolve) => socket.once('close', () => { done = true; resolve() }))
    socket.on('data', (d) => data.push(d))
    socket.once('error', reject)
  })
}

function head (path: string, type: string, length: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`
}

const PATHS: Array<[string, string]> = [['/articles', 'application/json'], ['/notes', 'application/xml'], ['/blobs', 'application/octet-stream']]

/**
 * Opens `count` connections that each declare `declared` bytes, sends one body byte, waits
 * until the server has read it, then a second byte in a segment of its own (so that it is the
 * body's second piece), and waits until the server has read that too.
 */
async function twoBytesEach (port: number, sockets: net.Socket[], count: number, declared: number): Promise<Client[]> {
  const clients = await Promise.all(Array.from({ length: count }, (_, i) => {
    const [path, type] = PATHS[i % PATHS.length]
    return connect(port, head(path, type, declared) + (type === 'application/json' ? '{' : '<'))
  }))
  const sent = (): number => clients.reduce((n, c) => n + c.socket.bytesWritten, 0)
  await untilRead(sockets, count, sent())
  await Promise.all(clients.map((c) => new Promise<void>((resolve) => c.socket.write('"', () => resolve()))))
  await untilRead(sockets, count, sent())
  return clients
}

async function ping (port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/ping`)
  await res.text()
  return res.status
}

test('docs/security-model.md (Memory per body byte): connections that declare 1 MiB and send two bytes hold what they sent, not what they declared, on the suite\'s parsers and the app\'s own', async (t) => {
  const { app, port, sockets } = await server(2 * DECLARED)
  t.teardown(() => app.close())
  const before = used()
  const clients = await twoBytesEach(port, sockets, CONNECTIONS, DECLARED)
  const after = used()
  const buffers = after.buffers - before.buffers
  const memory = buffers + after.heap - before.heap
  t.comment(`${CONNECTIONS} connections, each declaring ${DECLARED} bytes and sending 2: ${buffers} bytes of buffers (${(buffers / CONNECTIONS).toFixed(0)} per connection), ${memory} bytes in all (${(memory / CONNECTIONS).toFixed(0)} per connection)`)
  t.ok(buffers <= CONNECTIONS * BUFFERS_PER_CONNECTION, `buffers: ${(buffers / CONNECTIONS).toFixed(0)} bytes per connection, at most ${BUFFERS_PER_CONNECTION}`)
  t.ok(memory <= CONNECTIONS * MEMORY_PER_CONNECTION, `heap and buffers: ${(memory / CONNECTIONS).toFixed(0)} bytes per connection, at most ${MEMORY_PER_CONNECTION}`)
  for (const c of clients) c.socket.destroy()
  await Promise.all(clients.map((c) => c.closed))
  await until('the server closing the abandoned connections', () => sockets.every((s) => s.destroyed))
  t.equal(await ping(port), 200, 'the server goes on serving')
})

test('a declared length the machine cannot allocate (1 TiB, under a 2 TiB body limit) costs two bytes, and the server goes on serving', async (t) => {
  const { app, port, sockets } = await server(2 ** 41)
  t.teardown(() => app.close())
  const before = used()
  const clients = await twoBytesEach(port, sockets, PATHS.length, 2 ** 40)
  const buffers = used().buffers - before.buffers
  t.ok(buffers <= PATHS.length * BUFFERS_PER_CONNECTION, `${buffers} bytes of buffers for ${PATHS.length} connections`)
  t.equal(await ping(port), 200, 'another client is served while they wait')
  for (const c of clients) c.socket.destroy()
  await Promise.all(clients.map((c) => c.closed))
})

/** Refuses every allocation, as a process out of memory does. */
const noMemory: Allocate = () => { throw new RangeError('Array buffer allocation failed') }

/** Sends `path` a body of two bytes in two segments (the second needs a buffer), and reads the answer until the connection closes. */
async function answerToTwoPieces (port: number, sockets: net.Socket[], path: string, type: string): Promise<RawResponse> {
  const client = await connect(port, head(path, type, 2) + 'a')
  await untilRead(sockets, sockets.length, sockets.reduce((n, s) => n + s.bytesRead, 0) + client.socket.bytesWritten)
  client.socket.write('b')
  await until(`the answer to ${path}, then the connection closed`, client.isClosed, 30_000).catch(() => client.socket.destroy())
  return parseResponses(Buffer.concat(client.data).toString('latin1'))[0]
}

test('RFC 9110 15.6.4: memory that cannot be had while a body is read is a 503 with Retry-After, the connection closes, and the next request is served: the suite\'s reader and Fastify\'s', async (t) => {
  const { app, port, sockets } = await server(MiB, async (app) => await app.register(async function failingReaders (child) {
    // The suite's reader, given an allocator that fails.
    setSuiteParser(child, ['application/x-failing'], function parseFailing (request: FastifyRequest, payload: BodyStream, next: Done) {
      readBody(request, payload, next, (bytes) => { next(null, bytes.length) }, noMemory)
    })
    child.post('/suite-reader', async () => 'read')
    // Fastify's reader, behind the suite's block joiner given an allocator that fails.
    child.post('/fastify-reader', {
      config: { contentLength: false },
      preParsing: async (request, _reply, payload) => new CoalescedBody(Number(request.headers['content-length']), payload, noMemory)
    }, async () => 'read')
  }))
  t.teardown(() => app.close())
  for (const [path, type] of [['/suite-reader', 'application/x-failing'], ['/fastify-reader', 'application/octet-stream']]) {
    const res = await answerToTwoPieces(port, sockets, path, type)
    t.equal(res?.status, 503, `${path}: 503`)
    t.equal(res?.headers['retry-after'], '5', `${path}: Retry-After`)
    t.equal(res?.headers.connection, 'close', `${path}: the unread body ends the connection`)
    t.equal(await ping(port), 200, `${path}: the next request is served`)
  }
})
