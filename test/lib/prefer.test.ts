import { test } from 'tap'
import { parsePrefer, prefersMinimal } from '../../lib/prefer'

test('RFC 7240 2: preferences by name, case-insensitive, values unquoted, bare names true', async (t) => {
  t.same([...parsePrefer('RETURN=minimal, respond-async; foo=1, wait=10, handling="lenient"')], [
    ['return', 'minimal'], ['respond-async', true], ['wait', '10'], ['handling', 'lenient']
  ])
  t.same([...parsePrefer(['return = minimal', 'wait=5'])], [['return', 'minimal'], ['wait', '5']], 'several lines, BWS around =')
})

test('RFC 7240 2: only the first instance of a preference counts', async (t) => {
  t.equal(parsePrefer('return=minimal, return=representation').get('return'), 'minimal')
})

test('RFC 7240 2: a malformed element is ignored, not the header', async (t) => {
  t.same([...parsePrefer('=x, wait=@, return=minimal')], [['return', 'minimal']])
  t.same([...parsePrefer('return=minimal, handling="unterminated')], [], 'an unterminated quoted string: the list cannot be split, nothing is honoured')
  t.same([...parsePrefer('return=minimal, handling="a\u0001"')], [], 'nor with a control character in a quoted string')
  t.same([...parsePrefer(undefined)], [])
  t.same([...parsePrefer('')], [])
})

test('RFC 7240 4.2: return=minimal, in any case, quoted or not; other values and absence are not minimal', async (t) => {
  for (const v of ['return=minimal', 'return="minimal"', 'Return=MINIMAL', 'wait=1, return=minimal']) t.ok(prefersMinimal(v), v)
  for (const v of [undefined, 'return=representation', 'return', 'minimal', 'return=minimal-ish']) t.notOk(prefersMinimal(v), String(v))
})
