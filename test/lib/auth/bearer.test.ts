import { test } from 'tap'
import fc from 'fast-check'
import { parseBearer, bearerChallenge, isB64token, createBearerKeyMatcher } from '../../../lib/auth/bearer'
import { parseAuthorization } from '../../../packages/grammar/src/authorization'

test('RFC 6750 2.1: credentials are "Bearer" 1*SP b64token', async (t) => {
  t.same(parseBearer('Bearer mF_9.B5f-4.1JqM'), { ok: true, token: 'mF_9.B5f-4.1JqM' }, 'the example of RFC 6750 2.1')
  t.same(parseBearer('bearer abc+/=='), { ok: true, token: 'abc+/==' })
  t.same(parseBearer('BEARER   abc'), { ok: true, token: 'abc' })
})

test('RFC 6750 2.1: b64token is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="', async (t) => {
  t.ok(isB64token('a-b.c_d~e+f/g=='))
  for (const s of ['', '=abc', 'a=b', 'a b', 'a,b', 'a"b', 'ab\u00e9', 'a\r\nb']) t.notOk(isB64token(s), JSON.stringify(s))
})

test('RFC 6750 2.1: anything else is refused without throwing', async (t) => {
  t.same(parseBearer(undefined), { ok: false, reason: 'missing' })
  t.same(parseBearer('   '), { ok: false, reason: 'missing' })
  t.same(parseBearer('Bearer'), { ok: false, reason: 'malformed' })
  t.same(parseBearer('Bearer a b'), { ok: false, reason: 'malformed' })
  t.same(parseBearer('Bearer a="b"'), { ok: false, reason: 'malformed' })
  t.same(parseBearer('Bearer ab=c'), { ok: false, reason: 'malformed' }, 'auth-params are not a b64token')
  t.same(parseBearer('Bearer ' + 'a'.repeat(9000)), { ok: false, reason: 'malformed' }, 'over the cap')
  t.same(parseBearer('Basic YQ=='), { ok: false, reason: 'wrong-scheme' })
})

test('RFC 6750 3.1: without credentials the challenge carries no error code', async (t) => {
  t.equal(bearerChallenge({ realm: 'example' }), 'Bearer realm="example"')
  t.equal(bearerChallenge(), 'Bearer')
  t.equal(bearerChallenge({ realm: 'example', scope: ['read', 'write'] }), 'Bearer realm="example", scope="read write"')
  t.throws(() => bearerChallenge({ errorDescription: 'x' }), TypeError, 'a description needs an error code')
})

test('RFC 6750 3.1: invalid_token carries error_description', async (t) => {
  const c = bearerChallenge({ realm: 'example', error: 'invalid_token', errorDescription: 'The access token expired' })
  t.equal(c, 'Bearer realm="example", error="invalid_token", error_description="The access token expired"')
  const r = parseAuthorization(c)
  t.ok(r.ok && r.params?.error === 'invalid_token', 'the challenge parses with the shared grammar')
  t.equal(bearerChallenge({ error: 'invalid_request', errorUri: 'https://example.com/e#1' }), 'Bearer error="invalid_request", error_uri="https://example.com/e#1"')
})

test('RFC 6750 3.1: insufficient_scope names the scope needed', async (t) => {
  t.equal(bearerChallenge({ realm: 'r', error: 'insufficient_scope', scope: 'articles:write' }), 'Bearer realm="r", scope="articles:write", error="insufficient_scope"')
  t.throws(() => bearerChallenge({ error: 'insufficient_scope' }), TypeError)
})

test('RFC 6750 3: forbidden characters in error_description, scope and error_uri throw, so CR/LF never reach a header', async (t) => {
  t.throws(() => bearerChallenge({ error: 'invalid_token', errorDescription: 'bad\r\nSet-Cookie: a=b' }), TypeError)
  t.throws(() => bearerChallenge({ error: 'invalid_token', errorDescription: 'say "x"' }), TypeError)
  t.throws(() => bearerChallenge({ error: 'invalid_token', errorDescription: 'caf\u00e9' }), TypeError)
  t.throws(() => bearerChallenge({ scope: 'a  b' }), TypeError, 'empty scope token')
  t.throws(() => bearerChallenge({ scope: ['a b'] }), TypeError, 'space inside a scope token')
  t.throws(() => bearerChallenge({ error: 'invalid_token', errorUri: 'https://x/ y' }), TypeError)
  t.throws(() => bearerChallenge({ error: 'nope' as 'invalid_token' }), TypeError)
  t.throws(() => bearerChallenge({ realm: 'a\nb' }), TypeError)
})

test('constant time: static keys are compared in constant time over equal-length digests', async (t) => {
  const match = createBearerKeyMatcher(['key-one', 'key-two'])
  t.ok(match('key-one'))
  t.ok(match('key-two'))
  t.notOk(match('key-on'))
  t.notOk(match('key-one-and-more'))
  t.notOk(match(''))
  t.throws(() => createBearerKeyMatcher([]), TypeError)
  t.throws(() => createBearerKeyMatcher(['bad key']), TypeError)
})

test('property: parseBearer never throws; accepted tokens are b64tokens', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (s) => {
    const r = parseBearer('Bearer ' + s)
    return typeof r.ok === 'boolean' && (!r.ok || isB64token(r.token))
  }), { numRuns: 3000 })
  const b64token = fc.tuple(
    fc.string({ unit: fc.constantFrom(...'abcXYZ019-._~+/'.split('')), minLength: 1, maxLength: 40 }),
    fc.integer({ min: 0, max: 3 })
  ).map(([a, n]) => a + '='.repeat(n))
  t.doesNotThrow(() => fc.assert(fc.property(b64token, (tok) => {
    const r = parseBearer(`Bearer ${tok}`)
    return r.ok && r.token === tok
  }), { numRuns: 1000 }), 'no input threw; every b64token round-trips')
})
