/**
 * OpenAPI documents of apps using `conventionsOpenApiTransform` are valid OpenAPI 3.0 and
 * 3.1 for two validators, on a small app and on the reference service, and document what
 * the conventions add: responses with their headers, a success response where the route
 * gives none, security schemes, precondition and A-IM request headers, the PATCH formats
 * and XML request bodies. In @fastify/swagger's Swagger 2.0 mode (`swagger: {...}`) the
 * same apps give valid Swagger 2.0 documents with the same responses, in 2.0's shapes.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'
import SwaggerParser from '@apidevtools/swagger-parser'
import { httpConventions, serverOptions } from '../../plugins/index'
import {
  conventionsOpenApiTransform, conventionSecurity, conventionSecuritySchemes, recordResponse, recordSecurity, withConventionResponses
} from '../../plugins/entries/openapi'
import { conventionSecurityDefinitions, openapiExtension } from '../../plugins/services/openapi'

type Json = Record<string, any>

const VERSIONS = ['3.0.3', '3.1.0'] as const

async function validate (doc: Json): Promise<{ schemaValidator: unknown[], swaggerParser: string | null }> {
  // The validator is an ES module: loaded with import(), which TypeScript keeps as it is under node16.
  const { Validator } = await import('@seriousme/openapi-schema-validator')
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc))
  let parser: string | null = null
  try {
    await SwaggerParser.validate(structuredClone(doc) as never)
  } catch (err) {
    parser = (err as Error).message
  }
  return { schemaValidator: result.valid ? [] : (result.errors as unknown[] ?? ['invalid']), swaggerParser: parser }
}

/** Every response header object that wraps a schema in a schema (the shape OpenAPI refuses). */
function doubleWrapped (doc: Json): string[] {
  const found: string[] = []
  for (const [path, ops] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(ops as Json)) {
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        for (const [name, header] of Object.entries((res.headers ?? {}) as Json)) {
          if (header.schema?.schema !== undefined) found.push(`${method} ${path} ${status} ${name}`)
        }
      }
    }
  }
  return found
}

const ITEM = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }
}

async function smallApp (openapi: string): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions })
  const info = { title: 'small', version: '1' }
  await app.register(swagger, openapi === '2.0' ? { swagger: { info }, transform: conventionsOpenApiTransform } : { openapi: { openapi, info }, transform: conventionsOpenApiTransform })
  await app.register(httpConventions, { auth: { realm: 'r', basic: { users: { ann: 'pw' } }, bearer: { verify: () => null } } })
  const validators = async (): Promise<{ etag: string }> => ({ etag: '"1"' })
  app.get('/plain', async () => 'x')
  app.get('/items/:id', { config: { conditional: { validators }, deltaEncoding: true, contentType: { xml: { root: 'item' } } } }, async () => ({ name: 'a' }))
  app.get('/own-headers', {
    schema: { headers: { type: 'object', properties: { 'if-match': { type: 'string', description: 'mine' }, 'x-trace': { type: 'string' } } } },
    config: { conditional: { validators } }
  }, async () => 'x')
  app.post('/items', {
    schema: { body: ITEM, response: { 201: ITEM } },
    config: { auth: { schemes: ['basic'] }, contentType: { accept: ['application/json', 'application/xml'], xml: { root: 'item' } } }
  }, async (_request, reply) => reply.code(201).send({ name: 'a' }))
  app.patch('/items/:id', {
    config: { auth: true, patch: { schema: { $id: 'item-resource', ...ITEM }, load: () => null, save: () => false } }
  }, async () => 'x')
  app.patch('/merge-only/:id', {
    config: { patch: { schema: ITEM, formats: ['merge-patch'], load: () => null, save: () => false } }
  }, async () => 'x')
  app.delete('/items/:id', { config: { auth: true, conditional: { validators } } }, async (_request, reply) => reply.code(204).send())
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  await app.ready()
  return app
}

for (const version of VERSIONS) {
  test(`OpenAPI ${version}: a small app's document is valid and documents the conventions`, async (t) => {
    const app = await smallApp(version)
    t.teardown(() => app.close())
    const doc = (await app.inject('/openapi.json')).json() as Json
    t.equal(doc.openapi, version)
    t.same(await validate(doc), { schemaValidator: [], swaggerParser: null }, 'valid for @seriousme/openapi-schema-validator and @apidevtools/swagger-parser')
    t.same(doubleWrapped(doc), [], 'response headers are { schema }, not { schema: { schema } }')

    const paths = doc.paths as Json
    // Every operation keeps a success response.
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops as Json)) {
        t.ok(Object.keys(op.responses).some((s) => /^2/.test(s)), `${method} ${path} documents a 2xx`)
      }
    }
    t.same(Object.keys(paths['/plain'].get.responses), ['200'], 'a route without conventions keeps the default 200')
    t.same(paths['/plain'].get.responses['200'].description, 'Default Response')
    t.same(Object.keys(paths['/plain'].get.responses['200'].headers), ['Cross-Origin-Resource-Policy'], 'with the resource policy of every answer')
    t.equal(paths['/items/{id}'].delete.responses['204'].description, 'No Content: the resource is deleted')
    t.notOk(paths['/items/{id}'].delete.responses['204'].content, '204 has no content')
    t.match(paths['/items/{id}'].patch.responses['200'], { content: { 'application/json': { schema: { type: 'object', required: ['name'] } } } }, 'PATCH answers the patched resource')
    t.match(paths['/items/{id}'].patch.responses['404'], { content: { 'application/json': { schema: { required: ['message', 'error', 'statusCode'] } } } }, 'PATCH of a missing resource is the not-found handler\'s 404: Fastify\'s body')
    const missing = await app.inject({ method: 'PATCH', url: '/merge-only/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{}' })
    t.equal(missing.statusCode, 404)
    t.same(Object.keys(missing.json()).sort(), ['error', 'message', 'statusCode'], 'the body sent is the one documented')

    // 226 and its headers; the precondition and A-IM request headers.
    const get = paths['/items/{id}'].get
    t.match(get.responses['226'], { headers: { IM: { schema: { type: 'string' } }, 'Delta-Base': { schema: { type: 'string' } } } })
    t.same(Object.keys(get.responses['226'].content), ['application/json', 'application/xml'], 'RFC 3229 10.4.1: the 226 body is a delta of the instance, in its media types')
    t.equal(get.responses['226'].content['application/json'].schema.format, 'binary', 'the 226 body is not JSON')
    const headerNames = (op: Json): string[] => (op.parameters ?? []).filter((p: Json) => p.in === 'header').map((p: Json) => p.name)
    t.same(headerNames(get).sort(), ['A-IM', 'If-Match', 'If-Modified-Since', 'If-None-Match', 'If-Unmodified-Since'])
    t.same(headerNames(paths['/items/{id}'].delete).sort(), ['If-Match', 'If-None-Match', 'If-Unmodified-Since'], 'If-Modified-Since is for GET and HEAD')
    t.same(headerNames(paths['/plain'].get), [])
    const own = paths['/own-headers'].get.parameters as Json[]
    t.same(own.filter((p) => p.name.toLowerCase() === 'if-match').map((p) => p.description), ['mine'], 'a header the route documents itself wins')
    t.ok(own.some((p) => p.name === 'x-trace'))
    t.ok(own.some((p) => p.name === 'If-None-Match'))

    // Request bodies: both PATCH formats, XML where accepted.
    t.same(Object.keys(paths['/items/{id}'].patch.requestBody.content).sort(), ['application/json-patch+json', 'application/merge-patch+json'])
    t.match(paths['/items/{id}'].patch.requestBody.content['application/json-patch+json'].schema, { type: 'array', items: { required: ['op', 'path'] } })
    t.same(Object.keys(paths['/merge-only/{id}'].patch.requestBody.content), ['application/merge-patch+json'])
    const post = paths['/items'].post
    t.same(Object.keys(post.requestBody.content).sort(), ['application/json', 'application/xml'])
    t.match(post.requestBody.content['application/xml'].schema, { xml: { name: 'item' }, required: ['name'] })

    // Security: schemes in components, requirements on protected operations only.
    t.same(Object.keys(doc.components.securitySchemes).sort(), ['basicAuth', 'bearerAuth'], 'the schemes the app offers, not Digest')
    t.match(doc.components.securitySchemes.basicAuth, { type: 'http', scheme: 'basic' })
    t.same(post.security, [{ basicAuth: [] }], 'the schemes the route names')
    t.ok(paths['/items/{id}'].delete.security.some((r: Json) => r.basicAuth !== undefined))
    t.notOk(get.security, 'open routes have no security requirement')
    t.notOk(paths['/plain'].get.security)
  })
}

/** The Swagger 2.0 validation of @apidevtools/swagger-parser: null when valid, else its message. */
async function validateSwagger2 (doc: Json): Promise<string | null> {
  try {
    await SwaggerParser.validate(structuredClone(doc) as never)
    return null
  } catch (err) {
    return (err as Error).message
  }
}

test('Swagger 2.0 (@fastify/swagger\'s `swagger` mode): a small app\'s document is valid and documents the conventions in 2.0\'s shapes', async (t) => {
  const app = await smallApp('2.0')
  t.teardown(() => app.close())
  const doc = (await app.inject('/openapi.json')).json() as Json
  t.equal(doc.swagger, '2.0')
  t.equal(await validateSwagger2(doc), null, 'valid for @apidevtools/swagger-parser')
  const paths = doc.paths as Json
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops as Json)) {
      t.ok(Object.keys(op.responses).some((s) => /^2/.test(s)), `${method} ${path} documents a 2xx`)
      for (const [status, res] of Object.entries(op.responses as Json)) t.notOk(res.content ?? res.schema?.content, `${method} ${path} ${status}: a schema, no OpenAPI 3 content`)
    }
  }
  const get = paths['/items/{id}'].get
  t.match(get.responses['412'], { headers: { ETag: { type: 'string' } }, schema: { type: 'object', required: ['errors'] } }, 'the 412 is the envelope, with the current ETag')
  t.match(get.responses['226'], { headers: { IM: { type: 'string' }, 'Delta-Base': { type: 'string' } } })
  t.notOk(get.responses['226'].schema, 'the 226 body is not JSON')
  t.same(get.produces, ['application/json', 'application/xml'], 'JSON, and XML by Accept; under the spec profile errors are application/json only')
  const headerNames = (op: Json): string[] => (op.parameters ?? []).filter((p: Json) => p.in === 'header').map((p: Json) => p.name)
  t.same(headerNames(get).sort(), ['A-IM', 'If-Match', 'If-Modified-Since', 'If-None-Match', 'If-Unmodified-Since'])

  const patch = paths['/items/{id}'].patch
  t.same(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json'], 'both PATCH formats, by Content-Type')
  t.match(patch.parameters.find((p: Json) => p.in === 'body'), { name: 'body', schema: { description: /application\/json-patch\+json/ } })
  t.match(patch.responses['200'].schema, { type: 'object', required: ['name'] }, 'PATCH answers the patched resource')
  t.match(patch.responses['404'].schema, { type: 'object', required: ['message', 'error', 'statusCode'] })
  t.match(patch.responses['401'], { headers: { 'WWW-Authenticate': { type: 'string' } }, schema: { type: 'string' } }, 'the 401 page')
  t.ok(patch.produces.includes('text/html'), 'the 401 page is HTML')
  t.ok(patch.produces.includes('text/plain'), 'the 411 is plain text')
  const mergeOnly = paths['/merge-only/{id}'].patch
  t.same(mergeOnly.consumes, ['application/merge-patch+json'])
  t.match(mergeOnly.parameters.find((p: Json) => p.in === 'body').schema, { type: 'object', description: /Merge Patch/ })

  const post = paths['/items'].post
  t.same(post.consumes, ['application/json', 'application/xml'])
  t.match(post.parameters.find((p: Json) => p.in === 'body').schema, { xml: { name: 'item' }, required: ['name'] })

  t.same(doc.securityDefinitions, {
    basicAuth: { type: 'basic', description: 'HTTP Basic (RFC 7617), UTF-8 credentials' },
    bearerAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer token (RFC 6750): Authorization: Bearer <token>' }
  }, 'the schemes the app offers: Basic as basic, Bearer as its Authorization header')
  t.same(post.security, [{ basicAuth: [] }])
  t.same(paths['/items/{id}'].delete.security, [{ basicAuth: [] }, { bearerAuth: [] }])
  t.notOk(get.security)
  for (const definition of Object.values(doc.definitions as Json)) t.notOk((definition as Json).$schema, 'no $schema in a definition (Swagger 2.0 has none)')
})

// The reference service registers @fastify/swagger for OpenAPI 3.0.3: to build the same
// service documented in 3.1 (or in Swagger 2.0), the module it loads is replaced by one that
// sets the version (or turns the `openapi` options into `swagger` ones).
let serviceVersion: string | undefined
const swaggerId = require.resolve('@fastify/swagger')
const realSwagger = (require.cache[swaggerId] as NodeJS.Module).exports
;(require.cache[swaggerId] as NodeJS.Module).exports = fp(async function versionedSwagger (fastify: FastifyInstance, opts: Json) {
  if (serviceVersion === '2.0') {
    const { openapi, ...rest } = opts
    await fastify.register(realSwagger, { ...rest, swagger: { info: openapi.info } })
    return
  }
  await fastify.register(realSwagger, serviceVersion === undefined ? opts : { ...opts, openapi: { ...opts.openapi, openapi: serviceVersion } })
})
const { buildService } = require('../../example/app') as typeof import('../../example/app')

for (const version of VERSIONS) {
  test(`OpenAPI ${version}: the reference service's GET /openapi.json is valid and documents the conventions`, async (t) => {
    serviceVersion = version
    const app = await buildService({ database: ':memory:', bodyLimit: 1048576, profile: 'spec' })
    serviceVersion = undefined
    t.teardown(() => app.close())
    const res = await app.inject('/openapi.json')
    t.equal(res.statusCode, 200)
    const doc = res.json() as Json
    t.equal(doc.openapi, version)
    t.same(await validate(doc), { schemaValidator: [], swaggerParser: null }, 'valid for both validators')
    t.same(doubleWrapped(doc), [])
    const article = doc.paths['/articles/{id}']
    t.ok(article.get.responses['226'])
    t.ok(article.get.parameters.some((p: Json) => p.name === 'A-IM'))
    t.ok(article.put.parameters.some((p: Json) => p.name === 'If-Match'))
    t.ok(article.delete.responses['204'], 'DELETE documents its success')
    t.ok(article.patch.responses['200'], 'PATCH documents its success')
    t.same(Object.keys(article.options.responses), ['204'], 'OPTIONS (RFC 9110 9.3.7) needs no article: 204 only')
    t.ok(article.options.responses['204'].headers.Allow && article.options.responses['204'].headers['Accept-Patch'], 'with Allow, and Accept-Patch where PATCH is served')
    for (const [method, op] of Object.entries(article as Json)) {
      if (method === 'options') continue
      t.match(op.responses['404'], { description: /no article has this id/, content: { 'application/json': { schema: { required: ['errors'] } } } }, `${method} /articles/{id} documents the service's own 404`)
      t.match(op.responses['503'], { headers: { 'Retry-After': { schema: { type: 'string' } } }, content: { 'text/html': { schema: { type: 'string' } } } }, `${method} /articles/{id} documents its 503 and Retry-After`)
    }
    t.match(doc.paths['/articles'].get.responses['503'], { description: /database/, content: { 'text/html': {} } }, 'the list needs the database too')
    t.notOk(doc.paths['/articles'].get.responses['404'], 'a list has no unknown id')
    t.same(Object.keys(article.patch.requestBody.content).sort(), ['application/json-patch+json', 'application/merge-patch+json'])
    t.ok(doc.paths['/articles'].post.requestBody.content['application/xml'], 'XML bodies are accepted')
    for (const op of [doc.paths['/articles'].post, article.put, article.patch, article.delete]) t.ok(op.security.length > 0, 'writes need credentials')
    t.notOk(article.get.security)
    t.same(Object.keys(doc.components.securitySchemes).sort(), ['basicAuth', 'bearerAuth', 'digestAuth'])
  })
}

test('Swagger 2.0: the reference service documented in @fastify/swagger\'s `swagger` mode is valid', async (t) => {
  serviceVersion = '2.0'
  const app = await buildService({ database: ':memory:', bodyLimit: 1048576, profile: 'spec' })
  serviceVersion = undefined
  t.teardown(() => app.close())
  const doc = (await app.inject('/openapi.json')).json() as Json
  t.equal(doc.swagger, '2.0')
  t.equal(await validateSwagger2(doc), null, 'valid for @apidevtools/swagger-parser')
  const article = doc.paths['/articles/{id}']
  t.ok(article.get.responses['226'])
  t.same(article.patch.consumes, ['application/json-patch+json', 'application/merge-patch+json'])
  t.same(doc.paths['/articles'].post.consumes, ['application/json', 'application/xml'])
  for (const op of [doc.paths['/articles'].post, article.put, article.patch, article.delete]) t.ok(op.security.length > 0, 'writes need credentials')
  t.same(Object.keys(doc.securityDefinitions).sort(), ['basicAuth', 'bearerAuth', 'digestAuth'])
})

test('recorders and the transform, unit by unit', async (t) => {
  const route = { method: 'PUT', url: '/x', config: {} } as unknown as RouteOptions
  t.equal(conventionSecurity(route), null, 'nothing recorded: open')
  recordResponse(route, 401, { description: 'auth', body: 'html', headers: ['WWW-Authenticate'] })
  t.same(conventionSecurity(route), { schemes: ['basic', 'bearer', 'digest'], scopes: [] }, 'a 401 without a marker: any scheme')
  recordSecurity(route, { schemes: ['digest'], scopes: ['write'] })
  t.same(conventionSecurity(route), { schemes: ['digest'], scopes: ['write'] }, 'the marker of the auth plugin')

  const doc30: Json = { openapi: '3.0.3', components: {} }
  const out30 = conventionsOpenApiTransform({ schema: {}, url: '/x', route, openapiObject: doc30 }).schema
  t.same(out30.security, [{ digestAuth: [] }], '3.0: no scopes for HTTP schemes')
  t.same(doc30.components.securitySchemes, { digestAuth: conventionSecuritySchemes.digestAuth })
  const doc31: Json = { openapi: '3.1.0', components: { securitySchemes: { digestAuth: { type: 'http', scheme: 'digest', description: 'mine' } } } }
  t.same(conventionsOpenApiTransform({ schema: {}, url: '/x', route, openapiObject: doc31 }).schema.security, [{ digestAuth: ['write'] }], '3.1: scopes as roles')
  t.equal(doc31.components.securitySchemes.digestAuth.description, 'mine', 'a scheme the document defines is kept')
  const swagger2: Json = { swagger: '2.0', definitions: { envelope: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' } } }
  t.same(conventionsOpenApiTransform({ schema: {}, url: '/x', route, swaggerObject: swagger2 }).schema.security, [{ digestAuth: [] }], 'Swagger 2: no scopes outside OAuth 2')
  t.same(swagger2.securityDefinitions, { digestAuth: conventionSecurityDefinitions.digestAuth }, 'Digest as the Authorization header it is sent in')
  t.same(swagger2.definitions, { envelope: { type: 'object' } }, 'Swagger 2: $schema taken out of the definitions')
  t.notOk(conventionsOpenApiTransform({ schema: {}, url: '/x', route }).schema.security, 'no document at hand: no security added')
  t.same(conventionsOpenApiTransform({ schema: { security: [] }, url: '/x', route, openapiObject: { openapi: '3.0.3' } }).schema.security, [], 'the route\'s own security wins')

  const fromConfig = { method: 'GET', url: '/y', config: { auth: { schemes: ['bearer', 'ntlm'], scopes: ['read', 1] } } } as unknown as RouteOptions
  recordResponse(fromConfig, 401, { description: 'auth', body: 'html' })
  t.same(conventionSecurity(fromConfig), { schemes: ['basic', 'bearer', 'digest'], scopes: [] }, 'without a marker, the route config is not read: any scheme')

  const own = withConventionResponses({ response: { '2xx': { description: 'mine' } } }, route)
  t.same(Object.keys(own.response as Json).sort(), ['2xx', '401'], 'a route documenting a 2xx range gets no default success')
  const ref = { method: 'PUT', url: '/z', config: { contentType: { accept: ['application/xml'], xml: { root: 'thing' } } } } as unknown as RouteOptions
  openapiExtension.describe?.(ref, { media: { accept: ['application/xml'], xml: { root: 'thing' } } })
  recordResponse(ref, 415, { description: 'type', body: 'envelope' })
  const body = conventionsOpenApiTransform({ schema: { body: { $ref: 'thing#' }, headers: { $ref: 'h#' } }, url: '/z', route: ref }).schema
  t.same(body.body, { content: { 'application/xml': { schema: { allOf: [{ $ref: 'thing#' }], xml: { name: 'thing' } } } } }, 'a referenced XML body is named through allOf')
  recordResponse(ref, 412, { description: 'pre', body: 'envelope' })
  t.same(conventionsOpenApiTransform({ schema: { headers: { $ref: 'h#' } }, url: '/z', route: ref }).schema.headers, { $ref: 'h#' }, 'a referenced headers schema is left as it is')
  const plainXml = { method: 'POST', url: '/w', config: { contentType: { accept: ['application/json', 'application/xml'] } } } as unknown as RouteOptions
  openapiExtension.describe?.(plainXml, { media: { accept: ['application/json', 'application/xml'] } })
  recordResponse(plainXml, 415, { description: 'type', body: 'envelope' })
  t.same(conventionsOpenApiTransform({ schema: { body: { type: 'string' } }, url: '/w', route: plainXml }).schema.body, {
    content: { 'application/json': { schema: { type: 'string' } }, 'application/xml': { schema: { type: 'string' } } }
  }, 'XML without an XML config: the same schema')
  const jsonOnly = { method: 'POST', url: '/v', config: { contentType: {} } } as unknown as RouteOptions
  openapiExtension.describe?.(jsonOnly, { media: {} })
  recordResponse(jsonOnly, 415, { description: 'type', body: 'envelope' })
  t.same(conventionsOpenApiTransform({ schema: { body: { type: 'string' } }, url: '/v', route: jsonOnly }).schema.body, { type: 'string' }, 'JSON only: the body as it is')
})
