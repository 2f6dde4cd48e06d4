/**
 * Framing (conventions (Content-Length), (Content-Type)) and redirects (conventions
 * (Redirects); RFC 9110 15.4.8) of the client, over real sockets: against the reference
 * service in both profiles (under `spec` a chunked body is refused with 411, so a stream
 * that arrives is proof of its Content-Length), and against bare servers that record what
 * they were sent, for the headers, the hop bounds and the cross-origin rules.
 */
import { test } from 'tap'
import { Readable } from 'node:stream'
import { Agent, request } from 'undici'
import { startService, type RunningService } from '../../../test/helpers/service'
import { recorder } from '../../../test/helpers/client-peers'
import { framingInterceptor } from '../src/framing'
import { redirectInterceptor } from '../src/redirect'
import { authInterceptor } from '../src/auth'
import { createConventionsClient } from '../src/client'
import { ConventionsClientError, clientErrorCodes } from '../src/errors'

const BASIC = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
let n = 0
const articleText = (): string => JSON.stringify({ slug: `client-framing-${++n}`, title: 'T', body: 'B'.repeat(5000) })
/** A stream in many small chunks, as a file or a pipe gives it. */
const stream = (text: string): Readable => Readable.from(text.match(/[\s\S]{1,100}/g) as string[])

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`${profile}: Content-Length: a stream body is sent with its length, never chunked; without the interceptor it is sent chunked`, async (t) => {
    const svc: RunningService = await startService({ CONVENTIONS_PROFILE: profile })
    t.teardown(() => svc.stop())
    const framed = new Agent().compose(framingInterceptor())
    t.teardown(() => framed.close())
    const res = await framed.request({ origin: svc.url, path: '/articles', method: 'POST', headers: { 'content-type': 'application/json', authorization: BASIC }, body: stream(articleText()) })
    await res.body.dump()
    t.equal(res.statusCode, 201)
    const bare = await request(`${svc.url}/articles`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: BASIC }, body: stream(articleText()) })
    await bare.body.dump()
    t.equal(bare.statusCode, profile === 'spec' ? 411 : 201, 'the same stream unframed: 411 under spec')
  })
}

test('Content-Type: a body without one is sent with the default; the length is declared for text, bytes and streams', async (t) => {
  const server = await recorder((_req, res) => { res.writeHead(204).end() })
  t.teardown(() => server.close())
  const agent = new Agent().compose(framingInterceptor({ defaultContentType: 'text/plain; charset=utf-8' }))
  t.teardown(() => agent.close())
  for (const body of ['héllo', Buffer.from('héllo'), stream('héllo'), (async function * () { yield 'hé'; yield Buffer.from('llo') })()]) {
    const res = await agent.request({ origin: server.origin, path: '/', method: 'PUT', body: body as never, headers: [['transfer-encoding', 'chunked']] as never })
    await res.body.dump()
  }
  for (const r of server.requests) {
    t.equal(r.headers['content-length'], '6')
    t.equal(r.headers['transfer-encoding'], undefined)
    t.equal(r.headers['content-type'], 'text/plain; charset=utf-8')
    t.equal(r.body.toString(), 'héllo')
  }
  const typed = await agent.request({ origin: server.origin, path: '/', method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } })
  await typed.body.dump()
  t.equal(server.requests[4].headers['content-type'], 'application/json', 'a type given is kept')
  const empty = await agent.request({ origin: server.origin, path: '/', method: 'GET' })
  await empty.body.dump()
  t.equal(server.requests[5].headers['content-type'], undefined, 'no body, no type')
})

test('Content-Length: a stream over maxBufferBytes is refused before anything is sent (BODY_TOO_LARGE); a body of another kind is a TypeError', async (t) => {
  const server = await recorder((_req, res) => { res.writeHead(204).end() })
  t.teardown(() => server.close())
  const agent = new Agent().compose(framingInterceptor({ maxBufferBytes: 1000 }))
  t.teardown(() => agent.close())
  const err = await agent.request({ origin: server.origin, path: '/', method: 'POST', body: stream('x'.repeat(5000)) }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.BODY_TOO_LARGE)
  const form = new FormData()
  form.set('a', 'b')
  await t.rejects(agent.request({ origin: server.origin, path: '/', method: 'POST', body: form as never }), TypeError)
  t.equal(server.requests.length, 0, 'nothing reached the server')
  t.throws(() => framingInterceptor({ maxBufferBytes: -1 }), RangeError)
})

test('conventions (Redirects): a 307 is repeated with the same method and body (a stream kept for the repeat), through the reference service\'s /v1/', async (t) => {
  const svc = await startService()
  t.teardown(() => svc.stop())
  const agent = new Agent().compose(redirectInterceptor(), framingInterceptor())
  t.teardown(() => agent.close())
  const res = await agent.request({ origin: svc.url, path: '/v1/articles', method: 'POST', headers: { 'content-type': 'application/json', authorization: BASIC }, body: stream(articleText()) })
  const created = await res.body.json() as { slug: string, body: string }
  t.equal(res.statusCode, 201, 'created at /articles, the body sent twice')
  t.equal(created.body.length, 5000)
})

test('RFC 9110 15.4: a hop to another origin drops Authorization and Cookie; the auth interceptor answers the new origin only with its own credentials', async (t) => {
  const target = await recorder((req, res) => { res.writeHead(req.headers.authorization === undefined ? 401 : 200, { 'www-authenticate': 'Basic realm="b"' }).end('done') })
  t.teardown(() => target.close())
  const start = await recorder((req, res) => {
    if (req.url === '/same') res.writeHead(308, { location: '/landed' }).end()
    else if (req.url === '/landed') res.writeHead(200).end()
    else res.writeHead(307, { location: `${target.origin}/moved?x=1` }).end()
  })
  t.teardown(() => start.close())
  const agent = new Agent().compose(authInterceptor({ credentials: [{ origin: target.origin, username: 'b-user', password: 'b-pass' }] }), redirectInterceptor())
  t.teardown(() => agent.close())
  const res = await agent.request({ origin: start.origin, path: '/x', method: 'PUT', headers: { authorization: BASIC, cookie: 'sid=1', 'content-type': 'text/plain' }, body: 'payload' })
  t.equal(await res.body.text(), 'done')
  t.equal(start.requests[0].headers.authorization, BASIC, 'the first origin got the caller\'s header')
  t.equal(target.requests[0].headers.authorization, undefined, 'not carried to the other origin')
  t.equal(target.requests[0].headers.cookie, undefined)
  t.equal(target.requests[0].method, 'PUT')
  t.equal(target.requests[0].url, '/moved?x=1')
  t.equal(target.requests[0].body.toString(), 'payload', 'same method, same body')
  t.equal(target.requests[1].headers.authorization, 'Basic ' + Buffer.from('b-user:b-pass').toString('base64'), 'the new origin\'s own credentials, after its challenge')
  const same = await agent.request({ origin: start.origin, path: '/same', method: 'GET', headers: { authorization: BASIC } })
  await same.body.dump()
  t.equal(start.requests.at(-1)?.headers.authorization, BASIC, 'a hop within the origin keeps it')
})

test('bounded hops: one redirect more than maxRedirections is TOO_MANY_REDIRECTS; 301, 302, 303 and a 307 without Location are the caller\'s', async (t) => {
  const server = await recorder((req, res) => {
    const status = Number(new URL(req.url, 'http://x').searchParams.get('s') ?? 307)
    res.writeHead(status, req.url.includes('nowhere') ? {} : { location: `/loop?s=${status}&n=${Math.random()}` }).end()
  })
  t.teardown(() => server.close())
  const agent = new Agent().compose(redirectInterceptor({ maxRedirections: 2 }))
  t.teardown(() => agent.close())
  const err = await agent.request({ origin: server.origin, path: '/loop', method: 'POST', body: 'x' }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.TOO_MANY_REDIRECTS)
  t.equal(server.requests.length, 3)
  for (const s of [301, 302, 303]) {
    const res = await agent.request({ origin: server.origin, path: `/?s=${s}`, method: 'GET' })
    await res.body.dump()
    t.equal(res.statusCode, s)
  }
  const queried = await agent.request({ origin: server.origin, path: '/q', query: { s: '307', first: 'yes' }, method: 'GET' }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(queried.code, clientErrorCodes.TOO_MANY_REDIRECTS)
  t.match(server.requests.at(-1)?.url, /^\/loop\?s=307&n=[\d.]+$/, 'the Location is the whole target: the first query is not added to it')
  const none = await agent.request({ origin: server.origin, path: '/nowhere', method: 'GET' })
  await none.body.dump()
  t.equal(none.statusCode, 307)
  const kept = await agent.request({ origin: server.origin, path: '/loop?s=308', method: 'PUT', body: stream('kept for the repeat') }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(kept.code, clientErrorCodes.TOO_MANY_REDIRECTS)
  t.same(server.requests.slice(-3).map((r) => r.body.toString()), Array(3).fill('kept for the repeat'), 'a stream body is kept and sent at every hop')
  t.throws(() => redirectInterceptor({ maxRedirections: -1 }), RangeError)
  t.throws(() => redirectInterceptor({ maxBodyBytes: 1.5 }), RangeError)
})

test('a redirect to a scheme other than http(s) is an error; a stream over maxBodyBytes is refused; a body of another kind is a TypeError', async (t) => {
  const server = await recorder((req, res) => { res.writeHead(307, { location: req.url === '/ftp' ? 'ftp://example.com/' : '/' }).end() })
  t.teardown(() => server.close())
  const agent = new Agent().compose(redirectInterceptor({ maxBodyBytes: 10 }))
  t.teardown(() => agent.close())
  await t.rejects(agent.request({ origin: server.origin, path: '/ftp', method: 'GET' }), TypeError)
  const big = await agent.request({ origin: server.origin, path: '/', method: 'POST', body: stream('x'.repeat(100)) }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(big.code, clientErrorCodes.BODY_TOO_LARGE)
  const form = new FormData()
  form.set('a', 'b')
  await t.rejects(agent.request({ origin: server.origin, path: '/form', method: 'POST', body: form as never }), TypeError)
})

test('the facade follows a 307 write through the reference service and reports the final answer', async (t) => {
  const svc = await startService()
  t.teardown(() => svc.stop())
  const client = createConventionsClient({ credentials: [{ origin: svc.url, username: 'demo', password: 'demo-password' }] })
  t.teardown(() => client.close())
  const created = await client.create<{ id: string }>(`${svc.url}/v1/articles`, JSON.parse(articleText()))
  t.equal(created.status, 201)
  t.equal(created.location, `${svc.url}/articles/${created.body.id}`)
})
