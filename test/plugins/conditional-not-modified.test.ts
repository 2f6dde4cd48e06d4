/**
 * docs/conventions.md (Conditional requests): a GET/HEAD whose If-None-Match or
 * If-Modified-Since says "not modified" on a route with a validators provider is answered 412
 * before the handler runs, as a normal answer: the same envelope and ETag as every 412, the
 * app's onSend hooks see it, no error handler does. A failed write precondition stays an error.
 */
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import type { HttpConventionsOptions } from '../../plugins/index'

const ETAG = 'v7'
const MODIFIED = Date.UTC(2024, 0, 15, 12, 45, 26)

interface Seen { handler: number, errors: unknown[], onSend: number[] }

async function build (opts: HttpConventionsOptions = {}): Promise<{ app: FastifyInstance, seen: Seen }> {
  const seen: Seen = { handler: 0, errors: [], onSend: [] }
  const app = await buildApp(opts)
  app.setErrorHandler(function appHandler (err, _request, reply) {
    seen.errors.push(err)
    return reply.send(err)
  })
  // Another plugin's hook (CORS headers, metrics) sees every answer, this one included.
  app.addHook('onSend', async function neighbour (_request, reply, payload) {
    seen.onSend.push(reply.statusCode)
    reply.header('x-neighbour', 'seen')
    return payload
  })
  const validators = (): { etag: string, lastModified: number } => ({ etag: ETAG, lastModified: MODIFIED })
  app.get('/doc', { config: { conditional: { validators } } }, async () => {
    seen.handler++
    return { title: 'a document' }
  })
  app.put('/doc', { config: { conditional: { validators } } }, async () => {
    seen.handler++
    return { title: 'replaced' }
  })
  await app.ready()
  return { app, seen }
}

test('conventions (Conditional requests): If-None-Match matching the provider\'s ETag is 412 in the envelope, before the handler, not an error', async (t) => {
  const { app, seen } = await build()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc', headers: { 'if-none-match': `"${ETAG}"` } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers['content-type'], 'application/json')
  t.equal(res.headers.etag, `"${ETAG}"`, 'the current ETag')
  t.same(res.json(), { errors: [{ field: 'If-None-Match', message: 'not modified: the current entity-tag matches If-None-Match' }] })
  t.equal(res.headers['content-length'], String(res.rawPayload.length))
  t.equal(seen.handler, 0, 'the handler never ran')
  t.same(seen.errors, [], 'no error handler saw it: a normal answer')
  t.same(seen.onSend, [412], 'the app\'s onSend hook saw it')
  t.equal(res.headers['x-neighbour'], 'seen')
})

test('conventions (Conditional requests): If-Modified-Since not older than Last-Modified is 412 with field If-Modified-Since', async (t) => {
  const { app, seen } = await build()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc', headers: { 'if-modified-since': new Date(MODIFIED).toUTCString() } })
  t.equal(res.statusCode, 412)
  t.same(res.json(), { errors: [{ field: 'If-Modified-Since', message: 'not modified since If-Modified-Since' }] })
  t.equal(seen.handler, 0)
  t.same(seen.errors, [])
})

test('RFC 9457 3: under the rfc9110 profile, a client that prefers problem details gets the "not modified" 412 as problem details, with Vary: Accept', async (t) => {
  const { app } = await build({ profile: 'rfc9110', conditional: { notModifiedStatus: 412 } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc?x=1', headers: { 'if-none-match': `"${ETAG}"`, accept: 'application/problem+json' } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.equal(res.headers.vary, 'Accept', 'RFC 9110 12.5.5: the media type was chosen by Accept')
  t.match(res.json(), { status: 412, title: 'Precondition Failed', instance: '/doc', errors: [{ field: 'If-None-Match' }] })
})

test('conventions (errors): under the spec profile the "not modified" 412 is application/json whatever Accept says, without Vary', async (t) => {
  const { app } = await build()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc', headers: { 'if-none-match': `"${ETAG}"`, accept: 'application/problem+json' } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers['content-type'], 'application/json')
  t.equal(res.headers.vary, undefined, 'nothing in this answer depends on Accept')
  t.same(res.json(), { errors: [{ field: 'If-None-Match', message: 'not modified: the current entity-tag matches If-None-Match' }] })
})

test('errorFormat problem: the "not modified" 412 is problem details for every client', async (t) => {
  const { app } = await build({ errorFormat: 'problem' })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc', headers: { 'if-none-match': `"${ETAG}"` } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.match(res.json(), { status: 412, instance: '/doc', errors: [{ field: 'If-None-Match' }] })
})

test('RFC 9110 9.3.2: HEAD gets the 412\'s header fields without its content, over a real socket', async (t) => {
  const { app, seen } = await build()
  t.teardown(() => app.close())
  const port = await listen(app)
  const get = await app.inject({ url: '/doc', headers: { 'if-none-match': `"${ETAG}"` } })
  // Two requests on one connection: a body byte after the HEAD's head would corrupt the second response.
  const head = await rawRequest(port, `HEAD /doc HTTP/1.1\r\nHost: x\r\nIf-None-Match: "${ETAG}"\r\n\r\nGET /doc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { responses: 2 })
  t.equal(head.status, 412)
  t.equal(head.headers.etag, `"${ETAG}"`)
  t.equal(head.headers['content-length'], get.headers['content-length'], 'the length the GET would have')
  t.match(head.raw, /\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'the next response follows the HEAD\'s head directly')
  t.match(head.raw, /\{"title":"a document"\}$/)
  t.equal(seen.handler, 1, 'only the unconditional GET ran the handler')
})

test('RFC 9110 13.1.1: a failed If-Match on PUT is still refused with 412 before the write', async (t) => {
  const { app, seen } = await build()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PUT', url: '/doc', headers: { 'if-match': '"old"', 'content-type': 'application/json' }, payload: '{}' })
  t.equal(res.statusCode, 412)
  t.match(res.json(), { errors: [{ field: 'If-Match' }] })
  t.equal(seen.handler, 0, 'the write never ran')
})

test('RFC 9110 13.2.2: If-None-Match that does not match goes on to the handler and its 200', async (t) => {
  const { app, seen } = await build()
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/doc', headers: { 'if-none-match': '"other"' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.etag, `"${ETAG}"`)
  t.equal(seen.handler, 1)
})
