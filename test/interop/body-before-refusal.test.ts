/**
 * The ordering rule (docs/architecture.md, "Where the suite's checks sit"): no byte of a
 * request body is read, inflated or parsed by anyone before the suite's refusals (401, 411,
 * 415): not by the app's own preParsing hook registered after the suite, not by
 * @fastify/compress's inflating stream in either registration order; and `100 Continue` only
 * once they passed. Observed over real sockets: the server's first 'data' or 'readable'
 * listener on the request (anyone starting to read the body) is recorded by an onRequest hook.
 */
import { test, type Test } from 'tap'
import { gzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import compress from '@fastify/compress'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { request } from 'undici'
import { rawRequest } from '../helpers/raw'
import { postExpecting } from '../helpers/expect-continue'

const ALICE = `Basic ${Buffer.from('alice:secret').toString('base64')}`

interface Seen { readStarted: string[], appHookRan: number, bytesTheAppRead: number }

/** Records, per request, whether anyone started reading its body (a 'data' or 'readable' listener on the raw request). */
function watchReads (app: FastifyInstance, seen: Seen): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    request.raw.on('newListener', (event) => {
      if (event === 'data' || event === 'readable') seen.readStarted.push(`${request.method} ${request.url}`)
    })
  })
}

async function build (t: Test, layout: 'app hook after the suite' | 'compress after the suite' | 'compress before the suite'): Promise<{ port: number, seen: Seen }> {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  const seen: Seen = { readStarted: [], appHookRan: 0, bytesTheAppRead: 0 }
  watchReads(app, seen)
  if (layout === 'compress before the suite') await app.register(compress, { global: true })
  await app.register(httpConventions, { auth: { realm: 'r', basic: { users: { alice: 'secret' } } }, contentLength: { bodyLimit: 1024 * 1024 } })
  if (layout === 'compress after the suite') await app.register(compress, { global: true })
  if (layout === 'app hook after the suite') {
    // The app's own preParsing hook that reads the whole body (a signature check, an audit log).
    app.addHook('preParsing', async (_request, _reply, payload) => {
      seen.appHookRan++
      const chunks: Buffer[] = []
      for await (const chunk of payload) chunks.push(chunk as Buffer)
      const body = Buffer.concat(chunks)
      seen.bytesTheAppRead += body.length
      const { Readable } = await import('node:stream')
      return Readable.from([body])
    })
  }
  app.post('/secret', { config: { auth: true } }, async (request) => ({ got: typeof request.body }))
  app.post('/json', { config: { contentType: { accept: ['application/json'] } } }, async (request) => ({ got: typeof request.body }))
  return { port: await listen(app), seen }
}

/** The head of a POST declaring `declared` bytes, sent alone: an answer that comes back was given without the body. */
function head (path: string, headers: Record<string, string>, declared: number): string {
  const lines = Object.entries({ host: 'x', 'content-length': String(declared), ...headers }).map(([k, v]) => `${k}: ${v}`).join('\r\n')
  return `POST ${path} HTTP/1.1\r\n${lines}\r\n\r\n`
}

async function post (port: number, path: string, headers: Record<string, string>, body: Buffer | string): Promise<number> {
  const res = await request(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers, body })
  await res.body.dump()
  return res.statusCode
}

for (const layout of ['app hook after the suite', 'compress after the suite', 'compress before the suite'] as const) {
  test(`no body is read before the suite's 401, 411 or 415 (${layout})`, async (t) => {
    const { port, seen } = await build(t, layout)
    const json = JSON.stringify({ pad: 'x'.repeat(200 * 1024) })
    const body = layout === 'app hook after the suite' ? json : gzipSync(json)
    const encoding: Record<string, string> = layout === 'app hook after the suite' ? {} : { 'content-encoding': 'gzip' }
    t.equal(await post(port, '/secret', { 'content-type': 'application/json', ...encoding }, body), 401, 'no credentials: 401')
    // Over the limit: only the head is sent (3 MiB declared); the answer comes without the body.
    const over = await rawRequest(port, head('/json', { 'content-type': 'application/json', ...encoding }, 3 * 1024 * 1024))
    t.equal(over.status, 411, 'over the limit: 411 before the body is sent')
    t.equal(await post(port, '/json', { 'content-type': 'text/csv', ...encoding }, body), 415, 'a media type the route does not accept: the suite\'s 415')
    t.same(seen.readStarted, [], 'nobody started reading any of these bodies')
    t.equal(seen.appHookRan, 0, 'the app\'s preParsing hook never ran for a refused request')
    t.equal(await post(port, '/secret', { 'content-type': 'application/json', authorization: ALICE, ...encoding }, body), 200, 'with credentials the body is read and parsed')
    t.same([...new Set(seen.readStarted)], ['POST /secret'], 'read once the suite let it through')
    if (layout === 'app hook after the suite') t.equal(seen.bytesTheAppRead, Buffer.byteLength(json), 'the app\'s hook read the accepted body')
  })
}

test('RFC 9110 10.1.1: an app\'s preParsing hook that reads the body gets no 100 (Continue) sent before the suite\'s 401', async (t) => {
  const { port, seen } = await build(t, 'app hook after the suite')
  const refused = await postExpecting(port, '/secret', 5, 'application/json')
  t.same([refused.statuses, refused.sentBody], [[401], false], '401 without a 100: the client never sends the body')
  t.equal(seen.appHookRan, 0)
})
