/**
 * Digest principals (RFC 7616 3.3 and 4, charset=UTF-8): a user name is compared in NFC,
 * as Basic's user-id is (RFC 7617 2.1), so one user is one principal however the client
 * composed the name. And a Digest scheme registered without its nonce secret fails at boot
 * naming the option.
 */
import { test, type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { answer, authorization } from '../lib/auth/digest-client'
import type { AuthOptions, AuthPrincipal } from '../../plugins/index'

const SECRET = 'digest-principal-secret-digest-principal!'
const NFC = 'jos\u00e9'
const NFD = 'jose\u0301'

async function app (t: Test, auth: Omit<AuthOptions, 'profile'>): Promise<FastifyInstance> {
  const a = await buildApp({ auth })
  a.get('/me', { config: { auth: true } }, async (request: { principal: AuthPrincipal | null }) => ({ principal: request.principal }))
  t.teardown(() => a.close())
  await a.ready()
  return a
}

async function digestLogin (a: FastifyInstance, user: string, password: string, ext: boolean): Promise<{ status: number, subject: unknown }> {
  const first = await a.inject({ url: '/me' })
  const header = first.headers['www-authenticate']
  const challenge = (Array.isArray(header) ? header : [String(header)]).find((c) => c.startsWith('Digest')) as string
  const params = answer(challenge, { username: user, password, uri: '/me', ext })
  const res = await a.inject({ url: '/me', headers: { authorization: authorization(params) } })
  return { status: res.statusCode, subject: res.statusCode === 200 ? res.json().principal.subject : undefined }
}

test('RFC 7616 3.3 / RFC 7617 2.1: "josé" precomposed (NFC) and decomposed (NFD) is one Digest principal, as with Basic', async (t) => {
  for (const configured of [NFC, NFD]) {
    const a = await app(t, {
      realm: 'nfc',
      digest: { secret: SECRET, users: { [configured]: 'pässword' }, scopes: ['read'] },
      basic: { users: { [configured]: 'pässword' }, scopes: ['read'] }
    })
    const seen = new Set<unknown>()
    for (const sent of [NFC, NFD]) {
      const digest = await digestLogin(a, sent, 'pa\u0308ssword', true)
      t.equal(digest.status, 200, `Digest: configured ${configured === NFC ? 'NFC' : 'NFD'}, sent ${sent === NFC ? 'NFC' : 'NFD'}`)
      seen.add(digest.subject)
      const basic = await a.inject({ url: '/me', headers: { authorization: 'Basic ' + Buffer.from(`${sent}:pässword`, 'utf8').toString('base64') } })
      t.equal(basic.statusCode, 200)
      seen.add(basic.json().principal.subject)
    }
    t.same([...seen], [NFC], 'Digest and Basic both name the one NFC principal')
  }
})

test('RFC 7616 3.3: a Digest lookup is asked for the NFC name, and a wrong password is still refused', async (t) => {
  const asked: string[] = []
  const a = await app(t, {
    realm: 'nfc',
    digest: {
      secret: SECRET,
      scopes: ['read'],
      lookup: ({ username }) => {
        asked.push(username)
        return username === NFC ? { password: 'secret' } : null
      }
    }
  })
  t.same(await digestLogin(a, NFD, 'secret', true), { status: 200, subject: NFC })
  t.same(await digestLogin(a, NFD, 'wrong', true), { status: 401, subject: undefined })
  t.same(asked, [NFC, NFC])
})

test('fail at boot: Digest without its nonce secret names digest.secret', async (t) => {
  for (const secret of [undefined, null, 42]) {
    const err = await boot(buildApp({ auth: { realm: 'r', digest: { secret, users: { a: 'b' } } as never } })).then(() => null, (e: Error) => e)
    t.ok(err !== null, `secret ${String(secret)} is refused`)
    t.match(err?.message, /digest\.secret/, 'the message names the option')
    t.notMatch(err?.message, /first argument/, 'not Node\'s Buffer message')
  }
})
