/**
 * Type providers (docs/conventions.md (errors)): whatever compiler validates, a 422 lists one
 * errors[] entry per problem, each named by its dotted path: a wrong type, a missing required
 * property and an unknown property alike. The boot check of the server's Ajv options applies
 * only where it can check (an Ajv-style compiler).
 */
import { test, type Test } from 'tap'
import Fastify from 'fastify'
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { validatorCompiler, serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { FromSchema } from 'json-schema-to-ts'
import { httpConventions, serverOptions } from '../../plugins/index'

/** A wrong type at three depths. */
const WRONG_TYPES = { title: 1, author: { name: 2 }, tags: ['a', 1] }
/** `title` and `author.name` missing; an unknown key at the root and one in `author`. */
const MISSING_AND_UNKNOWN = { author: { extra: true }, tags: [], bad: 2 }
const GOOD = { title: 'ok', author: { name: 'a' }, tags: [] }

const WRONG_TYPE_FIELDS = ['title', 'author.name', 'tags.1']
const MISSING_AND_UNKNOWN_ENTRIES = [
  { field: 'title', message: 'is required' },
  { field: 'bad', message: 'is not allowed' },
  { field: 'author.name', message: 'is required' },
  { field: 'author.extra', message: 'is not allowed' }
]

type Entry = { field: string, message: string }
type App = ReturnType<typeof Fastify>
const byField = (a: Entry, b: Entry): number => a.field < b.field ? -1 : a.field > b.field ? 1 : 0

async function post (app: App, url: string, payload: unknown): Promise<{ status: number, entries: Entry[], body: string }> {
  const res = await app.inject({ method: 'POST', url, payload: payload as object })
  return { status: res.statusCode, entries: res.statusCode === 422 ? (res.json().errors as Entry[]) : [], body: res.body }
}

/** A wrong type at three depths: one 422 entry each, named by its path. */
async function wrongTypes (t: Test, app: App, url: string): Promise<void> {
  const wrong = await post(app, url, WRONG_TYPES)
  t.equal(wrong.status, 422)
  t.same(wrong.entries.map((e) => e.field), WRONG_TYPE_FIELDS)
}

/** The entries Ajv gives: wrong types, then missing and unknown properties, then a good body answered `ok`. */
async function sameEntriesAsAjv (t: Test, app: App, url: string, ok: string, message = 'one entry per problem, named by its path'): Promise<void> {
  await wrongTypes(t, app, url)
  const missing = await post(app, url, MISSING_AND_UNKNOWN)
  t.equal(missing.status, 422)
  t.same(missing.entries.sort(byField), [...MISSING_AND_UNKNOWN_ENTRIES].sort(byField), message)
  t.equal((await post(app, url, GOOD)).body, ok)
}

const JSON_SCHEMA = {
  type: 'object',
  required: ['title', 'author', 'tags'],
  additionalProperties: false,
  properties: {
    title: { type: 'string' },
    author: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' } } },
    tags: { type: 'array', items: { type: 'string' } }
  }
} as const

test('Ajv (Fastify\'s default compiler): one entry per problem, named by its path', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.post('/a', { schema: { body: JSON_SCHEMA } }, async (request) => (request.body as { title: string }).title)
  t.teardown(() => app.close())
  await sameEntriesAsAjv(t, app, '/a', 'ok')
})

test('json-schema-to-ts (types from the schema, Ajv at runtime): the same entries as Ajv', async (t) => {
  type Article = FromSchema<typeof JSON_SCHEMA>
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.post<{ Body: Article }>('/j', { schema: { body: JSON_SCHEMA } }, async (request) => {
    const title: string = request.body.title
    const name: string = request.body.author.name
    return `${title} by ${name}`
  })
  t.teardown(() => app.close())
  await sameEntriesAsAjv(t, app, '/j', 'ok by a')
})

test('TypeBox 1.x with @fastify/type-provider-typebox\'s TypeBoxValidatorCompiler: a missing property and an unknown key each one entry at its own path', async (t) => {
  // typebox 1.x is an ES module only.
  const { Type } = await import('typebox')
  const app = Fastify(serverOptions).setValidatorCompiler(TypeBoxValidatorCompiler).withTypeProvider<TypeBoxTypeProvider>()
  await app.register(httpConventions)
  const body = Type.Object({
    title: Type.String(),
    author: Type.Object({ name: Type.String() }, { additionalProperties: false }),
    tags: Type.Array(Type.String())
  }, { additionalProperties: false })
  app.post('/t', { schema: { body } }, async (request) => request.body.title)
  t.teardown(() => app.close())
  await sameEntriesAsAjv(t, app, '/t', 'ok', 'no field "undefined", no second entry for an unknown key')
})

test('fastify-type-provider-zod: an unknown key is named by its path, not `body`; one entry per key', async (t) => {
  const app = Fastify(serverOptions).setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler).withTypeProvider<ZodTypeProvider>()
  await app.register(httpConventions)
  app.post('/z', { schema: { body: z.strictObject({ title: z.string(), author: z.strictObject({ name: z.string() }), tags: z.array(z.string()) }) } }, async (request) => request.body.title)
  t.teardown(() => app.close())
  await wrongTypes(t, app, '/z')
  const missing = await post(app, '/z', { ...MISSING_AND_UNKNOWN, worse: 3 })
  t.equal(missing.status, 422)
  // Zod names a missing property by its path with its own message (it does not say "required").
  t.same(missing.entries.map((e) => e.field).sort(), ['author.extra', 'author.name', 'bad', 'title', 'worse'])
  t.same(missing.entries.filter((e) => e.message === 'is not allowed').map((e) => e.field).sort(), ['author.extra', 'bad', 'worse'])
  t.equal((await post(app, '/z', GOOD)).body, 'ok')
})
