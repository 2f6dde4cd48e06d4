import { test } from 'tap'
import { gzipSync } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import Fastify, { type FastifyInstance } from 'fastify'
import { fetch as undiciFetch } from 'undici'
import { listen } from '../../../test/helpers/app'
import { httpConventions, serverOptions, type Profile } from '../../../plugins/index'
import { DeltaClient, DeltaClientError, BODY_TOO_LARGE, type DeltaClientOptions } from '../src/delta-client'
import { encode } from '../../vcdiff/src/index'

const paragraphs = (n: number, tag: string): string[] => Array.from({ length: n }, (_, i) => `${tag} ${i}: ${'lorem ipsum dolor sit amet '.repeat(3 + (i % 5))}${i * 7919}`)

interface Served { app: FastifyInstance, url: string, set: (text: string, etag: string) => void }

async function serve (profile: Profile = 'spec', manipulations?: Array<'vcdiff' | 'gzip'>): Promise<Served> {
  let text = paragraphs(200, 'p').join('\n')
  let etag = 'v1'
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { profile, deltaEncoding: manipulations === undefined ? {} : { manipulations } })
  app.get('/doc', { config: { conditional: { validators: () => ({ etag }) }, deltaEncoding: true } }, async (_request, reply) => reply.type('text/plain').send(text))
  const port = await listen(app)
  return { app, url: `http://127.0.0.1:${port}/doc`, set: (t, e) => { text = t; etag = e } }
}

test('RFC 3229: the client asks with A-IM and If-None-Match and applies the 226 transparently (global fetch)', async (t) => {
  const s = await serve()
  t.teardown(() => s.app.close())
  const client = new DeltaClient({ aim: 'vcdiff' })
  const first = await client.get(s.url)
  t.equal(first.status, 200)
  t.equal(first.wireStatus, 200, 'nothing to make a delta from yet')
  t.equal(first.etag, '"v1"')
  t.same(client.cached(s.url)?.etag, '"v1"', 'the instance is kept with its ETag')
  const next = paragraphs(200, 'p')
  next[100] = 'an edited paragraph'
  s.set(next.join('\n'), 'v2')
  const second = await client.get(s.url)
  t.equal(second.status, 200, 'a whole instance, however it travelled')
  t.equal(second.wireStatus, 226)
  t.same(second.im, ['vcdiff'])
  t.equal(second.body.toString(), next.join('\n'))
  t.equal(second.etag, '"v2"')
  t.ok(second.wireBytes < first.wireBytes / 20, `${second.wireBytes} B on the wire instead of ${first.wireBytes} B`)
  t.equal(client.cached(s.url)?.etag, '"v2"', 'the new instance is kept')
  t.equal(client.bytes, second.body.length)
  const gz = new DeltaClient()
  const gzFirst = await gz.get(s.url)
  t.equal(gzFirst.wireStatus, 226, 'the default A-IM (vcdiff, gzip): the first GET already travels gzipped')
  t.same(gzFirst.im, ['gzip'])
  t.equal(gzFirst.body.toString(), next.join('\n'))
})

test('conventions (Conditional requests) and RFC 9110 15.4.5: "not modified" (412 or 304) returns the kept instance', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const s = await serve(profile)
    t.teardown(() => s.app.close())
    const client = new DeltaClient()
    const first = await client.get(s.url)
    const again = await client.get(s.url)
    t.equal(again.wireStatus, profile === 'spec' ? 412 : 304, profile)
    t.equal(again.status, 200)
    t.equal(again.notModified, true)
    t.same(again.body, first.body)
    t.equal(again.etag, '"v1"')
  }
})

test('works with undici\'s fetch, and with vcdiff then gzip', async (t) => {
  const s = await serve()
  t.teardown(() => s.app.close())
  const client = new DeltaClient({ fetch: undiciFetch as unknown as DeltaClientOptions['fetch'] })
  await client.get(s.url)
  // New text in hex digits: the delta's added bytes still shrink under gzip.
  const next = paragraphs(200, 'p').join('\n') + '\n' + randomBytes(3000).toString('hex')
  s.set(next, 'v2')
  const res = await client.get(s.url)
  t.equal(res.wireStatus, 226)
  t.same(res.im, ['vcdiff', 'gzip'], 'RFC 3229 10.5.2: undone in reverse order')
  t.equal(res.body.toString(), next)
})

test('gzip alone: 226 IM gzip is gunzipped', async (t) => {
  const s = await serve('spec', ['gzip'])
  t.teardown(() => s.app.close())
  const client = new DeltaClient({ aim: 'gzip' })
  const res = await client.get(s.url)
  t.equal(res.wireStatus, 226)
  t.same(res.im, ['gzip'])
  t.equal(res.body.toString(), paragraphs(200, 'p').join('\n'))
  t.ok(res.wireBytes < res.body.length)
})

/** A fetch that answers from a script and records the requests. */
function scripted (answers: Array<() => Response>): { fetch: DeltaClientOptions['fetch'], seen: Array<Record<string, string>> } {
  const seen: Array<Record<string, string>> = []
  let i = 0
  return {
    seen,
    fetch: async (_url, init) => {
      seen.push({ ...init?.headers })
      return answers[i++]()
    }
  }
}

const base = Buffer.from(paragraphs(50, 'b').join('\n'))
const target = Buffer.from(paragraphs(50, 'b').join('\n').replace('b 10:', 'edited 10:'))
const delta = Buffer.from(encode(base, target))
const ok200 = (etag?: string, body: Buffer = base): () => Response => () => new Response(body, { status: 200, headers: etag === undefined ? {} : { etag } })
const im226 = (headers: Record<string, string>, body: Buffer = delta): () => Response => () => new Response(body, { status: 226, headers })

test('a 226 the client cannot undo: the kept base is forgotten and the whole instance fetched once', async (t) => {
  const cases: Array<[string, () => Response]> = [
    ['no IM', im226({ etag: '"v2"' })],
    ['an unknown manipulation', im226({ etag: '"v2"', im: 'diffe' })],
    ['a Delta-Base the client does not hold', im226({ etag: '"v2"', im: 'vcdiff', 'delta-base': '"v0"' })],
    ['a corrupt delta', im226({ etag: '"v2"', im: 'vcdiff' }, Buffer.from('not a delta'))],
    ['a corrupt gzip', im226({ etag: '"v2"', im: 'gzip' }, Buffer.from('not gzip'))],
    ['no ETag (RFC 3229 10.4.1)', im226({ im: 'vcdiff', 'delta-base': '"v1"' })]
  ]
  for (const [name, bad] of cases) {
    const f = scripted([ok200('"v1"'), bad, ok200('"v2"', target)])
    const client = new DeltaClient({ fetch: f.fetch })
    await client.get('http://x/doc')
    const res = await client.get('http://x/doc')
    t.equal(res.wireStatus, 200, `${name}: fetched again`)
    t.same(res.body, target)
    t.equal(f.seen[1]['if-none-match'], '"v1"')
    t.equal(f.seen[2]['if-none-match'], undefined, `${name}: the retry names no base`)
  }
  const valid = scripted([ok200('"v1"'), im226({ etag: '"v2"', im: 'vcdiff', 'delta-base': '"v1"' })])
  const client = new DeltaClient({ fetch: valid.fetch })
  await client.get('http://x/doc')
  t.same((await client.get('http://x/doc')).body, target, 'a matching Delta-Base is applied')
})

test('a delta without a kept base is an error; other failures are passed on', async (t) => {
  const noBase = new DeltaClient({ fetch: scripted([im226({ etag: '"v2"', im: 'vcdiff' })]).fetch })
  await t.rejects(noBase.get('http://x/doc'), DeltaClientError)
  const down = new DeltaClient({ fetch: async () => { throw new TypeError('fetch failed') } })
  await t.rejects(down.get('http://x/doc'), /fetch failed/)
  const f = scripted([ok200('"v1"'), () => { throw new TypeError('fetch failed') }])
  const kept = new DeltaClient({ fetch: f.fetch })
  await kept.get('http://x/doc')
  await t.rejects(kept.get('http://x/doc'), /fetch failed/, 'no retry for a network failure')
  t.ok(kept.cached('http://x/doc'), 'and the kept instance stays')
})

test('only a 200 with a strong ETag is kept; other answers pass through', async (t) => {
  const f = scripted([
    ok200('"v1"'),
    ok200('W/"v2"'),
    ok200('"v3"'),
    ok200(),
    ok200('"v4"'),
    () => new Response('{"errors":[]}', { status: 412, headers: { etag: '"other"' } }),
    () => new Response('gone', { status: 404 })
  ])
  const client = new DeltaClient({ fetch: f.fetch })
  await client.get('http://x/doc')
  await client.get('http://x/doc')
  t.equal(client.cached('http://x/doc'), undefined, 'a weak ETag names no exact bytes')
  await client.get('http://x/doc')
  await client.get('http://x/doc')
  t.equal(client.cached('http://x/doc'), undefined, 'no ETag, nothing to name in If-None-Match')
  await client.get('http://x/doc')
  const failed = await client.get('http://x/doc', { 'if-match': '"v4"' })
  t.equal(failed.status, 412, 'a 412 for another ETag is no "not modified"')
  t.equal(failed.notModified, false)
  t.equal(f.seen[5]['if-match'], '"v4"', 'the caller\'s headers are sent')
  t.equal(f.seen[5]['a-im'], 'vcdiff, gzip')
  const missing = await client.get('http://x/doc')
  t.equal(missing.status, 404)
  t.equal(missing.body.toString(), 'gone')
  t.equal(client.cached('http://x/doc')?.etag, '"v4"', 'the kept instance is not replaced by an error')
})

test('the kept instances are bounded by count and by bytes, least recently used first', async (t) => {
  const body = (n: number): Buffer => Buffer.alloc(n, 1)
  const f = scripted([
    ok200('"a"', body(10)), ok200('"b"', body(10)),
    () => new Response(null, { status: 304, headers: { etag: '"a"' } }),
    ok200('"c"', body(10)),
    ok200('"d"', body(30)),
    ok200('"e"', body(41))
  ])
  const client = new DeltaClient({ fetch: f.fetch, maxEntries: 2, maxBytes: 40, maxInstanceBytes: 100 })
  await client.get('http://x/a')
  await client.get('http://x/b')
  t.equal((await client.get('http://x/a')).notModified, true, 'a is the most recently used now')
  await client.get('http://x/c')
  t.equal(client.cached('http://x/b'), undefined, 'b was the least recently used')
  t.ok(client.cached('http://x/a'))
  await client.get('http://x/d')
  t.equal(client.cached('http://x/a'), undefined, '30 + 10 + 10 B is over 40 B')
  t.equal(client.bytes, 40)
  await client.get('http://x/e')
  t.equal(client.cached('http://x/e'), undefined, 'an instance over maxBytes (within maxInstanceBytes) is passed on, not kept')
  client.forget('http://x/none')
  t.equal(client.bytes, 40)
})

test('the client checks its options', async (t) => {
  t.throws(() => new DeltaClient({ fetch: 'x' as unknown as DeltaClientOptions['fetch'] }), /needs a fetch function/)
  t.throws(() => new DeltaClient({ maxEntries: 0 }), /maxEntries must be a positive integer/)
  t.throws(() => new DeltaClient({ maxBytes: 1.5 }), /maxBytes must be a positive integer/)
})

test('RFC 3229 10.5.2: IM "gzip, vcdiff" is undone in reverse: the delta first, then gunzip', async (t) => {
  // gzip was applied first: the delta turns the kept (identity) instance into the gzipped new one.
  const d = Buffer.from(encode(base, gzipSync(target)))
  const f = scripted([ok200('"v1"'), im226({ etag: '"v2"', im: 'gzip, vcdiff' }, d)])
  const client = new DeltaClient({ fetch: f.fetch })
  await client.get('http://x/doc')
  const res = await client.get('http://x/doc')
  t.same(res.im, ['gzip', 'vcdiff'])
  t.same(res.body, target)
})

test('bounded output: a small gzip 226 that inflates past maxInstanceBytes is refused without inflating it', async (t) => {
  const MiB = 1024 * 1024
  const bomb = gzipSync(Buffer.alloc(64 * MiB), { level: 9 })
  t.ok(bomb.length < 128 * 1024, `${bomb.length} bytes on the wire`)
  const alone = new DeltaClient({ fetch: scripted([im226({ etag: '"v2"', im: 'gzip' }, bomb)]).fetch, maxBytes: MiB })
  const before = process.memoryUsage().arrayBuffers
  await t.rejects(alone.get('http://x/doc'), { name: 'DeltaClientError', code: BODY_TOO_LARGE })
  t.ok(process.memoryUsage().arrayBuffers - before < 16 * MiB, 'the bomb was not inflated')
  // With a kept base too: the whole instance would be as large, so it is not asked for.
  const f = scripted([ok200('"v1"'), im226({ etag: '"v2"', im: 'gzip' }, bomb), ok200('"v2"', target)])
  const client = new DeltaClient({ fetch: f.fetch, maxBytes: MiB })
  await client.get('http://x/doc')
  await t.rejects(client.get('http://x/doc'), { name: 'DeltaClientError', code: BODY_TOO_LARGE, message: `the response body is over maxInstanceBytes (${MiB} bytes)` })
  t.equal(f.seen.length, 2, 'no third request')
  // maxInstanceBytes bounds one instance apart from what is kept.
  const small = new DeltaClient({ fetch: scripted([im226({ etag: '"v2"', im: 'gzip' }, gzipSync(target))]).fetch, maxInstanceBytes: target.length - 1 })
  await t.rejects(small.get('http://x/doc'), DeltaClientError)
  const exact = new DeltaClient({ fetch: scripted([im226({ etag: '"v2"', im: 'gzip' }, gzipSync(target))]).fetch, maxInstanceBytes: target.length })
  t.same((await exact.get('http://x/doc')).body, target)
  t.throws(() => new DeltaClient({ maxInstanceBytes: 0 }), /maxInstanceBytes must be a positive integer/)
})

test('bounded output: a small vcdiff 226 declaring a target past maxInstanceBytes is refused before it is decoded, and not asked for again', async (t) => {
  const MiB = 1024 * 1024
  // RFC 3284: one window, RUN (opcode 0, size in the instruction section) of 256 MiB 'a'.
  const size = 256 * MiB
  const varint = (n: number): number[] => { const out = [n & 0x7f]; for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) out.unshift((n & 0x7f) | 0x80); return out }
  const body = [...varint(size), 0, 1, 1 + varint(size).length, 0, 0x61, 0, ...varint(size)]
  const bomb = Buffer.from([0xd6, 0xc3, 0xc4, 0, 0, 0, ...varint(body.length), ...body])
  t.ok(bomb.length < 32)
  const f = scripted([ok200('"v1"'), im226({ etag: '"v2"', im: 'vcdiff' }, bomb), ok200('"v2"', target)])
  const client = new DeltaClient({ fetch: f.fetch, maxBytes: MiB })
  await client.get('http://x/doc')
  const before = process.memoryUsage().arrayBuffers
  await t.rejects(client.get('http://x/doc'), { name: 'DeltaClientError', code: BODY_TOO_LARGE })
  t.ok(process.memoryUsage().arrayBuffers - before < 16 * MiB, 'the target was not allocated')
  t.equal(f.seen.length, 2, 'the whole instance is not asked for: it would be as large')
  t.same((await client.get('http://x/doc')).body, target, 'the next read is answered')
  t.equal(f.seen[2]['if-none-match'], '"v1"', 'the base is kept: it is still an instance of the resource')
})

test('RFC 9111 4.1: one client, two principals: an instance kept for one Authorization is never another\'s base or "not modified"', async (t) => {
  // A server whose ETag names the resource's version, not the representation each user gets:
  // the 412/304 it answers the second user must not hand them the first user's body.
  for (const profile of ['spec', 'rfc9110'] as const) {
    const app = Fastify(serverOptions)
    await app.register(httpConventions, { profile })
    app.get('/doc', { config: { conditional: { validators: () => ({ etag: 'v1' }) }, deltaEncoding: true } }, async (request, reply) =>
      reply.type('text/plain').send(`${String(request.headers.authorization)}: ${paragraphs(20, 'p').join('\n')}`))
    const port = await listen(app)
    t.teardown(() => app.close())
    const url = `http://127.0.0.1:${port}/doc`
    const client = new DeltaClient()
    const alice = await client.get(url, { authorization: 'Bearer alice' })
    t.match(alice.body.toString(), /^Bearer alice: /)
    const bob = await client.get(url, { Authorization: 'Bearer bob' })
    t.equal(bob.notModified, false, `${profile}: bob's request named no instance of alice's`)
    t.match(bob.body.toString(), /^Bearer bob: /)
    const anonymous = await client.get(url)
    t.match(anonymous.body.toString(), /^undefined: /, 'nor an anonymous one')
    const again = await client.get(url, { authorization: 'Bearer alice' })
    t.equal(again.notModified, true, 'alice\'s own instance is still hers')
    t.match(again.body.toString(), /^Bearer alice: /)
    t.match(client.cached(url, { authorization: 'Bearer bob' })?.body.toString(), /^Bearer bob: /)
    t.equal(client.cached(url, { authorization: 'Bearer carol' }), undefined)
  }
})

test('RFC 9111 4.1: the instance is kept per value of the fields its Vary names; Vary: * keeps nothing', async (t) => {
  const f = scripted([
    () => new Response('english', { status: 200, headers: { etag: '"en"', vary: 'Accept-Language, A-IM' } }),
    () => new Response('français', { status: 200, headers: { etag: '"fr"', vary: 'accept-language' } }),
    () => new Response(null, { status: 304, headers: { etag: '"en"' } }),
    () => new Response('star', { status: 200, headers: { etag: '"s"', vary: '*' } }),
    () => new Response('star', { status: 200, headers: { etag: '"s"', vary: '*' } }),
    () => new Response('cookie', { status: 200, headers: { etag: '"c"' } }),
    () => new Response('other cookie', { status: 200, headers: { etag: '"d"' } })
  ])
  const client = new DeltaClient({ fetch: f.fetch })
  await client.get('http://x/doc', { 'accept-language': 'en' })
  const fr = await client.get('http://x/doc', { 'Accept-Language': 'fr' })
  t.equal(f.seen[1]['if-none-match'], undefined, 'the French request named no English instance')
  t.equal(fr.body.toString(), 'français')
  const en = await client.get('http://x/doc', { 'accept-language': 'en', 'x-trace': '1' })
  t.equal(f.seen[2]['if-none-match'], '"en"', 'a field the response does not vary on does not split the key')
  t.equal(en.body.toString(), 'english')
  await client.get('http://x/star')
  await client.get('http://x/star')
  t.equal(f.seen[4]['if-none-match'], undefined, 'Vary: * is never matched')
  await client.get('http://x/c', { cookie: 'session=a' })
  await client.get('http://x/c', { cookie: 'session=b' })
  t.equal(f.seen[6]['if-none-match'], undefined, 'Cookie always selects, like Authorization')
  client.forget('http://x/doc')
  t.equal(client.cached('http://x/doc', { 'accept-language': 'en' }), undefined, 'forget drops every variant of the URL')
  t.equal(client.cached('http://x/doc', { 'accept-language': 'fr' }), undefined)
})

test('bounded input: the wire body is read as a stream and refused past maxInstanceBytes, without reading the rest', async (t) => {
  const MiB = 1024 * 1024
  let written = 0
  const closed: Array<Promise<void>> = []
  const server = createServer((req, res) => {
    const declare = req.url === '/declared'
    res.writeHead(200, declare ? { etag: '"big"', 'content-length': String(256 * MiB) } : { etag: '"big"' })
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    closed.push(new Promise((resolve) => res.once('close', resolve)))
    const pump = (): void => {
      while (!res.destroyed && written < 256 * MiB) {
        written += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', pump)
          return
        }
      }
      if (!res.destroyed) res.end()
    }
    pump()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const { port } = server.address() as { port: number }
  for (const fetcher of [undefined, undiciFetch as unknown as DeltaClientOptions['fetch']]) {
    written = 0
    const client = new DeltaClient({ fetch: fetcher, maxBytes: MiB })
    await t.rejects(client.get(`http://127.0.0.1:${port}/stream`), { name: 'DeltaClientError', code: BODY_TOO_LARGE })
    await closed[closed.length - 1]
    t.ok(written < 64 * MiB, `the client stopped reading: the server wrote ${(written / MiB).toFixed(1)} MiB of 256`)
    t.equal(client.bytes, 0)
  }
  written = 0
  const declared = new DeltaClient({ maxBytes: MiB })
  await t.rejects(declared.get(`http://127.0.0.1:${port}/declared`), { code: BODY_TOO_LARGE }, 'a Content-Length over the bound is refused')
  await closed[closed.length - 1]
  t.ok(written < 64 * MiB)
})

test('bounded input: a body over the bound is refused even with a kept base (no retry), also from a fetch without streams', async (t) => {
  const f = scripted([ok200('"v1"', Buffer.alloc(100)), () => new Response(Buffer.alloc(2048), { status: 200, headers: { etag: '"v2"' } })])
  const client = new DeltaClient({ fetch: f.fetch, maxBytes: 1024 })
  await client.get('http://x/doc')
  await t.rejects(client.get('http://x/doc'), { code: BODY_TOO_LARGE })
  t.equal(f.seen.length, 2, 'not fetched again')
  t.equal(client.cached('http://x/doc')?.etag, '"v1"', 'the kept instance stays')
  const plain = (body: Buffer): DeltaClientOptions['fetch'] => async () => ({ status: 200, headers: { get: () => null }, arrayBuffer: async () => body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer })
  await t.rejects(new DeltaClient({ fetch: plain(Buffer.alloc(11)), maxBytes: 10 }).get('http://x/doc'), { code: BODY_TOO_LARGE })
  t.equal((await new DeltaClient({ fetch: plain(Buffer.alloc(10)), maxBytes: 10 }).get('http://x/doc')).body.length, 10)
})
