import { test } from 'tap'
import fc from 'fast-check'
import { parseMediaType, isUtf8Charset, isTextual, MAX_MEDIA_TYPE_LENGTH } from '../src/media-type'
import { parseAccept, parseQValue, parseWeightedTokens, negotiateMediaType } from '../src/qlist'

test('RFC 9110 8.3.1: type, subtype and parameter names are case-insensitive; values keep case', async (t) => {
  const mt = parseMediaType('Application/JSON ; Charset="UTF-8";  profile=Abc')
  t.same(mt && { ...mt, parameters: { ...mt.parameters } }, { type: 'application', subtype: 'json', essence: 'application/json', parameters: { charset: 'UTF-8', profile: 'Abc' } })
  t.ok(parseMediaType('text/plain;'), 'an empty parameter after ";" is allowed (RFC 9110 5.6.6)')
  t.ok(parseMediaType('text/plain;;charset=utf-8'))
})

test('malformed media types and repeated parameters are refused', async (t) => {
  for (const bad of ['', 'json', '/json', 'application/', 'application/json x', 'a/b; c', 'a/b; c=', 'a/b; =c', 'a/b; c="open', 'a/b; c=1; C=2', 'a/b;c=d e', 'x'.repeat(MAX_MEDIA_TYPE_LENGTH + 1) + '/a']) {
    t.equal(parseMediaType(bad), null, JSON.stringify(bad))
  }
})

test('charset: absent or UTF-8 in any case is UTF-8; text and XML types are textual', async (t) => {
  t.ok(isUtf8Charset(parseMediaType('text/plain')!))
  t.ok(isUtf8Charset(parseMediaType('text/plain; charset=uTf-8')!))
  t.notOk(isUtf8Charset(parseMediaType('text/plain; charset=utf8')!))
  t.ok(isTextual('text/csv'))
  t.ok(isTextual('application/xml'))
  t.ok(isTextual('image/svg+xml'))
  t.notOk(isTextual('application/json'))
})

test('RFC 9110 12.4.2: qvalues', async (t) => {
  t.equal(parseQValue('1'), 1000)
  t.equal(parseQValue('1.000'), 1000)
  t.equal(parseQValue('0'), 0)
  t.equal(parseQValue('0.5'), 500)
  t.equal(parseQValue('0.123'), 123)
  for (const bad of ['', '2', '1.001', '0.1234', '.5', '0,5', 'x', '0.x']) t.equal(parseQValue(bad), -1, bad)
})

test('RFC 3229 10.5.3: A-IM tokens with weights; unknown or broken elements skipped', async (t) => {
  t.same(parseWeightedTokens('VCDIFF, gzip;q=0.5 , identity;q=0, bad token, x;q=2, y;q'), [
    { token: 'vcdiff', q: 1000 }, { token: 'gzip', q: 500 }, { token: 'identity', q: 0 }
  ])
  t.same(parseWeightedTokens(undefined), [])
  t.same(parseWeightedTokens('"unterminated'), [])
  t.same(parseWeightedTokens('a;foo=bar'), [{ token: 'a', q: 1000 }])
})

test('RFC 9110 12.5.1: Accept negotiation picks the most specific match; ties keep server order', async (t) => {
  const offers = ['application/json', 'application/xml']
  t.equal(negotiateMediaType(undefined, offers), 'application/json')
  t.equal(negotiateMediaType('', offers), 'application/json')
  t.equal(negotiateMediaType('garbage', offers), 'application/json')
  t.equal(negotiateMediaType('application/xml', offers), 'application/xml')
  t.equal(negotiateMediaType('*/*;q=0.1, application/xml', offers), 'application/xml')
  t.equal(negotiateMediaType('application/*;q=0.5, application/json;q=0.1', offers), 'application/xml')
  t.equal(negotiateMediaType('text/html', offers), null, 'every offer refused')
  t.equal(negotiateMediaType('application/json;q=0', ['application/json']), null)
  t.equal(negotiateMediaType(undefined, []), null)
  t.same(parseAccept('*/json, text/*;q=0.2;level=1, bad;q=1').map((r) => r.range.essence), ['text/*'])
  t.same(parseAccept('a/b;q=5'), [])
  t.same(parseAccept(undefined), [])
  t.same(parseAccept('"x'), [])
})

test('parsers never throw on arbitrary input', async (t) => {
  fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => {
    parseMediaType(s)
    parseAccept(s)
    parseWeightedTokens(s)
    negotiateMediaType(s, ['application/json', 'application/xml'])
    return true
  }), { numRuns: 2000 })
  t.equal(parseAccept('a/b,'.repeat(100)).length, 0, 'more elements than the cap: the list is ignored')
})
