import { test } from 'tap'
import { createHash, createHmac } from 'node:crypto'
import fc from 'fast-check'
import {
  createDigest, digestResponse, digestUserhash, digestHa1, digestHash,
  type DigestUserLookup, type DigestAlgorithm, type DigestOptions
} from '../../../lib/auth/digest'
import { MemoryNonceStore } from '../../../lib/io/stores/memory-nonce'
import { answer, authorization, challengeParams } from './digest-client'

const SECRET = 'a-test-secret-that-is-long-enough-32+'
const REALM = 'api@example.org'
const USERS: Record<string, string> = { Mufasa: 'Circle of Life', 'J\u00e4s\u00f8n Doe': 'Secret, or not?', alice: 'wonderland' }

const byPassword: DigestUserLookup = ({ username, userhash, hash, realm }) => {
  if (!userhash) return username in USERS ? { password: USERS[username] } : undefined
  for (const [name, password] of Object.entries(USERS)) {
    if (digestUserhash(hash, name, realm) === username) return { username: name, password }
  }
  return undefined
}

function make (over: Partial<DigestOptions> = {}): { digest: ReturnType<typeof createDigest>, clock: { t: number } } {
  const clock = { t: 1_700_000_000_000 }
  const digest = createDigest({ realm: REALM, secret: SECRET, now: () => clock.t, ...over })
  return { digest, clock }
}

test('RFC 7616 3.9.1: the MD5 and SHA-256 examples (Mufasa, "Circle of Life")', async (t) => {
  const common = {
    username: 'Mufasa',
    realm: 'http-auth@example.org',
    password: 'Circle of Life',
    method: 'GET',
    uri: '/dir/index.html',
    nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
    nc: '00000001',
    cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
    qop: 'auth'
  }
  t.equal(digestResponse({ ...common, algorithm: 'MD5' }), '8ca523f5e9506fed4657c9700eebdbec')
  t.equal(digestResponse({ ...common, algorithm: 'SHA-256' }), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1')
  // the same with a stored H(A1) instead of the password
  const ha1 = digestHa1('SHA-256', 'Mufasa', 'http-auth@example.org', 'Circle of Life')
  t.equal(digestResponse({ ...common, password: undefined, ha1: ha1.toUpperCase(), algorithm: 'SHA-256' }), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1')
  t.throws(() => digestResponse({ ...common, password: undefined, algorithm: 'MD5' }), TypeError)
  t.throws(() => digestResponse({ ...common, algorithm: 'SHA-1' as DigestAlgorithm }), TypeError)
})

test('RFC 7616 3.9.2: the userhash example, with FIPS 180-4 SHA-512/256', async (t) => {
  const name = 'J\u00e4s\u00f8n Doe'
  const input = {
    username: name,
    realm: 'api@example.org',
    password: 'Secret, or not?',
    method: 'GET',
    uri: '/doe.json',
    nonce: '5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK',
    nc: '00000001',
    cnonce: 'NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v',
    qop: 'auth'
  }
  // RFC 7616 3.4.4: username = H(unq(username) ":" unq(realm)), UTF-8
  t.equal(digestUserhash('SHA-512-256', name, 'api@example.org'), '793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b')
  t.equal(digestResponse({ ...input, algorithm: 'SHA-512-256' }), '3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5')
  // The RFC prints 488869477b… and ae66e67d…: those are SHA-512 truncated to 256 bits,
  // not SHA-512/256 (a reported erratum of RFC 7616). Same inputs, same layout:
  const truncated = (s: string): string => createHash('sha512').update(s, 'utf8').digest('hex').slice(0, 64)
  t.equal(truncated(`${name}:api@example.org`), '488869477bf257147b804c45308cd62ac4e25eb717b12b298c79e62dcea254ec')
  const ha1 = truncated(`${name}:api@example.org:Secret, or not?`)
  const ha2 = truncated('GET:/doe.json')
  t.equal(truncated(`${ha1}:${input.nonce}:00000001:${input.cnonce}:auth:${ha2}`), 'ae66e67d6b427bd3f120414a82e4acff38e8ecd9101d6c861229025f607a79dd')
  t.equal(digestHash('SHA-512-256', ''), 'c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a', 'FIPS 180-4 SHA-512/256 of ""')
})

test('RFC 7616 3.7: one challenge per algorithm, strongest first, one fresh nonce', async (t) => {
  const { digest } = make({ algorithms: ['MD5', 'SHA-256-sess', 'SHA-512-256', 'SHA-256'] })
  t.same(digest.algorithms, ['SHA-512-256', 'SHA-256', 'SHA-256-sess', 'MD5'])
  const list = digest.challenges()
  t.equal(list.length, 4)
  const parsed = list.map(challengeParams)
  t.same(parsed.map((p) => p.algorithm), ['SHA-512-256', 'SHA-256', 'SHA-256-sess', 'MD5'])
  t.equal(new Set(parsed.map((p) => p.nonce)).size, 1, 'one nonce for the set')
  t.not(challengeParams(digest.challenges()[0]).nonce, parsed[0].nonce, 'a fresh nonce per call')
  t.match(list[0], /^Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, nonce="[A-Za-z0-9_-]{75}", opaque="[A-Za-z0-9_-]+", charset=UTF-8$/)
  t.equal(parsed[0].opaque, digest.opaque)
  t.equal(parsed[0].stale, undefined)
  t.match(digest.challenges(true)[0], /, stale=true$/, 'RFC 7616 3.3: stale=true as a token')
})

test('RFC 7616 3.3: domain, userhash, charset and opaque options shape the challenge', async (t) => {
  const { digest } = make({ domain: ['/api', 'https://example.org/x'], userhash: true, charset: false, opaque: 'fixed-opaque' })
  t.equal(digest.challenges()[0].replace(/nonce="[^"]+"/, 'nonce="N"'),
    'Digest realm="api@example.org", domain="/api https://example.org/x", qop="auth", algorithm=SHA-256, nonce="N", opaque="fixed-opaque", userhash=true')
})

test('RFC 7616 3.4: a correct response is accepted, for every algorithm, with a password or a stored HA1', async (t) => {
  const all: DigestAlgorithm[] = ['SHA-512-256', 'SHA-512-256-sess', 'SHA-256', 'SHA-256-sess', 'MD5', 'MD5-sess']
  const { digest } = make({ algorithms: all })
  // one nonce serves the whole set of challenges: a client answers one of them, so each
  // algorithm is tried here with a fresh set
  const fresh = (): string[] => all.map((_, k) => digest.challenges()[k])
  for (const c of fresh()) {
    const params = answer(c, { username: 'Mufasa', password: 'Circle of Life', method: 'POST', uri: '/dir/index.html?x=1' })
    const r = await digest.verify(params, 'POST', '/dir/index.html?x=1', byPassword)
    t.same(r, { ok: true, username: 'Mufasa', algorithm: params.algorithm, userhash: false, nc: 1 }, params.algorithm)
  }
  const byHa1: DigestUserLookup = async ({ username, realm }) => username === 'alice'
    ? { ha1: { 'SHA-256': digestHa1('SHA-256', 'alice', realm, 'wonderland'), MD5: digestHa1('MD5', 'alice', realm, 'wonderland') } }
    : null
  for (const c of fresh()) {
    const params = answer(c, { username: 'alice', password: 'wonderland' })
    const r = await digest.verify(params, 'GET', '/', byHa1)
    const hasHa1 = !params.algorithm.startsWith('SHA-512-256')
    t.equal(r.ok, hasHa1, `${params.algorithm}: ${hasHa1 ? 'HA1 given' : 'no HA1 for this hash is a refusal'}`)
  }
})

test('RFC 7616 3.4: the whole Authorization header parses and verifies', async (t) => {
  const { digest } = make()
  const params = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life', uri: '/a?b=c' })
  const r = await digest.verifyAuthorization(authorization(params), 'GET', '/a?b=c', byPassword)
  t.equal(r.ok, true)
  t.match(await digest.verifyAuthorization(undefined, 'GET', '/', byPassword), { ok: false, reason: 'missing', stale: false })
  t.match(await digest.verifyAuthorization('Basic YTpi', 'GET', '/', byPassword), { ok: false, reason: 'wrong-scheme' })
  t.match(await digest.verifyAuthorization('Digest abc==', 'GET', '/', byPassword), { ok: false, reason: 'malformed' })
  t.match(await digest.verifyAuthorization('Digest a=1, a=2', 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail: /duplicate-param/ })
  t.match(await digest.verifyAuthorization('Digest ' + 'a'.repeat(10000), 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail: /too-long/ })
})

test('RFC 7616 3.4: a wrong password or an unknown user is "invalid", and the same for both', async (t) => {
  const { digest } = make()
  const c = digest.challenges()[0]
  const wrong = await digest.verify(answer(c, { username: 'Mufasa', password: 'circle of life' }), 'GET', '/', byPassword)
  const unknown = await digest.verify(answer(c, { username: 'Scar', password: 'x' }), 'GET', '/', byPassword)
  t.same(wrong, { ok: false, reason: 'invalid', detail: 'response does not match', stale: false })
  t.same(unknown, wrong, 'nothing tells an unknown user from a wrong password')
  const lookups: string[] = []
  await digest.verify(answer(c, { username: 'Scar', password: 'x', nc: 2 }), 'GET', '/', (q) => { lookups.push(q.username); return null })
  t.same(lookups, ['Scar'], 'the lookup is asked once')
  const oddRecord = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', nc: 3 }), 'GET', '/', () => ({ ha1: { 'SHA-256': 'not-hex' } }))
  t.match(oddRecord, { ok: false, reason: 'invalid' }, 'a stored HA1 that is not a digest never matches')
  const junkRecord = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', nc: 4 }), 'GET', '/', () => 'Circle of Life' as never)
  t.match(junkRecord, { ok: false, reason: 'invalid' })
})

test('RFC 7616 3.3: an expired nonce with a correct response is "stale"; with a wrong one "invalid"', async (t) => {
  const { digest, clock } = make({ nonceTtlMs: 300_000 })
  const c = digest.challenges()[0]
  clock.t += 300_000
  const stale = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life' }), 'GET', '/', byPassword)
  t.same(stale, { ok: false, reason: 'stale', detail: 'nonce expired', stale: true })
  const wrong = await digest.verify(answer(c, { username: 'Mufasa', password: 'nope' }), 'GET', '/', byPassword)
  t.match(wrong, { ok: false, reason: 'invalid', stale: false })
  clock.t -= 1
  t.match(await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life' }), 'GET', '/', byPassword), { ok: true }, 'valid until the last millisecond')
})

test('RFC 7616 5.4: a nonce-count used before is a replay; out-of-order counts are accepted once', async (t) => {
  const { digest } = make()
  const c = digest.challenges()[0]
  const send = async (nc: number): Promise<string> => {
    const r = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', nc }), 'GET', '/', byPassword)
    return r.ok ? 'ok' : r.reason
  }
  t.equal(await send(1), 'ok')
  t.equal(await send(1), 'replay')
  // browsers send parallel requests: counts arrive as 4, 2, 3
  t.equal(await send(4), 'ok')
  t.equal(await send(2), 'ok')
  t.equal(await send(3), 'ok')
  t.equal(await send(3), 'replay')
  t.equal(await send(4), 'replay')
  const replay = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', nc: 2 }), 'GET', '/', byPassword)
  t.match(replay, { ok: false, reason: 'replay', stale: true }, 'the client may retry with a fresh nonce without asking the user')
  t.equal(await send(1000), 'ok')
  t.equal(await send(1000 - 256), 'replay', 'counts at or below the window are refused')
  t.equal(await send(1000 - 255), 'ok', 'counts inside the window are accepted')
})

test('RFC 7616 3.4.6: the uri must be the request target', async (t) => {
  const { digest } = make()
  const c = digest.challenges()[0]
  let nc = 0
  const ok = (uri: string, target: string): Promise<boolean> =>
    digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', uri, nc: ++nc }), 'GET', target, byPassword).then((r) => r.ok)
  t.equal(await ok('/a', '/a'), true)
  t.equal(await ok('/a', '/b'), false)
  t.equal(await ok('/a?x=1', '/a?x=2'), false)
  t.equal(await ok('/a', '/a?x=1'), false)
  t.equal(await ok('http://example.org/a?x=1', '/a?x=1'), true, 'RFC 9112 3.2.2: absolute-form')
  t.equal(await ok('http://example.org', '/'), true)
  t.equal(await ok('http://example.org/a', 'http://other/a'), false)
  t.equal(await ok('//example.org/a', '/a'), false)
  const r = await digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', uri: '/a', nc: 77 }), 'GET', '/b', byPassword)
  t.same(r, { ok: false, reason: 'invalid', detail: 'uri is not the request target', stale: false })
})

test('RFC 7616 3.4: the algorithm must be one that was offered; absent means MD5', async (t) => {
  const { digest } = make({ algorithms: ['SHA-256'] })
  const c = digest.challenges()[0]
  const md5 = { ...answer(c, { username: 'Mufasa', password: 'Circle of Life' }) }
  md5.algorithm = 'MD5'
  md5.response = digestResponse({ algorithm: 'MD5', username: 'Mufasa', realm: REALM, password: 'Circle of Life', method: 'GET', uri: '/', nonce: md5.nonce, nc: md5.nc, cnonce: md5.cnonce, qop: 'auth' })
  t.match(await digest.verify(md5, 'GET', '/', byPassword), { ok: false, reason: 'invalid', detail: 'algorithm was not offered' })
  const absent: Record<string, string> = { ...md5 }
  delete absent.algorithm
  t.match(await digest.verify(absent, 'GET', '/', byPassword), { ok: false, reason: 'invalid', detail: 'algorithm was not offered' })
  t.match(await digest.verify({ ...md5, algorithm: 'SHA-1' }, 'GET', '/', byPassword), { ok: false, reason: 'invalid' })

  const withMd5 = make({ algorithms: ['SHA-256', 'MD5'] }).digest
  const c2 = withMd5.challenges()[1]
  const p = answer(c2, { username: 'Mufasa', password: 'Circle of Life' })
  delete p.algorithm
  t.match(await withMd5.verify(p, 'GET', '/', byPassword), { ok: true, algorithm: 'MD5' }, 'absent algorithm is MD5 (RFC 7616 3.3)')
  const lower = answer(withMd5.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  lower.algorithm = 'sha-256'
  t.match(await withMd5.verify(lower, 'GET', '/', byPassword), { ok: true, algorithm: 'SHA-256' }, 'algorithm names are case-insensitive')
})

test('RFC 7616 3.3: realm and opaque must come back unchanged', async (t) => {
  const { digest } = make()
  const p = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await digest.verify({ ...p, realm: 'other' }, 'GET', '/', byPassword), { reason: 'invalid', detail: 'realm differs' })
  t.match(await digest.verify({ ...p, opaque: 'other' }, 'GET', '/', byPassword), { reason: 'invalid', detail: 'opaque differs' })
  const noOpaque: Record<string, string> = { ...p }
  delete noOpaque.opaque
  t.match(await digest.verify(noOpaque, 'GET', '/', byPassword), { reason: 'invalid', detail: 'opaque differs' })
  t.match(await digest.verify(p, 'GET', '/', byPassword), { ok: true })
})

test('stateless nonces: only nonces signed with the secret for this realm and opaque are accepted', async (t) => {
  const { digest, clock } = make()
  const p = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  const resign = (nonce: string): Record<string, string> => ({
    ...p,
    nonce,
    response: digestResponse({ algorithm: 'SHA-256', username: 'Mufasa', realm: REALM, password: 'Circle of Life', method: 'GET', uri: '/', nonce, nc: p.nc, cnonce: p.cnonce, qop: 'auth' })
  })
  const nonceIs = async (nonce: string): Promise<unknown> => digest.verify(resign(nonce), 'GET', '/', byPassword)
  const invalidNonce = { ok: false, reason: 'invalid', detail: 'nonce was not issued by this realm', stale: false }
  // flip one character of the MAC, then of the time stamp
  const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
  t.same(await nonceIs(flip(p.nonce, 63)), invalidNonce)
  t.same(await nonceIs(flip(p.nonce, 2)), invalidNonce)
  t.same(await nonceIs(p.nonce.slice(0, 60)), invalidNonce, 'truncated')
  t.same(await nonceIs(p.nonce + 'AAAA'), invalidNonce, 'too long')
  t.same(await nonceIs(p.nonce.slice(0, 74) + '+'), invalidNonce, 'not base64url')
  t.same(await nonceIs('7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v'), invalidNonce, 'the RFC example nonce')
  const other = make({ secret: 'another-secret-of-at-least-32-bytes!!' }).digest
  t.same(await nonceIs(challengeParams(other.challenges()[0]).nonce), invalidNonce, 'another secret')
  const otherRealm = createDigest({ realm: 'elsewhere', secret: SECRET, opaque: digest.opaque, now: () => clock.t })
  t.same(await nonceIs(challengeParams(otherRealm.challenges()[0]).nonce), invalidNonce, 'another realm')
  const future = make({ now: () => clock.t + 400_000 }).digest
  t.same(await nonceIs(challengeParams(future.challenges()[0]).nonce), invalidNonce, 'issued in the future beyond the TTL')
  t.match(await nonceIs(p.nonce), { ok: true })
})

test('secret rotation: the first secret signs, every listed secret verifies', async (t) => {
  // One fleet: the instances share the nonce-count store (and so its generation).
  const store = new MemoryNonceStore()
  const old = make({ secret: SECRET, store }).digest
  const rotated = make({ secret: ['a-brand-new-secret-also-32-bytes-long', SECRET], opaque: old.opaque, store }).digest
  const p = answer(old.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await rotated.verify(p, 'GET', '/', byPassword), { ok: true })
  const q = answer(rotated.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await old.verify(q, 'GET', '/', byPassword), { ok: false, reason: 'invalid' })
})

test('RFC 7616 3.3: a nonce of the earlier layout (no store generation), correctly answered, is stale, never accepted; a forged one is invalid', async (t) => {
  const { digest, clock } = make()
  // 8 bytes of time, 8 random, and their HMAC under the secret, the realm and the opaque (64 characters).
  const earlier = (secret: string): string => {
    const head = Buffer.alloc(16)
    head.writeBigUInt64BE(BigInt(clock.t), 0)
    const tag = createHmac('sha256', secret).update('fastify-http-conventions digest nonce\0').update(head).update(REALM).update('\0').update(digest.opaque).digest()
    return Buffer.concat([head, tag]).toString('base64url')
  }
  const p = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  const withNonce = (nonce: string): Record<string, string> => ({
    ...p,
    nonce,
    response: digestResponse({ algorithm: 'SHA-256', username: 'Mufasa', realm: REALM, password: 'Circle of Life', method: 'GET', uri: '/', nonce, nc: p.nc, cnonce: p.cnonce, qop: 'auth' })
  })
  t.equal(earlier(SECRET).length, 64)
  t.same(await digest.verify(withNonce(earlier(SECRET)), 'GET', '/', byPassword), { ok: false, reason: 'stale', detail: 'nonce of the earlier layout', stale: true })
  t.match(await digest.verify(withNonce(earlier('another-secret-of-at-least-32-bytes!!')), 'GET', '/', byPassword), { ok: false, reason: 'invalid', stale: false })
  t.match(await digest.verify({ ...withNonce(earlier(SECRET)), response: '0'.repeat(64) }, 'GET', '/', byPassword), { ok: false, reason: 'invalid', stale: false }, 'a wrong response is no stale nonce')
})

test('RFC 7616 5.4 and 3.3: a nonce issued under another state of the nonce-count store is stale, whatever its count', async (t) => {
  const before = make({ store: new MemoryNonceStore() }).digest
  const after = make({ store: new MemoryNonceStore() }).digest
  const p = answer(before.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await before.verify(p, 'GET', '/', byPassword), { ok: true })
  t.match(await after.verify(p, 'GET', '/', byPassword), { ok: false, reason: 'replay', stale: true }, 'the new state never saw it used, which proves nothing')
  // A store without generations (a custom one) is asked about the count alone.
  const counts = new Set<string>()
  const plain = make({ store: { seen: async (nonce, nc) => counts.has(`${nonce}:${nc}`) || (counts.add(`${nonce}:${nc}`), false) } }).digest
  const q = answer(plain.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await plain.verify(q, 'GET', '/', byPassword), { ok: true })
  t.match(await plain.verify(q, 'GET', '/', byPassword), { ok: false, reason: 'replay' })
})

test('RFC 7616 3.4.4: userhash=true sends H(username:realm) and the lookup resolves it', async (t) => {
  const { digest } = make({ userhash: true, algorithms: ['SHA-512-256', 'SHA-256-sess'] })
  for (const c of [digest.challenges()[0], digest.challenges()[1]]) {
    const p = answer(c, { username: 'J\u00e4s\u00f8n Doe', password: 'Secret, or not?', userhash: true })
    t.match(await digest.verify(p, 'GET', '/', byPassword), { ok: true, username: 'J\u00e4s\u00f8n Doe', userhash: true }, p.algorithm)
  }
  const c = digest.challenges()[0]
  const p = answer(c, { username: 'J\u00e4s\u00f8n Doe', password: 'Secret, or not?', userhash: true })
  t.match(await digest.verify(p, 'GET', '/', () => ({ password: 'Secret, or not?' })), { ok: false, reason: 'invalid' }, 'a record without its username cannot answer a userhash')
  const upper = answer(c, { username: 'J\u00e4s\u00f8n Doe', password: 'Secret, or not?', userhash: true, nc: 2 })
  t.match(await digest.verify({ ...upper, userhash: 'TRUE' }, 'GET', '/', byPassword), { ok: true }, 'the flag is case-insensitive')
  const off = make({ userhash: false }).digest
  const q = answer(off.challenges()[0], { username: 'Mufasa', password: 'Circle of Life', userhash: true })
  t.match(await off.verify(q, 'GET', '/', byPassword), { ok: false, reason: 'invalid', detail: 'userhash was not offered' })
  const r = answer(off.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  t.match(await off.verify({ ...r, userhash: 'false' }, 'GET', '/', byPassword), { ok: true }, 'userhash=false is the default')
})

test('RFC 7616 3.4 and RFC 8187: username* carries a name that cannot be quoted', async (t) => {
  const { digest } = make({ algorithms: ['SHA-512-256'] })
  const c = digest.challenges()[0]
  const p = answer(c, { username: 'J\u00e4s\u00f8n Doe', password: 'Secret, or not?', ext: true })
  t.equal(p['username*'], "UTF-8''J%C3%A4s%C3%B8n%20Doe", 'as in RFC 7616 3.9.2')
  t.match(await digest.verify(p, 'GET', '/', byPassword), { ok: true, username: 'J\u00e4s\u00f8n Doe' })
  t.match(await digest.verify({ ...p, 'username*': "UTF-8''J%E4s" }, 'GET', '/', byPassword), { ok: false, reason: 'malformed' }, 'not UTF-8')
  t.match(await digest.verify({ ...p, username: 'x' }, 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail: 'username and username* are both present' })
  t.match(await digest.verify({ ...p, userhash: 'true' }, 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail: 'username* with userhash=true' })
})

test('RFC 7616 4: a UTF-8 username sent as raw octets in the quoted string is read as UTF-8', async (t) => {
  const { digest } = make()
  const p = answer(digest.challenges()[0], { username: 'J\u00e4s\u00f8n Doe', password: 'Secret, or not?' })
  // Node hands header octets over as a latin1 string
  const header = Buffer.from(authorization(p), 'utf8').toString('latin1')
  t.match(await digest.verifyAuthorization(header, 'GET', '/', byPassword), { ok: true, username: 'J\u00e4s\u00f8n Doe' })
  const latin1Name = { ...p, username: 'J\u00e4son', nc: '00000002' }
  t.match(await digest.verify(latin1Name, 'GET', '/', (q) => { t.equal(q.username, 'J\u00e4son', 'octets that are not UTF-8 are kept'); return null }), { ok: false })
  t.match(await digest.verify({ ...p, username: 'snow\u2603', nc: '00000003' }, 'GET', '/', () => null), { ok: false, reason: 'invalid' })
})

test('RFC 7616 3.3: with charset=UTF-8 passwords are compared in NFC, however the application stored them', async (t) => {
  const { digest } = make()
  const p = answer(digest.challenges()[0], { username: 'bj\u00f6rn', password: 'p\u00e4ss' }) // the client sends NFC
  t.match(await digest.verify(p, 'GET', '/', () => ({ password: 'pa\u0308ss' })), { ok: true }, 'a stored NFD password')
  const q = answer(digest.challenges()[0], { username: 'bjo\u0308rn', password: 'pa\u0308ss' }) // a client that sends NFD
  t.match(await digest.verify(q, 'GET', '/', () => ({ password: 'p\u00e4ss' })), { ok: true }, 'the user name is hashed as sent, the password in NFC')
  t.equal(digestHa1('SHA-256', 'bjo\u0308rn', 'r', 'pa\u0308ss'), digestHa1('SHA-256', 'bj\u00f6rn', 'r', 'p\u00e4ss'))
  t.equal(digestUserhash('SHA-256', 'bjo\u0308rn', 'r'), digestUserhash('SHA-256', 'bj\u00f6rn', 'r'))
})

test('RFC 7616 3.4: malformed credentials are refused, never thrown', async (t) => {
  const { digest } = make()
  const p = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  const without = (k: string): Record<string, string> => { const q: Record<string, string> = { ...p }; delete q[k]; return q }
  const cases: Array<[string, Record<string, string>, string]> = [
    ['no username', without('username'), 'no username'],
    ['no realm', without('realm'), 'realm, nonce, uri and response are required'],
    ['no nonce', without('nonce'), 'realm, nonce, uri and response are required'],
    ['no uri', without('uri'), 'realm, nonce, uri and response are required'],
    ['no response', without('response'), 'realm, nonce, uri and response are required'],
    ['no qop', without('qop'), 'qop, cnonce and nc are required'],
    ['no nc', without('nc'), 'qop, cnonce and nc are required'],
    ['no cnonce', without('cnonce'), 'qop, cnonce and nc are required'],
    ['empty cnonce', { ...p, cnonce: '' }, 'qop, cnonce and nc are required'],
    ['nc too short', { ...p, nc: '0001' }, 'nc is not eight hex digits'],
    ['nc not hex', { ...p, nc: '0000000g' }, 'nc is not eight hex digits'],
    ['nc zero', { ...p, nc: '00000000' }, 'nc starts at 00000001'],
    ['response too short', { ...p, response: p.response.slice(1) }, 'response is not a digest of the algorithm'],
    ['response not hex', { ...p, response: 'z' + p.response.slice(1) }, 'response is not a digest of the algorithm'],
    ['bad userhash', { ...p, userhash: 'yes' }, 'userhash is neither true nor false'],
    ['bad username*', { ...without('username'), 'username*': 'Mufasa' }, 'username* is not an RFC 8187 ext-value']
  ]
  for (const [name, params, detail] of cases) {
    t.same(await digest.verify(params, 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail, stale: false }, name)
  }
  t.match(await digest.verify({ ...p, qop: 'auth-int' }, 'GET', '/', byPassword), { ok: false, reason: 'invalid', detail: 'qop was not offered' })
  t.match(await digest.verify(undefined, 'GET', '/', byPassword), { ok: false, reason: 'missing' })
  t.match(await digest.verify(null, 'GET', '/', byPassword), { ok: false, reason: 'missing' })
  t.match(await digest.verify('x' as never, 'GET', '/', byPassword), { ok: false, reason: 'missing' })
  t.match(await digest.verify(p, undefined as never, '/', byPassword), { ok: false, reason: 'malformed' })
  t.match(await digest.verify({ ...p, username: 42 } as never, 'GET', '/', byPassword), { ok: false, reason: 'malformed', detail: 'no username' })
  const inherited = Object.assign(Object.create({ username: 'Mufasa' }), without('username'))
  t.match(await digest.verify(inherited, 'GET', '/', byPassword), { ok: false, reason: 'malformed' }, 'inherited properties are not parameters')
  t.match(await digest.verify(p, 'GET', '/', byPassword), { ok: true }, 'the untouched credentials still pass')
})

test('boot: options that make no sense throw at creation', async (t) => {
  const base: DigestOptions = { realm: REALM, secret: SECRET }
  t.throws(() => createDigest(undefined as never), TypeError)
  t.throws(() => createDigest({ ...base, realm: 'a\r\nb' }), TypeError)
  t.throws(() => createDigest({ ...base, realm: 'caf\u00e9' }), TypeError, 'printable ASCII realm')
  t.throws(() => createDigest({ ...base, realm: 5 as never }), TypeError)
  t.throws(() => createDigest({ ...base, secret: 'short' }), RangeError)
  t.throws(() => createDigest({ ...base, secret: [] }), RangeError)
  t.throws(() => createDigest({ ...base, nonceTtlMs: 10 }), RangeError)
  t.throws(() => createDigest({ ...base, nonceTtlMs: 1.5e6 + 0.5 }), RangeError)
  t.throws(() => createDigest({ ...base, algorithms: [] }), TypeError)
  t.throws(() => createDigest({ ...base, algorithms: 'SHA-256' as never }), TypeError)
  t.throws(() => createDigest({ ...base, algorithms: ['SHA-1' as DigestAlgorithm] }), TypeError)
  t.throws(() => createDigest({ ...base, algorithms: ['sha-256' as DigestAlgorithm] }), TypeError, 'canonical names only')
  t.throws(() => createDigest({ ...base, algorithms: [7 as never] }), TypeError)
  t.throws(() => createDigest({ ...base, algorithms: ['MD5', 'MD5'] }), TypeError)
  t.throws(() => createDigest({ ...base, opaque: 'a"\r\n' }), TypeError)
  t.throws(() => createDigest({ ...base, store: {} as never }), TypeError)
  t.throws(() => createDigest({ ...base, store: { seen: async () => false, generation: 'x' as never } }), /generation must be a method/)
  t.throws(() => createDigest({ ...base, domain: ['/a\nb'] }), TypeError)
  const ok = createDigest({ ...base, secret: Buffer.alloc(32, 7) })
  t.equal(ok.realm, REALM)
  t.equal(ok.algorithms.length, 1)
  t.equal(createDigest(base).opaque, createDigest(base).opaque, 'the default opaque is the same on every instance')
})

test('fleet: two instances sharing secret and store accept each other\'s nonces and refuse replays across them', async (t) => {
  const store = new MemoryNonceStore()
  const clock = { t: 1_700_000_000_000 }
  const a = createDigest({ realm: REALM, secret: SECRET, store, now: () => clock.t })
  const b = createDigest({ realm: REALM, secret: SECRET, store, now: () => clock.t })
  const c = a.challenges()[0]
  const first = answer(c, { username: 'Mufasa', password: 'Circle of Life', nc: 1 })
  t.match(await b.verify(first, 'GET', '/', byPassword), { ok: true }, 'B accepts A\'s nonce')
  t.match(await a.verify(first, 'GET', '/', byPassword), { ok: false, reason: 'replay' }, 'A refuses the replay')
  t.match(await a.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', nc: 2 }), 'GET', '/', byPassword), { ok: true })
})

test('property: verify never throws on arbitrary parameters', async (t) => {
  const { digest } = make({ algorithms: ['SHA-256', 'MD5-sess'], userhash: true })
  const p = answer(digest.challenges()[0], { username: 'Mufasa', password: 'Circle of Life' })
  const names = ['username', 'username*', 'realm', 'nonce', 'uri', 'response', 'qop', 'nc', 'cnonce', 'algorithm', 'opaque', 'userhash']
  const value = fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom(...Object.values(p)))
  await fc.assert(fc.asyncProperty(fc.dictionary(fc.constantFrom(...names), value), fc.string(), async (params, target) => {
    const r = await digest.verify({ ...p, ...params }, 'GET', target, byPassword)
    return typeof r.ok === 'boolean'
  }), { numRuns: 1500 })
  await t.resolves(fc.assert(fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (header) => {
    const r = await digest.verifyAuthorization('Digest ' + header, 'GET', '/', byPassword)
    return r.ok === false
  }), { numRuns: 1500 }), 'no input threw')
})

test('RFC 7616 3.4: qop is the offered token exactly: "AUTH" is not "auth", even with a response computed over it', async (t) => {
  const { digest } = make()
  const c = digest.challenges()[0]
  const p = answer(c, { username: 'Mufasa', password: 'Circle of Life', uri: '/', nc: 1 })
  t.match(await digest.verify(p, 'GET', '/', byPassword), { ok: true })
  for (const qop of ['AUTH', 'Auth', 'auth ', 'auth,auth-int']) {
    const nc = '00000002'
    const response = digestResponse({ algorithm: 'SHA-256', username: 'Mufasa', realm: REALM, password: 'Circle of Life', method: 'GET', uri: '/', nonce: p.nonce, nc, cnonce: p.cnonce, qop })
    t.same(await digest.verify({ ...p, qop, nc, response }, 'GET', '/', byPassword), { ok: false, reason: 'invalid', detail: 'qop was not offered', stale: false }, JSON.stringify(qop))
  }
})

test('RFC 7616 3.4.6: an absolute-form uri must name the request\'s own scheme and Host', async (t) => {
  const { digest } = make()
  const c = digest.challenges()[0]
  let nc = 0
  const ok = (uri: string, target: string, host?: string): Promise<boolean> =>
    digest.verify(answer(c, { username: 'Mufasa', password: 'Circle of Life', uri, nc: ++nc }), 'GET', target, byPassword, { host }).then((r) => r.ok)
  t.equal(await ok('http://example.org/a?x=1', '/a?x=1', 'example.org'), true)
  t.equal(await ok('http://EXAMPLE.org:80/a', '/a', 'example.org'), true, 'RFC 3986 6.2.2.1, 6.2.3: host case and default port')
  t.equal(await ok('https://example.org:443/a', '/a', 'example.org'), true)
  t.equal(await ok('http://example.org:8080/a', '/a', 'example.org:8080'), true)
  t.equal(await ok('http://evil.example/a', '/a', 'example.org'), false, 'credentials made for another host')
  t.equal(await ok('http://example.org:8080/a', '/a', 'example.org'), false, 'another port')
  t.equal(await ok('ftp://example.org/a', '/a', 'example.org'), false, 'not http(s)')
  t.equal(await ok('http://example.org?x=1', '/?x=1'), true, 'RFC 9112 3.2.2: an empty path is "/", the query kept')
  t.equal(await ok('http://example.org?x=1', '/'), false)
  t.equal(await ok('/a', 'http://example.org/a', 'example.org'), true, 'a request-target in absolute-form')
  t.equal(await ok('/a', 'http://evil.example/a', 'example.org'), false)
  t.equal(await ok('http://example.org/a', 'https://example.org/a'), false, 'another scheme')
  t.equal(await ok('a', 'a'), true, 'two equal strings (asterisk-form and the like) are the same target')
  t.equal(await ok('a', '/a'), false)
  t.equal(await ok('/a', 'a'), false)
  t.equal(await ok('/a', '/a', ''), true, 'an empty Host is no Host')
  t.equal(await ok('/a', 'ftp://example.org/a'), false, 'a request-target that is not http(s)')
  t.equal(await ok('a', 'http://example.org/a'), false, 'origin-form starts with "/"')
  t.equal(await ok('http://example.org/a', 'a'), false)
  const params = answer(c, { username: 'Mufasa', password: 'Circle of Life', uri: 'http://evil.example/a', nc: ++nc })
  t.match(await digest.verifyAuthorization(authorization(params), 'GET', '/a', byPassword, { host: 'example.org', maxLength: 4096 }), { ok: false, detail: 'uri is not the request target' })
  const good = answer(c, { username: 'Mufasa', password: 'Circle of Life', uri: 'http://example.org/a', nc: ++nc })
  t.match(await digest.verifyAuthorization(authorization(good), 'GET', '/a', byPassword, { host: 'example.org' }), { ok: true })
})

test('RFC 7616 3.3 and 4: the user name is looked up and returned in NFC; A1 hashes the name as sent', async (t) => {
  const { digest } = make()
  const asked: string[] = []
  const lookup: DigestUserLookup = ({ username }) => {
    asked.push(username)
    return username === 'jos\u00e9' ? { password: 'pw' } : undefined
  }
  for (const sent of ['jos\u00e9', 'jose\u0301']) {
    const p = answer(digest.challenges()[0], { username: sent, password: 'pw' })
    t.match(await digest.verify(p, 'GET', '/', lookup), { ok: true, username: 'jos\u00e9' }, `sent ${sent.length} code units`)
  }
  t.same(asked, ['jos\u00e9', 'jos\u00e9'])
})

test('boot: a missing or non-string secret names the option, not Node\'s Buffer message', async (t) => {
  for (const secret of [undefined, null, 7, {}]) {
    t.throws(() => createDigest({ realm: REALM, secret: secret as never }), { name: 'TypeError', message: /secret \(option secret\) is required/ })
  }
})
