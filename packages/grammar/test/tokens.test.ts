import { test } from 'tap'
import { splitList, parseQuotedString, quoteString, isToken, headerLines, skipOws, tokenEnd } from '../src/tokens'

test('RFC 9110 5.6.1: list elements are trimmed, empty ones dropped, commas in quotes kept', async (t) => {
  t.same(splitList(' a ,, "b,c" ,\td '), ['a', '"b,c"', 'd'])
  t.same(splitList(''), [])
  t.same(splitList(', ,'), [])
  t.equal(splitList('"open'), null)
  t.equal(splitList('a,b,c', 2), null, 'more elements than the cap')
})

test('RFC 9110 5.6.4: quoted-string unescapes quoted-pairs and refuses controls', async (t) => {
  t.same(parseQuotedString('"a\\"b\\\\c" rest', 0), { value: 'a"b\\c', end: 9 })
  t.equal(parseQuotedString('x', 0), null)
  t.equal(parseQuotedString('"a\nb"', 0), null)
  t.equal(parseQuotedString('"a\\', 0), null)
  t.equal(parseQuotedString('"a\\\n"', 0), null)
  t.equal(quoteString('say "hi" \\ok'), '"say \\"hi\\" \\\\ok"')
  t.throws(() => quoteString('a\r\nSet-Cookie: x'), TypeError)
})

test('RFC 9110 5.6.2: tokens', async (t) => {
  t.ok(isToken('vcdiff'))
  t.notOk(isToken(''))
  t.notOk(isToken('a b'))
  t.notOk(isToken('é'))
  t.equal(tokenEnd('abc def', 0), 3)
  t.equal(skipOws(' \t x', 0), 3)
  t.equal(headerLines(['a', 'b']), 'a, b')
  t.equal(headerLines('a'), 'a')
  t.equal(headerLines(undefined), undefined)
})
