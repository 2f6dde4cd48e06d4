/**
 * Every failure of the app's verifier is a refusal (docs/plugins.md, Authentication: "A
 * verifier that fails"; RFC 9110 15.5.2 and 11.6.1): whatever `basic.verify`,
 * `bearer.verify`, `auth.app.verify`, `digest.lookup` or the nonce-count store's `seen` does
 * (returns any value, throws or rejects with any value, undefined and null included, resolves
 * any value, at once or later, through a native promise or another thenable), the handler
 * runs only for a principal; anything else is a 401 with WWW-Authenticate, never a 2xx, on
 * every path into the suite's schemes: a route's `config.auth`, the `protect` policy, and a
 * strategy of @fastify/auth (`app.conventionAuth()`).
 */
import { test, type Test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyAuth from '@fastify/auth'
import { httpConventions, serverOptions, type AuthOptions, type AuthPrincipal } from '../../plugins/index'
import { answer, authorization } from '../lib/auth/digest-client'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 40
const SECRET = 'verifier-outcomes-secret-verifier-outcomes!'
const PASSWORD = 'ada-password'
const BASIC = 'Basic ' + Buffer.from(`ada:${PASSWORD}`).toString('base64')

type Scheme = 'basic' | 'bearer' | 'app' | 'digest lookup' | 'digest store'
type Path = 'config.auth' | 'protect' | 'conventionAuth'
const SCHEMES: readonly Scheme[] = ['basic', 'bearer', 'app', 'digest lookup', 'digest store']
const PATHS: readonly Path[] = ['config.auth', 'protect', 'conventionAuth']

/** How the app's code ends: it settles with `value`, or fails with it. */
type Settles = 'return' | 'resolve' | 'thenable' | 'later'
type Fails = 'throw' | 'reject' | 'thenable-reject' | 'later-reject'
interface Outcome { how: Settles | Fails, value: unknown }

/** The app's code, doing what `o` says. */
function perform (o: Outcome): unknown {
  switch (o.how) {
    case 'return': return o.value
    case 'throw': throw o.value
    case 'resolve': return Promise.resolve(o.value)
    case 'reject': return Promise.reject(o.value)
    case 'thenable': return { then: (ok: (v: unknown) => void) => ok(o.value) }
    case 'thenable-reject': return { then: (_ok: unknown, no: (e: unknown) => void) => no(o.value) }
    case 'later': return new Promise((resolve) => setImmediate(() => resolve(o.value)))
    case 'later-reject': return new Promise((_resolve, reject) => setImmediate(() => reject(o.value)))
  }
}

function isObject (v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** docs/plugins.md: scopes are an array of scope tokens or one space-separated string (none given: the default). */
function scopesOk (v: unknown): boolean {
  return v === undefined || v === null || typeof v === 'string' || (Array.isArray(v) && v.every((s) => typeof s === 'string'))
}

/** The documented contract of each verifier's result: is `v` a principal (or, for the store, an unused count)? */
function admits (scheme: Scheme, v: unknown): boolean {
  switch (scheme) {
    // `true`, or `{ subject?, scopes? }`
    case 'basic': return v === true || (isObject(v) && (v.subject === undefined || typeof v.subject === 'string') && scopesOk(v.scopes))
    // `{ subject, scopes?, expiresAt? }` with an expiry to come
    case 'bearer': return isObject(v) && typeof v.subject === 'string' && scopesOk(v.scopes) && (v.expiresAt === undefined || Number(v.expiresAt) > Date.now())
    // `{ subject, scopes? }` (anything else leaves the request to the HTTP schemes, and none are sent)
    case 'app': return isObject(v) && typeof v.subject === 'string' && scopesOk(v.scopes)
    // `{ password, scopes? }` with the password the client answers with
    case 'digest lookup': return isObject(v) && v.password === PASSWORD && scopesOk(v.scopes)
    // RFC 7616 5.4: `false`, the count was not used before
    case 'digest store': return v === false
  }
}

const scopes = fc.oneof(fc.constant(undefined), fc.string(), fc.array(fc.string(), { maxLength: 3 }))
/** Results the contract admits, so that the property sees both sides. */
const principals: Record<Scheme, fc.Arbitrary<unknown>> = {
  basic: fc.oneof(fc.constant(true), fc.record({ subject: fc.string(), scopes }, { requiredKeys: [] })),
  bearer: fc.record({ subject: fc.string(), scopes, expiresAt: fc.constant(Date.now() + 3600_000) }, { requiredKeys: ['subject'] }),
  app: fc.record({ subject: fc.string(), scopes }, { requiredKeys: ['subject'] }),
  'digest lookup': fc.record({ password: fc.constant(PASSWORD), scopes }, { requiredKeys: ['password'] }),
  'digest store': fc.constant(false)
}
/** Results near a principal: each field of any type. */
const nearly = fc.record({ subject: fc.anything(), scopes: fc.anything(), password: fc.oneof(fc.constant(PASSWORD), fc.anything()), expiresAt: fc.anything() }, { requiredKeys: [] })
const errors = fc.tuple(fc.string(), fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }))
  .map(([message, statusCode]) => statusCode === undefined ? new Error(message) : Object.assign(new Error(message), { statusCode }))
const values = (scheme: Scheme): fc.Arbitrary<unknown> => fc.oneof(
  fc.constantFrom(undefined, null, 0, '', false, true, NaN, 0n, 'ok', {}, [], { then: 5 }),
  principals[scheme], nearly, errors, fc.anything()
)
/** What a verifier of `scheme` may do: settle with any value, or fail with any value (a thenable of a principal too). */
const outcomes = (scheme: Scheme): fc.Arbitrary<Outcome> => fc.oneof(
  fc.record({ how: fc.constantFrom<Settles>('return', 'resolve', 'thenable', 'later'), value: values(scheme) }),
  fc.record({
    how: fc.constantFrom<Fails>('throw', 'reject', 'thenable-reject', 'later-reject'),
    value: fc.oneof(values(scheme), principals[scheme].map((p) => ({ then: (ok: (v: unknown) => void) => ok(p) })))
  })
)

interface Harness { app: FastifyInstance, ran: () => number, play: (scheme: Scheme, o: Outcome) => Promise<{ status: number, challenges: string, principal: AuthPrincipal | undefined }> }

/** An app whose verifiers do what the current case says, with one protected route reached by `path`. */
async function harness (path: Path): Promise<Harness> {
  let current: { scheme: Scheme, outcome: Outcome } | undefined
  const act = (scheme: Scheme, otherwise: unknown): unknown => current?.scheme === scheme ? perform(current.outcome) : otherwise
  const auth: AuthOptions = {
    basic: { verify: () => act('basic', false) as never },
    bearer: { verify: () => act('bearer', null) as never },
    app: { verify: () => act('app', null) as never },
    digest: {
      secret: SECRET,
      lookup: () => act('digest lookup', { password: PASSWORD }) as never,
      store: { seen: () => act('digest store', Promise.resolve(false)) as never }
    },
    protect: path === 'protect'
  }
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { auth })
  await app.register(fastifyAuth)
  let ran = 0
  const handler = async (request: { principal: AuthPrincipal | null }): Promise<unknown> => { ran++; return { principal: request.principal } }
  if (path === 'config.auth') app.get('/r', { config: { auth: true } }, handler)
  if (path === 'protect') app.get('/r', handler)
  if (path === 'conventionAuth') app.get('/r', { onRequest: app.auth([app.conventionAuth()]) }, handler)
  await app.ready()
  async function play (scheme: Scheme, outcome: Outcome): Promise<{ status: number, challenges: string, principal: AuthPrincipal | undefined }> {
    let header: string | undefined = scheme === 'basic' ? BASIC : scheme === 'bearer' ? 'Bearer tok3n' : undefined
    if (scheme === 'digest lookup' || scheme === 'digest store') {
      current = undefined
      const first = await app.inject({ url: '/r' })
      const challenge = ([] as string[]).concat(first.headers['www-authenticate'] ?? [])[0]
      header = authorization(answer(challenge, { username: 'ada', password: PASSWORD, uri: '/r' }))
    }
    current = { scheme, outcome }
    const res = await app.inject({ url: '/r', headers: header === undefined ? {} : { authorization: header } })
    current = undefined
    return { status: res.statusCode, challenges: ([] as string[]).concat(res.headers['www-authenticate'] ?? []).join(', '), principal: res.statusCode === 200 ? res.json().principal : undefined }
  }
  return { app, ran: () => ran, play }
}

async function harnesses (t: Test): Promise<Record<Path, Harness>> {
  const built = {} as Record<Path, Harness>
  for (const path of PATHS) built[path] = await harness(path)
  t.teardown(() => Promise.all(PATHS.map((p) => built[p].app.close())))
  return built
}

/** The rule: the handler runs only for a principal; otherwise 401 with WWW-Authenticate, never a 2xx. */
async function check (h: Harness, scheme: Scheme, outcome: Outcome): Promise<string | null> {
  const before = h.ran()
  const res = await h.play(scheme, outcome)
  const ran = h.ran() - before
  const settles = ['return', 'resolve', 'thenable', 'later'].includes(outcome.how)
  if (settles && admits(scheme, outcome.value)) {
    if (res.status !== 200 || ran !== 1 || typeof res.principal?.subject !== 'string') return `a principal was refused: ${res.status}`
    return null
  }
  if (ran !== 0) return `the handler ran (${res.status})`
  if (res.status !== 401) return `answered ${res.status}, not 401`
  if (res.challenges === '') return 'a 401 without WWW-Authenticate'
  return null
}

test('docs/plugins.md (A verifier that fails): every outcome of a verifier, on every path, lets the handler run only for a principal; else 401 with WWW-Authenticate', async (t) => {
  const h = await harnesses(t)
  for (const scheme of SCHEMES) {
    const seen = { principal: 0, refusal: 0 }
    await fc.assert(fc.asyncProperty(outcomes(scheme), fc.constantFrom(...PATHS), async (outcome, path) => {
      const settles = ['return', 'resolve', 'thenable', 'later'].includes(outcome.how)
      if (settles && admits(scheme, outcome.value)) seen.principal++
      else seen.refusal++
      const wrong = await check(h[path], scheme, outcome)
      if (wrong !== null) throw new Error(`${scheme} via ${path}: ${wrong}`)
    }), { seed: 20261127, numRuns: RUNS * PATHS.length })
    t.ok(seen.principal > 0 && seen.refusal > 0, `${scheme}: principals (${seen.principal}) and refusals (${seen.refusal}) were both generated`)
  }
})

// The shrunk counterexamples: a throw or rejection with a falsy value reached `next()` as
// success (the handler ran with principal null), and a rejection with 0, '' or false was
// answered 200 with that value as the body.
for (const value of [undefined, null, 0, '', false]) {
  test(`RFC 9110 15.5.2: a verifier that throws or rejects with ${value === '' ? "''" : String(value)} is a 401 with WWW-Authenticate, the handler never runs`, async (t) => {
    const h = await harnesses(t)
    for (const scheme of ['basic', 'bearer', 'app', 'digest lookup'] as const) {
      for (const how of ['throw', 'reject'] as const) {
        for (const path of PATHS) {
          const before = h[path].ran()
          const res = await h[path].play(scheme, { how, value })
          t.equal(res.status, 401, `${scheme} ${how}s via ${path}: 401`)
          t.not(res.challenges, '', `${scheme} ${how}s via ${path}: with challenges`)
          t.equal(h[path].ran(), before, `${scheme} ${how}s via ${path}: the handler did not run`)
        }
      }
    }
  })
}

test('RFC 9110 15.5.2: a verifier that throws an Error, or rejects with one carrying a statusCode of 200, is a 401 with WWW-Authenticate', async (t) => {
  const h = await harnesses(t)
  for (const value of [new Error('database down'), Object.assign(new Error('odd'), { statusCode: 200 }), { statusCode: 200, message: 'plain object' }, 'a string']) {
    for (const scheme of ['basic', 'bearer', 'app', 'digest lookup'] as const) {
      const res = await h['config.auth'].play(scheme, { how: 'reject', value })
      t.equal(res.status, 401, `${scheme} rejects with ${JSON.stringify(value)}`)
      t.not(res.challenges, '')
    }
  }
  t.equal(h['config.auth'].ran(), 0, 'the handler never ran')
})

test('docs/plugins.md (A verifier that fails): results outside the contract are refused, not read leniently', async (t) => {
  const h = await harnesses(t)
  const cases: Array<[Scheme, unknown]> = [
    ['basic', []], ['basic', { subject: 5 }], ['basic', { scopes: 5 }], ['basic', { scopes: ['read', 5] }], ['basic', 1],
    ['bearer', { subject: 'x', scopes: 5 }], ['bearer', 'x'],
    ['digest lookup', { password: PASSWORD, scopes: [5] }],
    ['digest store', undefined], ['digest store', 0], ['digest store', 'no']
  ]
  for (const [scheme, value] of cases) {
    const res = await h['config.auth'].play(scheme, { how: 'return', value })
    t.equal(res.status, 401, `${scheme} returns ${JSON.stringify(value)}`)
  }
  t.equal(h['config.auth'].ran(), 0, 'the handler never ran')
})

test('RFC 7616 3.3: a nonce-count store whose generation() throws still challenges; its nonces carry no generation, which a store judges used', async (t) => {
  const app = Fastify(serverOptions)
  const judged: Array<string | undefined> = []
  const store = {
    seen: async (_nonce: string, _nc: number, _ttl: number, generation?: string) => { judged.push(generation); return generation !== '0123456789abcdef' },
    generation: () => { throw new Error('generation unreadable') }
  }
  await app.register(httpConventions, { auth: { digest: { secret: SECRET, users: { ada: PASSWORD }, store } } })
  let ran = 0
  app.get('/r', { config: { auth: true } }, async () => { ran++; return 'in' })
  t.teardown(() => app.close())
  const first = await app.inject({ url: '/r' })
  t.equal(first.statusCode, 401)
  const challenge = String(first.headers['www-authenticate'])
  t.match(challenge, /^Digest /, 'a challenge, not a 500')
  const res = await app.inject({ url: '/r', headers: { authorization: authorization(answer(challenge, { username: 'ada', password: PASSWORD, uri: '/r' })) } })
  t.equal(res.statusCode, 401)
  t.match(String(res.headers['www-authenticate']), /stale=true/)
  t.same(judged, ['0000000000000000'], 'the nonce named no generation')
  t.equal(ran, 0)
})

test('RFC 9110 15.5.2: a Digest lookup record whose scopes cannot be read (a throwing getter) is a 401, the handler never runs', async (t) => {
  const app = Fastify(serverOptions)
  const record = { password: PASSWORD, get scopes (): string[] { throw undefined } } // eslint-disable-line no-throw-literal
  await app.register(httpConventions, { auth: { digest: { secret: SECRET, lookup: () => record } } })
  let ran = 0
  app.get('/r', { config: { auth: true } }, async () => { ran++; return 'in' })
  t.teardown(() => app.close())
  const first = await app.inject({ url: '/r' })
  const res = await app.inject({ url: '/r', headers: { authorization: authorization(answer(String(first.headers['www-authenticate']), { username: 'ada', password: PASSWORD, uri: '/r' })) } })
  t.equal(res.statusCode, 401)
  t.match(String(res.headers['www-authenticate']), /^Digest /)
  t.equal(ran, 0)
})
