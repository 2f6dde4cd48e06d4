/**
 * docs/conventions.md (Conditional requests, "Browsers and caches"): the 2xx and 304 answers
 * of a conditional GET/HEAD route tell caches how to keep them, so a browser never
 * revalidates a copy on its own and hands the page a 412: `no-store` where "not modified" is
 * a 412 (RFC 9111 5.2.2.5), `no-cache` where it is a 304 (RFC 9111 5.2.2.4; RFC 9110 15.4.5:
 * the 304 carries it too). A route's own Cache-Control wins; `conditional.cacheControl`
 * chooses another value, or none.
 */
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { boot, buildApp } from '../helpers/app'
import type { HttpConventionsOptions } from '../../plugins/index'

const validators = (): { etag: string } => ({ etag: '"v1"' })

async function build (opts: HttpConventionsOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp(opts)
  app.get('/doc', { config: { conditional: { validators } } }, async () => ({ title: 'a document' }))
  app.get('/hashed', { config: { conditional: true } }, async () => ({ title: 'hashed' }))
  app.get('/own', { config: { conditional: { validators } } }, async (_request, reply) => reply.header('cache-control', 'max-age=60').send({ title: 'own' }))
  app.put('/doc', { config: { conditional: { validators } } }, async () => ({ title: 'replaced' }))
  app.get('/plain', async () => ({ title: 'not conditional' }))
  return app
}

test('spec profile: conditional GET/HEAD answers say no-store; writes, other routes and a route\'s own value are left alone', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  for (const [method, url, expected] of [
    ['GET', '/doc', 'no-store'], ['HEAD', '/doc', 'no-store'], ['GET', '/hashed', 'no-store'],
    ['GET', '/own', 'max-age=60'], ['PUT', '/doc', undefined], ['GET', '/plain', undefined]
  ] as const) {
    const res = await app.inject({ method, url, ...(method === 'PUT' ? { payload: { title: 'x' } } : {}) })
    t.equal(res.headers['cache-control'], expected, `${method} ${url}`)
  }
})

test('rfc9110 profile: no-cache, on the 200 and on the 304 made of it (RFC 9110 15.4.5)', async (t) => {
  const app = await build({ profile: 'rfc9110' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/doc' })).headers['cache-control'], 'no-cache')
  const notModified = await app.inject({ url: '/doc', headers: { 'if-none-match': '"v1"' } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.headers['cache-control'], 'no-cache')
})

test('conditional.cacheControl: a value of the app\'s, or false for none; checked at boot', async (t) => {
  const own = await build({ conditional: { cacheControl: 'private, no-cache' } })
  t.equal((await own.inject({ url: '/doc' })).headers['cache-control'], 'private, no-cache')
  await own.close()
  const none = await build({ conditional: { cacheControl: false } })
  t.equal((await none.inject({ url: '/doc' })).headers['cache-control'], undefined)
  await none.close()
  for (const bad of ['', 'no-store\r\nx: y', 5]) {
    await t.rejects(boot(buildApp({ conditional: { cacheControl: bad as string } })), /cacheControl must be a Cache-Control value or false/)
  }
})
