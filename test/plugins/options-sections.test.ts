/**
 * Options are validated at registration: an unknown key in the contentLength or contentType
 * section, or in a route's config for them, throws with a message naming the key and the
 * plugin, instead of passing silently (a mistyped `bodylimit` would leave the limit unset).
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { boot, buildApp } from '../helpers/app'
import { httpConventions, httpConventionsContentLength, httpConventionsContentType } from '../../plugins/index'

const CODE = 'FST_HTTP_CONVENTIONS_INVALID_OPTION'

test('an unknown key in the contentLength or contentType section throws at registration, naming the key and the plugin', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ contentLength: { bodylimit: 10 } }, /http-conventions\/content-length: unknown option "bodylimit"/],
    [{ contentType: { maxdepth: 10 } }, /http-conventions\/content-type: unknown option "maxdepth"/],
    [{ contentType: { maxDepth: 10, xlm: false } }, /http-conventions\/content-type: unknown option "xlm"/]
  ]
  for (const [opts, message] of cases) {
    const app = Fastify()
    await t.rejects(boot(app.register(httpConventions, opts as never).ready()), { code: CODE, message }, JSON.stringify(opts))
  }
})

test('the same when each plugin is registered alone', async (t) => {
  await t.rejects(boot(Fastify().register(httpConventionsContentLength, { bodylimit: 10 } as never).ready()), { code: CODE, message: /unknown option "bodylimit"/ })
  await t.rejects(boot(Fastify().register(httpConventionsContentType, { maxdepth: 10 } as never).ready()), { code: CODE, message: /unknown option "maxdepth"/ })
})

test('known keys still register', async (t) => {
  const app = await buildApp({
    contentLength: { bodyLimit: 10, methods: ['POST'], requireContentLength: true, limitStatus: 413, mismatchStatus: 400 },
    contentType: { xml: false, maxDepth: 10 }
  })
  await t.resolves(boot(app.ready()))
})

test('an unknown key in a route\'s config.contentLength or config.contentType throws when the route is added, naming the route and the key', async (t) => {
  const app = await buildApp()
  t.throws(() => app.post('/a', { config: { contentLength: { bodylimit: 1 } as never } }, async () => 'x'),
    { code: CODE, message: /route POST \/a: unknown config\.contentLength option "bodylimit"/ })
  t.throws(() => app.post('/b', { config: { contentType: { accepts: ['application/json'] } as never } }, async () => 'x'),
    { code: CODE, message: /route POST \/b: unknown config\.contentType option "accepts"/ })
  t.throws(() => app.post('/c', { config: { contentType: { xml: { root: 'a', itemname: {} } } as never } }, async () => 'x'),
    { code: CODE, message: /route POST \/c: unknown config\.contentType\.xml option "itemname"/ })
  app.post('/d', { config: { contentType: { accept: ['application/json'], xml: { root: 'a', itemNames: { tags: 'tag' } } }, contentLength: { bodyLimit: 5 } } }, async () => 'x')
  await t.resolves(boot(app.ready()), 'known keys pass')
})
