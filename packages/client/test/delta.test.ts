/**
 * Delta encoding through the client (RFC 3229; conventions (Delta encoding)), over real
 * sockets against the reference service in both profiles ("not modified" is a 412 under
 * `spec`, a 304 under `rfc9110`): the caller always sees a 200 with the whole current
 * instance; bases are kept per user and bounded; what the interceptor does not take
 * passes untouched.
 */
import { test } from 'tap'
import { gzipSync } from 'node:zlib'
import { Agent, request } from 'undici'
import { startService, type RunningService } from '../../../test/helpers/service'
import { recorder } from '../../../test/helpers/client-peers'
import { deltaInterceptor, principalOf, type DeltaEvent } from '../src/delta'
import { DeltaClientError, BODY_TOO_LARGE } from '../src/delta-client'

const basic = (user: string): string => 'Basic ' + Buffer.from(`${user}:${user}-pw`).toString('base64')
const DEMO = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

async function createArticle (svc: RunningService, auth: string, slug: string): Promise<string> {
  const res = await request(`${svc.url}/articles`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: auth }, body: JSON.stringify({ slug, title: 'T', body: 'line one\n'.repeat(300) }) })
  return `${svc.url}${res.headers.location as string}`
}

async function edit (url: string, auth: string, title: string): Promise<void> {
  const res = await request(url, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json', authorization: auth }, body: JSON.stringify({ title }) })
  await res.body.dump()
}

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`${profile}: RFC 3229 10.5: after a change the client reads a 226 delta and the caller sees a 200 with the whole instance; unchanged, the kept one`, async (t) => {
    const svc = await startService({ CONVENTIONS_PROFILE: profile })
    t.teardown(() => svc.stop())
    const events: DeltaEvent[] = []
    const agent = new Agent().compose(deltaInterceptor({ onResponse: (e) => events.push(e) }))
    t.teardown(() => agent.close())
    const url = await createArticle(svc, DEMO, `delta-${profile}`)
    const get = async (): Promise<{ status: number, headers: Record<string, unknown>, article: { title: string } }> => {
      const res = await agent.request({ origin: new URL(url).origin, path: new URL(url).pathname, method: 'GET' })
      return { status: res.statusCode, headers: res.headers, article: await res.body.json() as { title: string } }
    }
    const first = await get()
    t.equal(first.status, 200, 'the first read came gzipped (226, IM: gzip), the caller sees it whole')
    await edit(url, DEMO, 'T2')
    const second = await get()
    t.equal(second.status, 200)
    t.equal(second.article.title, 'T2')
    t.equal(second.headers.im, undefined, 'no IM reaches the caller')
    t.equal(second.headers['delta-base'], undefined)
    const whole = await request(url)
    t.equal(second.headers.etag, whole.headers.etag)
    t.same(second.article, await whole.body.json(), 'exactly the current instance')
    const third = await get()
    t.equal(third.status, 200)
    t.equal(third.headers['content-type'], 'application/json; charset=utf-8', 'the kept instance with its own type')
    t.equal(third.article.title, 'T2')
    t.same(events.map((e) => [e.wireStatus, e.im, e.notModified]), [
      [226, ['gzip'], false],
      [226, ['vcdiff'], false],
      [profile === 'spec' ? 412 : 304, [], true]
    ])
    t.ok(events[1].wireBytes < events[1].bytes / 10, `the delta is small: ${events[1].wireBytes} of ${events[1].bytes} bytes`)
  })
}

test('bases per user: two users through one interceptor each get their own instance; a Digest user is one key whatever its nonce count', async (t) => {
  const svc = await startService({ AUTH_USERS: 'ann:ann-pw,bob:bob-pw' })
  t.teardown(() => svc.stop())
  const url = await createArticle(svc, basic('ann'), 'per-user')
  const seen: Array<{ auth: string | undefined, inm: string | undefined }> = []
  const spy = (dispatch: import('undici').Dispatcher.Dispatch): import('undici').Dispatcher.Dispatch => (opts, handler) => {
    const h = opts.headers as Record<string, string>
    seen.push({ auth: h.authorization, inm: h['if-none-match'] })
    return dispatch(opts, handler)
  }
  const agent = new Agent().compose(spy, deltaInterceptor())
  t.teardown(() => agent.close())
  const { origin, pathname } = new URL(url)
  for (const auth of [basic('ann'), basic('bob'), basic('ann')]) {
    const res = await agent.request({ origin, path: pathname, method: 'GET', headers: { authorization: auth } })
    await res.body.dump()
  }
  t.same(seen.map((s) => [s.auth, s.inm !== undefined]), [[basic('ann'), false], [basic('bob'), false], [basic('ann'), true]], 'ann\'s base is offered only with ann\'s credentials, and sent as they were')
  t.equal(principalOf('Digest username="ann", realm="r", nc=00000001, response="a"'), principalOf('Digest username="ann", realm="r", nc=00000002, response="b"'))
  t.not(principalOf('Digest username="ann", realm="r"'), principalOf('Digest username="bob", realm="r"'))
  t.equal(principalOf('Digest username*=UTF-8\'\'ann, realm="r"'), principalOf('Digest username*=UTF-8\'\'ann, realm="r", nc=00000009'))
  t.equal(principalOf('Digest nonce="x"'), principalOf('Digest nonce="y"'), 'no name: one anonymous key')
  t.equal(principalOf(basic('ann')), basic('ann'))
})

test('bounded: a body over maxInstanceBytes is refused while it is read (BODY_TOO_LARGE)', async (t) => {
  const server = await recorder((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', etag: '"a"' })
    res.write('x'.repeat(64 * 1024))
    res.end('x'.repeat(64 * 1024))
  })
  t.teardown(() => server.close())
  const agent = new Agent().compose(deltaInterceptor({ maxInstanceBytes: 1000 }))
  t.teardown(() => agent.close())
  const err = await agent.request({ origin: server.origin, path: '/', method: 'GET' }).catch((e: unknown) => e) as DeltaClientError
  t.ok(err instanceof DeltaClientError)
  t.equal(err.code, BODY_TOO_LARGE)
})

test('what the interceptor does not take passes untouched: a body, its own A-IM, If-None-Match or Range, HEAD, POST', async (t) => {
  const server = await recorder((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain', etag: '"a"' }).end('hello') })
  t.teardown(() => server.close())
  const agent = new Agent().compose(deltaInterceptor())
  t.teardown(() => agent.close())
  const sent: Array<Parameters<Agent['request']>[0]> = [
    { origin: server.origin, path: '/', method: 'GET', headers: { 'a-im': 'gzip' } },
    { origin: server.origin, path: '/', method: 'GET', headers: { 'if-none-match': '"a"' } },
    { origin: server.origin, path: '/', method: 'GET', headers: { range: 'bytes=0-1' } },
    { origin: server.origin, path: '/', method: 'HEAD' },
    { origin: server.origin, path: '/', method: 'POST', body: 'x' }
  ]
  for (const opts of sent) await (await agent.request(opts)).body.dump()
  t.same(server.requests.map((r) => r.headers['a-im'] ?? null), ['gzip', null, null, null, null], 'only the caller\'s own A-IM')
  for (const n of [1, 2]) await (await agent.request({ origin: server.origin, path: '/q', query: { n }, method: 'GET' })).body.dump()
  t.same(server.requests.slice(-2).map((r) => [r.url, r.headers['if-none-match']]), [['/q?n=1', undefined], ['/q?n=2', undefined]], 'a query given apart is part of the URL an instance is kept for')
  const taken = await agent.request({ origin: server.origin, path: '/plain', method: 'GET', headers: { 'x-multi': ['a', 'b'] } })
  t.equal(await taken.body.text(), 'hello')
  t.equal(server.requests.at(-1)?.headers['a-im'], 'vcdiff, gzip', 'a plain GET is taken')
  t.equal(server.requests.at(-1)?.headers['x-multi'], 'a, b', 'with the caller\'s headers')
})

test('a 226 of gzip alone, an answer other than 200 and a 412 whose instance type is unknown reach the caller as they should', async (t) => {
  let version = 0
  const server = await recorder((req, res) => {
    if (req.url === '/missing') return res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[]}')
    if (req.headers['if-none-match'] === `"v${version}"` || req.headers['if-none-match'] === '"u"') return res.writeHead(412, { 'content-type': 'application/json', etag: req.headers['if-none-match'] }).end('{}')
    if (req.url === '/untyped') return res.writeHead(200, ['etag', '"u"', 'vary', 'accept', 'vary', 'accept-language']).end('no type')
    res.writeHead(226, { im: 'gzip', etag: `"v${version}"`, 'content-type': 'text/plain', 'x-other': 'kept' }).end(gzipSync(`version ${version}`))
  })
  t.teardown(() => server.close())
  const agent = new Agent().compose(deltaInterceptor({ maxEntries: 1 }))
  t.teardown(() => agent.close())
  const read = async (path: string): Promise<[number, unknown, unknown, string]> => {
    const res = await agent.request({ origin: server.origin, path, method: 'GET' })
    return [res.statusCode, res.headers['content-type'], res.headers['x-other'], await res.body.text()]
  }
  t.same(await read('/a'), [200, 'text/plain', 'kept', 'version 0'])
  t.same(await read('/a'), [200, 'text/plain', undefined, 'version 0'], 'not modified: the kept instance with its type')
  t.same(await read('/missing'), [404, 'application/json', undefined, '{"errors":[]}'])
  t.same(await read('/b'), [200, 'text/plain', 'kept', 'version 0'], 'a second URL: the first one\'s type is dropped (maxEntries 1)')
  t.same(await read('/a'), [200, 'text/plain', 'kept', 'version 0'], 'and so is its instance: read whole again')
  version = 1
  t.same(await read('/b'), [200, 'text/plain', 'kept', 'version 1'])
  t.same(await read('/untyped'), [200, undefined, undefined, 'no type'])
  t.same(await read('/untyped'), [200, undefined, undefined, 'no type'], 'not modified, no type known: none, not the 412\'s')
})

test('the caller aborts a GET the interceptor took: the request under way is aborted and the caller gets the reason', async (t) => {
  let arrived!: () => void
  const reached = new Promise<void>((resolve) => { arrived = resolve })
  const server = await recorder(() => { arrived() }) // never answers
  t.teardown(() => server.close())
  const agent = new Agent().compose(deltaInterceptor())
  t.teardown(() => agent.destroy())
  const controller = new AbortController()
  const pending = agent.request({ origin: server.origin, path: '/slow', method: 'GET', signal: controller.signal })
  await reached
  controller.abort(new Error('caller gave up'))
  await t.rejects(pending, /caller gave up/)
  const early = new AbortController()
  early.abort(new Error('before'))
  await t.rejects(agent.request({ origin: server.origin, path: '/never', method: 'GET', signal: early.signal }), /before/)
  const late = new AbortController()
  const quick = await recorder((_req, res) => { res.writeHead(200, { etag: '"q"' }).end('q') })
  t.teardown(() => quick.close())
  const giving = new Agent().compose(deltaInterceptor({ onResponse: () => late.abort(new Error('late')) }))
  t.teardown(() => giving.close())
  await t.rejects(giving.request({ origin: quick.origin, path: '/', method: 'GET', signal: late.signal }), /late/, 'given up once the instance was known')
})
