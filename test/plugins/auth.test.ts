/**
 * The auth plugin (docs/conventions.md (Authentication (401 with WWW-Authenticate)); RFC 9110 11, RFC 7617, RFC 6750,
 * RFC 7616): each test is named after the rule it proves.
 */
import { test } from 'tap'
import type { Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { boot, buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import { answer, authorization, challengeParams } from '../lib/auth/digest-client'
import {
  httpConventionsAuth, type AuthOptions, type AuthPrincipal, type HttpConventionsOptions
} from '../../plugins/index'
import { conventionResponses } from '../../plugins/entries/openapi'
import { MemoryNonceStore } from '../../plugins/entries/stores'
import type { NonceCountStore } from '../../lib/io/stores/nonce-store'
import { digestHa1 } from '../../lib/auth/digest'

const SECRET = 'plugin-test-secret-plugin-test-secret!!'
const basicOf = (user: string, password: string): string => 'Basic ' + Buffer.from(`${user}:${password}`, 'utf8').toString('base64')
const DEMO = basicOf('demo', 'demo-pass')

const TOKENS: Record<string, { subject: string, scopes: string[], expiresAt?: number | Date }> = {
  'w-token': { subject: 'writer', scopes: ['read', 'write'] },
  'r-token': { subject: 'reader', scopes: ['read'] },
  'old-token': { subject: 'late', scopes: ['read', 'write'], expiresAt: Date.now() - 1000 },
  'old-date': { subject: 'late', scopes: ['read', 'write'], expiresAt: new Date(Date.now() - 1000) },
  'new-token': { subject: 'fresh', scopes: 'read write' as unknown as string[], expiresAt: Date.now() + 3600_000 },
  'odd-scopes': { subject: 'odd', scopes: 5 as unknown as string[] }
}

function authOptions (extra: Partial<AuthOptions> = {}): Omit<AuthOptions, 'profile'> {
  return {
    realm: 'test',
    digest: { secret: SECRET, algorithms: ['SHA-256', 'MD5', 'SHA-512-256'], users: { demo: 'demo-pass', reader: { password: 'reader-pass', scopes: ['read'] } }, scopes: ['read', 'write'] },
    basic: { users: { demo: 'demo-pass', reader: { password: 'reader-pass', scopes: ['read'] } }, scopes: ['read', 'write'] },
    bearer: { verify: (token) => TOKENS[token] ?? null },
    ...extra
  }
}

/** An app with the umbrella, the given auth options, and routes that echo the principal. */
async function app (t: Test, auth: Omit<AuthOptions, 'profile'> = authOptions(), opts: HttpConventionsOptions = {}, server: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const a = await buildApp({ ...opts, auth }, server)
  const echo = async (request: { principal: AuthPrincipal | null }): Promise<unknown> => ({ principal: request.principal })
  a.get('/open', echo)
  a.get('/any', { config: { auth: true } }, echo)
  a.delete('/write', { config: { auth: { scopes: ['write'] } } }, echo)
  a.post('/form', { config: { auth: { scopes: ['write'] } } }, echo)
  a.get('/bearer-only', { config: { auth: { schemes: ['bearer'] } } }, echo)
  if (auth.digest?.algorithms?.includes('MD5') === true) a.get('/md5', { config: { auth: { schemes: ['digest'], algorithms: ['MD5'] } } }, echo)
  a.get('/off', { config: { auth: false } }, echo)
  t.teardown(() => a.close())
  await a.ready()
  return a
}

function lines (header: string | string[] | number | undefined): string[] {
  if (header === undefined) return []
  return Array.isArray(header) ? header : [String(header)]
}

test('conventions (Authentication) / RFC 9110 11.6.1: no credentials is 401 with one WWW-Authenticate line per challenge, strongest first', async (t) => {
  const a = await app(t)
  const res = await a.inject({ url: '/any' })
  t.equal(res.statusCode, 401)
  const www = lines(res.headers['www-authenticate'])
  t.same(www.map((l) => l.replace(/nonce="[^"]+"/, 'nonce="N"').replace(/opaque="[^"]+"/, 'opaque="O"')), [
    'Digest realm="test", qop="auth", algorithm=SHA-512-256, nonce="N", opaque="O", charset=UTF-8',
    'Digest realm="test", qop="auth", algorithm=SHA-256, nonce="N", opaque="O", charset=UTF-8',
    'Digest realm="test", qop="auth", algorithm=MD5, nonce="N", opaque="O", charset=UTF-8',
    'Basic realm="test", charset="UTF-8"',
    'Bearer realm="test"'
  ], 'Digest (by strength), Basic with charset (RFC 7617 2.1), Bearer without error code (RFC 6750 3.1)')
  t.equal(res.headers['content-type'], 'text/html; charset=UTF-8')
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.body, /<title>401 Unauthorized<\/title>.*Authentication is required/s)
  t.equal((await a.inject({ url: '/open' })).statusCode, 200, 'routes without config.auth stay open (protect: false)')
  t.equal((await a.inject({ url: '/off' })).statusCode, 200)
})

test('RFC 9110 11.6.1: over a real socket, each challenge is its own header line', async (t) => {
  const a = await app(t)
  const port = await listen(a)
  const res = await rawRequest(port, 'GET /any HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal(res.status, 401)
  t.same(res.headerLines.filter(([n]) => n === 'www-authenticate').map(([, v]) => v.split(' ')[0]), ['Digest', 'Digest', 'Digest', 'Basic', 'Bearer'])
})

test('challengeLines single: all challenges on one comma-separated line (RFC 9110 11.6.1 allows both)', async (t) => {
  const a = await app(t, authOptions({ challengeLines: 'single' }))
  const www = lines((await a.inject({ url: '/any' })).headers['www-authenticate'])
  t.equal(www.length, 1)
  t.match(www[0], /^Digest realm="test", .*algorithm=SHA-512-256.*, Digest .*algorithm=SHA-256.*, Digest .*algorithm=MD5.*, Basic realm="test", charset="UTF-8", Bearer realm="test"$/)
})

test('RFC 7617: Basic credentials of a user pass; the principal is on the request', async (t) => {
  const a = await app(t)
  const ok = await a.inject({ url: '/any', headers: { authorization: DEMO } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { principal: { scheme: 'basic', subject: 'demo', scopes: ['read', 'write'] } })
  const lower = await a.inject({ url: '/any', headers: { authorization: 'basic ' + DEMO.slice(6) } })
  t.equal(lower.statusCode, 200, 'RFC 9110 11.1: the scheme is case-insensitive')
  t.same((await a.inject({ url: '/open', headers: { authorization: DEMO } })).json(), { principal: null }, 'open routes leave principal null')
})

test('conventions (Authentication): wrong, unknown, malformed Basic credentials are 401 and the body does not say which part failed', async (t) => {
  const a = await app(t)
  const bodies = new Set<string>()
  for (const authz of [
    basicOf('demo', 'wrong'), basicOf('nobody', 'demo-pass'), 'Basic ZGVtbw==', 'Basic ZGVtbzpkZW1vLXBhc3M', 'Basic ####',
    'Basic ' + Buffer.from([0x64, 0x3a, 0xff, 0xfe]).toString('base64'), basicOf('demo', 'demo\u0001pass'), 'Basic a=b'
  ]) {
    const res = await a.inject({ url: '/any', headers: { authorization: authz } })
    t.equal(res.statusCode, 401, authz)
    t.equal(lines(res.headers['www-authenticate']).length, 5, 'WWW-Authenticate is always present')
    t.equal(lines(res.headers['www-authenticate'])[4], 'Bearer realm="test"', 'no Bearer error code for non-Bearer credentials')
    bodies.add(res.body)
  }
  t.equal(bodies.size, 1, 'one and the same page for every refusal')
  t.match([...bodies][0], /The credentials sent are not valid for this resource\./)
})

test('RFC 7617 2.1: user names and passwords compare in NFC', async (t) => {
  const a = await app(t, authOptions({ basic: { users: { René: 'caf\u00e9' } } }))
  const res = await a.inject({ url: '/any', headers: { authorization: basicOf('Rene\u0301', 'cafe\u0301') } })
  t.equal(res.statusCode, 200)
  t.equal(res.json().principal.subject, 'Ren\u00e9')
  t.same(res.json().principal.scopes, [], 'users without scopes get the scheme default (none)')
})

test('Basic verify option: the service decides (sync, async, subject and scopes)', async (t) => {
  const a = await app(t, authOptions({
    basic: {
      scopes: 'read',
      verify: (user, password) => {
        if (user === 'yes') return true
        if (user === 'obj') return { subject: 'object-user', scopes: ['write'] }
        if (user === 'half') return { scopes: 'read write' }
        if (user === 'later') return Promise.resolve(password === 'p')
        return null
      }
    }
  }))
  const get = (u: string, p = 'p') => a.inject({ method: 'DELETE', url: '/write', headers: { authorization: basicOf(u, p) } })
  t.equal((await get('yes')).statusCode, 401, 'true grants the default scopes (read), not write')
  t.same((await get('obj')).json().principal, { scheme: 'basic', subject: 'object-user', scopes: ['write'] })
  t.same((await get('half')).json().principal, { scheme: 'basic', subject: 'half', scopes: ['read', 'write'] })
  t.equal((await a.inject({ url: '/any', headers: { authorization: basicOf('later', 'p') } })).statusCode, 200)
  t.equal((await a.inject({ url: '/any', headers: { authorization: basicOf('later', 'x') } })).statusCode, 401)
  t.equal((await get('no')).statusCode, 401)
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Basic ZGVtbw==' } })).statusCode, 401, 'no colon never reaches verify')
})

test('RFC 6750: a Bearer token grants its scopes; unknown and expired tokens are invalid_token with error_description', async (t) => {
  const a = await app(t)
  const ok = await a.inject({ method: 'DELETE', url: '/write', headers: { authorization: 'Bearer w-token' } })
  t.same(ok.json(), { principal: { scheme: 'bearer', subject: 'writer', scopes: ['read', 'write'] } })
  t.same((await a.inject({ url: '/any', headers: { authorization: 'Bearer new-token' } })).json().principal.scopes, ['read', 'write'], 'scopes as a space-separated string')
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Bearer odd-scopes' } })).statusCode, 401, 'scopes that are neither a list nor a string: not a principal')
  for (const [token, description] of [['nope', 'The access token is invalid'], ['old-token', 'The access token expired'], ['old-date', 'The access token expired']]) {
    const res = await a.inject({ url: '/any', headers: { authorization: `Bearer ${token}` } })
    t.equal(res.statusCode, 401, token)
    t.equal(lines(res.headers['www-authenticate']).at(-1), `Bearer realm="test", error="invalid_token", error_description="${description}"`)
  }
  const params = await a.inject({ url: '/any', headers: { authorization: 'Bearer a=b' } })
  t.equal(params.statusCode, 401, 'auth-params are not a b64token')
  t.match(lines(params.headers['www-authenticate']).at(-1), /error="invalid_token"/)
})

test('verifiers may return any thenable, not only native promises', async (t) => {
  const thenable = <T>(value: T): PromiseLike<T> => ({ then: (ok) => Promise.resolve(value).then(ok) }) as PromiseLike<T>
  const a = await app(t, authOptions({
    basic: { verify: (user) => thenable(user === 'demo') as unknown as Promise<boolean> },
    bearer: { verify: (token) => thenable(token === 'ok' ? { subject: 'late' } : null) as unknown as Promise<null> }
  }))
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Bearer ok' } })).json().principal.subject, 'late')
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Bearer no' } })).statusCode, 401)
  t.equal((await a.inject({ url: '/any', headers: { authorization: DEMO } })).statusCode, 200)
  t.equal((await a.inject({ url: '/any', headers: { authorization: basicOf('other', 'x') } })).statusCode, 401)
})

test('RFC 6750 2.3: a token in the query string is never accepted, and the challenge carries no error code', async (t) => {
  const a = await app(t)
  const res = await a.inject({ url: '/any?access_token=w-token' })
  t.equal(res.statusCode, 401)
  t.equal(lines(res.headers['www-authenticate']).at(-1), 'Bearer realm="test"')
  const form = await a.inject({ method: 'POST', url: '/form', payload: 'access_token=w-token', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(form.statusCode, 401, 'RFC 6750 2.2: nor in a form body')
})

test('conventions (Authentication): insufficient scope is 401 with error="insufficient_scope" and scope (spec profile)', async (t) => {
  const a = await app(t)
  const res = await a.inject({ method: 'DELETE', url: '/write', headers: { authorization: 'Bearer r-token' } })
  t.equal(res.statusCode, 401)
  t.equal(lines(res.headers['www-authenticate']).at(-1), 'Bearer realm="test", scope="write", error="insufficient_scope", error_description="The access token lacks a needed scope"')
  t.equal(lines(res.headers['www-authenticate']).length, 5, 'every scheme is still offered')
  t.match(res.body, /do not grant access/)
  const user = await a.inject({ method: 'DELETE', url: '/write', headers: { authorization: basicOf('reader', 'reader-pass') } })
  t.equal(user.statusCode, 401, 'a Basic user lacking the scope')
  t.equal(lines(user.headers['www-authenticate']).at(-1), 'Bearer realm="test"', 'insufficient_scope only answers a Bearer token')
})

test('RFC 6750 3.1: the rfc9110 profile answers insufficient scope with 403', async (t) => {
  const a = await app(t, authOptions(), { profile: 'rfc9110' })
  const res = await a.inject({ method: 'DELETE', url: '/write', headers: { authorization: 'Bearer r-token' } })
  t.equal(res.statusCode, 403)
  t.same(lines(res.headers['www-authenticate']), ['Bearer realm="test", scope="write", error="insufficient_scope", error_description="The access token lacks a needed scope"'])
  t.equal(res.headers['content-type'], 'text/html; charset=UTF-8')
  const user = await a.inject({ method: 'DELETE', url: '/write', headers: { authorization: basicOf('reader', 'reader-pass') } })
  t.equal(user.statusCode, 403)
  t.equal(user.headers['www-authenticate'], undefined)
  t.equal((await a.inject({ method: 'DELETE', url: '/write' })).statusCode, 401, 'no credentials is still 401')
  const explicit = await app(t, authOptions({ insufficientScopeStatus: 401 }), { profile: 'rfc9110' })
  t.equal((await explicit.inject({ method: 'DELETE', url: '/write', headers: { authorization: 'Bearer r-token' } })).statusCode, 401, 'an explicit option wins over the profile')
})

async function digestLogin (a: FastifyInstance, url: string, user: string, password: string, opts: { method?: 'GET' | 'DELETE' | 'HEAD', pick?: number, nc?: number, userhash?: boolean } = {}) {
  const method = opts.method ?? 'GET'
  const first = await a.inject({ method, url })
  const challenge = lines(first.headers['www-authenticate'])[opts.pick ?? 0]
  const params = answer(challenge, { username: user, password, method, uri: url, nc: opts.nc, userhash: opts.userhash })
  const res = await a.inject({ method, url, headers: { authorization: authorization(params) } })
  return { res, params, challenge }
}

test('RFC 7616: Digest with every offered algorithm authenticates; the principal is the user', async (t) => {
  const a = await app(t)
  for (const pick of [0, 1, 2]) {
    const { res, challenge } = await digestLogin(a, '/any?x=1', 'demo', 'demo-pass', { pick })
    t.equal(res.statusCode, 200, challengeParams(challenge).algorithm)
    t.same(res.json().principal, { scheme: 'digest', subject: 'demo', scopes: ['read', 'write'] })
  }
  const wrong = await digestLogin(a, '/any', 'demo', 'nope')
  t.equal(wrong.res.statusCode, 401)
  t.notMatch(lines(wrong.res.headers['www-authenticate'])[0], /stale/)
  const reader = await digestLogin(a, '/write', 'reader', 'reader-pass', { method: 'DELETE' })
  t.equal(reader.res.statusCode, 401, 'a Digest user lacking the scope')
  t.match(reader.res.body, /do not grant access/)
  const head = await digestLogin(a, '/any', 'demo', 'demo-pass', { method: 'HEAD' })
  t.equal(head.res.statusCode, 200, 'the HEAD route of a GET is protected and verifies once (no replay)')
  const bare = await a.inject({ url: '/any', headers: { authorization: 'Digest abc' } })
  t.equal(bare.statusCode, 401, 'Digest credentials are auth-params')
})

test('RFC 7616 3.3: a correct response on an expired nonce is answered with stale=true on every Digest challenge', async (t) => {
  let now = Date.now()
  const a = await app(t, authOptions({ digest: { secret: SECRET, algorithms: ['SHA-256', 'MD5'], users: { demo: 'demo-pass' }, nonceTtlMs: 1000, now: () => now } }))
  const first = await a.inject({ url: '/any' })
  const params = answer(lines(first.headers['www-authenticate'])[0], { username: 'demo', password: 'demo-pass', uri: '/any' })
  now += 5000
  const res = await a.inject({ url: '/any', headers: { authorization: authorization(params) } })
  t.equal(res.statusCode, 401)
  const www = lines(res.headers['www-authenticate'])
  t.match(www[0], /, stale=true$/)
  t.match(www[1], /algorithm=MD5.*, stale=true$/)
  t.notMatch(www[2], /stale/, 'Basic carries no stale')
  t.match(res.body, /have expired/)
  const wrong = answer(lines(first.headers['www-authenticate'])[0], { username: 'demo', password: 'bad', uri: '/any' })
  const bad = await a.inject({ url: '/any', headers: { authorization: authorization(wrong) } })
  t.notMatch(lines(bad.headers['www-authenticate'])[0], /stale/, 'a wrong password on an expired nonce is not stale')
})

test('RFC 7616 5.4: a nonce-count used twice is refused (stale=true); the next count passes', async (t) => {
  const a = await app(t)
  const { res, challenge } = await digestLogin(a, '/any', 'demo', 'demo-pass')
  t.equal(res.statusCode, 200)
  const again = answer(challenge, { username: 'demo', password: 'demo-pass', uri: '/any', nc: 1 })
  const replay = await a.inject({ url: '/any', headers: { authorization: authorization(again) } })
  t.equal(replay.statusCode, 401)
  t.match(lines(replay.headers['www-authenticate'])[0], /stale=true/)
  for (const nc of [2, 3, 5, 4]) {
    const next = answer(challenge, { username: 'demo', password: 'demo-pass', uri: '/any', nc })
    t.equal((await a.inject({ url: '/any', headers: { authorization: authorization(next) } })).statusCode, 200, `nc ${nc}`)
  }
})

test('RFC 7616 3.4.4: userhash is offered and accepted with configured users', async (t) => {
  const a = await app(t, authOptions({ digest: { secret: SECRET, users: { demo: 'demo-pass' }, userhash: true } }))
  const { res, challenge } = await digestLogin(a, '/any', 'demo', 'demo-pass', { userhash: true })
  t.match(challenge, /userhash=true/)
  t.equal(res.statusCode, 200)
  t.equal(res.json().principal.subject, 'demo', 'the subject is the user, not its hash')
  t.equal((await digestLogin(a, '/any', 'ghost', 'demo-pass', { userhash: true })).res.statusCode, 401)
})

test('config.auth.algorithms: a route offers only its algorithms (MD5 first for old clients) and accepts only those', async (t) => {
  const a = await app(t)
  const first = await a.inject({ url: '/md5' })
  const www = lines(first.headers['www-authenticate'])
  t.equal(www.length, 1)
  t.match(www[0], /^Digest .*algorithm=MD5/)
  t.equal((await digestLogin(a, '/md5', 'demo', 'demo-pass')).res.statusCode, 200)
  // an answer computed for SHA-256 (a valid algorithm elsewhere) is refused here
  const other = lines((await a.inject({ url: '/any' })).headers['www-authenticate'])[1]
  const params = answer(other, { username: 'demo', password: 'demo-pass', uri: '/md5' })
  t.equal((await a.inject({ url: '/md5', headers: { authorization: authorization(params) } })).statusCode, 401)
  const { algorithm: _omit, ...noAlgorithm } = answer(www[0], { username: 'demo', password: 'demo-pass', uri: '/md5' })
  t.equal((await a.inject({ url: '/md5', headers: { authorization: authorization(noAlgorithm) } })).statusCode, 200, 'RFC 7616 3.3: no algorithm means MD5')
  t.equal((await a.inject({ url: '/md5', headers: { authorization: DEMO } })).statusCode, 401, 'Basic is not offered there')
})

test('Digest lookup option: stored H(A1) and scopes from the service', async (t) => {
  const a = await app(t, authOptions({
    digest: {
      secret: SECRET,
      lookup: async ({ username, hash, realm }) => username === 'stored' ? { ha1: { [hash]: digestHa1(hash, 'stored', realm, 'pw') }, scopes: 'write' } : null
    }
  }))
  const { res } = await digestLogin(a, '/write', 'stored', 'pw', { method: 'DELETE' })
  t.same(res.json().principal, { scheme: 'digest', subject: 'stored', scopes: ['write'] })
})

test('config.auth.schemes: a route offers and accepts only its schemes', async (t) => {
  const a = await app(t)
  const res = await a.inject({ url: '/bearer-only', headers: { authorization: DEMO } })
  t.equal(res.statusCode, 401)
  t.same(lines(res.headers['www-authenticate']), ['Bearer realm="test"'])
  t.equal((await a.inject({ url: '/bearer-only', headers: { authorization: 'Bearer w-token' } })).statusCode, 200)
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Negotiate abc' } })).statusCode, 401, 'an unknown scheme')
})

test('protect: a global default protects every route without config.auth, with its scopes', async (t) => {
  const a = await app(t, authOptions({ protect: { scopes: ['read'] } }))
  t.equal((await a.inject({ url: '/open' })).statusCode, 401)
  t.equal((await a.inject({ url: '/open', headers: { authorization: 'Bearer r-token' } })).statusCode, 200)
  t.equal((await a.inject({ url: '/any', headers: { authorization: 'Bearer r-token' } })).statusCode, 200, 'true means the default scopes')
  t.equal((await a.inject({ url: '/off' })).statusCode, 200, 'config.auth false opens a route')
  const b = await app(t, authOptions({ protect: true }))
  t.equal((await b.inject({ url: '/open' })).statusCode, 401)
  t.equal((await b.inject({ url: '/open', headers: { authorization: 'Bearer r-token' } })).statusCode, 200)
})

test('the pipeline: auth runs after every onRequest hook and the 411, before the body is parsed or the handler runs', async (t) => {
  const a = await buildApp({ auth: authOptions() })
  t.teardown(() => a.close())
  let parsed = 0
  let handled = 0
  let before = 0
  a.addContentTypeParser('application/x-counted', { parseAs: 'string' }, (_req, body, done) => { parsed++; done(null, body) })
  a.post('/w', { config: { auth: { scopes: ['write'] } }, onRequest: (_req, _reply, done) => { before++; done() } }, async () => { handled++; return 'ok' })
  const res = await a.inject({ method: 'POST', url: '/w', payload: 'x', headers: { 'content-type': 'application/x-counted' } })
  t.equal(res.statusCode, 401)
  t.equal(parsed + handled, 0, 'neither the parser nor the handler ran')
  t.equal(before, 1, 'the route\'s own onRequest hook saw the refused request')
  const bad = await a.inject({ method: 'POST', url: '/w', payload: '{', headers: { 'content-type': 'application/json' } })
  t.equal(bad.statusCode, 401, 'a malformed body is not even read: 401, not 400')
  const port = await listen(a)
  const chunked = await rawRequest(port, 'POST /w HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-counted\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n')
  t.equal(chunked.status, 411, 'content-length answers first (its hook precedes auth)')
  const ok = await a.inject({ method: 'POST', url: '/w', payload: 'x', headers: { 'content-type': 'application/x-counted', authorization: DEMO } })
  t.equal(ok.statusCode, 200)
  t.equal(parsed + handled, 2)
  t.equal(before, 4, 'every request reached the route\'s own onRequest hook')
})

test('standalone: the plugin registers alone, before or after content-length', async (t) => {
  const a = Fastify()
  await a.register(httpConventionsAuth, { bearer: { verify: (tk) => tk === 'ok' ? { subject: 's' } : undefined } })
  a.get('/x', { config: { auth: true } }, async (req) => req.principal)
  t.teardown(() => a.close())
  const res = await a.inject({ url: '/x' })
  t.equal(res.statusCode, 401)
  t.same(lines(res.headers['www-authenticate']), ['Bearer realm="api"'], 'default realm')
  t.same((await a.inject({ url: '/x', headers: { authorization: 'Bearer ok' } })).json(), { scheme: 'bearer', subject: 's', scopes: [] })
})

function failingStore (): NonceCountStore & { calls: number } {
  const s = { calls: 0, seen: async () => { s.calls++; throw new Error('connect ECONNREFUSED 127.0.0.1:6379') } }
  return s
}

test('a failing nonce-count store fails closed: 401 by default, 503 by option, logged, never a crash', async (t) => {
  const logs: string[] = []
  const logger = { level: 'debug', stream: { write: (s: string) => { logs.push(s) } } }
  const store = failingStore()
  const a = await app(t, authOptions({ digest: { secret: SECRET, users: { demo: 'demo-pass' }, store } }), {}, { logger })
  const { res } = await digestLogin(a, '/any', 'demo', 'demo-pass')
  t.equal(res.statusCode, 401)
  t.equal(store.calls, 1)
  t.match(res.body, /could not be verified/)
  t.ok(logs.some((l) => /fail closed/.test(l) && /ECONNREFUSED/.test(l)), 'the failure is logged')
  const odd = { seen: () => Promise.reject('down') } as unknown as NonceCountStore // eslint-disable-line prefer-promise-reject-errors
  const b = await app(t, authOptions({ storeFailureStatus: 503, digest: { secret: SECRET, users: { demo: 'demo-pass' }, store: odd } }))
  const unavailable = (await digestLogin(b, '/any', 'demo', 'demo-pass')).res
  t.equal(unavailable.statusCode, 503)
  t.equal(unavailable.headers['retry-after'], '5')
  t.equal(unavailable.headers['content-type'], 'text/html; charset=UTF-8')
  t.equal((await b.inject({ url: '/any', headers: { authorization: DEMO } })).statusCode, 200, 'other schemes still work')
})

test('RFC 9110 15.5.2: a verifier that throws or rejects refuses with 401 and the challenges, logged, never a 500', async (t) => {
  const logs: string[] = []
  const stream = { write: (line: string) => { logs.push(line) } }
  const a = await app(t, authOptions({
    bearer: { verify: (token) => { if (token === 'throw') throw new Error('verifier bug'); return Promise.reject(new Error('verifier down')) } },
    digest: { secret: SECRET, lookup: () => { throw new Error('lookup bug') } }
  }), {}, { logger: { level: 'error', stream } })
  for (const res of [
    await a.inject({ url: '/any', headers: { authorization: 'Bearer throw' } }),
    await a.inject({ url: '/any', headers: { authorization: 'Bearer reject' } }),
    (await digestLogin(a, '/any', 'demo', 'demo-pass')).res
  ]) {
    t.equal(res.statusCode, 401)
    t.equal(lines(res.headers['www-authenticate']).length, 3, 'every challenge of the route: Digest, Basic, Bearer')
    t.match(res.body, /could not be verified/)
  }
  for (const cause of ['verifier bug', 'verifier down', 'lookup bug']) t.ok(logs.some((l) => /the verifier failed/.test(l) && l.includes(cause)), `logged: ${cause}`)
})

test('OpenAPI: protected routes record 401 (and 403 under rfc9110 on scoped routes, 503 with storeFailureStatus)', async (t) => {
  const routes: Array<{ url: string, method: string | string[], config?: unknown }> = []
  const a = await buildApp({ profile: 'rfc9110', auth: authOptions({ storeFailureStatus: 503 }) })
  a.addHook('onRoute', (r) => { routes.push(r) })
  a.get('/o', async () => 'x')
  a.post('/w', { config: { auth: { scopes: 'write' } } }, async () => 'x')
  a.get('/b', { config: { auth: { schemes: ['bearer'] } } }, async () => 'x')
  await a.ready()
  t.teardown(() => a.close())
  const of = (url: string, method = 'GET') => Object.keys(conventionResponses(routes.find((r) => r.url === url && r.method === method) as { config?: unknown }))
  t.same(of('/o'), [])
  t.same(of('/w', 'POST').filter((s) => ['401', '403', '503'].includes(s)).sort(), ['401', '403', '503'])
  t.same(of('/b'), ['401'], 'no scopes, no Digest: 401 only')
})

test('fail at boot: options are validated at registration (FST_HTTP_CONVENTIONS_INVALID_OPTION)', async (t) => {
  const ok = authOptions()
  const bad: unknown[] = [
    {},
    { ...ok, unknown: 1 },
    { ...ok, profile: 'x' },
    { ...ok, realm: 'a\r\nb' },
    { ...ok, realm: 7 },
    { ...ok, challengeLines: 'many' },
    { ...ok, insufficientScopeStatus: 402 },
    { ...ok, storeFailureStatus: 500 },
    { ...ok, protect: 'yes' },
    { ...ok, protect: { scopes: ['a b'] } },
    { ...ok, basic: { users: { a: 'b' }, verify: () => true } },
    { ...ok, basic: {} },
    { ...ok, basic: null },
    { ...ok, basic: { verify: 'yes' } },
    { ...ok, basic: { users: { 'a:b': 'c' } } },
    { ...ok, basic: { users: { '': 'c' } } },
    { ...ok, basic: { users: { 'a\u0001': 'c' } } },
    { ...ok, basic: { users: { a: 5 } } },
    { ...ok, basic: { users: { a: { password: 'x', scopes: [''] } } } },
    { ...ok, basic: { users: ['a'] } },
    { ...ok, basic: { users: { a: 'b' }, scopes: 5 } },
    { ...ok, bearer: {} },
    { ...ok, bearer: { verify: () => null, now: 5 } },
    { ...ok, digest: { secret: 'short', users: { a: 'b' } } },
    { ...ok, digest: { secret: SECRET, users: { a: 'b' }, algorithms: ['SHA-1'] } },
    { ...ok, digest: { secret: SECRET, users: { a: 'b' }, nonceTtlMs: 5 } },
    { ...ok, digest: { secret: SECRET } },
    { ...ok, digest: { secret: SECRET, lookup: 'x' } },
    { ...ok, digest: { secret: SECRET, users: { a: 'b' }, store: {} } },
    { ...ok, digest: null },
    { ...ok, realm: 'caf\u00e9' },
    { basic: { users: { a: 'b' } }, realm: 'a\nb' }
  ]
  for (const opts of bad) {
    const label = JSON.stringify(Object.fromEntries(Object.entries(opts as object).filter(([k, v]) => (ok as Record<string, unknown>)[k] !== v)))
    await t.rejects(boot(Fastify().register(httpConventionsAuth, opts as AuthOptions).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, label)
  }
  await t.rejects(boot(Fastify().register(httpConventionsAuth, null as unknown as AuthOptions).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  const twice = Fastify()
  twice.register(httpConventionsAuth, ok)
  twice.register(httpConventionsAuth, ok)
  await t.rejects(boot(twice.ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, 'registered twice')
  await t.rejects(boot(buildApp({ auth: 'on' as unknown as AuthOptions }).then((x) => x.ready())), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, 'umbrella section')
  const none = await buildApp({ auth: false })
  t.equal(none.hasRequestDecorator('principal'), false, 'auth: false leaves the plugin out')
  await none.close()
})

test('fail at boot: a route config.auth that makes no sense throws when the route is added', async (t) => {
  const a = await buildApp({ auth: authOptions({ bearer: undefined }) })
  t.teardown(() => a.close())
  const bad: unknown[] = ['yes', null, 5, { scope: ['a'] }, { scopes: [5] }, { schemes: [] }, { schemes: ['bearer'] }, { schemes: 'basic' },
    { algorithms: ['SHA-1'] }, { algorithms: [] }, { schemes: ['basic'], algorithms: ['MD5'] }]
  for (const auth of bad) {
    t.throws(() => a.get('/x' + Math.random(), { config: { auth: auth as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, JSON.stringify(auth))
  }
  const b = await buildApp({ auth: { basic: { users: { a: 'b' } } } })
  t.teardown(() => b.close())
  t.throws(() => b.get('/y', { config: { auth: { algorithms: ['MD5'] } } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }, 'algorithms without Digest enabled')
})

test('RFC 9110 11.6.2: a repeated Authorization field is refused (Node keeps only the first)', async (t) => {
  const a = await app(t)
  const port = await listen(a)
  const res = await rawRequest(port, `GET /any HTTP/1.1\r\nHost: x\r\nAuthorization: ${DEMO}\r\nauthorization: Bearer w-token\r\n\r\n`)
  t.equal(res.status, 401)
  const single = await rawRequest(port, `GET /any HTTP/1.1\r\nHost: x\r\nAuthorization: ${DEMO}\r\n\r\n`)
  t.equal(single.status, 200)
})

test('a default MemoryNonceStore can be passed explicitly', async (t) => {
  const a = await app(t, authOptions({ digest: { secret: SECRET, users: { demo: 'demo-pass' }, store: new MemoryNonceStore({ maxNonces: 10 }) } }))
  t.equal((await digestLogin(a, '/any', 'demo', 'demo-pass')).res.statusCode, 200)
})
