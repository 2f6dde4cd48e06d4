/**
 * The auth plugins apps already use, for real: @fastify/jwt and @fastify/auth beside the
 * suite's schemes (docs/conventions.md, Authentication (401 with WWW-Authenticate)).
 *
 * - RFC 9110 15.5.2 and 11.6.1: every 401 of the app carries WWW-Authenticate with the
 *   challenges of the route's schemes (else the context's), whoever produced it: @fastify/jwt,
 *   @fastify/auth, `unauthorized(message, [])`, a handler's own `reply.code(401)`; and it is
 *   the suite's HTML page, as the suite's own 401s are.
 * - The suite's schemes are @fastify/auth strategies (`app.conventionAuth(config)`), and the
 *   app's own authentication (`auth.app.verify`: a session) satisfies a route that asks for
 *   auth: "a session or Basic" on one route, both ways.
 * - A JWT verified by @fastify/jwt is a Bearer token of the suite (`bearer.verify`).
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fastifyAuth from '@fastify/auth'
import fastifyJwt from '@fastify/jwt'
import { httpConventions, serverOptions, unauthorized } from '../../plugins/index'

const REALM = 'notes'
const BASIC = 'Basic ' + Buffer.from('ada:ada-password').toString('base64')
const SESSIONS = new Map([['s-ada', 'ada'], ['s-bob', 'bob']])

/** A session cookie, as an app's session plugin would have read it: `sid=<id>`. */
function sessionUser (request: FastifyRequest): string | undefined {
  const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? '')?.[1]
  return sid === undefined ? undefined : SESSIONS.get(sid)
}

async function build (): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions })
  await app.register(fastifyJwt, { secret: 'a-secret-of-the-app-for-its-tokens' })
  await app.register(fastifyAuth)
  await app.register(httpConventions, {
    auth: {
      realm: REALM,
      basic: { users: { ada: { password: 'ada-password', scopes: ['read', 'write'] } } },
      // A JWT verified by @fastify/jwt is a Bearer token of the suite.
      bearer: {
        verify: async (token) => {
          try {
            const claims = app.jwt.verify<{ sub: string, scope: string }>(token)
            return { subject: claims.sub, scopes: claims.scope }
          } catch {
            return null
          }
        }
      },
      // The app's own authentication: a session cookie.
      app: { verify: (request) => { const user = sessionUser(request); return user === undefined ? null : { subject: user, scopes: ['read'] } } }
    }
  })
  const who = async (request: FastifyRequest): Promise<unknown> => ({ scheme: request.principal?.scheme, subject: request.principal?.subject })
  // "A session or Basic", the suite's way: config.auth lists the schemes.
  app.get('/session-or-basic', { config: { auth: { schemes: ['app', 'basic'] } } }, who)
  // The same with @fastify/auth: the app's own strategy, or the suite's Basic.
  const verifySession = async (request: FastifyRequest): Promise<void> => {
    const user = sessionUser(request)
    if (user === undefined) throw new Error('no session')
    request.principal = { scheme: 'app', subject: user, scopes: [] }
  }
  app.get('/either', { onRequest: app.auth([verifySession, app.conventionAuth({ schemes: ['basic'] })]) }, who)
  app.get('/either-session-last', { onRequest: app.auth([app.conventionAuth({ schemes: ['basic'] }), verifySession]) }, who)
  // @fastify/jwt's own check, on a route that does not use the suite's schemes.
  app.get('/jwt', { onRequest: async (request) => { await request.jwtVerify() } }, async (request) => request.user)
  app.get('/jwt-bearer', { config: { auth: { schemes: ['bearer'], scopes: ['write'] } } }, who)
  app.get('/own-401', async () => { throw unauthorized('Sign in first.', []) })
  app.get('/handler-401', async (_request, reply) => reply.code(401).send({ message: 'nope' }))
  return app
}

function challengesOf (header: string | string[] | undefined): string[] {
  return header === undefined ? [] : ([] as string[]).concat(header)
}

test('RFC 9110 15.5.2: every 401 of the app carries the challenges of the route, as the suite\'s HTML page', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  for (const [url, schemes] of [
    ['/jwt', ['Basic', 'Bearer']],                      // @fastify/jwt's 401, on a route without config.auth: the context's schemes
    ['/own-401', ['Basic', 'Bearer']],                  // unauthorized(message, []) of the app
    ['/handler-401', ['Basic', 'Bearer']],              // a handler's own 401 in JSON
    ['/either', ['Basic']],                             // @fastify/auth's 401 (the suite's Basic strategy failed last)
    ['/either-session-last', ['Basic', 'Bearer']],      // @fastify/auth's 401 (the app's strategy failed last)
    ['/session-or-basic', ['Basic']]                    // the suite's own: the route's schemes
  ] as const) {
    const res = await app.inject({ url })
    t.equal(res.statusCode, 401, url)
    const lines = challengesOf(res.headers['www-authenticate'])
    t.ok(schemes.every((s) => lines.some((l) => l.startsWith(`${s} realm="${REALM}"`))), `${url}: ${lines.join(' | ')}`)
    t.match(res.headers['content-type'], /^text\/html; charset=UTF-8$/i, `${url}: HTML`)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: no-store`)
    t.match(res.body, /<h1>401 Unauthorized<\/h1>/, `${url}: the suite's page`)
  }
  const own = await app.inject({ url: '/own-401' })
  t.match(own.body, /Sign in first\./, 'the app\'s own message is kept')
  const jwt = await app.inject({ url: '/jwt', headers: { authorization: 'Bearer not-a-jwt' } })
  t.equal(jwt.statusCode, 401)
  t.notMatch(jwt.body, /not-a-jwt|malformed/i, 'nothing of the credentials or of the other plugin\'s reason is echoed')
  // docs/conventions.md (Authentication): to a client that prefers JSON, @fastify/jwt's 401 is the suite's JSON error body.
  const json = await app.inject({ url: '/jwt', headers: { authorization: 'Bearer not-a-jwt', accept: 'application/json' } })
  t.equal(json.statusCode, 401)
  t.equal(json.headers['content-type'], 'application/json')
  t.same(json.json(), { errors: [{ message: 'The credentials sent are not valid for this resource.' }] }, 'the envelope, nothing of the other plugin\'s reason')
  t.ok(challengesOf(json.headers['www-authenticate']).length >= 2, 'with the challenges')
})

test('Conventions (Authentication): "a session or Basic" on one route, with config.auth.schemes and with @fastify/auth', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  for (const url of ['/session-or-basic', '/either']) {
    const session = await app.inject({ url, headers: { cookie: 'sid=s-ada' } })
    t.same([session.statusCode, session.json()], [200, { scheme: 'app', subject: 'ada' }], `${url}: the session`)
    const basic = await app.inject({ url, headers: { authorization: BASIC } })
    t.same([basic.statusCode, basic.json()], [200, { scheme: 'basic', subject: 'ada' }], `${url}: Basic`)
    const neither = await app.inject({ url, headers: { cookie: 'sid=unknown', authorization: 'Basic ' + Buffer.from('ada:wrong').toString('base64') } })
    t.equal(neither.statusCode, 401, `${url}: neither`)
    t.match(challengesOf(neither.headers['www-authenticate']).join('\n'), /^Basic realm="notes"/m)
  }
})

test('RFC 6750: a JWT verified by @fastify/jwt is a Bearer token of the suite, its scopes checked', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await app.ready()
  const writer = app.jwt.sign({ sub: 'robot', scope: 'read write' })
  const reader = app.jwt.sign({ sub: 'reader', scope: 'read' })
  const ok = await app.inject({ url: '/jwt-bearer', headers: { authorization: `Bearer ${writer}` } })
  t.same([ok.statusCode, ok.json()], [200, { scheme: 'bearer', subject: 'robot' }])
  const scope = await app.inject({ url: '/jwt-bearer', headers: { authorization: `Bearer ${reader}` } })
  t.equal(scope.statusCode, 401)
  t.match(scope.headers['www-authenticate'], /error="insufficient_scope"/)
  const bad = await app.inject({ url: '/jwt-bearer', headers: { authorization: 'Bearer x.y.z' } })
  t.match([bad.statusCode, bad.headers['www-authenticate']], [401, /error="invalid_token"/])
  // @fastify/jwt's own check keeps working beside the suite
  const own = await app.inject({ url: '/jwt', headers: { authorization: `Bearer ${writer}` } })
  t.match([own.statusCode, own.json()], [200, { sub: 'robot' }])
})

test('conventionAuth(config) is checked when it is called, as config.auth is when a route is added', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  t.throws(() => app.conventionAuth(false), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  t.throws(() => app.conventionAuth({ schemes: ['app'] }), /needs basic, bearer or digest beside app/)
  t.throws(() => app.conventionAuth({ schemes: ['digest'] }), /must list enabled schemes/)
})
