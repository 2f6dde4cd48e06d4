/**
 * docs/plugins.md (Validation (422)): an app that passes serverOptions and its own `ajv` option
 * replaces serverOptions.ajv. The boot error says so, names each setting lost, and the merge
 * it names boots with the app's Ajv plugins and the suite's 422.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import type Ajv from 'ajv'
import { boot } from '../helpers/app'
import { httpConventions, serverOptions } from '../../plugins/index'

const body = { type: 'object', required: ['slug', 'title'], additionalProperties: false, properties: { slug: { type: 'string', format: 'slug' }, title: { type: 'string' } } }
/** An Ajv plugin of the app's own: a format. */
const slugFormat = (ajv: Ajv): Ajv => ajv.addFormat('slug', /^[a-z-]+$/)

test('docs/plugins.md (Validation (422)): serverOptions with the app\'s own ajv option fail the boot naming what the replacement lost and the merge', async (t) => {
  const app = Fastify({ ...serverOptions, ajv: { plugins: [slugFormat] } })
  await app.register(httpConventions)
  app.post('/articles', { schema: { body } }, async () => 'x')
  const err = await boot(app.ready()).then(() => null, (e: Error & { code?: string }) => e)
  t.equal(err?.code, 'FST_HTTP_CONVENTIONS_INVALID_OPTION')
  const message = String(err?.message)
  t.match(message, /made with serverOptions, but the app's own ajv option replaced serverOptions\.ajv/)
  t.match(message, /ajv\.customOptions\.allErrors is not true/)
  t.match(message, /ajv\.customOptions\.removeAdditional is not false/)
  t.notMatch(message, /type-coerced/, 'bodies are still validated without coercion: not listed')
  t.match(message, /ajv: \{ \.\.\.serverOptions\.ajv, customOptions: \{ \.\.\.serverOptions\.ajv\.customOptions/)
  t.notMatch(message, /Pass the exported serverOptions/, 'never told to pass what it passed')
})

test('docs/plugins.md (Validation (422)): the merge the error names boots, with the app\'s Ajv plugin and every problem in the 422', async (t) => {
  const app = Fastify({ ...serverOptions, ajv: { ...serverOptions.ajv, customOptions: { ...serverOptions.ajv.customOptions, strict: false }, plugins: [slugFormat] } })
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.post('/articles', { schema: { body } }, async () => 'x')
  await t.resolves(boot(app.ready()))
  const res = await app.inject({ method: 'POST', url: '/articles', payload: { slug: 'Not A Slug', zzz: 1 } })
  t.equal(res.statusCode, 422)
  t.same(res.json().errors.map((e: { field: string }) => e.field).sort(), ['slug', 'title', 'zzz'])
})
