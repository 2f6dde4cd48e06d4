import { test } from 'tap'
import fc from 'fast-check'
import {
  parseAuthorization, formatChallenge, isToken68, decodeExtValue, DEFAULT_MAX_AUTHORIZATION_LENGTH
} from '../src/authorization'

test('RFC 9110 11.1: the auth-scheme is case-insensitive and returned lower-cased', async (t) => {
  t.same(parseAuthorization('BASIC dXNlcjpwYXNz'), { ok: true, scheme: 'basic', token68: 'dXNlcjpwYXNz' })
  t.same(parseAuthorization('bEaReR abc'), { ok: true, scheme: 'bearer', token68: 'abc' })
  t.same(parseAuthorization('Negotiate'), { ok: true, scheme: 'negotiate' }, 'a scheme alone')
})

test('RFC 9110 11.2: token68 is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="', async (t) => {
  t.same(parseAuthorization('Bearer a-b.c_d~e+f/g=='), { ok: true, scheme: 'bearer', token68: 'a-b.c_d~e+f/g==' })
  t.same(parseAuthorization('Bearer a='), { ok: true, scheme: 'bearer', token68: 'a=' }, '`a=` is a token68, not an auth-param without value')
  t.same(parseAuthorization('Bearer    abc'), { ok: true, scheme: 'bearer', token68: 'abc' }, '1*SP')
  t.same(parseAuthorization('  Bearer abc \t'), { ok: true, scheme: 'bearer', token68: 'abc' }, 'RFC 9110 5.5: surrounding OWS is not part of the value')
  t.same(parseAuthorization('Bearer ab=c'), { ok: true, scheme: 'bearer', params: { ab: 'c' } }, 'padding in the middle makes it an auth-param')
  t.ok(isToken68('abc=='))
  t.notOk(isToken68('=abc'))
  t.notOk(isToken68('a=b'))
  t.notOk(isToken68(''))
  t.notOk(isToken68('a b'))
  t.notOk(isToken68('é'))
  t.notOk(isToken68(42 as unknown as string))
})

test('RFC 9110 11.2: auth-params are token or quoted-string, names lower-cased, OWS around "=" and ","', async (t) => {
  const r = parseAuthorization('Digest Username = "Mufasa" ,realm="a\\"b\\\\c", nc=00000001,  qop=auth')
  t.ok(r.ok)
  if (!r.ok) return
  t.equal(r.scheme, 'digest')
  t.equal(r.token68, undefined)
  t.same({ ...r.params }, { username: 'Mufasa', realm: 'a"b\\c', nc: '00000001', qop: 'auth' })
  t.equal(r.params instanceof Object, false, 'params have no prototype')
})

test('RFC 9110 5.6.1: empty list elements between auth-params are ignored', async (t) => {
  const r = parseAuthorization('Digest , a=b,, ,c="d" ,')
  t.ok(r.ok)
  if (r.ok) t.same({ ...r.params }, { a: 'b', c: 'd' })
  t.same(parseAuthorization('Digest ,,'), { ok: false, reason: 'malformed' }, 'a list with no element at all')
})

test('RFC 9110 11.2: a repeated parameter name is refused, whatever its case', async (t) => {
  t.same(parseAuthorization('Digest realm="a", REALM="b"'), { ok: false, reason: 'duplicate-param' })
  t.same(parseAuthorization('Digest a=1, b=2, a=1'), { ok: false, reason: 'duplicate-param' })
})

test('RFC 9110 11.2: __proto__ and other object keys are plain parameter names', async (t) => {
  const r = parseAuthorization('Digest __proto__="x", constructor=y, toString=z')
  t.ok(r.ok)
  if (r.ok && r.params !== undefined) {
    t.equal(Object.getOwnPropertyDescriptor(r.params, '__proto__')?.value, 'x')
    t.equal(r.params.constructor, 'y')
    t.equal(r.params.tostring, 'z')
  }
  t.same(parseAuthorization('Digest __proto__=a, __PROTO__=b'), { ok: false, reason: 'duplicate-param' })
})

test('RFC 9110 11.4: malformed credentials are refused, never thrown', async (t) => {
  const bad = [
    ' "Basic" abc', // scheme must be a token
    'Basic\tabc', // 1*SP, not HTAB
    'Basic abc def', // token68 then junk
    'Digest a b', // auth-param without "="
    'Digest a="open',
    'Digest a="x"b="y"', // no comma between params
    'Digest a=b c=d',
    'Digest =b',
    'Digest a= ,b=c',
    'Digest a="x\u0000"',
    'Digest a="é\u0100"',
    'Digest a=é',
    '\u0000',
    'Basic abc\r\nX-Injected: 1'
  ]
  for (const v of bad) {
    const r = parseAuthorization(v)
    t.same(r, { ok: false, reason: 'malformed' }, JSON.stringify(v))
  }
})

test('RFC 9110 11.4: absent or empty values are "missing"', async (t) => {
  for (const v of [undefined, null, '', '   ', 42, {}, ['Basic abc']]) {
    t.same(parseAuthorization(v), { ok: false, reason: 'missing' }, JSON.stringify(v))
  }
})

test('length cap: values longer than maxLength (default 8 KiB) are refused unread', async (t) => {
  const long = 'Bearer ' + 'a'.repeat(DEFAULT_MAX_AUTHORIZATION_LENGTH)
  t.same(parseAuthorization(long), { ok: false, reason: 'too-long' })
  t.same(parseAuthorization(long.slice(0, DEFAULT_MAX_AUTHORIZATION_LENGTH)), { ok: true, scheme: 'bearer', token68: 'a'.repeat(DEFAULT_MAX_AUTHORIZATION_LENGTH - 7) })
  t.same(parseAuthorization('Bearer abcdef', { maxLength: 10 }), { ok: false, reason: 'too-long' })
  t.same(parseAuthorization('Bearer abc', { maxLength: 10 }), { ok: true, scheme: 'bearer', token68: 'abc' })
})

test('linear time: adversarial 1 MB inputs parse quickly', async (t) => {
  const big = 1 << 20
  const inputs = [
    'Digest ' + Array.from({ length: 50000 }, (_, i) => `p${i}=v`).join(','),
    'Digest ' + 'a=b,'.repeat(big / 4),
    'Digest a="' + '\\"'.repeat(big / 2),
    'Digest ' + ','.repeat(big),
    'Bearer ' + '='.repeat(big),
    'Bearer ' + 'a'.repeat(big) + ' ',
    'Digest ' + 'a'.repeat(big) + '=',
    'Digest ' + 'a=b, '.repeat(big / 5) + 'a=b'
  ]
  for (const v of inputs) {
    const r = parseAuthorization(v, { maxLength: 2 * big })
    t.type(r.ok, 'boolean')
  }
})

test('RFC 9110 11.3: formatChallenge writes values as quoted-strings with escapes', async (t) => {
  t.equal(formatChallenge('Basic', [['realm', 'say "hi" \\o/']]), 'Basic realm="say \\"hi\\" \\\\o/"')
  t.equal(formatChallenge('Bearer', { realm: 'api', scope: undefined, error: 'invalid_token' }), 'Bearer realm="api", error="invalid_token"')
  t.equal(formatChallenge('Negotiate'), 'Negotiate')
  t.equal(formatChallenge('Negotiate', {}), 'Negotiate')
  t.equal(formatChallenge('Negotiate', [], { token68: 'YII=' }), 'Negotiate YII=')
})

test('RFC 7616 3.3: Digest writes realm, domain, nonce, opaque, qop quoted and stale, algorithm, charset, userhash as tokens', async (t) => {
  const c = formatChallenge('Digest', [
    ['realm', 'r'], ['domain', '/a /b'], ['qop', 'auth'], ['algorithm', 'SHA-256'], ['nonce', 'n'],
    ['opaque', 'o'], ['charset', 'UTF-8'], ['userhash', 'true'], ['stale', 'true']
  ])
  t.equal(c, 'Digest realm="r", domain="/a /b", qop="auth", algorithm=SHA-256, nonce="n", opaque="o", charset=UTF-8, userhash=true, stale=true')
  t.equal(formatChallenge('Basic', [['charset', 'UTF-8']]), 'Basic charset="UTF-8"', 'RFC 7617 2.1 quotes charset')
  t.equal(formatChallenge('X', [['a', 'b'], ['c', 'd e']], { tokens: ['A'] }), 'X a=b, c="d e"', 'explicit token list')
  t.throws(() => formatChallenge('Digest', [['algorithm', 'SHA 256']]), TypeError, 'a token param must be a token')
})

test('CR/LF and controls never reach a header: formatChallenge throws', async (t) => {
  t.throws(() => formatChallenge('Basic', [['realm', 'a\r\nSet-Cookie: x=y']]), TypeError)
  t.throws(() => formatChallenge('Basic', { realm: 'a\nb' }), TypeError)
  t.throws(() => formatChallenge('Basic', { realm: 'a\u0000b' }), TypeError)
  t.throws(() => formatChallenge('Basic', { realm: 'snow \u2603' }), TypeError, 'not an octet')
  t.throws(() => formatChallenge('Basic realm', {}), TypeError, 'scheme is not a token')
  t.throws(() => formatChallenge('Basic', { 're alm': 'x' }), TypeError, 'name is not a token')
  t.throws(() => formatChallenge('Basic', [['realm', 'a'], ['Realm', 'b']]), TypeError, 'repeated name')
  t.throws(() => formatChallenge('Negotiate', [['a', 'b']], { token68: 'abc' }), TypeError, 'token68 and params')
  t.throws(() => formatChallenge('Negotiate', undefined, { token68: 'a\r\n' }), TypeError, 'token68 syntax')
})

test('RFC 8187 3.2.1: ext-values decode UTF-8 strictly and ISO-8859-1', async (t) => {
  t.equal(decodeExtValue("UTF-8''J%C3%A4s%C3%B8n%20Doe"), 'J\u00e4s\u00f8n Doe')
  t.equal(decodeExtValue("utf-8'en-GB'a%2fb"), 'a/b')
  t.equal(decodeExtValue("ISO-8859-1''%E4"), '\u00e4')
  t.equal(decodeExtValue("UTF-8''%E4"), null, 'not UTF-8')
  t.equal(decodeExtValue("UTF-8''a b"), null, 'space is not an attr-char')
  t.equal(decodeExtValue("UTF-8''%4"), null, 'truncated pct-encoding')
  t.equal(decodeExtValue("UTF-8''%zz"), null)
  t.equal(decodeExtValue("KOI8-R''abc"), null, 'charset not supported')
  t.equal(decodeExtValue("UTF-8'e n'abc"), null, 'bad language')
  t.equal(decodeExtValue('abc'), null)
  t.equal(decodeExtValue("UTF-8'abc"), null)
  t.equal(decodeExtValue(7 as unknown as string), null)
})

// Property tests ---------------------------------------------------------------

const tokenChar = fc.constantFrom(...'!#$%&\'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.split(''))
const token = fc.string({ unit: tokenChar, minLength: 1, maxLength: 12 })
// quoted-string content: any octet-range character that quoteString accepts
const qdChar = fc.integer({ min: 0x20, max: 0xff })
  .filter((c) => c !== 0x7f)
  .map((c) => String.fromCharCode(c))
const qdText = fc.string({ unit: qdChar, maxLength: 20 })

test('property: parseAuthorization never throws, on any string', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
    const r = parseAuthorization(s)
    return typeof r.ok === 'boolean'
  }), { numRuns: 3000 })
  t.doesNotThrow(() => fc.assert(fc.property(fc.string({ unit: fc.constantFrom(...' \t,="\\aA=/+-'.split('')), maxLength: 60 }), (s) => {
    const r = parseAuthorization('Digest ' + s)
    return typeof r.ok === 'boolean'
  }), { numRuns: 3000 }), 'no input threw')
})

test('property: formatChallenge then parseAuthorization gives back the parameters', async (t) => {
  const params = fc.uniqueArray(fc.tuple(token, qdText), { selector: ([n]) => n.toLowerCase(), minLength: 1, maxLength: 8 })
  // not Digest, whose stale/algorithm/charset/userhash are written as tokens
  const scheme = token.filter((s) => s.toLowerCase() !== 'digest')
  fc.assert(fc.property(scheme, params, (scheme, list) => {
    const header = formatChallenge(scheme, list)
    const r = parseAuthorization(header, { maxLength: 1 << 16 })
    if (!r.ok || r.params === undefined) return false
    if (r.scheme !== scheme.toLowerCase()) return false
    return list.every(([n, v]) => r.params?.[n.toLowerCase()] === v) && Object.keys(r.params).length === list.length
  }), { numRuns: 1000 })
  const t68 = fc.tuple(
    fc.string({ unit: fc.constantFrom(...'abcXYZ019-._~+/'.split('')), minLength: 1, maxLength: 30 }),
    fc.integer({ min: 0, max: 2 })
  ).map(([a, n]) => a + '='.repeat(n))
  t.doesNotThrow(() => fc.assert(fc.property(token, t68, (scheme, value) => {
    const r = parseAuthorization(formatChallenge(scheme, undefined, { token68: value }))
    return r.ok && r.token68 === value
  }), { numRuns: 1000 }), 'round trips hold')
})
