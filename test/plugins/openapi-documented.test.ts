/**
 * OpenAPI helpers (docs/plugins.md, OpenAPI): what the conventions add to a route's documented
 * answers, and the document-wide pass for Accept-Patch (RFC 5789 3.1).
 */
import { test } from 'tap'
import Fastify, { type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { z } from 'zod'
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import { httpConventions, serverOptions } from '../../plugins/index'
import {
  conventionsOpenApiTransform, conventionResponses, conventionSuccessHeaders, conventionsOpenApiTransformObject, recordResponse, recordSuccessHeaders, withConventionResponses
} from '../../plugins/entries/openapi'

const route = (extra: Partial<RouteOptions> = {}): RouteOptions => ({ method: 'GET', url: '/x', handler: async () => 'x', config: {}, ...extra }) as RouteOptions

test('one status from two conventions: the first description, the headers of both', async (t) => {
  const r = route({ method: 'PATCH' })
  recordResponse(r, 415, { description: 'first', body: 'envelope' })
  recordResponse(r, 415, { description: 'second', body: 'envelope', headers: ['Accept-Patch'] })
  recordResponse(r, 415, { description: 'third', body: 'envelope' })
  t.same(conventionResponses(r)['415'], { description: 'first', body: 'envelope', headers: ['Accept-Patch'] })
})

test('2xx answers get the recorded success headers; the route\'s own header schemas win; bodiless and other answers are left alone', async (t) => {
  const r = route()
  recordResponse(r, 412, { description: 'Precondition Failed', body: 'envelope', headers: ['ETag'] })
  recordSuccessHeaders(r, ['ETag', 'Cache-Control'])
  recordSuccessHeaders(r, ['ETag', 'Last-Modified'])
  t.same(conventionSuccessHeaders(r), ['ETag', 'Cache-Control', 'Last-Modified'])
  const out = withConventionResponses({ response: { 200: { type: 'object', headers: { ETag: { type: 'string', description: 'mine' } } }, 204: { type: 'null' }, 400: { type: 'object' } } }, r) as { response: Record<string, { headers?: Record<string, { description?: string }> }> }
  t.same(Object.keys(out.response['200'].headers ?? {}).sort(), ['Cache-Control', 'ETag', 'Last-Modified'])
  t.equal(out.response['200'].headers?.ETag.description, 'mine')
  t.equal(out.response['204'].headers, undefined)
  t.equal(out.response['400'].headers, undefined)
  const patch = route({ method: 'PATCH', config: { patch: { schema: {}, load: () => null, save: () => false } } as never })
  t.same(conventionSuccessHeaders(patch), ['Accept-Patch'], 'a PATCH route\'s 2xx carry Accept-Patch')
  recordSuccessHeaders(patch, ['Accept-Patch'])
  t.same(conventionSuccessHeaders(patch), ['Accept-Patch'])
})

test('conventionsOpenApiTransformObject: GET, HEAD and PUT of a path whose PATCH documents Accept-Patch document it on their 2xx', async (t) => {
  const accept = { headers: { 'Accept-Patch': { schema: { type: 'string' } } } }
  const doc = {
    openapi: '3.0.3',
    paths: {
      '/a': { patch: { responses: { 200: {}, 415: accept } }, get: { responses: { 200: { description: 'ok' }, 404: {} } }, put: { responses: { 200: { headers: { 'Accept-Patch': { schema: { type: 'string' }, description: 'own' } } } } }, head: {} },
      '/b': { get: { responses: { 200: {} } }, patch: { responses: { 415: {} } } },
      '/c': 'not an object',
      '/d': { patch: { responses: { 415: accept } }, get: { responses: { 200: 'odd' } } }
    }
  }
  const out = conventionsOpenApiTransformObject({ openapiObject: doc }) as typeof doc
  t.same(out.paths['/a'].get.responses['200'], { description: 'ok', headers: { 'Accept-Patch': { schema: { type: 'string' }, description: 'The patch document types the resource accepts' } } })
  t.same(out.paths['/a'].get.responses['404'], {}, 'not a 2xx')
  t.equal(out.paths['/a'].put.responses['200'].headers['Accept-Patch'].description, 'own', 'a header the operation documents is kept')
  t.same(out.paths['/b'].get.responses['200'], {}, 'a PATCH without Accept-Patch on its 415 adds nothing')
  t.same(out.paths['/d'].get.responses['200'], 'odd')
  const swagger = conventionsOpenApiTransformObject({ swaggerObject: { swagger: '2.0', paths: { '/a': { patch: { responses: { 415: { headers: { 'Accept-Patch': { type: 'string' } } } } }, get: { responses: { 200: {} } } } } } }) as { paths: { '/a': { get: { responses: { 200: { headers: unknown } } } } } }
  t.same(swagger.paths['/a'].get.responses['200'].headers, { 'Accept-Patch': { type: 'string', description: 'The patch document types the resource accepts' } }, 'Swagger 2.0 header shape')
  t.same(conventionsOpenApiTransformObject({ openapiObject: { openapi: '3.1.0' } }), { openapi: '3.1.0' }, 'a document without paths')
})

test('composed with fastify-type-provider-zod\'s jsonSchemaTransform: Zod schemas converted, the conventions\' answers added', async (t) => {
  const app = Fastify(serverOptions).setValidatorCompiler(validatorCompiler).setSerializerCompiler(serializerCompiler)
  await app.register(swagger, { openapi: { openapi: '3.0.3', info: { title: 'zod', version: '1' } }, transform: (input) => conventionsOpenApiTransform({ ...input, ...jsonSchemaTransform(input) }) })
  await app.register(httpConventions)
  app.put('/notes/:id', { schema: { params: z.object({ id: z.string() }), body: z.object({ text: z.string() }) }, config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async () => 'ok')
  await app.ready()
  t.teardown(() => app.close())
  const put = (app.swagger() as unknown as { paths: Record<string, { put: { requestBody: { content: Record<string, { schema: { properties: object } }> }, responses: Record<string, unknown> } }> }).paths['/notes/{id}'].put
  t.same(Object.keys(put.requestBody.content['application/json'].schema.properties), ['text'], 'the Zod body, converted')
  t.ok(put.responses['412'] !== undefined && put.responses['422'] !== undefined && put.responses['415'] !== undefined, 'the conventions\' answers')
})
