/**
 * Type providers: whatever compiler validates, the validation errors Fastify hands over
 * become 422 entries with the field paths of the body; the boot check of the server's Ajv
 * options applies only where it can check (an Ajv-style compiler).
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { validatorCompiler, serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { httpConventions, serverOptions } from '../../plugins/index'

const WANT = { errors: [{ field: 'title' }, { field: 'author.name' }, { field: 'tags.1' }] }
const BAD = { title: 1, author: { name: 2 }, tags: ['a', 1] }

test('TypeBox with its own TypeBoxValidatorCompiler: boots, and its errors are 422 entries with field paths', async (t) => {
  const app = Fastify(serverOptions).setValidatorCompiler(TypeBoxValidatorCompiler).withTypeProvider<TypeBoxTypeProvider>()
  await app.register(httpConventions)
  app.post('/t', { schema: { body: Type.Object({ title: Type.String(), author: Type.Object({ name: Type.String() }), tags: Type.Array(Type.String()) }) } }, async (request) => request.body.title)
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/t', payload: BAD })
  t.equal(res.statusCode, 422)
  t.match(res.json(), WANT)
  t.equal((await app.inject({ method: 'POST', url: '/t', payload: { title: 'ok', author: { name: 'a' }, tags: [] } })).body, 'ok')
})

test('fastify-type-provider-zod: boots (no crash in the boot check), and its errors are 422 entries with field paths', async (t) => {
  const app = Fastify(serverOptions).setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler).withTypeProvider<ZodTypeProvider>()
  await app.register(httpConventions)
  app.post('/z', { schema: { body: z.object({ title: z.string(), author: z.object({ name: z.string() }), tags: z.array(z.string()) }) } }, async (request) => request.body.title)
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/z', payload: BAD })
  t.equal(res.statusCode, 422)
  t.match(res.json(), WANT)
})
