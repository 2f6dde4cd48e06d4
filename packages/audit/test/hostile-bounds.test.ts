/**
 * Hostile services against the auditor's bounds (docs/audit.md, Limits): answers too large or
 * endless, a head that never ends, a document that refers to itself, a schema asking for a
 * 600,000,000-character string, too many paths, a document cut by the timeout. Each run keeps
 * at most the bound, says so, and goes on. Memory is proven by counting the bytes kept and
 * copied, never by timing.
 */
import { test, teardown } from 'tap'
import net, { type AddressInfo, type Socket } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { main } from '../src/cli'
import { createTransport } from '../src/transport'
import { validInstance } from '../src/schema-body'
import { resolveRefs } from '../src/discovery'

const MiB = 1024 * 1024
const dir = mkdtempSync(join(os.tmpdir(), 'audit-bounds-'))
teardown(() => rmSync(dir, { recursive: true, force: true }))
function file (name: string, value: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value))
  return path
}

interface Raw { port: number, url: string, targets: string[], written: Promise<number>[], close: () => Promise<void> }

/** A TCP service whose answer `answer` writes; each connection's bytes written are known at its close. */
async function rawService (answer: (socket: Socket, request: string) => void): Promise<Raw> {
  const targets: string[] = []
  const written: Promise<number>[] = []
  const server = net.createServer((socket) => {
    let got = ''
    written.push(new Promise((resolve) => socket.once('close', () => resolve(socket.bytesWritten))))
    socket.on('error', () => undefined)
    socket.on('data', (d: Buffer) => {
      if (got.includes('\r\n\r\n')) return
      got += d.toString('latin1')
      if (!got.includes('\r\n\r\n')) return
      targets.push(got.split(' ')[1])
      answer(socket, got)
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const port = (server.address() as AddressInfo).port
  return { port, url: `http://127.0.0.1:${port}`, targets, written, close: () => new Promise((resolve) => { server.close(() => resolve()) }) }
}

/** Writes `piece` again and again, as fast as the peer reads, until `total` bytes or the peer closes. */
function stream (socket: Socket, piece: Buffer, total: number): void {
  let sent = 0
  const more = (): void => {
    while (sent < total && !socket.destroyed) {
      sent += piece.length
      if (!socket.write(piece)) { socket.once('drain', more); return }
    }
  }
  more()
}

const ok = (extra: string, body = ''): string => `HTTP/1.1 200 OK\r\n${extra}Connection: close\r\n\r\n${body}`

async function run (args: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await main(['audit', ...args], { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s } } })
  return { code, out, err }
}

test('a 32 MiB answer: 4 MiB kept, the connection closed there, the answer marked cut', async (t) => {
  const svc = await rawService((socket) => { socket.write(ok(`Content-Length: ${32 * MiB}\r\n`)); stream(socket, Buffer.alloc(64 * 1024, 0x61), 32 * MiB) })
  t.teardown(svc.close)
  const ex = await createTransport({ host: '127.0.0.1', port: svc.port, rate: 0, timeoutMs: 60000 }).send({ method: 'GET', target: '/', headers: [] })
  t.equal(ex.response?.body.length, 4 * MiB, 'the body kept is the bound')
  t.match(ex.response?.cut, /body over 4 MiB \(limit\)/)
  t.ok(await svc.written[0] < 32 * MiB, 'the service could not send it all: the auditor stopped reading')
})

test('an answer is read in linear time: the bytes the transport copies stay within twice the answer', async (t) => {
  const size = 3 * MiB
  const svc = await rawService((socket) => { socket.write(ok(`Content-Length: ${size}\r\n`)); stream(socket, Buffer.alloc(16 * 1024, 0x62), size) })
  t.teardown(svc.close)
  // every byte Buffer.concat copies, while the answer comes in 16 KiB pieces
  let copied = 0
  const concat = Buffer.concat
  Buffer.concat = ((list: readonly Uint8Array[], length?: number) => { const b = concat(list, length); copied += b.length; return b }) as typeof Buffer.concat
  let ex
  try {
    ex = await createTransport({ host: '127.0.0.1', port: svc.port, rate: 0, timeoutMs: 60000 }).send({ method: 'GET', target: '/', headers: [] })
  } finally { Buffer.concat = concat }
  t.equal(ex.response?.body.length, size)
  t.equal(ex.response?.cut, undefined, 'whole')
  t.ok(copied <= 2 * size, `copied ${copied} bytes for an answer of ${size}`)
})

test('an endless chunked body: 4 MiB kept, then the auditor closes the connection', async (t) => {
  const chunk = Buffer.from(`4000\r\n${'c'.repeat(0x4000)}\r\n`)
  const svc = await rawService((socket) => { socket.write(ok('Transfer-Encoding: chunked\r\n')); stream(socket, chunk, Infinity) })
  t.teardown(svc.close)
  const ex = await createTransport({ host: '127.0.0.1', port: svc.port, rate: 0, timeoutMs: 600000 }).send({ method: 'GET', target: '/', headers: [] })
  t.equal(ex.response?.body.length, 4 * MiB)
  t.match(ex.response?.cut, /body over 4 MiB \(limit\)/)
  t.ok(await svc.written[0] < 64 * MiB, 'the service was stopped')
})

test('a head that never ends: no answer past 64 KiB, said so', async (t) => {
  const svc = await rawService((socket) => { socket.write('HTTP/1.1 200 OK\r\n'); stream(socket, Buffer.from('X-Filler: ' + 'f'.repeat(1000) + '\r\n'), Infinity) })
  t.teardown(svc.close)
  const ex = await createTransport({ host: '127.0.0.1', port: svc.port, rate: 0, timeoutMs: 600000 }).send({ method: 'GET', target: '/', headers: [] })
  t.equal(ex.response, null)
  t.match(ex.error, /an answer head over 64 KiB \(limit\)/)
})

test('a schema that refers to itself 40 times is expanded once, and the run says so', async (t) => {
  const properties: Record<string, unknown> = {}
  for (let i = 0; i < 40; i++) properties[`p${i}`] = { $ref: '#/components/schemas/Node' }
  const doc = { openapi: '3.0.3', paths: { '/n': { get: {}, post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } } } }, components: { schemas: { Node: { type: 'object', required: Object.keys(properties), properties } } } }
  const notes: string[] = []
  const resolved = resolveRefs(doc.paths['/n'].post.requestBody.content['application/json'].schema, doc, notes) as { properties: Record<string, unknown> }
  t.equal(JSON.stringify(resolved).length < 4096, true, 'the expansion is small')
  t.same(resolved.properties.p0, {}, 'the reference inside its own expansion is any value')
  t.same(notes, ['$ref #/components/schemas/Node refers to itself: expanded once, then any value'])
  const svc = await rawService((socket) => socket.end(ok('Content-Length: 2\r\nContent-Type: application/json\r\n', '[]')))
  t.teardown(svc.close)
  const res = await run([svc.url, '--rate', '0', '--openapi', file('self.json', doc)])
  t.match(res.out, /Limit: \$ref #\/components\/schemas\/Node refers to itself/)
})

test('minLength: 600000000 generates no such string, and the run says so', async (t) => {
  const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 600000000 } } }
  t.equal((validInstance(schema) as { name: string }).name.length, 4096)
  const doc = { openapi: '3.0.3', paths: { '/n': { post: { requestBody: { content: { 'application/json': { schema } } } } } } }
  const svc = await rawService((socket) => socket.end('HTTP/1.1 201 Created\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'))
  t.teardown(svc.close)
  const res = await run([svc.url, '--rate', '0', '--write', '--openapi', file('long.json', doc), '--json'])
  t.match(JSON.parse(res.out).notes, [/minLength 600000000 is over 4096 characters \(limit\)/])
})

test('1000 paths in the document: the first 100 are probed, and the run says so', async (t) => {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i < 1000; i++) paths[`/p${i}`] = { get: {} }
  const svc = await rawService((socket) => socket.end(ok('Content-Length: 2\r\n', 'ok')))
  t.teardown(svc.close)
  const res = await run([svc.url, '--rate', '0', '--openapi', file('many.json', { openapi: '3.0.3', paths })])
  t.match(res.out, /Limit: 1000 paths to GET; the first 100 are probed, 900 are not \(limit\)/)
  t.notOk(svc.targets.includes('/p100'), 'the 101st path is not probed')
  t.ok(svc.targets.includes('/p99'))
})

test('a document cut by the timeout, and one over 16 MiB, are reported and the run goes on', async (t) => {
  // the document's head and its first bytes, then nothing: the timeout cuts it
  const slow = await rawService((socket, request) => {
    if (request.startsWith('GET /openapi.json')) socket.write(ok('Content-Length: 12000000\r\nContent-Type: application/json\r\n', '{"paths":{'))
    else socket.end(ok('Content-Length: 2\r\n', 'ok'))
  })
  t.teardown(slow.close)
  const cut = await run([slow.url, '--rate', '0', '--timeout', '300'])
  t.match(cut.out, /Limit: the OpenAPI document at \/openapi\.json: cut by the timeout after 10 body bytes; not used/)
  t.match(cut.out, /passed, .* failed/, 'the run went on')
  const big = await rawService((socket, request) => {
    if (request.startsWith('GET /openapi.json')) { socket.write(ok(`Content-Length: ${20 * MiB}\r\n`)); stream(socket, Buffer.alloc(64 * 1024, 0x20), 20 * MiB) } else socket.end(ok('Content-Length: 2\r\n', 'ok'))
  })
  t.teardown(big.close)
  const over = await run([big.url, '--rate', '0', '--json'])
  t.match(JSON.parse(over.out).notes, [/the OpenAPI document at \/openapi\.json: body over 16 MiB \(limit\)/])
})
