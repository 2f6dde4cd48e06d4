import { test } from 'tap'
import { Readable, Writable } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { fastifyEtag } from '@fastify/etag'
import { request } from 'undici'
import { boot, buildApp, listen } from '../helpers/app'
import {
  httpConventions, httpConventionsDeltaEncoding, httpConventionsConditional, serverOptions, type HttpConventionsOptions
} from '../../plugins/index'
import { conventionResponses } from '../../plugins/entries/openapi'
import { MemoryInstanceStore, type InstanceStore } from '../../plugins/entries/stores'
import { decode } from '../../packages/vcdiff/src/index'

/** A document of `n` paragraphs of prose-like text (about 400 bytes each). */
function article (n: number, seed = 1): string[] {
  const words = 'the of and to in is that for it as was with be by on not this are or from at which request response header server client cache delta encoding instance version resource entity validator'.split(' ')
  let s = seed
  const next = (): number => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s }
  const out: string[] = []
  for (let p = 0; p < n; p++) {
    const w: string[] = []
    for (let i = 0; i < 70; i++) w.push(words[next() % words.length])
    out.push(`Paragraph ${p}: ${w.join(' ')}.`)
  }
  return out
}

interface Doc { etag: string, text: string, type?: string }

/** A spy around a memory store: records every key written and read. */
class SpyStore implements InstanceStore {
  inner = new MemoryInstanceStore()
  sets: Array<{ key: string, ttl: number | undefined }> = []
  gets: string[] = []
  async get (key: string): Promise<Buffer | undefined> { this.gets.push(key); return await this.inner.get(key) }
  async set (key: string, value: Buffer, ttl?: number): Promise<void> { this.sets.push({ key, ttl }); await this.inner.set(key, value, ttl) }
}

const docs = new Map<string, Doc>()
const v1 = article(50).join('\n\n')
const v2paras = article(50)
v2paras[20] = 'This paragraph was edited: ' + v2paras[20].slice(0, 200)
const v2 = v2paras.join('\n\n')

function reset (): void {
  docs.clear()
  docs.set('1', { etag: 'v1', text: v1 })
}

function idOf (request: FastifyRequest): string { return (request.params as { id: string }).id }

function routes (app: FastifyInstance): void {
  const validators = (request: FastifyRequest): { etag: string } | null => {
    const d = docs.get(idOf(request))
    return d === undefined ? null : { etag: d.etag }
  }
  const send = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const d = docs.get(idOf(request))
    if (d === undefined) return reply.callNotFound()
    return reply.type(d.type ?? 'text/plain').send(d.text)
  }
  // The provider gives the ETag (like the reference service's articles).
  app.get('/doc/:id', { config: { conditional: { validators }, deltaEncoding: true } }, send)
  // The ETag is the payload hash the conditional plugin computes.
  app.get('/hashed/:id', { config: { conditional: true, deltaEncoding: true } }, send)
  // Opted out, or never opted in.
  app.get('/off/:id', { config: { conditional: { validators }, deltaEncoding: false } }, send)
  app.get('/plain/:id', { config: { conditional: { validators } } }, send)
  // Per-route settings.
  app.get('/gzip-only/:id', { config: { conditional: { validators }, deltaEncoding: { manipulations: ['gzip'], ttl: 5000 } } }, send)
  // The handler sets its own ETag; no conditional plugin on the route.
  app.get('/own/:id', { config: { deltaEncoding: true } }, async (request, reply) => {
    const d = docs.get(idOf(request)) as Doc
    return reply.type('text/plain').header('etag', `"${d.etag}"`).send(d.text)
  })
  app.get('/weak', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', 'W/"w1"').send(v1))
  app.get('/no-etag', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').send(v1))
  app.get('/missing', { config: { deltaEncoding: true } }, async (_request, reply) => reply.code(404).type('text/plain').header('etag', '"m"').send(v1))
  app.get('/coded', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"c"').header('content-encoding', 'br').send(v1))
  app.get('/identity-coded', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"c"').header('content-encoding', 'identity').send(v1))
  app.get('/ranged', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"r"').header('content-range', 'bytes 0-9/100').send(v1))
  app.get('/stream', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').header('etag', '"s"').send(Readable.from([v1])))
  app.get('/buffer', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('application/octet-stream').header('etag', '"b"').send(Buffer.from(v1)))
}

async function build (opts: HttpConventionsOptions = {}): Promise<FastifyInstance> {
  reset()
  const app = await buildApp(opts)
  routes(app)
  await app.ready()
  return app
}

interface Got { status: number, headers: Record<string, string | string[] | number | undefined>, body: Buffer }

/**
 * What a delta client sends when it holds no instance yet: A-IM alone (RFC 3229 10.5.3; the
 * suite's client sends it on every GET). Bases are kept once a client of the route asked
 * (docs/conventions.md (Delta encoding)); `{}` is a client that never does.
 */
const DELTA_CLIENT = { 'a-im': 'vcdiff' }

async function get (app: FastifyInstance, url: string, headers: Record<string, string> = DELTA_CLIENT, method: 'GET' | 'HEAD' = 'GET'): Promise<Got> {
  const res = await app.inject({ method, url, headers })
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload }
}

function edit (id = '1', etag = 'v2', text = v2): void {
  docs.set(id, { ...(docs.get(id) as Doc), etag, text })
}

test('RFC 3229 10.4.1: A-IM vcdiff and If-None-Match naming a kept instance give a 226 whose delta makes the current instance', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const first = await get(app, '/doc/1')
  t.equal(first.status, 200)
  t.equal(first.headers.etag, '"v1"')
  t.equal(first.headers.im, undefined, 'a 200 carries no IM')
  edit()
  const res = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"v1"' })
  t.equal(res.status, 226)
  t.equal(res.headers.im, 'vcdiff', 'RFC 3229 10.5.2: IM names the manipulation')
  t.equal(res.headers.etag, '"v2"', 'RFC 3229 10.4.1: the ETag of the current instance')
  t.equal(res.headers['delta-base'], '"v1"', 'RFC 3229 10.5.1: Delta-Base names the base')
  t.equal(res.headers['cache-control'], 'no-store, im', 'RFC 3229 10.8.2: only IM-aware caches may keep it')
  t.equal(res.headers['content-type'], first.headers['content-type'], 'Content-Type of the instance')
  t.equal(Number(res.headers['content-length']), res.body.length, 'Content-Length of the delta')
  t.ok(res.body.length < v2.length / 10, `the delta (${res.body.length} B) is a fraction of the instance (${v2.length} B)`)
  t.equal(Buffer.from(decode(Buffer.from(v1), res.body)).toString(), v2, 'base + delta = current instance')
})

test('RFC 3229 10.4.1: the 226 is made over a real connection with a correct Content-Length', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const port = await listen(app)
  await (await request(`http://127.0.0.1:${port}/doc/1`, { headers: DELTA_CLIENT })).body.dump()
  edit()
  const res = await request(`http://127.0.0.1:${port}/doc/1`, { headers: { 'a-im': 'vcdiff', 'if-none-match': '"v1"' } })
  const body = Buffer.from(await res.body.arrayBuffer())
  t.equal(res.statusCode, 226)
  t.equal(Number(res.headers['content-length']), body.length)
  t.equal(Buffer.from(decode(Buffer.from(v1), body)).toString(), v2)
})

test('RFC 3229 10.5.3: A-IM tokens are case-insensitive, weighted; q=0 refuses; unknown tokens are ignored', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await get(app, '/doc/1')
  edit()
  const cases: Array<[string, number, string | undefined]> = [
    ['VCDIFF', 226, 'vcdiff'],
    ['VcDiff;Q=0.5', 226, 'vcdiff'],
    ['vcdiff;q=0', 200, undefined],
    ['vcdiff;q=0.000', 200, undefined],
    ['x-unknown, diffe;q=1', 200, undefined],
    ['x-unknown, vcdiff', 226, 'vcdiff'],
    ['identity', 200, undefined],
    ['identity;q=0', 200, undefined],
    ['vcdiff;q=2', 200, undefined],
    ['vcdiff, vcdiff;q=0', 226, 'vcdiff'],
    ['vcdiff;q=0, gzip', 226, 'gzip'],
    ['', 200, undefined]
  ]
  for (const [aim, status, im] of cases) {
    const res = await get(app, '/doc/1', { 'a-im': aim, 'if-none-match': '"v1"' })
    t.equal(res.status, status, `A-IM: ${aim}`)
    t.equal(res.headers.im, im, `A-IM: ${aim} -> IM`)
    if (status === 200) t.equal(res.body.toString(), v2, 'the whole instance')
  }
})

test('RFC 3229 10.1.1 gzip: A-IM gzip alone is a 226 with IM gzip and the gzipped instance', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const res = await get(app, '/doc/1', { 'a-im': 'gzip' })
  t.equal(res.status, 226)
  t.equal(res.headers.im, 'gzip')
  t.equal(res.headers.etag, '"v1"')
  t.equal(res.headers['delta-base'], undefined, 'no delta, no Delta-Base')
  t.equal(res.headers['cache-control'], 'no-store, im')
  t.equal(res.headers['content-encoding'], undefined, 'an instance manipulation, not a content-coding')
  t.equal(gunzipSync(res.body).toString(), v1)
  const nothing = await get(app, '/doc/1', { 'a-im': 'gzip', 'if-none-match': '"unknown"' })
  t.equal(nothing.headers.im, 'gzip', 'an unknown base does not stop gzip')
})

test('RFC 3229 10.5.2: vcdiff and gzip are both applied, and IM lists them in the order applied', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await get(app, '/doc/1')
  // New text in hex digits (4 bits of 8 carry information): the delta's added bytes shrink under gzip.
  const v3 = v1 + '\n\n' + randomBytes(3000).toString('hex')
  edit('1', 'v3', v3)
  for (const aim of ['vcdiff, gzip', 'gzip;q=0.9, vcdiff;q=0.5']) {
    const res = await get(app, '/doc/1', { 'a-im': aim, 'if-none-match': '"v1"' })
    t.equal(res.status, 226)
    t.equal(res.headers.im, 'vcdiff, gzip', `${aim}: the delta is made, then compressed`)
    t.equal(Buffer.from(decode(Buffer.from(v1), gunzipSync(res.body))).toString(), v3, 'undone in reverse order')
  }
})

test('gzip is applied only when it makes the body smaller', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const noise = randomBytes(3000).toString('base64')
  docs.set('n', { etag: 'n1', text: noise })
  await get(app, '/doc/n')
  docs.set('n', { etag: 'n2', text: noise.slice(0, 1500) + 'edited' + noise.slice(1500) })
  const res = await get(app, '/doc/n', { 'a-im': 'vcdiff, gzip', 'if-none-match': '"n1"' })
  t.equal(res.status, 226)
  t.equal(res.headers.im, 'vcdiff', 'a small delta of random text does not shrink under gzip')
  const tiny = await build()
  t.teardown(() => tiny.close())
  docs.set('t', { etag: 't1', text: 'x' })
  const small = await get(tiny, '/doc/t', { 'a-im': 'gzip' })
  t.equal(small.status, 200, 'one byte does not shrink under gzip: an ordinary 200')
  t.equal(small.headers.im, undefined)
})

test('RFC 3229 10.5.3: an unknown base is an ordinary 200 without IM', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const res = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"never-sent"' })
  t.equal(res.status, 200)
  t.equal(res.headers.im, undefined)
  t.equal(res.headers['delta-base'], undefined)
  t.equal(res.headers['cache-control'], 'no-store', 'the conditional route\'s Cache-Control, not the 226\'s "no-store, im"')
  t.equal(res.body.toString(), v1)
  const noInm = await get(app, '/doc/1', { 'a-im': 'vcdiff' })
  t.equal(noInm.status, 200, 'vcdiff without If-None-Match names no base')
  const star = await get(app, '/own/1', { 'a-im': 'vcdiff', 'if-none-match': '*' })
  t.equal(star.status, 200, 'If-None-Match: * names no base')
  const bad = await get(app, '/own/1', { 'a-im': 'vcdiff', 'if-none-match': 'garbage' })
  t.equal(bad.status, 200, 'a malformed If-None-Match names no base')
  const weak = await get(app, '/own/1', { 'a-im': 'vcdiff', 'if-none-match': 'W/"v1"' })
  t.equal(weak.status, 200, 'a weak entity-tag is no delta base (RFC 9110 8.8.1)')
})

test('RFC 3229 10.5.3: a delta that is not smaller than the instance is not sent: an ordinary 200', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  docs.set('r', { etag: 'r1', text: randomBytes(2000).toString('base64') })
  await get(app, '/doc/r')
  const fresh = randomBytes(2000).toString('base64')
  docs.set('r', { etag: 'r2', text: fresh })
  const res = await get(app, '/doc/r', { 'a-im': 'vcdiff', 'if-none-match': '"r1"' })
  t.equal(res.status, 200)
  t.equal(res.headers.im, undefined)
  t.equal(res.headers['delta-base'], undefined)
  t.equal(res.body.toString(), fresh)
})

test('RFC 3229 10.5.1: of several entity-tags the first kept one is the base, and Delta-Base names it', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await get(app, '/doc/1')
  edit()
  await get(app, '/doc/1')
  edit('1', 'v3', v2 + '\n\nA last paragraph.')
  const res = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"gone", W/"v2", "v1", "v2"' })
  t.equal(res.status, 226)
  t.equal(res.headers['delta-base'], '"v1"', 'the weak tag is skipped; "v1" comes before "v2"')
  t.equal(Buffer.from(decode(Buffer.from(v1), res.body)).toString(), v2 + '\n\nA last paragraph.')
  const few = await build({ deltaEncoding: { maxBaseLookups: 1 } })
  t.teardown(() => few.close())
  await get(few, '/doc/1')
  edit()
  const limited = await get(few, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"gone", "v1"' })
  t.equal(limited.status, 200, 'maxBaseLookups bounds the store reads per request')
})

test('RFC 9110 13.1.2: an If-None-Match naming the current instance is never a 226', async (t) => {
  for (const [profile, status] of [['spec', 412], ['rfc9110', 304]] as const) {
    const app = await build({ profile })
    t.teardown(() => app.close())
    for (const url of ['/doc/1', '/hashed/1']) {
      const first = await get(app, url)
      const etag = first.headers.etag as string
      const res = await get(app, url, { 'a-im': 'vcdiff, gzip', 'if-none-match': etag })
      t.equal(res.status, status, `${profile} ${url}: the conditional plugin answers`)
      t.equal(res.headers.im, undefined)
      const head = await get(app, url, { 'a-im': 'vcdiff, gzip', 'if-none-match': etag }, 'HEAD')
      t.equal(head.status, status, `${profile} HEAD ${url}`)
      t.equal(head.headers.im, undefined)
      const listed = await get(app, url, { 'a-im': 'vcdiff', 'if-none-match': `"old", ${etag}` })
      t.equal(listed.status, status, 'the current tag anywhere in the list')
    }
    // A route whose handler sets the ETag itself: no conditional plugin decides, and no 226 either.
    const own = await get(app, '/own/1', { 'a-im': 'vcdiff', 'if-none-match': '"v1"' })
    t.equal(own.status, 200)
    t.equal(own.headers.im, undefined)
    t.equal(own.body.toString(), v1)
  }
})

test('RFC 3229 with payload-hashed ETags: the old hash names the base, the 226 carries the new hash', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const first = await get(app, '/hashed/1')
  const old = first.headers.etag as string
  t.match(old, /^"/, 'a strong hash ETag')
  edit()
  const full = await get(app, '/hashed/1')
  edit('1', 'v1', v1)
  edit()
  const res = await get(app, '/hashed/1', { 'a-im': 'vcdiff', 'if-none-match': old })
  t.equal(res.status, 226)
  t.equal(res.headers.etag, full.headers.etag, 'the hash of the current instance, not of the delta')
  t.equal(res.headers['delta-base'], old)
  t.equal(Buffer.from(decode(Buffer.from(v1), res.body)).toString(), v2)
})

test('RFC 9110 9.3.2: HEAD makes the decision GET makes, with the Content-Length of GET\'s body and no body', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await get(app, '/doc/1')
  edit()
  const headers = { 'a-im': 'vcdiff', 'if-none-match': '"v1"' }
  const g = await get(app, '/doc/1', headers)
  const h = await get(app, '/doc/1', headers, 'HEAD')
  t.equal(h.status, 226)
  t.equal(h.headers.im, 'vcdiff')
  t.equal(h.headers['delta-base'], '"v1"')
  t.equal(h.headers.etag, '"v2"')
  t.equal(h.headers['content-length'], String(g.body.length))
  t.equal(h.body.length, 0)
  const plain = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"zzz"' }, 'HEAD')
  t.equal(plain.status, 200)
  t.equal(plain.headers['content-length'], String(Buffer.byteLength(v2)))
})

test('instances are kept by URL and Content-Type: two resources, or representations, with one ETag never mix', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const a = article(20, 7).join('\n')
  const b = article(20, 9).join('\n')
  docs.set('a', { etag: 'same', text: a })
  docs.set('b', { etag: 'same', text: b })
  await get(app, '/doc/a')
  await get(app, '/doc/b')
  const b2 = b.replace('Paragraph 3', 'Paragraph three')
  docs.set('b', { etag: 'same2', text: b2 })
  const res = await get(app, '/doc/b', { 'a-im': 'vcdiff', 'if-none-match': '"same"' })
  t.equal(res.status, 226)
  t.equal(Buffer.from(decode(Buffer.from(b), res.body)).toString(), b2, 'the base is b\'s own instance, not a\'s')
  // One resource, two media types, the same ETag (a provider that ignores the representation).
  docs.set('c', { etag: 'c1', text: a, type: 'text/plain' })
  await get(app, '/doc/c')
  docs.set('c', { etag: 'c2', text: a.replace('Paragraph 1', 'P1'), type: 'text/markdown' })
  const other = await get(app, '/doc/c', { 'a-im': 'vcdiff', 'if-none-match': '"c1"' })
  t.equal(other.status, 200, 'no text/markdown instance "c1" was kept: no delta from the text/plain one')
  const qs = await get(app, '/doc/b?x=1', { 'a-im': 'vcdiff', 'if-none-match': '"same"' })
  t.equal(qs.status, 200, 'the query is part of the URL')
})

test('only opted-in routes store instances; every 200 and 226 of one does', async (t) => {
  const store = new SpyStore()
  const app = await build({ deltaEncoding: { store, ttl: 60_000 } })
  t.teardown(() => app.close())
  await get(app, '/off/1')
  await get(app, '/plain/1')
  t.same(store.sets, [], 'deltaEncoding: false, or not opted in: nothing stored')
  await get(app, '/doc/1')
  t.same(store.sets, [{ key: '/doc/1\ntext/plain; charset=utf-8\nv1', ttl: 60_000 }])
  edit()
  await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"v1"' })
  t.same(store.sets.map((s) => s.key), ['/doc/1\ntext/plain; charset=utf-8\nv1', '/doc/1\ntext/plain; charset=utf-8\nv2'], 'the 226 keeps the current instance too')
  t.equal((await store.get('/doc/1\ntext/plain; charset=utf-8\nv2'))?.toString(), v2, 'the instance, not the delta')
  await get(app, '/gzip-only/1')
  t.equal(store.sets.at(-1)?.ttl, 5000, 'the route\'s ttl wins')
  const before = store.sets.length
  for (const url of ['/weak', '/no-etag', '/missing', '/coded', '/ranged', '/stream']) await get(app, url, { 'a-im': 'gzip' })
  t.equal(store.sets.length, before, 'no strong ETag, not a 200, content-coded, partial or streamed: nothing stored')
  await get(app, '/doc/1', {}, 'HEAD')
  t.equal(store.sets.length, before, 'an instance stored a moment ago is not copied into the store again')
  edit('1', 'v3', v2 + ' and more')
  await get(app, '/doc/1', {}, 'HEAD')
  t.equal(store.sets.length, before + 1, 'a HEAD 200 has the instance at hand too')
})

test('conventions (Delta encoding): bases are kept once a client asked the route with A-IM; until then a 200 writes nothing', async (t) => {
  const store = new SpyStore()
  const app = await build({ deltaEncoding: { store } })
  t.teardown(() => app.close())
  docs.set('2', { etag: 'w1', text: v1 })
  for (let i = 0; i < 3; i++) {
    await get(app, '/doc/1', {})
    await get(app, '/doc/2', {}, 'HEAD')
  }
  t.same(store.sets, [], 'no client sent A-IM: no 200 is kept')
  edit()
  const first = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"v1"' })
  t.equal(first.status, 200, 'RFC 3229 10.5.3: the first A-IM of the route finds no base; the whole instance')
  t.same(store.sets.map((s) => s.key), ['/doc/1\ntext/plain; charset=utf-8\nv2'], 'the instance of the A-IM request is kept')
  // From now on the route's plain 200s are bases too: a client that fetched plainly gets its delta.
  docs.set('1', { etag: 'v3', text: v1 })
  await get(app, '/doc/1', {}, 'HEAD')
  edit('1', 'v4', v2)
  const delta = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"v3"' })
  t.equal(delta.status, 226, 'a plain HEAD 200 of an asked route was kept (GET and HEAD share the route)')
  t.equal(Buffer.from(decode(Buffer.from(v1), delta.body)).toString(), v2)
  await get(app, '/doc/2', {})
  t.ok(store.sets.some((s) => s.key.startsWith('/doc/2\n')), 'the interest is the route\'s: another id of it is kept too')
  await get(app, '/hashed/1', {})
  t.notOk(store.sets.some((s) => s.key.startsWith('/hashed/')), 'another route no client asked keeps nothing')
})

test('answers that are no whole instance are sent as they are', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  const cases: Array<[string, number]> = [['/weak', 200], ['/no-etag', 200], ['/missing', 404], ['/coded', 200], ['/ranged', 200], ['/stream', 200]]
  for (const [url, status] of cases) {
    const res = await get(app, url, { 'a-im': 'gzip' })
    t.equal(res.status, status, url)
    t.equal(res.headers.im, undefined, `${url}: no IM`)
    t.equal(res.body.toString(), v1)
  }
  const identity = await get(app, '/identity-coded', { 'a-im': 'gzip' })
  t.equal(identity.status, 226, 'Content-Encoding: identity is no coding')
  const buffer = await get(app, '/buffer', { 'a-im': 'gzip' })
  t.equal(buffer.status, 226, 'a Buffer payload is an instance too')
  t.equal(gunzipSync(buffer.body).toString(), v1)
})

test('a route with several methods opts in for GET only; an object config without ttl keeps the plugin\'s', async (t) => {
  const store = new SpyStore()
  const app = Fastify(serverOptions)
  await app.register(httpConventionsDeltaEncoding, { store, ttl: 7000 })
  app.route({ method: ['GET', 'POST'], url: '/both', config: { deltaEncoding: { manipulations: ['gzip'] } }, handler: async (_request, reply) => reply.type('text/plain').header('etag', '"b1"').send(v1) })
  t.teardown(() => app.close())
  const got = await app.inject({ url: '/both', headers: { 'a-im': 'gzip' } })
  t.equal(got.statusCode, 226)
  const posted = await app.inject({ method: 'POST', url: '/both', headers: { 'a-im': 'gzip' } })
  t.equal(posted.statusCode, 200, 'RFC 3229 10.4.1: a 226 answers a GET, never a POST')
  t.same(store.sets.map((s) => s.ttl), [7000], 'only the GET kept its instance, with the plugin\'s ttl')
})

test('instances over maxInstanceBytes are neither kept nor manipulated', async (t) => {
  const store = new SpyStore()
  const app = await build({ deltaEncoding: { store, maxInstanceBytes: 1000 } })
  t.teardown(() => app.close())
  const res = await get(app, '/doc/1', { 'a-im': 'gzip' })
  t.equal(res.status, 200)
  t.same(store.sets, [])
})

test('per-route manipulations: a gzip-only route makes no delta', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await get(app, '/gzip-only/1')
  edit()
  const res = await get(app, '/gzip-only/1', { 'a-im': 'vcdiff, gzip', 'if-none-match': '"v1"' })
  t.equal(res.status, 226)
  t.equal(res.headers.im, 'gzip')
  t.equal(res.headers['delta-base'], undefined)
  t.equal(gunzipSync(res.body).toString(), v2)
  const none = await build({ deltaEncoding: { manipulations: [] } })
  t.teardown(() => none.close())
  await get(none, '/doc/1')
  edit()
  t.equal((await get(none, '/doc/1', { 'a-im': 'vcdiff, gzip', 'if-none-match': '"v1"' })).status, 200, 'manipulations: [] applies none')
})

function capture (): { logger: { level: string, stream: Writable }, lines: () => Array<Record<string, unknown>> } {
  const out: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { out.push(String(chunk)); cb() } })
  return { logger: { level: 'warn', stream }, lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) }
}

test('a store that fails degrades to an ordinary 200 and logs a warning, never a 5xx', async (t) => {
  const broken: InstanceStore = {
    get: async () => { throw new Error('store down') },
    set: async () => { throw new Error('store down') }
  }
  const { logger, lines } = capture()
  reset()
  const app = Fastify({ ...serverOptions, logger })
  await app.register(httpConventions, { deltaEncoding: { store: broken } })
  routes(app)
  t.teardown(() => app.close())
  const first = await get(app, '/doc/1')
  t.equal(first.status, 200)
  edit()
  const res = await get(app, '/doc/1', { 'a-im': 'vcdiff', 'if-none-match': '"v1"' })
  t.equal(res.status, 200)
  t.equal(res.headers.im, undefined)
  t.equal(res.body.toString(), v2)
  const both = await get(app, '/doc/1', { 'a-im': 'vcdiff, gzip', 'if-none-match': '"v1"' })
  t.equal(both.status, 200, 'a failed base lookup is a plain 200 even when gzip is accepted')
  const warnings = lines().filter((l) => l.level === 40)
  t.ok(warnings.some((l) => /instance store failed; this instance cannot be a delta base/.test(String(l.msg))), 'the failed write is logged')
  t.ok(warnings.some((l) => /instance store failed; answering without a delta/.test(String(l.msg))), 'the failed read is logged')
})

test('composes with @fastify/etag and with onSend hooks of other plugins (resource policy)', async (t) => {
  const app = Fastify(serverOptions)
  // A global @fastify/etag (its own 304 on): global onSend hooks run before route-level ones.
  await app.register(fastifyEtag)
  app.addHook('onSend', function policyOnSend (_request, reply, payload, done) {
    reply.header('cross-origin-resource-policy', 'same-origin')
    done(null, payload)
  })
  await app.register(httpConventionsDeltaEncoding)
  // A plugin registered later adds its own route-level onSend hook, after ours.
  app.addHook('onRoute', (route: RouteOptions) => {
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = [...hooks, function lateOnSend (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, p?: unknown) => void) {
      reply.header('x-late', String(reply.statusCode))
      done(null, payload)
    }] as RouteOptions['onSend']
  })
  let text = v1
  app.get('/e', { config: { deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').send(text))
  t.teardown(() => app.close())
  const first = await get(app, '/e')
  const old = first.headers.etag as string
  t.ok(old, '@fastify/etag set the ETag')
  text = v2
  const res = await get(app, '/e', { 'a-im': 'vcdiff', 'if-none-match': old })
  t.equal(res.status, 226)
  t.equal(res.headers['delta-base'], old)
  t.not(res.headers.etag, old, 'the hash of the new instance')
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', 'a header set before us stays')
  t.equal(res.headers['x-late'], '226', 'a later hook sees the 226')
  t.equal(Buffer.from(decode(Buffer.from(v1), res.body)).toString(), v2)
  const same = await get(app, '/e', { 'a-im': 'vcdiff', 'if-none-match': res.headers.etag as string })
  t.equal(same.status, 304, '@fastify/etag answers a current If-None-Match; no 226')
})

test('conditional and delta encoding registered in either order: the ETag and 412/304 are final before a 226 is made', async (t) => {
  for (const order of [['conditional', 'delta'], ['delta', 'conditional']]) {
    reset()
    const app = Fastify(serverOptions)
    for (const name of order) {
      if (name === 'conditional') await app.register(httpConventionsConditional)
      else await app.register(httpConventionsDeltaEncoding, { store: new MemoryInstanceStore({ maxBytes: 1 << 20 }) })
    }
    routes(app)
    t.teardown(() => app.close())
    const first = await get(app, '/hashed/1')
    t.equal(first.status, 200, order.join(' then '))
    t.equal((await get(app, '/hashed/1', { 'if-none-match': first.headers.etag as string })).status, 412, 'the current ETag is answered by the conditional step (conventions (Conditional requests))')
    edit()
    const delta = await get(app, '/hashed/1', { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string })
    t.equal(delta.status, 226, 'an older ETag gets its delta')
    t.equal((await get(app, '/hashed/1', { 'a-im': 'vcdiff', 'if-none-match': '"nope"' })).status, 200)
    const head = await get(app, '/hashed/1', { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string }, 'HEAD')
    t.equal(head.status, 226, 'HEAD makes GET\'s decision')
  }
})

test('OpenAPI: opted-in routes document the 226', async (t) => {
  const seen = new Map<string, RouteOptions>()
  reset()
  const app = await buildApp()
  app.addHook('onRoute', (route: RouteOptions) => { seen.set(`${String(route.method)} ${route.url}`, route) })
  routes(app)
  t.teardown(() => app.close())
  await app.ready()
  t.match(conventionResponses(seen.get('GET /doc/:id') as RouteOptions)['226'], { body: 'none', headers: ['IM', 'ETag', 'Delta-Base', 'Cache-Control'] })
  t.equal(conventionResponses(seen.get('GET /plain/:id') as RouteOptions)['226'], undefined)
})

test('options that make no sense fail at boot', async (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [{ nope: 1 }, /unknown option "nope"/],
    [{ profile: 'x' }, /profile must be/],
    [{ store: {} }, /store must be an instance store/],
    [{ store: null }, /store must be an instance store/],
    [{ manipulations: ['vcdiff', 'br'] }, /manipulations must list/],
    [{ manipulations: 'gzip' }, /manipulations must list/],
    [{ ttl: 0 }, /ttl must be a positive number/],
    [{ ttl: 'soon' }, /ttl must be a positive number/],
    [{ maxInstanceBytes: 1.5 }, /maxInstanceBytes must be an integer/],
    [{ gzipLevel: 10 }, /gzipLevel must be an integer from 1 to 9/],
    [{ maxBaseLookups: 0 }, /maxBaseLookups/],
    [{ vcdiff: 'fast' }, /vcdiff must be an object/],
    [{ vcdiff: { hashLength: 2 } }, /vcdiff: .*hashLength/]
  ]
  for (const [opts, message] of bad) {
    const app = Fastify()
    app.register(httpConventionsDeltaEncoding, opts as object)
    await t.rejects(boot(app.ready()), message, JSON.stringify(opts))
  }
  // Route configs the types refuse too: written as plain data, as JavaScript callers could.
  const routeCases: Array<[string, unknown, RegExp]> = [
    ['POST', true, /belongs on a GET or HEAD route/],
    ['GET', 'yes', /must be true, false or/],
    ['GET', null, /must be true, false or/],
    ['GET', { gzip: true }, /unknown config.deltaEncoding option "gzip"/],
    ['GET', { manipulations: ['zstd'] }, /config.deltaEncoding.manipulations must list/],
    ['GET', { ttl: -1 }, /config.deltaEncoding.ttl must be a positive number/]
  ]
  for (const [method, deltaEncoding, message] of routeCases) {
    const app = Fastify()
    await app.register(httpConventionsDeltaEncoding)
    t.throws(() => app.route({ method, url: '/x', handler: async () => 'x', config: { deltaEncoding } } as unknown as RouteOptions), message, JSON.stringify(deltaEncoding))
    await app.close()
  }
  const umbrella = Fastify()
  umbrella.register(httpConventions, { deltaEncoding: 'on' as unknown as false })
  await t.rejects(boot(umbrella.ready()), /deltaEncoding must be an options object or false/)
  // Fail closed: a route asking for delta encoding where it is off is a boot error, not a route served without it.
  const off = await buildApp({ deltaEncoding: false })
  off.get('/x', { config: { deltaEncoding: { ttl: -1 } } }, async () => 'x')
  await t.rejects(boot(off.ready()), /route GET,HEAD \/x asks for delta-encoding|route GET \/x asks for delta-encoding/, 'deltaEncoding: false, and a route asking for it: ready() rejects')
})
