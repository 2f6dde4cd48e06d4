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
  conventionsOpenApiTransform, conventionResponses, conventionSuccessHeaders, conventionsOpenApiTransformObject, recordResponse, recordSuccessHeaders, withConventionResponses,
  recordAnswerHeader, conventionAnswerHeaders
} from '../../plugins/entries/openapi'
import { openapiExtension, recordErrorMedia, type ErrorMedia } from '../../plugins/services/openapi'

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
  t.same(conventionSuccessHeaders(patch), [], 'the route config is not read')
  openapiExtension.describe?.(patch, { success: { headers: ['Accept-Patch'] } })
  t.same(conventionSuccessHeaders(patch), ['Accept-Patch'], 'a PATCH route\'s 2xx carry Accept-Patch, as the patch convention describes it')
  recordSuccessHeaders(patch, ['Accept-Patch'])
  t.same(conventionSuccessHeaders(patch), ['Accept-Patch'])
})

test('conventionsOpenApiTransformObject: GET, HEAD and PUT of a path whose PATCH documents Accept-Patch document it on their 2xx', async (t) => {
  const accept = { headers: { 'Accept-Patch': { schema: { type: 'string' }, description: 'The patch document types the resource accepts' } } }
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
  const swagger = conventionsOpenApiTransformObject({ swaggerObject: { swagger: '2.0', paths: { '/a': { patch: { responses: { 415: { headers: { 'Accept-Patch': { type: 'string', description: 'The patch document types the resource accepts' } } } } }, get: { responses: { 200: {} } } } } } }) as { paths: { '/a': { get: { responses: { 200: { headers: unknown } } } } } }
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

type Doc = Record<string, any>

test('RFC 9110 12.5.1: a route that answers XML documents its 2xx bodies in application/xml too, with the XML Object of each element, and Vary', async (t) => {
  const r = route({ config: { contentType: { xml: { root: 'notes', itemNames: { notes: 'note' } } } } as never })
  openapiExtension.describe?.(r, { media: { xml: { root: 'notes', itemNames: { notes: 'note' } } } })
  recordResponse(r, 304, { description: 'Not Modified', body: 'none', headers: ['ETag'] })
  const note = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } }, a: { type: 'array', items: { type: 'string' } }, owner: { $ref: 'owner#' }, n: { type: 'integer' }, odd: true } }
  const out = withConventionResponses({ response: { 200: { type: 'array', items: note, headers: { 'X-Mine': { type: 'string' } } }, 201: { description: 'made', content: { 'text/plain': { schema: { type: 'string' } } } } } }, r) as Doc
  const xml = out.response['200'].content['application/xml'].schema
  t.same(xml.xml, { name: 'notes', wrapped: true }, 'the root element wraps the items')
  t.same(xml.items.xml, { name: 'note' }, 'the items are named by itemNames')
  t.same(xml.items.properties.tags.items.xml, { name: 'tag' }, 'an array member\'s items: its singular')
  t.same(xml.items.properties.a.items.xml, { name: 'item' }, 'a name with no singular: item')
  t.same(xml.items.properties.owner, { allOf: [{ $ref: 'owner#' }], xml: { name: 'owner' } }, 'a referenced schema keeps its reference')
  t.equal(xml.items.properties.odd, true, 'a boolean schema stays as it is')
  t.same(out.response['200'].content['application/json'].schema.items, note, 'the JSON schema is the route\'s')
  t.equal(out.response['200'].description, 'Default Response')
  t.same(Object.keys(out.response['200'].headers), ['Vary', 'X-Mine'], 'Vary: Accept beside the route\'s own headers')
  t.same(Object.keys(out.response['201'].content), ['text/plain'], 'a response given by media type is left as it is')
  t.ok(out.response['304'].headers.Vary, 'RFC 9110 15.4.5: the 304 carries the Vary the 200 would')
  const swagger2 = withConventionResponses({ response: { 200: { type: 'object' } } }, r, 'swagger2') as Doc
  t.same(swagger2.response['200'], { type: 'object', headers: { Vary: { type: 'string', description: 'Accept: the body is JSON, or XML to a client that prefers it' } } }, 'Swagger 2.0: the types are in produces')
})

test('RFC 3229 10.4.1: a 226 is documented as a delta in each media type of the instance, with the 2xx headers', async (t) => {
  const r = route({ config: { contentType: { xml: { root: 'note' } } } as never })
  openapiExtension.describe?.(r, { media: { xml: { root: 'note' } } })
  recordResponse(r, 226, { description: 'IM Used', body: 'none', headers: ['IM', 'Delta-Base'] })
  recordSuccessHeaders(r, ['ETag'])
  const out = withConventionResponses(undefined, r) as Doc
  t.same(Object.keys(out.response['226'].content), ['application/json', 'application/xml'])
  t.equal(out.response['226'].content['application/json'].schema.format, 'binary')
  t.same(Object.keys(out.response['226'].headers).sort(), ['Delta-Base', 'ETag', 'IM', 'Vary'])
  const json = route()
  recordResponse(json, 226, { description: 'IM Used', body: 'none' })
  t.same(Object.keys((withConventionResponses(undefined, json) as Doc).response['226'].content), ['application/json'])
  t.equal((withConventionResponses(undefined, json, 'swagger2') as Doc).response['226'].type, 'null', 'Swagger 2.0: no content')
})

test('a header every answer carries (Cross-Origin-Resource-Policy) is documented on every status; a later record replaces it', async (t) => {
  const r = route()
  t.same(withConventionResponses({ response: { 200: { type: 'string' } } }, r), { response: { 200: { type: 'string' } } }, 'nothing recorded: the schema as it is')
  recordAnswerHeader(r, 'Cross-Origin-Resource-Policy', { type: 'string', enum: ['same-site'] })
  recordAnswerHeader(r, 'Cross-Origin-Resource-Policy', { type: 'string', enum: ['same-origin'] })
  t.same(conventionAnswerHeaders(r), { 'Cross-Origin-Resource-Policy': { type: 'string', enum: ['same-origin'] } })
  recordResponse(r, 404, { description: 'Not Found', body: 'envelope' })
  const out = withConventionResponses({ response: { 200: { type: 'string' }, 500: 'not an object' } }, r) as Doc
  for (const status of ['200', '404', '500']) t.same(out.response[status].headers['Cross-Origin-Resource-Policy'].enum, ['same-origin'], status)
  t.same(conventionAnswerHeaders({}), {})
  const app = Fastify(serverOptions)
  await app.register(swagger, { openapi: { openapi: '3.0.3', info: { title: 't', version: '1' } }, transform: conventionsOpenApiTransform })
  await app.register(httpConventions)
  app.get('/logo', { config: { resourcePolicy: 'cross-origin' } }, async () => 'x')
  await app.ready()
  t.teardown(() => app.close())
  t.same((app.swagger() as unknown as Doc).paths['/logo'].get.responses['200'].headers['Cross-Origin-Resource-Policy'].schema.enum, ['cross-origin'], 'the route\'s own policy, from the resource policy plugin')
})

test('RFC 9457 3: the profile decides an errors[] envelope\'s media types; one status two conventions give with different bodies documents both', async (t) => {
  const cases: Array<[ErrorMedia | undefined, string[], boolean]> = [
    [undefined, ['text/plain', 'application/json'], false],
    ['json', ['text/plain', 'application/json'], false],
    ['problem', ['text/plain', 'application/problem+json'], false],
    ['negotiated', ['text/plain', 'application/json', 'application/problem+json'], true]
  ]
  for (const [media, types, varies] of cases) {
    const r = route({ method: 'PUT' })
    if (media !== undefined) recordErrorMedia(r, media)
    recordResponse(r, 400, { description: 'framing', body: 'text' })
    recordResponse(r, 400, { description: 'syntax', body: 'envelope' })
    recordResponse(r, 400, { description: 'again', body: 'envelope' })
    recordResponse(r, 400, { description: 'none', body: 'none' })
    const out = withConventionResponses(undefined, r) as Doc
    t.same(Object.keys(out.response['400'].content), types, `${media ?? 'nothing recorded'}: ${types.join(', ')}`)
    t.equal(out.response['400'].description, 'framing', 'the first one\'s description')
    t.equal(out.response['400'].headers?.Vary !== undefined, varies, varies ? 'RFC 9110 12.5.5: chosen by Accept, so Vary is documented' : 'no Vary: Accept played no part')
    if (types.includes('application/problem+json')) t.same(out.response['400'].content['application/problem+json'].schema.required, ['type', 'title', 'status', 'errors'])
  }
})

test('Conventions (Content-Length): a body route that answers 411 documents Content-Length as a required request header', async (t) => {
  const r = route({ method: 'POST' })
  recordResponse(r, 411, { description: 'Length Required', body: 'text' })
  const bare = conventionsOpenApiTransform({ schema: {}, url: '/x', route: r }).schema as Doc
  t.same(bare.headers.required, ['Content-Length'])
  const own = conventionsOpenApiTransform({ schema: { headers: { type: 'object', required: ['x-mine'], properties: { 'x-mine': { type: 'string' } } } }, url: '/x', route: r }).schema as Doc
  t.same(own.headers.required, ['x-mine', 'Content-Length'], 'beside the route\'s own required headers')
  const noRequired = conventionsOpenApiTransform({ schema: { headers: { type: 'object', properties: {} } }, url: '/x', route: r }).schema as Doc
  t.same(noRequired.headers.required, ['Content-Length'])
  const taken = conventionsOpenApiTransform({ schema: { headers: { type: 'object', properties: { 'content-length': { type: 'string' } } } }, url: '/x', route: r }).schema as Doc
  t.equal(taken.headers.required, undefined, 'the route\'s own Content-Length schema is left as it is')
  const get = route({ method: 'GET' })
  recordResponse(get, 411, { description: 'Length Required', body: 'text' })
  t.equal((conventionsOpenApiTransform({ schema: {}, url: '/x', route: get }).schema as Doc).headers, undefined, 'no body method: no Content-Length')
})

test('RFC 9110 15.4.8: a route that documents its own 307 gets no default 200, and the 307 gains the recorded Location', async (t) => {
  const r = route()
  recordResponse(r, 307, { description: 'Temporary Redirect', body: 'text', headers: ['Location'] })
  recordResponse(r, 404, { description: 'Not Found', body: 'envelope', headers: ['X-Why'] })
  const out = withConventionResponses({ response: { 307: { description: 'mine', content: { 'text/plain': { schema: { type: 'string' } } } }, 404: 'odd' } }, r) as Doc
  t.same(Object.keys(out.response).sort(), ['307', '404'], 'no default 200')
  t.equal(out.response['307'].description, 'mine')
  t.ok(out.response['307'].headers.Location, 'the recorded header')
  t.equal(out.response['404'], 'odd', 'a response that is no object is left as it is')
})
