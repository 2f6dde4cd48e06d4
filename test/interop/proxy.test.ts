/**
 * @fastify/http-proxy and @fastify/reply-from beside the suite, in both registration
 * orders, over real sockets: an upstream Fastify server that echoes what it received, and
 * the proxying app. What a user gets: the app boots, requests and their payloads reach the
 * upstream (http-proxy streams the body as it came; reply-from sends the body the suite
 * parsed), and the suite's conventions hold on routes declared after it. docs/plugins.md
 * (Proxies) describes the same set-ups.
 */
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import proxy from '@fastify/http-proxy'
import replyFrom from '@fastify/reply-from'
import { request } from 'undici'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'

const ORDERS = ['proxy first', 'suite first'] as const
type Order = (typeof ORDERS)[number]
const USERS = { demo: 'demo-password' }
const GOOD = `Basic ${Buffer.from('demo:demo-password').toString('base64')}`

interface Seen { method: string, url: string, contentType: string | null, body: string }

/** An upstream that answers every request with what it received, the body as its bytes. */
async function upstream (t: Test): Promise<{ url: string, seen: Seen[] }> {
  const up = Fastify()
  const seen: Seen[] = []
  up.removeAllContentTypeParsers()
  up.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => { done(null, body) })
  up.all('/*', async (request) => {
    const s = { method: request.method, url: request.url, contentType: request.headers['content-type'] ?? null, body: (request.body as string | undefined) ?? '' }
    seen.push(s)
    return s
  })
  const port = await listen(up)
  t.teardown(() => up.close())
  return { url: `http://127.0.0.1:${port}`, seen }
}

/** The proxying app: the suite and the proxy plugin in `order`, routes declared after both. */
async function proxyingApp (t: Test, kind: 'http-proxy' | 'reply-from', order: Order, base: string, opts: HttpConventionsOptions = {}, proxyPayloads = true): Promise<number> {
  const app: FastifyInstance = Fastify(serverOptions)
  t.teardown(() => app.close())
  const other = async (): Promise<void> => {
    if (kind === 'http-proxy') await app.register(proxy, { upstream: base, prefix: '/api', proxyPayloads })
    else await app.register(replyFrom, { base })
  }
  if (order === 'proxy first') await other()
  await app.register(httpConventions, opts)
  if (order === 'suite first') await other()
  if (kind === 'reply-from') {
    app.all('/api/*', async (request, reply) => reply.from(request.url.slice('/api'.length)))
  }
  return await listen(app)
}

async function send (port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number, json: unknown, corp: unknown }> {
  const res = await request(`http://127.0.0.1:${port}${path}`, { method, body, headers })
  const text = await res.body.text()
  let json: unknown = text
  try { json = JSON.parse(text) } catch {}
  return { status: res.statusCode, json, corp: res.headers['cross-origin-resource-policy'] }
}

for (const kind of ['http-proxy', 'reply-from'] as const) {
  for (const order of ORDERS) {
    test(`${kind} (${order}): the app boots, and requests reach the upstream with their payloads`, async (t) => {
      const up = await upstream(t)
      const port = await proxyingApp(t, kind, order, up.url)
      const got = await send(port, 'GET', '/api/articles/1')
      t.same([got.status, got.json], [200, { method: 'GET', url: '/articles/1', contentType: null, body: '' }], 'a GET')
      const json = '{ "title": "a proxied article" }'
      const posted = await send(port, 'POST', '/api/articles', json, { 'content-type': 'application/json' })
      t.equal(posted.status, 200, 'a POST of JSON')
      const sent = posted.json as Seen
      t.equal(sent.contentType, 'application/json')
      if (kind === 'http-proxy') t.equal(sent.body, json, 'the JSON body as it came, byte for byte (the proxy streams it)')
      else t.same(JSON.parse(sent.body), JSON.parse(json), 'the JSON body the suite parsed, sent again')
      const text = await send(port, 'PUT', '/api/articles/1/notes', 'plain words', { 'content-type': 'text/plain' })
      t.same([text.status, (text.json as Seen).body], [200, 'plain words'], 'a text body')
      t.equal(up.seen.length, 3, 'each request reached the upstream once')
    })
  }

  test(`${kind} (suite first): the proxied routes are the suite's: 411 without a length, 401 under protect, then proxied`, async (t) => {
    const up = await upstream(t)
    const port = await proxyingApp(t, kind, 'suite first', up.url, { auth: { realm: 'api', protect: true, basic: { users: USERS } } })
    const chunked = await rawRequest(port, 'POST /api/articles HTTP/1.1\r\nHost: x\r\nAuthorization: ' + GOOD + '\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n')
    t.equal(chunked.status, 411, 'RFC 9112 6: a body without Content-Length')
    const anonymous = await send(port, 'POST', '/api/articles', '{}', { 'content-type': 'application/json' })
    t.same([anonymous.status, anonymous.corp], [401, 'same-origin'], 'no credentials: 401, with the resource policy')
    const signed = await send(port, 'POST', '/api/articles', '{"a":1}', { 'content-type': 'application/json', authorization: GOOD })
    t.same([signed.status, signed.corp], [200, 'same-origin'], 'with them: proxied, with the resource policy')
    t.same(up.seen.map((s) => s.body), ['{"a":1}'], 'only the request the suite let through reached the upstream')
  })
}

test('http-proxy (proxy first) under auth.protect: its routes were declared before the suite, which cannot protect them: 500, never proxied', async (t) => {
  const up = await upstream(t)
  const port = await proxyingApp(t, 'http-proxy', 'proxy first', up.url, { auth: { realm: 'api', protect: true, basic: { users: USERS } } })
  const res = await send(port, 'POST', '/api/articles', '{"a":1}', { 'content-type': 'application/json', authorization: GOOD })
  t.equal(res.status, 500, 'fail closed: register the proxy after the suite')
  t.match(res.json, { errors: [{ field: 'route' }] })
  t.same(up.seen, [], 'the upstream never saw it')
})

test('http-proxy with proxyPayloads: false (suite first): the suite\'s parsers read the body, checked, and the proxy sends it on', async (t) => {
  const up = await upstream(t)
  const port = await proxyingApp(t, 'http-proxy', 'suite first', up.url, {}, false)
  const posted = await send(port, 'POST', '/api/articles', '{ "title": "a" }', { 'content-type': 'application/json' })
  t.equal(posted.status, 200)
  t.same(JSON.parse((posted.json as Seen).body), { title: 'a' }, 'the JSON the suite parsed')
  const broken = await send(port, 'POST', '/api/articles', '{ "title": ', { 'content-type': 'application/json' })
  t.same([broken.status, broken.json], [400, { errors: [{ field: 'body', message: (broken.json as { errors: Array<{ message: string }> }).errors[0].message }] }], 'a body that is no JSON: the suite\'s 400, in the envelope')
  t.equal(up.seen.length, 1, 'never proxied')
})
