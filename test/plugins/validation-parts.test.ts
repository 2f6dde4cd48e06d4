/**
 * Conventions (Validation errors): every part at once. Fastify stops at the first part that
 * fails; the suite validates the parts after it with the route's own validators, whatever
 * compiler made them (Ajv, fastify-type-provider-zod, a route's own `validatorCompiler`), so
 * a 422 lists every problem of params, querystring, headers and body. And (Content-Type) a
 * body another plugin's parser took but did not give, such as @fastify/multipart's, is a 415
 * on a route whose body schema it cannot satisfy, not a 422.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import multipart from '@fastify/multipart'
import { z } from 'zod'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { buildApp } from '../helpers/app'
import { httpConventions, serverOptions } from '../../plugins/index'

const fields = (res: { json: () => { errors: Array<{ field: string }> } }): string[] => res.json().errors.map((e) => e.field)

test('fastify-type-provider-zod: params and body problems in one 422, each named by its part', async (t) => {
  const app = Fastify(serverOptions).setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler).withTypeProvider<ZodTypeProvider>()
  await app.register(httpConventions)
  app.post('/z/:id', { schema: { params: z.object({ id: z.coerce.number().int() }), querystring: z.object({ q: z.string().max(2) }), body: z.strictObject({ title: z.string() }) } }, async () => 'ok')
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/z/abc?q=toolong', payload: { title: 1, zzz: true } })
  t.equal(res.statusCode, 422)
  t.same(fields(res), ['path:id', 'query:q', 'title', 'zzz'])
})

test('a route\'s own validatorCompiler: { error } answers, thrown errors and promises are read as far as they can be', async (t) => {
  const app = await buildApp()
  const shapes: Record<string, (data: unknown) => unknown> = {
    querystring: () => ({ error: Object.assign(new Error('bad query'), { validation: [{ keyword: 'type', instancePath: '/q', params: {}, message: 'must be a word' }] }) }),
    headers: () => { throw new Error('a validator that throws adds nothing') },
    body: () => Promise.resolve(false)
  }
  app.post('/own/:id', {
    schema: { params: { type: 'object' }, querystring: { type: 'object' }, headers: { type: 'object' }, body: { type: 'object' } },
    validatorCompiler: (({ httpPart }: { httpPart: string }) => httpPart === 'params' ? () => ({ error: [{ keyword: 'type', instancePath: '/id', params: {}, message: 'must be a number' }] }) : shapes[httpPart]) as never
  }, async () => 'ok')
  app.post('/other/:id', {
    schema: { params: { type: 'object' }, querystring: { type: 'object' } },
    validatorCompiler: (({ httpPart }: { httpPart: string }) => httpPart === 'params' ? () => ({ error: [{ keyword: 'type', instancePath: '/id', params: {}, message: 'bad' }] }) : () => ({ error: new Error('no list') })) as never
  }, async () => 'ok')
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/own/x?q=1', payload: {} })
  t.equal(res.statusCode, 422)
  t.same(fields(res), ['path:id', 'query:q'])
  t.same(fields(await app.inject({ method: 'POST', url: '/other/x?q=1', payload: {} })), ['path:id'])
})

test('a body schema per media type (content) is left to Fastify: the parts before it are listed', async (t) => {
  const app = await buildApp()
  app.post('/c/:id', {
    schema: {
      params: { type: 'object', properties: { id: { type: 'integer' } } },
      body: { content: { 'application/json': { schema: { type: 'object', required: ['a'] } } } }
    }
  }, async () => 'ok')
  t.teardown(() => app.close())
  t.same(fields(await app.inject({ method: 'POST', url: '/c/x', payload: {} })), ['path:id'])
})

test('Conventions (Content-Type): with @fastify/multipart registered, a JSON-only route answers multipart/form-data with 415, not 422', async (t) => {
  const app = await buildApp()
  await app.register(multipart)
  app.post('/json', { schema: { body: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } } }, async () => 'ok')
  app.post('/upload', async (request) => {
    const file = await request.file()
    return { name: file?.filename, bytes: (await file?.toBuffer())?.length }
  })
  t.teardown(() => app.close())
  const boundary = 'xYzZY'
  const form = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  const refused = await app.inject({ method: 'POST', url: '/json', headers, payload: form })
  t.equal(refused.statusCode, 415)
  t.same(refused.json(), { errors: [{ field: 'Content-Type', message: 'Content-Type "multipart/form-data" is not accepted here: this route reads its body as JSON, XML or text' }] })
  const upload = await app.inject({ method: 'POST', url: '/upload', headers, payload: form })
  t.same([upload.statusCode, upload.json()], [200, { name: 'a.txt', bytes: 5 }], 'a route that reads the parts itself keeps working')
  t.equal((await app.inject({ method: 'POST', url: '/json', payload: { title: 't' } })).statusCode, 200)
})
