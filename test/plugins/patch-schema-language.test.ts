/**
 * docs/plugins.md (PATCH): `config.patch.schema` is the resource's JSON Schema. A Zod type, or
 * a schema Ajv cannot compile, is refused when the route is added, naming the route and the fix.
 */
import { test } from 'tap'
import { z } from 'zod'
import { buildApp } from '../helpers/app'

const load = (): null => null
const save = (): false => false

test('docs/plugins.md (PATCH): a Zod type as config.patch.schema is a boot error naming the route and z.toJSONSchema', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const Article = z.object({ title: z.string() })
  t.throws(() => app.patch('/articles/:id', { config: { patch: { schema: Article, load, save } } }, async () => 'x'), {
    code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION',
    message: /PATCH \/articles\/:id.*config\.patch\.schema must be a JSON Schema, not a Zod .*z\.toJSONSchema\(schema, \{ target: 'draft-7' \}\)/
  })
  // The conversion the message names is accepted, and validates as the Zod type did.
  app.patch('/converted/:id', {
    config: { patch: { schema: z.toJSONSchema(Article, { target: 'draft-7' }), load: () => ({ document: { title: 'a' }, etag: '"1"' }), save: (_r, document) => ({ document, etag: '"2"' }) } }
  }, async (request) => request.patched?.document)
  const refused = await app.inject({ method: 'PATCH', url: '/converted/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: { title: 1 } })
  t.equal(refused.statusCode, 422)
  t.same(refused.json().errors.map((e: { field: string }) => e.field), ['title'])
})

test('docs/plugins.md (PATCH): a config.patch.schema Ajv cannot compile is a boot error naming the route, never Ajv\'s bare error', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  // z.toJSONSchema's default target, draft 2020-12, is a meta-schema the server's Ajv (draft-07) does not know.
  t.throws(() => app.patch('/drafts/:id', { config: { patch: { schema: z.toJSONSchema(z.object({ title: z.string() })), load, save } } }, async () => 'x'), {
    code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION',
    message: /PATCH \/drafts\/:id.*config\.patch\.schema is not a JSON Schema Ajv can compile \(no schema with key or ref "https:\/\/json-schema\.org\/draft\/2020-12\/schema"\).*z\.toJSONSchema\(schema, \{ target: 'draft-7' \}\)/
  })
  t.throws(() => app.patch('/notes/:id', { config: { patch: { schema: { type: 'objekt' }, load, save } } }, async () => 'x'), {
    code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION',
    message: /PATCH \/notes\/:id.*config\.patch\.schema is not a JSON Schema Ajv can compile \(schema is invalid: .*\): pass the resource's JSON Schema/
  })
})
