import { test } from 'tap'
import fc from 'fast-check'
import {
  parseBasic, decodeBasicCredentials, basicChallenge, isStrictBase64, encodeBasicCredentials
} from '../../../lib/auth/basic'

const b64 = (s: string | Buffer): string => Buffer.from(s as string).toString('base64')

test('RFC 7617 2: credentials are base64(user-id ":" password)', async (t) => {
  // the example of RFC 7617 2
  t.same(parseBasic('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=='), { ok: true, userId: 'Aladdin', password: 'open sesame' })
  t.same(parseBasic('basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=='), { ok: true, userId: 'Aladdin', password: 'open sesame' }, 'scheme is case-insensitive')
  t.equal(encodeBasicCredentials('Aladdin', 'open sesame'), 'QWxhZGRpbjpvcGVuIHNlc2FtZQ==')
})

test('RFC 7617 2.1: the user-id ends at the first colon', async (t) => {
  t.same(decodeBasicCredentials(b64('user:pa:ss:')), { ok: true, userId: 'user', password: 'pa:ss:' })
  t.same(decodeBasicCredentials(b64(':secret')), { ok: true, userId: '', password: 'secret' })
  t.same(decodeBasicCredentials(b64('user:')), { ok: true, userId: 'user', password: '' })
  t.same(decodeBasicCredentials(b64('nocolon')), { ok: false, reason: 'no-colon' })
  t.throws(() => encodeBasicCredentials('a:b', 'c'), TypeError)
})

test('RFC 7617 2.1: UTF-8 is decoded strictly, invalid octets are a refusal', async (t) => {
  t.same(decodeBasicCredentials(b64('J\u00e4s\u00f8n:p\u00e4ss')), { ok: true, userId: 'J\u00e4s\u00f8n', password: 'p\u00e4ss' })
  for (const octets of [
    Buffer.from([0x75, 0x3a, 0xff]), // 0xFF never occurs in UTF-8
    Buffer.from([0x75, 0x3a, 0xe4]), // ISO-8859-1 "ä"
    Buffer.from([0x75, 0x3a, 0xc3]), // truncated sequence
    Buffer.from([0x75, 0x3a, 0xc0, 0xaf]), // overlong "/"
    Buffer.from([0x75, 0x3a, 0xed, 0xa0, 0x80]) // surrogate
  ]) {
    t.same(decodeBasicCredentials(octets.toString('base64')), { ok: false, reason: 'not-utf8' }, octets.toString('hex'))
  }
})

test('RFC 7617 2.1: user-id and password are NFC normalised', async (t) => {
  const decomposed = 'Jo\u0308rg' // o + combining diaeresis
  const r = decodeBasicCredentials(b64(`${decomposed}:A\u030a`))
  t.same(r, { ok: true, userId: 'J\u00f6rg', password: '\u00c5' })
})

test('RFC 7617 2: control characters in user-id or password are refused', async (t) => {
  t.same(decodeBasicCredentials(b64('us\u0000er:x')), { ok: false, reason: 'control-character' })
  t.same(decodeBasicCredentials(b64('user:x\r\ny')), { ok: false, reason: 'control-character' })
  t.same(decodeBasicCredentials(b64('user:\u007f')), { ok: false, reason: 'control-character' })
})

test('RFC 4648 4: base64 is validated strictly before decoding', async (t) => {
  t.ok(isStrictBase64('YQ=='))
  t.ok(isStrictBase64('YWI='))
  t.ok(isStrictBase64('YWJj'))
  const bad = [
    '', // empty
    'YQ', // wrong length, no padding
    'YQ=', // wrong length
    'YQ===', // too much padding
    '=YQ=', // padding first
    'Y=Q=', // padding inside
    'YW=j', // padding inside
    'YR==', // RFC 4648 3.5: non-zero pad bits
    'YWJ=', // RFC 4648 3.5: non-zero pad bits
    'YW-j', // base64url alphabet
    'YW_j',
    'YW j',
    'YWJ\u00e9',
    'YWJj\n'
  ]
  for (const s of bad) {
    t.notOk(isStrictBase64(s), JSON.stringify(s))
    t.same(decodeBasicCredentials(s), { ok: false, reason: 'malformed' }, JSON.stringify(s))
  }
  t.notOk(isStrictBase64(undefined as unknown as string))
})

test('RFC 7617 2: anything but `Basic <token68>` is refused without throwing', async (t) => {
  t.same(parseBasic(undefined), { ok: false, reason: 'missing' })
  t.same(parseBasic(''), { ok: false, reason: 'missing' })
  t.same(parseBasic('Basic'), { ok: false, reason: 'malformed' })
  t.same(parseBasic('Basic realm="x"'), { ok: false, reason: 'malformed' })
  t.same(parseBasic('Basic a b'), { ok: false, reason: 'malformed' })
  t.same(parseBasic('Bearer abc'), { ok: false, reason: 'wrong-scheme' })
  t.same(parseBasic('Basic ' + 'QUFB'.repeat(3000)), { ok: false, reason: 'malformed' }, 'over the 8 KiB cap')
  t.same(parseBasic('Basic ' + b64('a:' + 'b'.repeat(9000)), { maxLength: 20000 }), { ok: true, userId: 'a', password: 'b'.repeat(9000) })
  t.same(parseBasic('Basic dXNlcjpwYXNz-'), { ok: false, reason: 'malformed' }, 'token68 but not base64')
  t.same(parseBasic('Basic dXNlcjpwYXN'), { ok: false, reason: 'malformed' }, 'truncated')
})

test('RFC 7617 2 and 2.1: challenge is Basic realm="…", charset="UTF-8"', async (t) => {
  t.equal(basicChallenge('WallyWorld'), 'Basic realm="WallyWorld", charset="UTF-8"')
  t.equal(basicChallenge('say "hi"', { charset: false }), 'Basic realm="say \\"hi\\""')
  t.throws(() => basicChallenge('evil\r\nSet-Cookie: a=b'), TypeError)
})

test('property: parseBasic never throws and refuses what is not base64', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (s) => {
    const r = parseBasic('Basic ' + s)
    return typeof r.ok === 'boolean' && (!r.ok || isStrictBase64(s.trim()))
  }), { numRuns: 3000 })
  t.doesNotThrow(() => fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
    const r = decodeBasicCredentials(Buffer.from(bytes).toString('base64'))
    return typeof r.ok === 'boolean'
  }), { numRuns: 3000 }), 'no input threw')
})

test('property: encode then parse gives back the NFC user-id and password', async (t) => {
  const noControl = (s: string): boolean => [...s].every((c) => c.charCodeAt(0) >= 0x20 && c !== '\u007f')
  const text = fc.string({ unit: 'grapheme', maxLength: 20 }).filter(noControl)
  t.doesNotThrow(() => fc.assert(fc.property(text.filter((s) => !s.includes(':')), text, (userId, password) => {
    const r = parseBasic('Basic ' + encodeBasicCredentials(userId, password))
    return r.ok && r.userId === userId.normalize('NFC') && r.password === password.normalize('NFC')
  }), { numRuns: 2000 }), 'round trips hold')
})
