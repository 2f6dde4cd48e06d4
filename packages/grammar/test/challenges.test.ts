/** RFC 9110 11.6.1: the WWW-Authenticate list grammar the client answers and the auditor judges. */
import { test } from 'tap'
import { parseChallenges, readChallenges } from '../src/challenges'

test('RFC 9110 11.6.1: a WWW-Authenticate line holds several challenges; several lines add up; broken ones are skipped', async (t) => {
  t.same(parseChallenges('Basic realm="a, b", charset="UTF-8", Bearer, Digest realm="r", nonce="n", qop="auth, auth-int", Newauth abc=='), [
    { scheme: 'basic', params: { realm: 'a, b', charset: 'UTF-8' } },
    { scheme: 'bearer', params: {} },
    { scheme: 'digest', params: { realm: 'r', nonce: 'n', qop: 'auth, auth-int' } },
    { scheme: 'newauth', params: {}, token68: 'abc==' }
  ])
  t.same(parseChallenges(['Basic realm="x"', 'Bearer realm = "y"']).map((c) => [c.scheme, c.params.realm]), [['basic', 'x'], ['bearer', 'y']])
  t.same(parseChallenges(undefined), [])
  t.same(parseChallenges('Basic realm="unterminated'), [], 'an unterminated quoted string')
  t.same(parseChallenges('"quoted" first, Basic realm="x"').map((c) => c.scheme), ['basic'], 'an element that is no challenge and no parameter is dropped')
  t.same(parseChallenges('Basic realm="a", realm="b"'), [], 'a repeated parameter')
  t.equal(parseChallenges(Array.from({ length: 40 }, (_, i) => `S${i}`).join(', ')).length, 32, 'at most 32 challenges')
})

test('what does not parse is kept as received, for the auditor to report', async (t) => {
  t.same(readChallenges(['Basic realm="unterminated', 'Bearer realm="a"']), { challenges: [{ scheme: 'bearer', params: { realm: 'a' } }], malformed: ['Basic realm="unterminated'] })
})
