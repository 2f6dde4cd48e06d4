/**
 * The client's authentication (RFC 9110 11, RFC 7616, RFC 6750, RFC 7617) over real sockets:
 * against the reference service (Digest SHA-256 and MD5, Basic, Bearer offered), against
 * an app of the suite for what the service does not offer (SHA-512-256, -sess, userhash, a
 * clock for stale nonces, Basic alone, one challenge line), and against a bare server of
 * another origin. No message, event or service log carries a credential.
 */
import { test, type Test } from 'tap'
import { Agent } from 'undici'
import { startService, type RunningService } from '../../../test/helpers/service'
import { recorder, thingsApp, type ThingsApp } from '../../../test/helpers/client-peers'
import { createConventionsClient, type ConventionsClient } from '../src/client'
import { authInterceptor, digestAuthorization, isReplayable, type AuthEvent } from '../src/auth'
import { ConventionsClientError, clientErrorCodes } from '../src/errors'
import type { DigestAlgorithm } from '../../../lib/auth/digest'

const PASSWORD = 'demo-password'
const SECRETS = [PASSWORD, 'demo-write-token', 'demo-read-token', Buffer.from(`demo:${PASSWORD}`).toString('base64'), 'pw-of-josé']

let svc: RunningService
let n = 0
const article = (): Record<string, unknown> => ({ slug: `client-auth-${++n}`, title: 'T', body: 'B' })

function clientFor (origin: string, credentials: Parameters<typeof createConventionsClient>[0] = {}): { client: ConventionsClient, events: AuthEvent[] } {
  const events: AuthEvent[] = []
  const client = createConventionsClient({ delta: false, ...credentials, onEvent: (e) => { if (e.type === 'challenge-answered') events.push(e) } })
  return { client, events }
}

function noSecret (t: Test, text: string, what: string): void {
  for (const s of SECRETS) t.notOk(text.includes(s), `${what} carries no credential`)
}

test('start the reference service', async () => { svc = await startService() })

test('RFC 7616: of Digest SHA-256, Digest MD5, Basic and Bearer the client answers Digest SHA-256, then sends the nonce again with the next count', async (t) => {
  const { client, events } = clientFor(svc.url, { credentials: [{ origin: svc.url, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  for (let i = 0; i < 3; i++) t.equal((await client.create(`${svc.url}/articles`, article())).status, 201)
  t.same(events, [{ type: 'challenge-answered', origin: svc.url, scheme: 'digest', algorithm: 'SHA-256', reason: 'challenge' }], 'one challenge answered for three writes')
  noSecret(t, JSON.stringify(events), 'the events')
})

test('RFC 7616 3.4.5: a wrong password is UNAUTHORIZED after one answer, and the message names no credential', async (t) => {
  const { client, events } = clientFor(svc.url, { credentials: [{ origin: svc.url, username: 'demo', password: 'pw-of-josé' }] })
  t.teardown(() => client.close())
  const err = await client.create(`${svc.url}/articles`, article()).catch((e: unknown) => e) as ConventionsClientError
  t.ok(err instanceof ConventionsClientError)
  t.equal(err.code, clientErrorCodes.UNAUTHORIZED)
  t.equal(err.status, 401)
  t.equal(events.length, 1, 'one challenge answered, no loop')
  noSecret(t, err.message + JSON.stringify(err), 'the error')
})

test('RFC 6750: a refused Bearer token is refreshed once from the provider, then kept for the next requests', async (t) => {
  const asked: boolean[] = []
  const { client, events } = clientFor(svc.url, {
    credentials: [{ origin: svc.url, token: ({ refresh }) => { asked.push(refresh); return refresh ? 'demo-write-token' : 'expired-token' } }]
  })
  t.teardown(() => client.close())
  t.equal((await client.create(`${svc.url}/articles`, article())).status, 201)
  t.equal((await client.create(`${svc.url}/articles`, article())).status, 201)
  t.same(asked, [false, true], 'asked for a token, then for a fresh one after the 401, then never again')
  t.same(events.map((e) => [e.scheme, e.reason]), [['bearer', 'challenge'], ['bearer', 'refresh']])
})

test('RFC 6750 3.1: a token without the scope is UNAUTHORIZED after the one refresh', async (t) => {
  let asked = 0
  const { client } = clientFor(svc.url, { credentials: [{ origin: svc.url, token: () => { asked++; return 'demo-read-token' } }] })
  t.teardown(() => client.close())
  const err = await client.create(`${svc.url}/articles`, article()).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNAUTHORIZED)
  t.equal(asked, 2)
  noSecret(t, err.message, 'the error')
})

test('RFC 6750 2.1: a provider value that is no token is refused with CREDENTIALS, unsent and unshown', async (t) => {
  const { client } = clientFor(svc.url, { credentials: [{ origin: svc.url, token: async () => 'not a token\r\n' }] })
  t.teardown(() => client.close())
  const err = await client.create(`${svc.url}/articles`, article()).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.CREDENTIALS)
  t.notMatch(err.message, /not a token\r/)
})

test('a request that carries its own Authorization is left alone', async (t) => {
  const { client, events } = clientFor(svc.url, { credentials: [{ origin: svc.url, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  const own = 'Basic ' + Buffer.from('demo:nope').toString('base64')
  const err = await client.create(`${svc.url}/articles`, article(), { headers: { Authorization: own } }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNAUTHORIZED)
  t.equal(events.length, 0)
})

test('RFC 6454: credentials go only to their origin; a 401 from another origin is not answered', async (t) => {
  const other = await recorder((_req, res) => { res.writeHead(401, { 'www-authenticate': 'Basic realm="x", Digest realm="x", qop="auth", nonce="n", algorithm=SHA-256' }).end() })
  t.teardown(() => other.close())
  const { client, events } = clientFor(svc.url, { credentials: [{ origin: svc.url, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  const err = await client.create(`${other.origin}/articles`, article()).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNAUTHORIZED)
  t.equal(other.requests.length, 1, 'asked once, never answered')
  t.equal(other.requests[0].headers.authorization, undefined)
  t.equal(events.length, 0)
})

test('stop the reference service (its logs carry no credential)', async (t) => {
  t.equal(await svc.stop(), 0)
})

async function thingsWith (t: Test, digest: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<ThingsApp> {
  const things = await thingsApp({ suite: { auth: { realm: 'things', digest: { secret: 'k'.repeat(32), users: { demo: PASSWORD, josé: 'pw-of-josé' }, ...digest }, ...extra } } })
  t.teardown(() => things.app.close())
  things.things.set('a', { doc: { name: 'a', count: 0 }, version: 1 })
  return things
}

for (const [offered, expected] of [
  [['SHA-512-256', 'SHA-256', 'MD5'], 'SHA-512-256'],
  [['SHA-512-256-sess', 'MD5-sess'], 'SHA-512-256-sess'],
  [['SHA-256-sess'], 'SHA-256-sess'],
  [['MD5', 'MD5-sess'], 'MD5'],
  [['MD5-sess'], 'MD5-sess']
] as Array<[DigestAlgorithm[], DigestAlgorithm]>) {
  test(`RFC 7616 3.2: offered ${offered.join(', ')}, the client answers ${expected} and the write is accepted`, async (t) => {
    const things = await thingsWith(t, { algorithms: offered })
    const { client, events } = clientFor(things.origin, { credentials: [{ origin: things.origin, username: 'demo', password: PASSWORD }] })
    t.teardown(() => client.close())
    t.equal((await client.put(things.url('a'), { name: 'a', count: 1 })).status, 200)
    t.equal((await client.put(things.url('a'), { name: 'a', count: 2 })).status, 200, 'the next nonce count on the same nonce')
    t.same(events.map((e) => e.algorithm), [expected])
  })
}

test('RFC 7616 3.4.4: userhash=true is answered with H(username:realm), and a name outside ASCII with username* (RFC 8187)', async (t) => {
  const things = await thingsWith(t, { algorithms: ['SHA-256'], userhash: true })
  const { client } = clientFor(things.origin, { credentials: [{ origin: things.origin, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  t.equal((await client.put(things.url('a'), { name: 'a', count: 1 })).status, 200)
  const plain = await thingsWith(t, { algorithms: ['SHA-256'] })
  const { client: jose } = clientFor(plain.origin, { credentials: [{ origin: plain.origin, username: 'jose\u0301', password: 'pw-of-josé' }] })
  t.teardown(() => jose.close())
  t.equal((await jose.put(plain.url('a'), { name: 'a', count: 1 })).status, 200, 'the NFD name is sent in NFC, as username*')
})

test('RFC 7616 3.3: a stale nonce (stale=true) is answered once with the fresh nonce, without a new challenge round', async (t) => {
  let clock = Date.UTC(2030, 0, 1)
  const things = await thingsWith(t, { algorithms: ['SHA-256'], nonceTtlMs: 1000, now: () => clock })
  const { client, events } = clientFor(things.origin, { credentials: [{ origin: things.origin, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  t.equal((await client.put(things.url('a'), { name: 'a', count: 1 })).status, 200)
  clock += 5000
  t.equal((await client.put(things.url('a'), { name: 'a', count: 2 })).status, 200, 'the expired nonce is replaced')
  t.same(events.map((e) => e.reason), ['challenge', 'stale'])
})

test('RFC 7617: Basic when it is the only scheme offered; RFC 9110 11.6.1: several challenges on one line are told apart', async (t) => {
  const things = await thingsApp({ suite: { auth: { realm: 'things', basic: { users: { demo: PASSWORD } }, bearer: { verify: () => null }, challengeLines: 'single' } } })
  t.teardown(() => things.app.close())
  things.things.set('a', { doc: { name: 'a', count: 0 }, version: 1 })
  const { client, events } = clientFor(things.origin, { credentials: [{ origin: things.origin, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  t.equal((await client.put(things.url('a'), { name: 'a', count: 1 })).status, 200)
  t.equal((await client.put(things.url('a'), { name: 'a', count: 2 })).status, 200)
  t.same(events.map((e) => e.scheme), ['basic'], 'Basic, then sent at once')
})

test('a 401 whose challenges the client cannot answer is the caller\'s (no qop=auth, unknown algorithm, no credentials for the scheme)', async (t) => {
  const server = await recorder((_req, res) => {
    res.writeHead(401, { 'www-authenticate': ['Digest realm="r", nonce="n", qop="auth-int"', 'Digest realm="r", nonce="n", qop="auth", algorithm=SHA-1', 'Digest nonce="n", qop="auth"', 'Bearer realm="r"', 'Newauth xyz=='] }).end()
  })
  t.teardown(() => server.close())
  const { client, events } = clientFor(server.origin, { credentials: [{ origin: server.origin, username: 'demo', password: PASSWORD }] })
  t.teardown(() => client.close())
  const err = await client.get(`${server.origin}/x`).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNAUTHORIZED)
  t.equal(events.length, 0)
  t.equal(server.requests.length, 1)
})

test('a stream body cannot be sent twice: its 401 is the caller\'s', async (t) => {
  const server = await recorder((_req, res) => { res.writeHead(401, { 'www-authenticate': 'Basic realm="r"' }).end() })
  t.teardown(() => server.close())
  const agent = new Agent().compose(authInterceptor({ credentials: [{ origin: server.origin, username: 'u', password: 'p' }] }))
  t.teardown(() => agent.close())
  const { Readable } = await import('node:stream')
  const res = await agent.request({ origin: server.origin, path: '/', method: 'POST', body: Readable.from([Buffer.from('x')]) })
  await res.body.dump()
  t.equal(res.statusCode, 401)
  t.equal(server.requests.length, 1)
  t.ok(isReplayable('x') && isReplayable(null) && !isReplayable(Readable.from([])))
})

test('credentials are checked when the interceptor is made', async (t) => {
  t.throws(() => authInterceptor({ credentials: [{ origin: 'ftp://x', username: 'a', password: 'b' }] }), TypeError)
  t.throws(() => authInterceptor({ credentials: [{ origin: 'http://x', username: 'a:b', password: 'b' }] }), TypeError)
  t.throws(() => authInterceptor({ credentials: [{ origin: 'http://x', username: 1 as unknown as string, password: 'b' }] }), TypeError)
  t.throws(() => authInterceptor({ credentials: [{ origin: 'http://x', token: 'abc' as unknown as () => string }] }), TypeError)
  const value = digestAuthorization({ algorithm: 'MD5', hash: 'MD5', realm: 'r', nonce: 'n', opaque: undefined, userhash: false, nc: 0, rank: 1 }, { origin: 'http://x', username: 'a"b', password: 'p' }, 'GET', '/')
  t.match(value, /^Digest username\*=UTF-8''a%22b, realm="r", uri="\/", algorithm=MD5, nonce="n", nc=00000001, /)
  t.notMatch(value, /opaque/)
})
