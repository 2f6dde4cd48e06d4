import { test } from 'tap'
import fc from 'fast-check'
import { secretMatcher, storeSecret, unmatchableSecret } from '../../../lib/auth/secret'

const matches = secretMatcher()

test('a presented password matches exactly its stored secret: not a prefix, not an extension, not another case', async (t) => {
  const stored = storeSecret('open sesame')
  t.equal(matches('open sesame', stored), true)
  t.equal(matches('open sesam', stored), false, 'a prefix')
  t.equal(matches('open sesame\u0000', stored), false, 'the same bytes with a NUL after them (the zero padding) do not match')
  t.equal(matches('open sesame!', stored), false, 'an extension')
  t.equal(matches('Open sesame', stored), false)
  t.equal(matches('', stored), false)
  t.equal(matches('', storeSecret('')), true, 'an empty password is a password')
})

test('UTF-8 secrets are compared as bytes (the caller normalises them first)', async (t) => {
  const stored = storeSecret('pässwörd')
  t.equal(matches('pässwörd', stored), true)
  t.equal(matches('passwörd', stored), false)
})

test('secrets longer than the fixed block are compared by their SHA-256, against short and long presented ones', async (t) => {
  const long = 'x'.repeat(200)
  const stored = storeSecret(long)
  t.equal(matches(long, stored), true)
  t.equal(matches(long + 'y', stored), false)
  t.equal(matches('x'.repeat(128), stored), false, 'the first block of a long secret is not the secret')
  t.equal(matches(long, storeSecret('short')), false, 'a long presented secret against a short stored one')
})

test('nothing matches the secret of an unknown user', async (t) => {
  const nobody = unmatchableSecret()
  for (const s of ['', 'a', 'x'.repeat(128), 'x'.repeat(500)]) t.equal(matches(s, nobody), false, `${s.length} characters`)
})

test('property: a presented password matches its stored secret exactly when the strings are equal', async (t) => {
  const run = fc.check(fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 80 }), (a, b) => {
    return matches(a, storeSecret(b)) === (a === b)
  }), { numRuns: 2000 })
  t.equal(run.failed, false, `2000 random pairs agree with string equality${run.failed ? `; counterexample ${JSON.stringify(run.counterexample)}` : ''}`)
})
