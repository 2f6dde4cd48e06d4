/**
 * Stores with deadlines: every store operation the suite waits on is bounded. A Digest
 * nonce-count store that does not answer within `digest.storeTimeoutMs` fails closed (RFC
 * 7616 5.4 cannot be checked: 401 with a fresh challenge, or 503 with Retry-After under
 * `storeFailureStatus: 503`); an instance store that does not answer within
 * `deltaEncoding.storeTimeoutMs` costs the delta, never the answer (RFC 3229 10.5.3: the
 * plain 200). Stores here never answer at all, so the outcome does not depend on the
 * machine's speed; the deadlines are short only so that the tests wait little.
 */
import { test, type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { answer, authorization } from '../lib/auth/digest-client'
import type { AuthOptions, HttpConventionsOptions } from '../../plugins/index'
import type { InstanceStore, NonceCountStore } from '../../plugins/entries/stores'

const SECRET = 'store-deadline-secret-of-32-bytes-or-more'
const never = <T> (): Promise<T> => new Promise<T>(() => {})

/** Timers of the deadlines do not hold the process open; this keeps it alive while a test waits on them. */
function keepAlive (t: Test): void {
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
}

async function digestApp (t: Test, auth: Partial<AuthOptions>, digest: Record<string, unknown>): Promise<FastifyInstance> {
  const a = await buildApp({ auth: { realm: 'deadline', ...auth, digest: { secret: SECRET, users: { demo: 'demo-pass' }, ...digest } } })
  a.get('/me', { config: { auth: true } }, async () => ({ ok: true }))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

async function digestAttempt (a: FastifyInstance): Promise<{ status: number, www: string[], retryAfter: unknown }> {
  const first = await a.inject({ url: '/me' })
  const lines = ([] as string[]).concat(first.headers['www-authenticate'] as string | string[])
  const params = answer(lines.find((l) => l.startsWith('Digest')) as string, { username: 'demo', password: 'demo-pass', uri: '/me' })
  const res = await a.inject({ url: '/me', headers: { authorization: authorization(params) } })
  return { status: res.statusCode, www: ([] as string[]).concat(res.headers['www-authenticate'] ?? []), retryAfter: res.headers['retry-after'] }
}

test('RFC 7616 5.4 fails closed: a nonce-count store that never answers is a 401 with a fresh challenge (no stale=true) once digest.storeTimeoutMs has passed', async (t) => {
  keepAlive(t)
  const hanging: NonceCountStore = { seen: never }
  const a = await digestApp(t, {}, { store: hanging, storeTimeoutMs: 20 })
  const res = await digestAttempt(a)
  t.equal(res.status, 401)
  t.match(res.www[0], /^Digest /, 'the client may try again with a fresh nonce')
  t.notMatch(res.www.join('\n'), /stale=true/, 'not stale: the server could not judge the count')
  t.equal(res.retryAfter, undefined)
})

test('RFC 9110 15.6.4: with storeFailureStatus 503 the same store is a 503 with Retry-After', async (t) => {
  keepAlive(t)
  const a = await digestApp(t, { storeFailureStatus: 503 }, { store: { seen: never } satisfies NonceCountStore, storeTimeoutMs: 20 })
  const res = await digestAttempt(a)
  t.equal(res.status, 503)
  t.equal(res.retryAfter, '5')
})

test('a nonce-count store that never learns its generation at start delays the start by at most storeTimeoutMs, and the app starts', async (t) => {
  keepAlive(t)
  let refreshed = 0
  const store: NonceCountStore = { seen: async () => false, generation: () => '0000000000000000', refresh: async () => { refreshed++; return await never() } }
  const a = await digestApp(t, {}, { store, storeTimeoutMs: 20 })
  t.equal(refreshed, 1, 'asked once, at start')
  t.equal((await a.inject({ url: '/me' })).statusCode, 401, 'and it answers')
})

test('fail at boot: digest.storeTimeoutMs and deltaEncoding.storeTimeoutMs are whole milliseconds from 1 to 60000', async (t) => {
  for (const bad of [0, -5, 1.5, 60_001, '1000']) {
    const digest = await boot(buildApp({ auth: { digest: { secret: SECRET, users: { a: 'b' }, storeTimeoutMs: bad as number } } })).then(() => null, (e: Error) => e)
    t.match(digest?.message, /digest\.storeTimeoutMs must be an integer number of milliseconds from 1 to 60000/, `digest ${String(bad)}`)
    const delta = await boot(buildApp({ deltaEncoding: { storeTimeoutMs: bad as number } })).then(() => null, (e: Error) => e)
    t.match(delta?.message, /storeTimeoutMs must be an integer number of milliseconds from 1 to 60000/, `deltaEncoding ${String(bad)}`)
  }
  const generation = await boot(buildApp({ auth: { digest: { secret: SECRET, users: { a: 'b' }, store: { seen: async () => false, generation: 'x' as never } } } })).then(() => null, (e: Error) => e)
  t.match(generation?.message, /digest\.store\.generation must be a method/)
})

async function deltaApp (t: Test, store: InstanceStore, options: HttpConventionsOptions['deltaEncoding'] = {}): Promise<FastifyInstance> {
  const a = await buildApp({ deltaEncoding: { store, storeTimeoutMs: 20, ...options } })
  const body = Buffer.alloc(1024 * 1024, 'abcdefgh')
  a.get('/doc/:id', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"v2"').send(body))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

test('RFC 3229 10.5.3: an instance store that never answers a read costs the delta, not the answer: a plain 200', async (t) => {
  keepAlive(t)
  const a = await deltaApp(t, { get: never, set: async () => {} })
  const res = await a.inject({ url: '/doc/1', headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.im, undefined)
  t.equal(res.rawPayload.length, 1024 * 1024)
})

test('writes an instance store has not settled hold their bodies: at most twice maxInstanceBytes (16 MiB at least) are handed over at once', async (t) => {
  keepAlive(t)
  let sets = 0
  const settle: Array<() => void> = []
  const stuck: InstanceStore = {
    get: async () => undefined,
    set: async () => { sets++; await new Promise<void>((resolve) => settle.push(resolve)) }
  }
  const a = await deltaApp(t, stuck)
  for (let i = 0; i < 20; i++) t.equal((await a.inject({ url: `/doc/${i}`, headers: { 'a-im': 'vcdiff' } })).statusCode, 200)
  t.equal(sets, 16, '16 bodies of 1 MiB are written at once, no more')
  settle.splice(0).forEach((resolve) => resolve())
  await new Promise((resolve) => setImmediate(resolve))
  t.equal((await a.inject({ url: '/doc/99', headers: { 'a-im': 'vcdiff' } })).statusCode, 200)
  t.equal(sets, 17, 'once the store answers (or fails), the next instance is handed over')
})
