/** Authentication: 401 with WWW-Authenticate to missing, invalid and insufficient credentials. */
import { readChallenges, type Challenge } from '@http-conventions/grammar'
import { answer, bodyRequest, is2xx, json, statusOf, type Context, type Headers, type Scheme } from '../context'
import type { Rule, Verdict } from '../rule'
import { said } from '../statements'
import { header, headerValues, type Exchange } from '../transport'

function basicLine (user: string, password: string): Headers { return [['Authorization', 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')]] }

/** POSTs a valid body to the collection with exactly `headers` (no credentials of the run's own). */
async function postWith (c: Context, headers: Headers, target = c.targets.collection as string): Promise<Exchange> {
  const sent = c.sample()
  const ex = await c.send(bodyRequest('POST', target, json(sent), headers))
  await c.track(ex, sent)
  return ex
}

/** PUT, PATCH and DELETE without credentials, on a resource of their own (each could change it). */
async function otherMethods (c: Context, v: Verdict): Promise<void> {
  const fresh = (await c.create()).path
  if (fresh === undefined) return
  const writes: Array<[string, string | undefined, string | null]> = []
  if (c.takesPut()) writes.push(['PUT', json(c.sample()), 'application/json'])
  if (await c.takesPatch(fresh)) writes.push(['PATCH', '{}', 'application/merge-patch+json'])
  writes.push(['DELETE', undefined, null])
  for (const [method, body, type] of writes) {
    const ex = await c.write(method, fresh, body, { auth: false, type })
    v.check(statusOf(ex) === 401, `${method} ${fresh} without credentials: expected 401, got ${answer(ex)}`, ex)
  }
}

const without: Rule = {
  id: 'auth.401-without-credentials',
  title: 'A write without credentials is 401 (POST, PUT, PATCH, DELETE)',
  section: '5.2 Challenge flow',
  statement: said('auth.401'),
  rfc: 'RFC 9110 15.5.2',
  needs: ['write', 'collection', 'protected'],
  async probe (c, v) {
    const ex = await c.challenge() as Exchange
    v.check(statusOf(ex) === 401, `POST ${c.targets.collection as string} without credentials: expected 401, got ${answer(ex)}`, ex)
    await otherMethods(c, v)
  }
}

/** A rule: wrong credentials of `scheme` are 401, when the 401 offers the scheme. */
function invalid (scheme: Scheme, title: string, rfc: string, line: (c: Context) => Promise<Headers>): Rule {
  return {
    id: `auth.401-invalid-${scheme}`,
    title,
    section: '5.2 Challenge flow',
    statement: said('auth.401'),
    rfc,
    needs: ['write', 'collection', 'protected'],
    async probe (c, v) {
      await c.challenge()
      if (!c.offered.includes(scheme)) { v.skip(`the 401 offers no ${scheme} challenge`); return }
      const bad = await postWith(c, await line(c))
      v.check(statusOf(bad) === 401, `POST with invalid ${scheme} credentials: expected 401, got ${answer(bad)}`, bad)
    }
  }
}

const invalidBasic = invalid('basic', 'Basic credentials of an unknown user are 401', 'RFC 7617', async (c) => basicLine(`audit-${c.tag}`, 'wrong-password'))
const invalidBearer = invalid('bearer', 'An unknown Bearer token is 401', 'RFC 6750 3.1', async (c) => [['Authorization', `Bearer audit-invalid-${c.tag}`]])
const invalidDigest = invalid('digest', 'A Digest response of an unknown user is 401', 'RFC 7616 3.4', async (c) => {
  const s = await c.digestChallenge()
  return s === undefined ? [] : [['Authorization', c.digestLine(s, `audit-${c.tag}`, 'wrong-password', 'POST', c.targets.collection as string)]]
})

const wrongPassword: Rule = {
  id: 'auth.wrong-password',
  title: 'A known user with a wrong password is 401, answered as an unknown user is',
  section: '5.2 Challenge flow',
  statement: said('auth.body'),
  rfc: 'RFC 7617',
  needs: ['write', 'collection', 'protected', 'basic'],
  async probe (c, v) {
    const user = (c.o.credentials.basic as { user: string }).user
    const wrong = await postWith(c, basicLine(user, `audit-wrong-${c.tag}`))
    if (!v.check(statusOf(wrong) === 401, `POST as ${user} with a wrong password: expected 401, got ${answer(wrong)}`, wrong)) return
    const unknown = await postWith(c, basicLine(`audit-${c.tag}`, `audit-wrong-${c.tag}`))
    v.check(unknown.response?.body.equals(wrong.response?.body ?? Buffer.alloc(0)) === true, 'the 401 to a wrong password differs from the 401 to an unknown user: it tells which part was wrong', wrong)
  }
}

/**
 * The service's Digest challenge, and a POST to the collection it accepted with the given
 * credentials (its Authorization line); undefined, with the rule skipped saying why, when the
 * 401 offers no Digest challenge or the credentials were refused.
 */
async function acceptedDigest (c: Context, v: Verdict): Promise<{ s: Challenge, d: { user: string, password: string }, target: string, line: string } | undefined> {
  const s = await c.digestChallenge()
  if (s === undefined) { v.skip('the 401 offers no Digest challenge with MD5 or SHA-256'); return undefined }
  const d = c.o.credentials.digest as { user: string, password: string }
  const target = c.targets.collection as string
  const line = c.digestLine(s, d.user, d.password, 'POST', target)
  const first = await postWith(c, [['Authorization', line]])
  if (!is2xx(first)) { v.skip(`the Digest credentials were not accepted: ${answer(first)}`); return undefined }
  return { s, d, target, line }
}

const replay: Rule = {
  id: 'auth.digest-replay',
  title: 'A Digest response sent again (same nonce and nc) is 401',
  section: '5.2 Challenge flow',
  statement: said('auth.401'),
  rfc: 'RFC 7616 3.4, 5.12',
  needs: ['write', 'collection', 'protected', 'digest'],
  async probe (c, v) {
    const a = await acceptedDigest(c, v)
    if (a === undefined) return
    const again = await postWith(c, [['Authorization', a.line]])
    v.check(statusOf(again) === 401, `the same Digest response again (same nonce, same nc): expected 401, got ${answer(again)}`, again)
  }
}

/** The nonce-count of a Digest Authorization line (RFC 7616 3.4: `nc`, 8 hex digits). */
function countOf (line: string): number { return parseInt(/, nc=([0-9a-f]{8}),/.exec(line)?.[1] ?? '0', 16) }

/** The Digest challenge of a 401 with the algorithm of `s`, when it says stale=true with a new nonce. */
function staleChallenge (ex: Exchange, s: Challenge): Challenge | undefined {
  const algorithm = (s.params.algorithm ?? 'MD5').toUpperCase()
  const fresh = readChallenges(headerValues(ex.response, 'www-authenticate')).challenges
    .find((ch) => ch.scheme === 'digest' && (ch.params.algorithm ?? 'MD5').toUpperCase() === algorithm)
  return fresh?.params.stale?.toLowerCase() === 'true' && fresh.params.nonce !== s.params.nonce ? fresh : undefined
}

const stale: Rule = {
  id: 'auth.digest-stale',
  title: 'A right Digest response on a nonce no longer good is 401 with stale=true and a new nonce, which then works',
  section: '5.2 Challenge flow',
  statement: said('auth.401'),
  rfc: 'RFC 7616 3.3, 3.4',
  needs: ['write', 'collection', 'protected', 'digest'],
  async probe (c, v) {
    const a = await acceptedDigest(c, v)
    if (a === undefined) return
    const { s, d, target } = a
    // the nonce is spent at that count: a right response (new cnonce) is on a stale nonce
    const again = await postWith(c, [['Authorization', c.digestLine(s, d.user, d.password, 'POST', target, countOf(a.line))]])
    const fresh = staleChallenge(again, s)
    if (!v.check(statusOf(again) === 401 && fresh !== undefined, `a right Digest response on a nonce whose count was used (new cnonce): expected 401 with a Digest challenge stale=true and a new nonce, got ${answer(again)}`, again)) return
    const retry = await postWith(c, [['Authorization', c.digestLine(fresh as Challenge, d.user, d.password, 'POST', target, 1)]])
    v.check(is2xx(retry), `the same credentials on the new nonce of the stale=true challenge: expected 2xx, got ${answer(retry)}`, retry)
  }
}

const insufficient: Rule = {
  id: 'auth.insufficient-scope',
  title: 'A token without the scope is 401 with error="insufficient_scope" (rfc9110: 403)',
  section: '5.2 Challenge flow',
  statement: said('auth.scope'),
  rfc: 'RFC 6750 3.1',
  needs: ['write', 'collection', 'insufficient-token'],
  async probe (c, v) {
    const ex = await postWith(c, [['Authorization', `Bearer ${c.o.credentials.insufficientBearer as string}`]])
    if (!c.spec) { v.check(statusOf(ex) === 403, `POST with a token that lacks the scope: expected 403, got ${answer(ex)}`, ex); return }
    const bearer = readChallenges(headerValues(ex.response, 'www-authenticate')).challenges.find((ch) => ch.scheme === 'bearer')
    v.check(statusOf(ex) === 401 && bearer?.params.error === 'insufficient_scope', `POST with a token that lacks the scope: expected 401 with a Bearer challenge error="insufficient_scope", got ${answer(ex)}${bearer === undefined ? ' without a Bearer challenge' : ` with error=${bearer.params.error ?? 'absent'}`}`, ex)
  }
}

const accepted: Rule = {
  id: 'auth.credentials-accepted',
  title: 'Valid credentials of each given scheme fulfil the request',
  section: '5.2 Challenge flow',
  statement: said('auth.401'),
  needs: ['write', 'collection', 'credentials'],
  async probe (c, v) {
    for (const scheme of ['basic', 'bearer', 'digest'] as const) {
      if (c.o.credentials[scheme] === undefined) continue
      const ex = await postWith(c, await c.authorization(scheme, 'POST', c.targets.collection as string))
      v.check(is2xx(ex), `POST with the given ${scheme} credentials: expected 2xx, got ${answer(ex)}`, ex)
    }
  }
}

const headerOnly: Rule = {
  id: 'auth.header-only',
  title: 'A token in the query string is not credentials: 401',
  section: '5.2 Challenge flow',
  statement: said('auth.header-only'),
  rfc: 'RFC 6750 2.3',
  needs: ['write', 'collection', 'protected', 'bearer'],
  async probe (c, v) {
    const target = `${c.targets.collection as string}?access_token=${encodeURIComponent(c.o.credentials.bearer as string)}`
    const ex = await postWith(c, [], target)
    v.check(statusOf(ex) === 401, `POST with the token in access_token and no Authorization: expected 401, got ${answer(ex)}`, ex)
  }
}

const wwwAuthenticate: Rule = {
  id: 'auth.www-authenticate',
  title: 'Every 401 carries WWW-Authenticate',
  section: '5.3 WWW-Authenticate header',
  statement: said('auth.every-401'),
  rfc: 'RFC 9110 11.6.1',
  needs: [],
  each (ex, res, v) {
    if (res.status === 401) v.check(headerValues(res, 'www-authenticate').length > 0, '401 without WWW-Authenticate', ex)
  }
}

const form: Rule = {
  id: 'auth.challenge-form',
  title: 'Every challenge parses and reads <scheme> realm="<realm>"',
  section: '5.3 WWW-Authenticate header',
  statement: said('auth.401'),
  rfc: 'RFC 9110 11.6.1',
  needs: [],
  each (ex, res, v) {
    const read = readChallenges(headerValues(res, 'www-authenticate'))
    for (const bad of read.malformed) v.fail(`a challenge that does not parse: ${JSON.stringify(bad.slice(0, 80))}`, ex)
    for (const ch of read.challenges) v.check(typeof ch.params.realm === 'string', `the ${ch.scheme} challenge has no realm="..."`, ex)
  }
}

const lines: Rule = {
  id: 'auth.challenge-lines',
  title: 'Challenges are written one per WWW-Authenticate line',
  section: '5.3 WWW-Authenticate header',
  statement: said('auth.lines'),
  rfc: 'RFC 9110 11.6.1',
  needs: [],
  each (ex, res, v) {
    for (const line of headerValues(res, 'www-authenticate')) {
      const n = readChallenges(line).challenges.length
      if (n > 0) v.check(n === 1, `one WWW-Authenticate line holds ${n} challenges: ${JSON.stringify(line.slice(0, 80))}`, ex)
    }
  }
}

const noStore: Rule = {
  id: 'auth.401-no-store',
  title: 'A 401 is Cache-Control: no-store',
  section: '5.2 Challenge flow',
  statement: said('auth.body'),
  rfc: 'RFC 9111 5.2.2.5',
  needs: [],
  each (ex, res, v) {
    if (res.status !== 401) return
    const cc = (header(res, 'cache-control') ?? '').toLowerCase().split(',').map((s) => s.trim())
    v.check(cc.includes('no-store'), `401 with Cache-Control ${header(res, 'cache-control') ?? 'absent'}, not no-store`, ex)
  }
}

export const AUTH_RULES: readonly Rule[] = [without, invalidBasic, invalidBearer, invalidDigest, wrongPassword, replay, stale, insufficient, accepted, headerOnly, wwwAuthenticate, form, lines, noStore]
