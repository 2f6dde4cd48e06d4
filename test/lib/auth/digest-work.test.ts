// RFC 7616 5.x: an unknown user costs the same hashing and comparison as a
// known one with a wrong password, so timing does not reveal which user names exist.
import { test } from 'tap'
import * as digest from '../../../lib/auth/digest'
import { answer } from './digest-client'

// The module object lib/auth/digest calls its hashing and comparison through (its compiled
// CommonJS reads each function from it at the call), wrapped below to count the calls.
const crypto = require('node:crypto') as typeof import('node:crypto')

test('constant work: an unknown user is verified with the same work as a known one (dummy secret)', async (t) => {
  const calls: string[] = []
  const { createHash, createHmac, timingSafeEqual } = crypto
  t.teardown(() => Object.assign(crypto, { createHash, createHmac, timingSafeEqual }))
  Object.assign(crypto, {
    createHash: (alg: string) => { calls.push('hash'); return createHash(alg) },
    createHmac: (alg: string, key: import('node:crypto').BinaryLike) => { calls.push('hmac'); return createHmac(alg, key) },
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => { calls.push('compare'); return timingSafeEqual(a, b) }
  })
  for (const algorithm of ['SHA-256', 'MD5-sess'] as const) {
    const d = digest.createDigest({ realm: 'r', secret: 'x'.repeat(32), algorithms: [algorithm] })
    const c = d.challenges()[0]
    const work = async (username: string, password: string, lookup: digest.DigestUserLookup, nc: number): Promise<{ calls: string[], ok: boolean }> => {
      const params = answer(c, { username, password, nc })
      calls.length = 0
      const r = await d.verify(params, 'GET', '/', lookup)
      return { calls: [...calls], ok: r.ok }
    }
    const users: digest.DigestUserLookup = ({ username }) => (username === 'known' ? { password: 'pw' } : null)
    const right = await work('known', 'pw', users, 1)
    const wrong = await work('known', 'nope', users, 2)
    const unknown = await work('stranger', 'pw', users, 3)
    const noHa1 = await work('known', 'pw', () => ({ ha1: {} }), 4)
    const ha1 = { 'SHA-256': digest.digestHa1('SHA-256', 'known', 'r', 'pw'), MD5: digest.digestHa1('MD5', 'known', 'r', 'pw') }
    const byHa1 = await work('known', 'pw', () => ({ ha1 }), 5)
    t.equal(right.ok, true)
    t.equal(wrong.ok, false)
    t.equal(unknown.ok, false)
    t.ok(right.calls.includes('compare'), `${algorithm}: the response is compared with timingSafeEqual`)
    t.same(unknown.calls, wrong.calls, `${algorithm}: unknown user and wrong password do the same work: ${wrong.calls.join(' ')}`)
    t.same(noHa1.calls, wrong.calls, `${algorithm}: a record without an HA1 for the hash does the same work`)
    t.equal(byHa1.ok, true)
    t.same(byHa1.calls, right.calls, `${algorithm}: a stored HA1 does the same work as a password`)
    t.same(right.calls, wrong.calls, `${algorithm}: as does the right password, up to the comparison`)
  }
})
