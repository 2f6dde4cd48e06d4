/**
 * `config.conditional: true` on routes that answer with a stream (RFC 9110 8.8.3, 13.1.1,
 * 13.1.2), over real sockets: a Readable the handler returns, a file of @fastify/static's
 * `reply.sendFile`, an upstream's body through @fastify/reply-from. Where the stream's
 * producer set an ETag, the preconditions are evaluated against it; where none did, the
 * stream is read up to `conditional.etag.maxStreamBytes`, hashed, and its bytes sent. A
 * longer stream is sent whole without an ETag, and one error line per route says so.
 */
import { teardown, test, type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import fastifyStatic from '@fastify/static'
import replyFrom from '@fastify/reply-from'
import { request } from 'undici'
import { buildApp, listen } from '../helpers/app'
import type { HttpConventionsOptions } from '../../plugins/index'

const TEXT = 'line one\nline two\nline three\n'
const CHUNKS = ['line one\n', 'line two\n', 'line three\n']
const TAG = '"producer-1"'
/** The bound of the over-the-bound tests, and a body well over it. */
const BOUND = 1024
const LONG = Array.from({ length: 200 }, (_, i) => `${String(i).padStart(4, '0')} ${'x'.repeat(500)}\n`)

/** An upstream Fastify server, started once for the file (at its first use): bodies with and without an ETag. */
let upstream: Promise<string> | null = null
function upstreamUrl (): Promise<string> {
  upstream ??= (async () => {
    const up = Fastify()
    up.get('/tagged', async (_request, reply) => reply.header('etag', TAG).type('text/plain').send(TEXT))
    up.get('/untagged', async (_request, reply) => reply.type('text/plain').send(Readable.from(CHUNKS)))
    up.get('/long', async (_request, reply) => reply.type('text/plain').send(Readable.from(LONG)))
    teardown(() => up.close())
    return `http://127.0.0.1:${await listen(up)}`
  })()
  return upstream
}

/** A file for sendFile. */
const dir = mkdtempSync(join(tmpdir(), 'conditional-streams-'))
writeFileSync(join(dir, 'notes.txt'), TEXT)
teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Source {
  name: string
  /** the producer sets an ETag of its own */
  tagged: boolean
  send: (reply: FastifyReply) => FastifyReply
}

const SOURCES: Source[] = [
  { name: 'a Readable the handler returns', tagged: false, send: (r) => r.type('text/plain').send(Readable.from(CHUNKS)) },
  { name: 'a Readable the handler returns, with an ETag header', tagged: true, send: (r) => r.header('etag', TAG).type('text/plain').send(Readable.from(CHUNKS)) },
  { name: '@fastify/static\'s sendFile', tagged: true, send: (r) => r.sendFile('notes.txt') },
  { name: '@fastify/static\'s sendFile with etag: false', tagged: false, send: (r) => r.sendFile('notes.txt', { etag: false, lastModified: false }) },
  { name: 'an upstream with an ETag, through @fastify/reply-from', tagged: true, send: (r) => r.from('/tagged') },
  { name: 'an upstream without one, through @fastify/reply-from', tagged: false, send: (r) => r.from('/untagged') }
]

interface App { port: number, logs: Array<{ level: number, route?: string, msg: string }> }

/** The suite, @fastify/static and @fastify/reply-from, and the route `/r` answering with `send`. */
async function build (t: Test, send: (reply: FastifyReply) => FastifyReply, opts: HttpConventionsOptions = {}): Promise<App> {
  const logs: App['logs'] = []
  const app: FastifyInstance = await buildApp(opts, { logger: { level: 'error', stream: { write: (s: string) => { logs.push(JSON.parse(s)) } } } })
  await app.register(fastifyStatic, { root: dir, serve: false })
  await app.register(replyFrom, { base: await upstreamUrl() })
  app.get('/r', { config: { conditional: true } }, async (_request, reply) => send(reply))
  const port = await listen(app)
  t.teardown(() => app.close())
  return { port, logs }
}

async function get (port: number, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number, headers: Record<string, unknown>, body: string }> {
  const res = await request(`http://127.0.0.1:${port}/r`, { method, headers })
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() }
}

for (const source of SOURCES) {
  test(`${source.name}: the 200 carries an ETag, and the body byte for byte`, async (t) => {
    const { port, logs } = await build(t, source.send)
    const res = await get(port)
    t.equal(res.status, 200)
    t.equal(res.body, TEXT)
    t.type(res.headers.etag, 'string', 'RFC 9110 8.8.3: the answer carries its entity-tag')
    if (source.tagged && !source.name.includes('sendFile')) t.equal(res.headers.etag, TAG, 'the producer\'s own ETag')
    if (!source.tagged) t.equal(res.headers['content-length'], String(TEXT.length), 'the hashed body is sent with its length')
    const head = await get(port, {}, 'HEAD')
    // RFC 9110 9.3.2: a HEAD's stream may carry no bytes (a file's, a proxied HEAD's): a hashed ETag is omitted.
    t.same([head.status, head.headers.etag], [200, source.tagged ? res.headers.etag : undefined], 'HEAD: the producer\'s ETag, never a hash of no bytes')
    t.same(logs, [], 'nothing to log')
  })

  test(`${source.name}: If-None-Match with its ETag is 412 (spec profile)`, async (t) => {
    const { port } = await build(t, source.send)
    const { headers } = await get(port)
    const again = await get(port, { 'if-none-match': String(headers.etag) })
    t.equal(again.status, 412, 'conventions (Conditional requests): "not modified" is a 412')
    t.match(JSON.parse(again.body), { errors: [{ field: 'If-None-Match' }] })
    const other = await get(port, { 'if-none-match': '"another"' })
    t.same([other.status, other.body], [200, TEXT], 'another ETag: the body')
  })

  test(`${source.name}: If-None-Match with its ETag is 304 (profile rfc9110), and If-Match with another is 412`, async (t) => {
    const { port } = await build(t, source.send, { profile: 'rfc9110' })
    const { headers } = await get(port)
    const again = await get(port, { 'if-none-match': String(headers.etag) })
    t.same([again.status, again.body, again.headers.etag], [304, '', headers.etag], 'RFC 9110 13.1.2, 15.4.5')
    const stale = await get(port, { 'if-match': '"another"' })
    t.equal(stale.status, 412, 'RFC 9110 13.1.1: If-Match does not hold')
    // @fastify/send evaluates If-Match itself, and its ETag is weak: never a match for If-Match (RFC 9110 13.1.1).
    if (source.name.includes('sendFile')) return
    const current = await get(port, { 'if-match': String(headers.etag) })
    t.same([current.status, current.body], [200, TEXT], 'If-Match holds: the body')
  })
}

test('If-Match on a PUT that answers with a stream: evaluated against the provider before the handler, the stream sent whole', async (t) => {
  const app = await buildApp()
  let ran = 0
  app.put('/doc', { config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async (_request, reply) => {
    ran++
    return reply.type('text/plain').send(Readable.from(LONG))
  })
  const port = await listen(app)
  t.teardown(() => app.close())
  const put = async (ifMatch: string): Promise<{ status: number, body: string, etag: unknown }> => {
    const res = await request(`http://127.0.0.1:${port}/doc`, { method: 'PUT', headers: { 'if-match': ifMatch, 'content-type': 'text/plain' }, body: 'new text' })
    return { status: res.statusCode, body: await res.body.text(), etag: res.headers.etag }
  }
  const held = await put('"v1"')
  t.same([held.status, held.body === LONG.join(''), held.etag], [200, true, '"v1"'], 'the stream is sent as it is, with the provider\'s validators deciding, and read again after the write (RFC 9110 8.8.3)')
  const failed = await put('"v0"')
  t.equal(failed.status, 412)
  t.equal(ran, 1, 'the handler never ran for the failed precondition')
})

/** A stream that gives `chunks`, then never ends; closed only when destroyed. */
function endlessAfter (chunks: string[], closed: () => void): Readable {
  let i = 0
  const s = new Readable({ read () { if (i < chunks.length) this.push(chunks[i++]) } })
  s.once('close', closed)
  return s
}

test('over etag.maxStreamBytes: every byte is sent, without an ETag, and one error line per route names the route and the fix', async (t) => {
  const { port, logs } = await build(t, (r) => r.type('text/plain').send(Readable.from(LONG)), { conditional: { etag: { maxStreamBytes: BOUND } } })
  const first = await get(port)
  t.same([first.status, first.body === LONG.join(''), first.headers.etag], [200, true, undefined], 'the bytes read first, then the rest')
  const again = await get(port, { 'if-none-match': '"a-tag-from-before"' })
  t.same([again.status, again.body.length], [200, LONG.join('').length], 'RFC 9110 13.1.2: no ETag to match')
  t.equal(logs.length, 1, 'one line per route')
  t.match(logs[0], { level: 50, route: 'route GET /r' })
  t.match(logs[0].msg, /route GET \/r: .*longer than etag\.maxStreamBytes \(1024 bytes\).*config\.conditional\.validators.*ETag header/)
})

test('over the bound through @fastify/reply-from: every byte of the upstream\'s body', async (t) => {
  const { port, logs } = await build(t, (r) => r.from('/long'), { conditional: { etag: { maxStreamBytes: BOUND } } })
  const res = await get(port)
  t.same([res.status, res.body === LONG.join(''), res.headers.etag], [200, true, undefined])
  t.equal(logs.length, 1)
})

test('over the bound, the answer replaced (If-Match fails: 412): the stream is destroyed', async (t) => {
  let closed = 0
  const { port } = await build(t, (r) => r.type('text/plain').send(endlessAfter(LONG.slice(0, 10), () => { closed++ })), { conditional: { etag: { maxStreamBytes: BOUND } } })
  const res = await get(port, { 'if-match': '"v1"' })
  t.equal(res.status, 412, 'RFC 9110 13.1.1: no current ETag matches')
  t.equal(closed, 1, 'the source was released, though it never ends')
})

test('etag.maxStreamBytes: 0 sends every stream as it is, logged', async (t) => {
  const { port, logs } = await build(t, (r) => r.type('text/plain').send(Readable.from(CHUNKS)), { conditional: { etag: { maxStreamBytes: 0 } } })
  const res = await get(port)
  t.same([res.status, res.body, res.headers.etag], [200, TEXT, undefined])
  t.equal(logs.length, 1)
})

test('a web stream is sent as it is, without an ETag, logged once with the fix', async (t) => {
  const web = (): ReadableStream => new ReadableStream({ start (c) { c.enqueue(new TextEncoder().encode(TEXT)); c.close() } })
  const { port, logs } = await build(t, (r) => r.type('text/plain').send(web()))
  const res = await get(port)
  t.same([res.status, res.body, res.headers.etag], [200, TEXT, undefined])
  await get(port)
  t.equal(logs.length, 1)
  t.match(logs[0].msg, /a body it cannot read .*config\.conditional\.validators/)
})

test('a stream that fails within the bound is a 500, never a truncated 200 with an ETag', async (t) => {
  const cases: Array<[string, () => Readable]> = [
    ['errors', () => new Readable({ read () { this.push('part'); this.destroy(new Error('disk gone')) } })],
    ['closes before its end', () => new Readable({ read () { this.push('part'); this.destroy() } })],
    ['was destroyed before it was sent', () => { const s = Readable.from(CHUNKS); s.destroy(); return s }]
  ]
  for (const [name, make] of cases) {
    const { port } = await build(t, (r) => r.type('text/plain').send(make()))
    const res = await get(port)
    t.same([res.status, res.headers.etag === undefined || res.status !== 200], [500, true], name)
  }
})

test('a stream that fails after the bound: the answer is cut short (the client sees it fail), never completed', async (t) => {
  const cases: Array<[string, (s: Readable) => void]> = [
    ['errors', (s) => s.destroy(new Error('upstream gone'))],
    ['closes before its end', (s) => s.destroy()]
  ]
  for (const [name, fail] of cases) {
    let pushed = 0
    const { port } = await build(t, (r) => r.type('text/plain').send(new Readable({
      read () {
        if (pushed < 10) this.push(LONG[pushed++])
        else fail(this)
      }
    })), { conditional: { etag: { maxStreamBytes: BOUND } } })
    const res = await request(`http://127.0.0.1:${port}/r`)
    t.equal(res.statusCode, 200, name)
    await t.rejects(res.body.text(), name)
  }
})
