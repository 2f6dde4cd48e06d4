/**
 * What a step replaces, it releases (docs/architecture of the answers: docs/plugins.md,
 * "Every 401 carries the challenges"; RFC 9110 15.4.5, 15.3.5, 15.5.2): every onSend step of
 * the suite that answers in place of the app's body (the 401's page of `auth:challenges`,
 * the 204 of `prefer`, the 304 or 412 of `conditional` and of `conditional:elsewhere`)
 * destroys a stream body it drops, so that a file's descriptor is closed and a proxied
 * upstream's connection is freed. Counted in resources ('close' events, open descriptors),
 * never in time.
 */
import { test, type Test } from 'tap'
import { createReadStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import replyFrom from '@fastify/reply-from'
import { Client } from 'undici'
import fc from 'fast-check'
import { buildApp, listen } from '../helpers/app'
import { until } from '../helpers/until'
import type { HttpConventionsOptions } from '../../plugins/index'
import { replacePayload } from '../../plugins/services/shared'

const ETAG = '"v1"'

/** A body that never ends: only destroying it closes it. */
function endless (): Readable {
  return new Readable({ read () {} })
}

/** One way to have each replacing step drop the route's body. */
interface Case {
  step: string
  options: HttpConventionsOptions
  /** the route's config */
  config: Record<string, unknown>
  /** what the handler does before it sends the body */
  before: (reply: FastifyReply) => void
  headers: Record<string, string>
  status: number
}

const CASES: Case[] = [
  { step: 'auth:challenges (RFC 9110 15.5.2)', options: { auth: { basic: { users: { ada: 'pw' } } } }, config: {}, before: (r) => r.code(401).type('application/octet-stream'), headers: {}, status: 401 },
  { step: 'prefer (RFC 7240 4.2: the 204)', options: {}, config: { prefer: true }, before: (r) => r.type('application/octet-stream'), headers: { prefer: 'return=minimal' }, status: 204 },
  { step: 'conditional (RFC 9110 15.4.5: the 304)', options: { conditional: { notModifiedStatus: 304 } }, config: { conditional: {} }, before: (r) => r.header('etag', ETAG).type('application/octet-stream'), headers: { 'if-none-match': ETAG }, status: 304 },
  { step: 'conditional (conventions: the 412 for "not modified")', options: {}, config: { conditional: {} }, before: (r) => r.header('etag', ETAG).type('application/octet-stream'), headers: { 'if-none-match': ETAG }, status: 412 },
  { step: 'conditional (RFC 9110 13.1.1: a failed If-Match)', options: {}, config: { conditional: {} }, before: (r) => r.header('etag', ETAG).type('application/octet-stream'), headers: { 'if-match': '"other"' }, status: 412 },
  { step: 'conditional (a provider route\'s 304)', options: { conditional: { notModifiedStatus: 304 } }, config: { conditional: { validators: () => ({ etag: ETAG }) } }, before: (r) => r.type('application/octet-stream'), headers: { 'if-none-match': ETAG }, status: 304 },
  { step: 'conditional:elsewhere (a 304 written elsewhere becomes the 412)', options: {}, config: { conditional: true }, before: (r) => r.code(304), headers: {}, status: 412 }
]

/** The app of a case: one route that answers with the body `body()` makes. */
async function build (t: Test, c: Case, body: () => unknown): Promise<Client> {
  const app = await buildApp(c.options)
  app.get('/r', { config: c.config }, async (_request, reply) => {
    c.before(reply)
    return reply.send(body())
  })
  const port = await listen(app)
  const client = new Client(`http://127.0.0.1:${port}`)
  t.teardown(async () => { await client.close(); await app.close() })
  return client
}

async function get (client: Client, headers: Record<string, string>): Promise<number> {
  const res = await client.request({ path: '/r', method: 'GET', headers })
  await res.body.dump()
  return res.statusCode
}

for (const c of CASES) {
  test(`${c.step}: a stream body that never ends is destroyed when the step replaces it`, async (t) => {
    const streams: Readable[] = []
    let closed = 0
    const client = await build(t, c, () => {
      const s = endless()
      s.once('close', () => { closed++ })
      streams.push(s)
      return s
    })
    for (let i = 0; i < 20; i++) t.equal(await get(client, c.headers), c.status, `request ${i + 1}`)
    await until('every dropped stream closed', () => closed === 20, 10_000)
    t.equal(closed, 20, 'each of the 20 bodies closed')
    t.ok(streams.every((s) => s.destroyed), 'destroyed')
  })
}

/** The descriptors this process holds (Linux). */
function openDescriptors (): number {
  return readdirSync('/proc/self/fd').length
}

for (const c of CASES) {
  test(`${c.step}: 200 file streams replaced leave no descriptor open`, { skip: process.platform !== 'linux' ? 'counts /proc/self/fd' : false }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'payload-release-'))
    const file = join(dir, 'body.bin')
    writeFileSync(file, Buffer.alloc(64 * 1024, 'x'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    let opened = 0
    let closed = 0
    const client = await build(t, c, () => {
      const s = createReadStream(file)
      opened++
      s.once('close', () => { closed++ })
      return s
    })
    t.equal(await get(client, c.headers), c.status, 'warm-up')
    await until('the warm-up file closed', () => closed === 1, 10_000).catch(() => {})
    const baseline = openDescriptors()
    for (let i = 0; i < 200; i++) await get(client, c.headers)
    await until('every file closed', () => closed === opened, 10_000).catch(() => {})
    t.equal(closed, opened, `${opened} file streams opened, as many closed`)
    await until('the descriptors back to the baseline', () => openDescriptors() <= baseline, 10_000).catch(() => {})
    t.ok(openDescriptors() <= baseline, `open descriptors: ${openDescriptors()}, ${baseline} before the 200 requests`)
  })
}

test('RFC 9110 15.5.2: a web ReadableStream and a Response replaced by the 401\'s page are cancelled', async (t) => {
  const c = CASES[0]
  let cancelled = 0
  const web = (): ReadableStream => new ReadableStream({ pull () {}, cancel () { cancelled++ } })
  let next: () => unknown = web
  const client = await build(t, c, () => next())
  t.equal(await get(client, {}), 401)
  next = () => new Response(web())
  t.equal(await get(client, {}), 401)
  await until('both cancelled', () => cancelled === 2, 10_000).catch(() => {})
  t.equal(cancelled, 2, 'the stream, and the Response\'s body')
})

/** A plain Fastify server (no suite) whose every answer is a 401 with a 200 KB body and no challenge. */
async function upstream (t: Test): Promise<number> {
  const app = Fastify()
  app.get('/*', async (_request, reply) => reply.code(401).type('application/octet-stream').send(Buffer.alloc(200 * 1024, 'u')))
  const port = await listen(app)
  t.teardown(() => app.close())
  return port
}

async function proxy (t: Test, port: number, suite: boolean): Promise<Client> {
  const front: FastifyInstance = suite ? await buildApp({ auth: { basic: { users: { ada: 'pw' } } } }) : Fastify()
  await front.register(replyFrom, { base: `http://127.0.0.1:${port}` })
  front.get('/p', (_request, reply) => { reply.from('/upstream') })
  const frontPort = await listen(front)
  const client = new Client(`http://127.0.0.1:${frontPort}`, { headersTimeout: 10_000, bodyTimeout: 10_000 })
  t.teardown(async () => { await client.close(); await front.close() })
  return client
}

/** Sends up to `n` requests one after another; returns how many were answered, and with a challenge, before the first that was not. */
async function sendAll (client: Client, n: number): Promise<{ answered: number, challenged: number }> {
  let answered = 0
  let challenged = 0
  for (let i = 0; i < n; i++) {
    try {
      const res = await client.request({ path: '/p', method: 'GET' })
      await res.body.dump()
      if (res.statusCode === 401) answered++
      if (res.headers['www-authenticate'] !== undefined) challenged++
    } catch {
      break // not answered within the client's deadline: the rest would wait as long
    }
  }
  return { answered, challenged }
}

test('RFC 9110 15.5.2: behind @fastify/reply-from, 300 upstream 401s of 200 KB are all answered with the challenges', async (t) => {
  const { answered, challenged } = await sendAll(await proxy(t, await upstream(t), true), 300)
  t.equal(answered, 300, `${answered} of 300 answered`)
  t.equal(challenged, 300, 'each with WWW-Authenticate')
})

test('the same proxy without the suite answers 300 of 300 (the baseline)', async (t) => {
  const { answered } = await sendAll(await proxy(t, await upstream(t), false), 300)
  t.equal(answered, 300, `${answered} of 300 answered`)
})

test('a web stream that cannot be cancelled (locked by a reader) is left to its reader, without an unhandled rejection', async (t) => {
  const stream = new ReadableStream({ pull () {} })
  const reader = stream.getReader()
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })
  t.equal(replacePayload(stream, 'page'), 'page')
  // The rejection of cancel() is absorbed: a turn of the event loop later, none is unhandled.
  await new Promise((resolve) => setImmediate(resolve))
  t.same(unhandled, [])
  reader.releaseLock()
  t.equal(replacePayload('same', 'same'), 'same', 'a payload kept is not released')
})

/** A body of each kind a handler may send, and how to tell that it was released (or is not a resource). */
type Kind = 'endless' | 'file' | 'web' | 'response' | 'string' | 'buffer'
const KINDS: readonly Kind[] = ['endless', 'file', 'web', 'response', 'string', 'buffer']

test('What a step replaces, it releases: any body kind, any replacing step, every stream made is closed (property)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'payload-release-'))
  const file = join(dir, 'body.bin')
  writeFileSync(file, Buffer.alloc(16 * 1024, 'x'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  let made = 0
  let released = 0
  let kind: Kind = 'string'
  const body = (): unknown => {
    if (kind === 'string') return 'body'
    if (kind === 'buffer') return Buffer.from('body')
    made++
    if (kind === 'endless' || kind === 'file') {
      const s = kind === 'file' ? createReadStream(file) : endless()
      s.once('close', () => { released++ })
      return s
    }
    const web = new ReadableStream({ pull () {}, cancel () { released++ } })
    return kind === 'web' ? web : new Response(web)
  }
  const clients: Client[] = []
  for (const c of CASES) clients.push(await build(t, c, body))
  await fc.assert(fc.asyncProperty(fc.nat({ max: CASES.length - 1 }), fc.constantFrom(...KINDS), async (i, k) => {
    kind = k
    const status = await get(clients[i], CASES[i].headers)
    if (status !== CASES[i].status) throw new Error(`${CASES[i].step} with a ${k} body: ${status}`)
    await until('the body released', () => released === made, 10_000)
  }), { seed: 20261127, numRuns: Number(process.env.FUZZ_RUNS ?? 0) || 60 })
  t.equal(released, made, `${made} stream bodies made, as many released`)
})
