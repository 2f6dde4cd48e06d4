import { test } from 'tap'
import { nearKey } from '../../lib/near-key'

const KEYS = ['auth', 'conditional', 'contentType', 'prefer']

test('a key within a typo of a known key names it: case, two neighbours swapped', async (t) => {
  t.equal(nearKey('Auth', KEYS), 'auth')
  t.equal(nearKey('auht', KEYS), 'auth')
  t.equal(nearKey('conditoinal', KEYS), 'conditional')
})

test('keys of 7 letters or more also allow one letter added, lost or changed', async (t) => {
  t.equal(nearKey('conditonal', KEYS), 'conditional', 'one letter lost')
  t.equal(nearKey('conditionall', KEYS), 'conditional', 'one letter added')
  t.equal(nearKey('contentTipe', KEYS), 'contentType', 'one letter changed')
})

test('short keys allow no letter added, lost or changed; an exact key or a far one is no typo', async (t) => {
  t.equal(nearKey('aut', KEYS), undefined, 'one letter lost from a short key')
  t.equal(nearKey('auths', KEYS), undefined, 'one letter added to a short key')
  t.equal(nearKey('oath', KEYS), undefined, 'one letter changed in a short key')
  t.equal(nearKey('auth', KEYS), undefined, 'the key itself')
  t.equal(nearKey('conditionalish', KEYS), undefined, 'two letters more')
  t.equal(nearKey('cache', KEYS), undefined)
})
