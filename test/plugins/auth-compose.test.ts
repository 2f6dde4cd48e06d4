/**
 * Authentication that composes (docs/conventions.md, Authentication (401 with WWW-Authenticate)):
 * the app's own authentication (`auth.app`), the suite's schemes as strategies
 * (`conventionAuth`), the challenges every 401 of the app carries (RFC 9110 15.5.2), and the
 * order of the Digest challenges (`digestFirst`, RFC 7616 3.7).
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { httpConventionsAuth, type AuthOptions } from '../../plugins/index'

const SECRET = 'compose-test-secret-compose-test-secret!'
const BASIC = 'Basic ' + Buffer.from('demo:demo-pass').toString('base64')

function options (extra: Partial<AuthOptions> = {}): Omit<AuthOptions, 'profile'> {
  return {
    realm: 'test',
    digest: { secret: SECRET, algorithms: ['SHA-256', 'MD5'], users: { demo: 'demo-pass' } },
    basic: { users: { demo: 'demo-pass' }, scopes: ['read', 'write'] },
    ...extra
  }
}

function lines (header: string | string[] | undefined): string[] {
  return header === undefined ? [] : ([] as string[]).concat(header)
}

test('auth.app: a principal lets the request in (sync or async, scopes checked); null, a bad result, leave it to the HTTP schemes; a failure refuses', async (t) => {
  const app = await buildApp({
    auth: options({
      app: {
        verify: (request) => {
          const who = request.headers['x-session']
          if (who === 'sync') return { subject: 'ann', scopes: 'read write' }
          if (who === 'async') return Promise.resolve({ subject: 'bob' })
          if (who === 'odd') return { subject: 5 } as unknown as { subject: string }
          if (who === 'throws') throw new Error('session store down')
          if (who === 'rejects') return Promise.reject(new Error('session store down'))
          return null
        }
      }
    })
  })
  app.get('/any', { config: { auth: true } }, async (request) => request.principal)
  app.get('/write', { config: { auth: { scopes: ['write'] } } }, async (request) => request.principal)
  app.get('/basic-only', { config: { auth: { schemes: ['basic'] } } }, async (request) => request.principal)
  t.same((await app.inject({ url: '/any', headers: { 'x-session': 'sync' } })).json(), { scheme: 'app', subject: 'ann', scopes: ['read', 'write'] })
  t.same((await app.inject({ url: '/any', headers: { 'x-session': 'async' } })).json(), { scheme: 'app', subject: 'bob', scopes: [] })
  const scope = await app.inject({ url: '/write', headers: { 'x-session': 'async' } })
  t.equal(scope.statusCode, 401, 'an app principal lacking the scope')
  t.equal(lines(scope.headers['www-authenticate']).length, 3, 'the route\'s challenges: Digest SHA-256, Digest MD5, Basic')
  t.equal((await app.inject({ url: '/any', headers: { 'x-session': 'odd' } })).statusCode, 401, 'a principal without a subject is none')
  t.same((await app.inject({ url: '/any', headers: { 'x-session': 'odd', authorization: BASIC } })).json().scheme, 'basic')
  for (const session of ['throws', 'rejects']) {
    const res = await app.inject({ url: '/any', headers: { 'x-session': session, authorization: BASIC } })
    t.equal(res.statusCode, 401, `a session check that ${session} refuses, even beside valid Basic credentials`)
    t.equal(lines(res.headers['www-authenticate']).length, 3)
  }
  t.equal((await app.inject({ url: '/basic-only', headers: { 'x-session': 'sync' } })).statusCode, 401, 'a route whose schemes leave app out')
  await app.close()
})

test('auth.app and digestFirst are checked at boot', async (t) => {
  for (const [extra, message] of [
    [{ app: { verify: 5 } }, /app must be \{ verify\(request\) \}/],
    [{ app: null }, /app must be/],
    [{ digestFirst: 'SHA-512-256' }, /digestFirst must be one of digest.algorithms/],
    [{ digestFirst: 'SHA-256', digest: undefined }, /digestFirst must be one of digest.algorithms/]
  ] as const) {
    const app = Fastify()
    app.register(httpConventionsAuth, { ...options(), ...extra } as unknown as AuthOptions)
    await t.rejects(boot(app.ready()), message)
  }
  const app = await buildApp({ auth: options({ app: { verify: () => null } }) })
  t.throws(() => app.get('/x', { config: { auth: { schemes: ['app'] } } }, async () => 'x'), /needs basic, bearer or digest beside app/)
  await app.close()
})

test('RFC 7616 3.7: digestFirst puts that algorithm\'s challenge first, on every route that offers it', async (t) => {
  const app = await buildApp({ auth: options({ digestFirst: 'MD5' }) })
  app.get('/all', { config: { auth: true } }, async () => 'x')
  app.get('/sha', { config: { auth: { algorithms: ['SHA-256'] } } }, async () => 'x')
  const all = lines((await app.inject({ url: '/all' })).headers['www-authenticate'])
  t.match(all, [/^Digest .*algorithm=MD5,/, /^Digest .*algorithm=SHA-256,/, /^Basic /])
  const sha = lines((await app.inject({ url: '/sha' })).headers['www-authenticate'])
  t.match(sha, [/^Digest .*algorithm=SHA-256,/, /^Basic /])
  await app.close()
})

test('RFC 9110 15.5.2: a 401 another producer wrote gets the challenges of the route\'s config.auth, or of the context', async (t) => {
  const app = await buildApp({ auth: options() })
  app.get('/bad-config', { config: { auth: true } }, async (_request, reply) => reply.code(401).header('www-authenticate', ['']).send('no'))
  app.get('/scoped', { config: { auth: { schemes: ['basic'], scopes: ['write'] } } }, async (_request, reply) => reply.code(401).send({ message: 'no' }))
  app.get('/open', async (_request, reply) => reply.code(401).type('text/html; charset=utf-8').send('<p>sign in</p>'))
  app.get('/has', async (_request, reply) => reply.code(401).header('www-authenticate', 'Custom realm="x"').send('no'))
  const scoped = await app.inject({ url: '/scoped', headers: { authorization: BASIC } })
  t.same(lines(scoped.headers['www-authenticate']), ['Basic realm="test", charset="UTF-8"'])
  t.match(scoped.body, /The credentials sent are not valid/, 'credentials were sent: "not valid"; the other producer\'s JSON body is replaced, its reason never echoed')
  const replaced = await app.inject({ url: '/bad-config', headers: { authorization: BASIC, accept: 'application/json' } })
  t.same(JSON.parse(replaced.body), { errors: [{ message: 'The credentials sent are not valid for this resource.' }] }, 'the suite\'s body, as JSON to a JSON client')
  const empty = await app.inject({ url: '/bad-config' })
  t.equal(lines(empty.headers['www-authenticate']).length, 3, 'an empty challenge line counts as none')
  const open = await app.inject({ url: '/open' })
  t.equal(lines(open.headers['www-authenticate']).length, 3, 'the context\'s schemes')
  t.equal(open.body, '<p>sign in</p>', 'an HTML page is kept')
  t.same(lines((await app.inject({ url: '/has' })).headers['www-authenticate']), ['Custom realm="x"'], 'a 401 with a challenge is left alone')
  await app.close()
})

test('RFC 9110 15.5.2: a child context that registers its own auth gives its routes\' 401s its own challenges', async (t) => {
  const app = await buildApp({ auth: options() })
  await app.register(async (child) => {
    await child.register(httpConventionsAuth, { realm: 'child', bearer: { verify: () => null } })
    child.get('/child', async (_request, reply) => reply.code(401).send({ message: 'no' }))
  })
  app.get('/parent', async (_request, reply) => reply.code(401).send({ message: 'no' }))
  t.same(lines((await app.inject({ url: '/child' })).headers['www-authenticate']), ['Bearer realm="child"'])
  t.equal(lines((await app.inject({ url: '/parent' })).headers['www-authenticate']).length, 3)
  await app.close()
})
