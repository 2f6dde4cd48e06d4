/**
 * Schema checking and compiling are per app: two apps in one process with different Ajv
 * options (`ajv.plugins` here) each check and compile their schemas with their own options,
 * whichever app was built first.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { boot } from '../helpers/app'
import { httpConventions, serverOptions } from '../../plugins/index'

/** An app whose Ajv knows the meta-schema `id`: one that requires `description` when `strict`, anything otherwise. */
function appWithMeta (id: string, strict: boolean) {
  const meta = { $id: id, $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', ...(strict ? { required: ['description'] } : {}) }
  const addMeta = <A extends object>(ajv: A): A => (ajv as A & { addMetaSchema: (s: object) => A }).addMetaSchema(meta)
  return Fastify({ ...serverOptions, ajv: { customOptions: { ...serverOptions.ajv.customOptions }, plugins: [addMeta] } })
}

/** Boots an app with a body schema of meta-schema `id` and no `description`. */
async function bootWith (id: string, strict: boolean): Promise<unknown> {
  const app = appWithMeta(id, strict)
  await app.register(httpConventions)
  app.post('/n', { schema: { body: { $schema: id, type: 'object', properties: { n: { type: 'integer' } } } } }, async (req) => req.body)
  return boot(app.ready())
}

test('each app checks schemas against its own meta-schemas, whichever app was built first', async (t) => {
  const lenientFirst = 'https://example.test/schema-check/lenient-first'
  await t.resolves(bootWith(lenientFirst, false), 'lenient app, built first')
  await t.rejects(bootWith(lenientFirst, true), { message: /schema is invalid: data must have required property 'description'/ }, 'strict app, built second')
  const strictFirst = 'https://example.test/schema-check/strict-first'
  await t.rejects(bootWith(strictFirst, true), { message: /schema is invalid: data must have required property 'description'/ }, 'strict app, built first')
  await t.resolves(bootWith(strictFirst, false), 'lenient app, built second')
})

const evenKeyword = <A extends object>(ajv: A): A =>
  (ajv as A & { addKeyword: (k: object) => A }).addKeyword({ keyword: 'even', type: 'number', validate: (_: unknown, n: number) => n % 2 === 0 })

test('each app compiles with its own Ajv plugins, whatever another app with the same custom options added', async (t) => {
  const withKeyword = Fastify({
    ...serverOptions,
    ajv: { customOptions: { ...serverOptions.ajv.customOptions }, plugins: [evenKeyword] }
  })
  t.teardown(() => withKeyword.close())
  await withKeyword.register(httpConventions)
  withKeyword.post('/n', { schema: { body: { type: 'object', properties: { n: { type: 'number', even: true } } } } }, async (req) => req.body)
  t.equal((await withKeyword.inject({ method: 'POST', url: '/n', payload: { n: 3 } })).statusCode, 422)
  t.equal((await withKeyword.inject({ method: 'POST', url: '/n', payload: { n: 4 } })).statusCode, 200)

  const without = Fastify({ ...serverOptions, ajv: { customOptions: { ...serverOptions.ajv.customOptions } } })
  await without.register(httpConventions)
  without.post('/n', { schema: { body: { type: 'object', properties: { n: { type: 'number', even: true } } } } }, async (req) => req.body)
  await t.rejects(boot(without.ready()), { message: /unknown keyword: "even"/ }, 'the keyword is the other app\'s only')
})
