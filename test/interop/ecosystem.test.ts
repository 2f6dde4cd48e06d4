/**
 * Beside the popular Fastify plugins, over real sockets: compression, helmet, static files,
 * CORS, uploads and HTTP/2.
 */
import { test } from 'tap'
import http2 from 'node:http2'
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import compress from '@fastify/compress'
import helmet from '@fastify/helmet'
import fastifyStatic from '@fastify/static'
import cors from '@fastify/cors'
import { httpConventions, serverOptions } from '../../plugins/index'
import { DeltaClient } from '../../packages/client/src/delta-client'
import { request } from 'undici'
import { listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'

function doc (version: number): string {
  return JSON.stringify({ version, items: Array.from({ length: 400 }, (_, i) => ({ i, text: i === 200 ? `v${version}` : 'the same text in every version' })) })
}

async function deltaApp (order: 'compress first' | 'suite first'): Promise<{ app: FastifyInstance, bump: () => void }> {
  const app = Fastify(serverOptions)
  if (order === 'compress first') await app.register(compress, { global: true, encodings: ['br', 'gzip'] })
  await app.register(httpConventions)
  if (order === 'suite first') await app.register(compress, { global: true, encodings: ['br', 'gzip'] })
  let version = 1
  app.get('/doc', { config: { deltaEncoding: true } }, async (_req, reply) => {
    reply.header('etag', `"v${version}"`).type('application/json')
    return doc(version)
  })
  return { app, bump: () => { version++ } }
}

for (const order of ['compress first', 'suite first'] as const) {
  test(`@fastify/compress registered ${order}: a 226 is decoded by a correct client (Content-Encoding first, then IM in reverse)`, async (t) => {
    const { app, bump } = await deltaApp(order)
    const port = await listen(app)
    t.teardown(() => app.close())
    const client = new DeltaClient({ aim: 'vcdiff, gzip' } as never)
    const first = await client.get(`http://127.0.0.1:${port}/doc`, { 'accept-encoding': 'gzip, br' })
    t.equal(first.status, 200)
    bump()
    const second = await client.get(`http://127.0.0.1:${port}/doc`, { 'accept-encoding': 'gzip, br' })
    t.equal(second.wireStatus, 226, 'a delta, whatever the registration order')
    t.equal(second.body.toString(), doc(2), 'decoded exactly')
  })
}

test('@fastify/helmet: a route\'s resourcePolicy wins over helmet\'s Cross-Origin-Resource-Policy; other routes keep helmet\'s', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(helmet)
  await app.register(httpConventions)
  app.get('/logo', { config: { resourcePolicy: 'cross-origin' } }, async () => 'svg')
  app.get('/page', async () => 'page')
  const port = await listen(app)
  t.teardown(() => app.close())
  t.equal((await fetch(`http://127.0.0.1:${port}/logo`)).headers.get('cross-origin-resource-policy'), 'cross-origin')
  t.equal((await fetch(`http://127.0.0.1:${port}/page`)).headers.get('cross-origin-resource-policy'), 'same-origin')
})

test('@fastify/static: files another plugin serves keep their 304 in both profiles, with no Content-Type (docs/conventions.md, which answers the conditional convention governs)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'static-'))
  writeFileSync(join(dir, 'a.txt'), 'hello')
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [profile, status] of [['spec', 304], ['rfc9110', 304]] as const) {
    const app = Fastify(serverOptions)
    await app.register(httpConventions, { profile })
    await app.register(fastifyStatic, { root: dir, prefix: '/files/' })
    const port = await listen(app)
    t.teardown(() => app.close())
    const first = await fetch(`http://127.0.0.1:${port}/files/a.txt`)
    t.equal(first.status, 200)
    const etag = first.headers.get('etag') as string
    // undici's request, not fetch: fetch adds Cache-Control: no-cache to a request with If-None-Match (Fetch standard, HTTP-network-or-cache fetch).
    const again = await request(`http://127.0.0.1:${port}/files/a.txt`, { headers: { 'if-none-match': etag } })
    t.equal(again.statusCode, status, profile)
    t.equal(again.headers['content-type'], undefined, 'a 304 gains no Content-Type')
    await again.body.dump()
  }
})

test('@fastify/cors: a real preflight allows the conventions\' headers; exposed headers reach the client', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(cors, { origin: 'https://app.example', exposedHeaders: ['ETag', 'IM', 'Delta-Base', 'Accept-Patch', 'WWW-Authenticate'], allowedHeaders: ['Content-Type', 'If-Match', 'If-None-Match', 'A-IM', 'Authorization'] })
  await app.register(httpConventions)
  app.put('/x', async () => 'ok')
  const port = await listen(app)
  t.teardown(() => app.close())
  const pre = await fetch(`http://127.0.0.1:${port}/x`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'if-match, content-type' } })
  t.equal(pre.status, 204)
  t.match(pre.headers.get('access-control-allow-headers'), /If-Match/)
  const put = await fetch(`http://127.0.0.1:${port}/x`, { method: 'PUT', headers: { origin: 'https://app.example', 'content-type': 'application/json' }, body: '{}' })
  t.equal(put.status, 200)
  t.match(put.headers.get('access-control-expose-headers'), /ETag/)
})

test('HTTP/2: every answer is well-formed, without a Connection header (no UnsupportedWarning)', async (t) => {
  const warnings: string[] = []
  const onWarning = (w: Error): void => { warnings.push(w.name) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const app = Fastify({ ...serverOptions, http2: true })
  await app.register(httpConventions, { auth: { realm: 'r', basic: { users: { a: 'b' } } }, redirect: { rules: [{ from: '/v1/', to: '/' }] } })
  app.get('/open', { config: { conditional: true } }, async () => 'open')
  app.post('/secret', { config: { auth: true } }, async () => 'secret')
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const session = http2.connect(`http://127.0.0.1:${port}`)
  t.teardown(() => session.close())
  const ask = (headers: http2.OutgoingHttpHeaders, body?: string): Promise<http2.IncomingHttpHeaders> => new Promise((resolve, reject) => {
    const req = session.request(headers)
    req.on('response', (h) => { req.resume(); req.on('end', () => resolve(h)) })
    req.on('error', reject)
    req.end(body)
  })
  const open = await ask({ ':path': '/open' })
  t.equal(open[':status'], 200)
  t.equal((await ask({ ':path': '/open', 'if-none-match': open.etag as string }))[':status'], 412)
  const secret = await ask({ ':path': '/secret', ':method': 'POST', 'content-type': 'application/json', 'content-length': '2' }, '{}')
  t.equal(secret[':status'], 401)
  t.ok(secret['www-authenticate'])
  t.equal((await ask({ ':path': '/v1/open' }))[':status'], 307)
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(warnings.includes('UnsupportedWarning'), 'no Connection header was set on an HTTP/2 answer')
})

test('@fastify/multipart: a 2 MB upload on a route that raises its own limit; the same upload elsewhere is refused before it is read', async (t) => {
  const { default: multipart } = await import('@fastify/multipart')
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  await app.register(multipart, { limits: { fileSize: 10 * 1024 * 1024 } })
  const handler = async (request: import('fastify').FastifyRequest): Promise<{ bytes: number }> => {
    const file = await request.file()
    const buffer = await file?.toBuffer()
    return { bytes: buffer?.length ?? 0 }
  }
  app.post('/upload', { config: { contentLength: { bodyLimit: 5 * 1024 * 1024 } } }, handler)
  app.post('/small', handler)
  const port = await listen(app)
  t.teardown(() => app.close())
  const form = (): FormData => {
    const f = new FormData()
    f.append('file', new Blob([Buffer.alloc(2 * 1024 * 1024, 97)]), 'big.bin')
    return f
  }
  const ok = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body: form() })
  t.equal(ok.status, 200)
  t.same(await ok.json(), { bytes: 2 * 1024 * 1024 })
  // The same upload on a route with the default limit: refused from its declared length, before
  // any byte of the body is sent (the client sends only the headers here).
  const refused = await rawRequest(port, `POST /small HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n`, { waitMs: 1500 })
  t.equal(refused.status, 411, 'over the 1 MiB default: 411 under the spec profile')
  t.equal(refused.headers.connection, 'close', 'and the connection closes after it, the body unread')
})
