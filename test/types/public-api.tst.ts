// Type tests of the public API, against the generated .d.ts through the package's exports map.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyReply } from 'fastify'
import { expect, test } from 'tstyche'
import { Type } from '@sinclair/typebox'
import { createServer } from 'node:http'
import { type Http2Server } from 'node:http2'
import httpConventions, * as root from 'fastify-http-conventions'
import {
  httpConventionsContentLength, serverOptions, unprocessable, isConventionError, errorCodes,
  type ConventionError, type ErrorEntry, type HttpConventionsOptions, type Profile, type PatchableResource, type AuthPrincipal
} from 'fastify-http-conventions'
import { encode, decode, prepareSource, tryEncode, createEncoderPool, type EncodeLevel, type EncoderPool, type PreparedSource } from 'fastify-http-conventions/vcdiff'
import {
  DeltaClient, DeltaClientError, type DeltaResult, type DeltaClientOptions, authInterceptor, framingInterceptor, redirectInterceptor, deltaInterceptor,
  createConventionsClient, ConventionsClient, ConventionsClientError, clientErrorCodes, isConventionsClientError,
  type ClientResponse, type ClientCredential, type ClientErrorCode, type ClientEvent, type DeltaEvent
} from 'fastify-http-conventions/client'
import { Agent, interceptors, type Dispatcher } from 'undici'
import {
  MemoryInstanceStore, RedisInstanceStore, MemoryNonceStore, RedisNonceStore, type InstanceStore, type NonceCountStore, type RedisBufferClient
} from 'fastify-http-conventions/stores'
import { conventionsOpenApiTransform, withConventionResponses, conventionResponses, recordResponse, conventionAnswerHeaders, type ConventionResponse, type HeaderSchema } from 'fastify-http-conventions/openapi'
import { negotiateMediaType, parseMediaType } from 'fastify-http-conventions/headers'
import { jsonToXml, xmlBodyToJson } from 'fastify-http-conventions/xml'
import { applyJsonPatch, applyMergePatch } from 'fastify-http-conventions/json-patch'
import { createBearerKeyMatcher } from 'fastify-http-conventions/auth'
import { redactUrl, createRedactingSerializers, SECRET_QUERY_NAMES } from 'fastify-http-conventions/logging'

test('the umbrella registers with one typed options object', () => {
  const app = Fastify({ ...serverOptions })
  expect(app.register).type.toBeCallableWith(httpConventions, { profile: 'rfc9110' as const, contentLength: { bodyLimit: 10 }, contentType: false as const })
  expect(app.register).type.not.toBeCallableWith(httpConventions, { contentLength: { bodyLimit: '10' } })
  expect<HttpConventionsOptions>().type.toBeAssignableFrom({ profile: 'spec' as const })
  expect<HttpConventionsOptions>().type.not.toBeAssignableFrom({ profile: 'http2' })
  expect<HttpConventionsOptions>().type.not.toBeAssignableFrom({ contentLength: { limitStatus: 418 } })
  expect<Profile>().type.toBe<'spec' | 'rfc9110'>()
  expect(app.register).type.toBeCallableWith(httpConventionsContentLength, { mismatchStatus: 400 as const })
})

test('per-route config is typed on FastifyContextConfig', () => {
  const app = Fastify()
  app.post('/', { config: { contentLength: { bodyLimit: 1 }, contentType: { accept: ['application/json'], xml: { root: 'a' } } } }, async () => 'x')
  app.post('/off', { config: { contentLength: false, contentType: false } }, async () => 'x')
  expect(app.post).type.not.toBeCallableWith('/', { config: { contentLength: { bodyLimit: 'big' } } }, async () => 'x')
  expect(app.post).type.not.toBeCallableWith('/', { config: { contentType: { xml: { rooot: 'a' } } } }, async () => 'x')
})

test('errors: one call for a 422, and a guard for the catalogue', () => {
  expect(unprocessable({ field: 'slug', message: 'taken' })).type.toBe<ConventionError>()
  expect(unprocessable([{ field: 'a', message: 'b' }])).type.toBe<ConventionError>()
  expect(unprocessable).type.not.toBeCallableWith({ field: 'a' })
  const e = new Error('x') as FastifyError | Error
  if (isConventionError(e)) expect(e.errors).type.toBe<ErrorEntry[]>()
  expect(new errorCodes.LENGTH_REQUIRED()).type.toHaveProperty('statusCode')
  expect(negotiateMediaType(undefined, ['application/json'])).type.toBe<string | null>()
})

test('conditional, PATCH, delta encoding, auth, redirect and CORP route config is typed', () => {
  const app = Fastify()
  app.get('/a/:id', {
    config: {
      conditional: { validators: () => ({ etag: '"v1"', lastModified: new Date() }), creates: false },
      deltaEncoding: { manipulations: ['vcdiff', 'gzip'] },
      resourcePolicy: 'cross-origin',
      auth: false
    }
  }, async () => 'x')
  app.patch('/a/:id', {
    config: { auth: { scopes: ['write'], schemes: ['basic', 'digest'] }, patch: { schema: {}, load: () => null, save: () => false } }
  }, async (request) => {
    expect(request.patched).type.toBe<PatchableResource | null>()
    expect(request.principal).type.toBe<AuthPrincipal | null>()
    expect(request.preconditions?.expectedEtag).type.toBe<string | null | undefined>()
    return 'x'
  })
  expect(app.get).type.not.toBeCallableWith('/', { config: { resourcePolicy: 'same-planet' } }, async () => 'x')
  expect(app.get).type.not.toBeCallableWith('/', { config: { deltaEncoding: { manipulations: ['zstd'] } } }, async () => 'x')
  expect(app.get).type.not.toBeCallableWith('/', { config: { auth: { schemes: ['ntlm'] } } }, async () => 'x')
  app.post('/old', async (_request, reply) => {
    expect(reply.temporaryRedirect('/new')).type.toBe<FastifyReply>()
  })
})

test('serverOptions spreads into every overload of Fastify()', () => {
  const http2 = Fastify({ ...serverOptions, http2: true })
  expect(http2.server).type.toBe<Http2Server>()
  const logged = Fastify({ ...serverOptions, loggerInstance: Fastify().log })
  expect(logged.log).type.toBeAssignableTo<FastifyBaseLogger>()
  expect(Fastify({ ...serverOptions, https: null, logger: true }).server).type.toBeAssignableTo<ReturnType<typeof createServer>>()
  expect(Fastify({ ...serverOptions, serverFactory: (handler) => createServer(handler) })).type.not.toBe<never>()
  expect(serverOptions).type.not.toHaveProperty('logger')
  expect(serverOptions).type.toHaveProperty('ajv')
  expect(serverOptions).type.toHaveProperty('schemaController')
})

test('the root holds the plugins, their options, the error catalogue and serverOptions; helpers are in subpaths', () => {
  expect(root).type.not.toHaveProperty('negotiateMediaType')
  expect(root).type.not.toHaveProperty('MemoryInstanceStore')
  expect(root).type.not.toHaveProperty('DeltaClient')
  expect(root).type.not.toHaveProperty('conventionsOpenApiTransform')
  expect(root).type.not.toHaveProperty('encode')
  expect(root).type.not.toHaveProperty('fromFastifyError')
  expect(root).type.not.toHaveProperty('serializeEnvelope')
  expect(root).type.not.toHaveProperty('lengthRequired')
  expect(root).type.toHaveProperty('httpConventionsAuth')
  expect(root).type.toHaveProperty('sendConventionError')
  expect(root.default).type.toBe<typeof root.httpConventions>()
})

test('vcdiff: encode and decode bytes', () => {
  const source = new Uint8Array(4)
  expect(encode(source, source)).type.toBe<Uint8Array>()
  expect(decode(source, source)).type.toBe<Uint8Array>()
  expect(prepareSource(source)).type.toBe<PreparedSource>()
  expect(tryEncode).type.not.toBeCallableWith('a', 'b')
  expect(createEncoderPool()).type.toBe<EncoderPool>()
})

test('vcdiff: the encoder level is fast or default, in the encoder, the pool and the plugin', () => {
  const source = new Uint8Array(4)
  expect(encode(source, source, { level: 'fast' })).type.toBe<Uint8Array>()
  expect(encode).type.not.toBeCallableWith(source, source, { level: 'turbo' })
  expect<EncodeLevel>().type.toBe<'fast' | 'default'>()
  expect(createEncoderPool({ encoder: { level: 'default' }, fastFromBytes: 1 })).type.toBe<EncoderPool>()
  const app = Fastify()
  expect(app.register).type.toBeCallableWith(httpConventions, { deltaEncoding: { vcdiff: { level: 'fast' } } })
  expect(app.register).type.not.toBeCallableWith(httpConventions, { deltaEncoding: { vcdiff: { level: 'turbo' } } })
})

test('client: DeltaClient and its error', () => {
  expect(new DeltaClient({} satisfies DeltaClientOptions).get('http://x/')).type.toBe<Promise<DeltaResult>>()
  expect(new DeltaClientError('x')).type.toBeAssignableTo<Error>()
})

test('client: the interceptors compose beside undici\'s own', () => {
  const agent = new Agent().compose(interceptors.retry(), deltaInterceptor({ maxEntries: 10, onResponse: (e: DeltaEvent) => e.wireStatus }),
    authInterceptor({ credentials: [{ origin: 'http://x', username: 'u', password: 'p' }, { origin: 'http://y', token: async ({ refresh }) => (refresh ? 'a' : 'b') }] }),
    redirectInterceptor({ maxRedirections: 3 }), framingInterceptor({ maxBufferBytes: 10 }))
  expect(agent).type.toBeAssignableTo<Dispatcher>()
  expect(authInterceptor({ credentials: [] })).type.toBe<Dispatcher.DispatcherComposeInterceptor>()
  expect(authInterceptor).type.not.toBeCallableWith({ credentials: [{ origin: 'http://x', username: 'u' }] })
  expect(authInterceptor).type.not.toBeCallableWith({ credentials: [{ origin: 'http://x', token: 'static' }] })
  expect(framingInterceptor).type.not.toBeCallableWith({ maxBufferBytes: '1' })
  expect<ClientCredential>().type.toBeAssignableFrom({ origin: 'http://x', token: () => 't' })
})

test('client: the facade reads typed bodies, update and patch take a change, errors carry a code', async () => {
  interface Article { id: string, title: string }
  const client = createConventionsClient({ credentials: [], delta: false, onEvent: (e: ClientEvent) => e.type })
  expect(client).type.toBe<ConventionsClient>()
  expect(client.get<Article>('http://x/a')).type.toBe<Promise<ClientResponse<Article>>>()
  expect(client.update<Article>('http://x/a', (a) => ({ title: a.title + '!' }))).type.toBe<Promise<ClientResponse<Article>>>()
  expect(client.patch<Article>('http://x/a', async (a) => ({ ...a, title: 'x' }))).type.toBe<Promise<ClientResponse<Article>>>()
  expect(client.patch<Article>).type.not.toBeCallableWith('http://x/a', (a: Article) => ({ title: a.title }))
  expect(client.request).type.toBeCallableWith('POST', 'http://x/a', { body: new Uint8Array(1), contentType: 'text/plain' })
  expect(createConventionsClient).type.not.toBeCallableWith({ maxAttempts: '3' })
  const err: unknown = new Error('x')
  if (isConventionsClientError(err)) {
    expect(err.code).type.toBe<ClientErrorCode>()
    expect(err.errors).type.toBe<Array<{ field?: string, message: string, code?: string }>>()
    expect(err.status).type.toBe<number | undefined>()
  }
  expect(clientErrorCodes.PRECONDITION_FAILED).type.toBe<'ERR_CONVENTIONS_CLIENT_PRECONDITION_FAILED'>()
  expect(new ConventionsClientError(clientErrorCodes.UNPROCESSABLE, 'm')).type.toBeAssignableTo<Error>()
})

test('stores: instance and nonce stores', () => {
  expect(new MemoryInstanceStore({ maxBytes: 1024 })).type.toBeAssignableTo<InstanceStore>()
  expect(RedisInstanceStore).type.toBeConstructableWith({} as RedisBufferClient)
  expect(new MemoryNonceStore()).type.toBeAssignableTo<NonceCountStore>()
  expect(RedisNonceStore).type.not.toBeConstructableWith('redis://x')
  const app = Fastify()
  expect(app.register).type.toBeCallableWith(httpConventions, { deltaEncoding: { store: new MemoryInstanceStore() } })
})

test('openapi: the transform and the recorded responses', () => {
  const route = { config: {} }
  expect(conventionResponses(route)).type.toBe<Record<string, ConventionResponse>>()
  expect(withConventionResponses(undefined, route)).type.toBe<Record<string, unknown>>()
  expect(conventionsOpenApiTransform).type.toBeCallableWith({ schema: {}, url: '/', route })
  expect(recordResponse).type.not.toBeCallableWith(route, '404', { description: 'x', body: 'none' })
  expect(conventionAnswerHeaders(route)).type.toBe<Record<string, HeaderSchema>>()
  expect<HeaderSchema>().type.not.toBeAssignableFrom({ type: 'number' as const })
})

test('subpaths with one subject each: headers, xml, json-patch, auth, logging', () => {
  expect(negotiateMediaType(undefined, ['application/json'])).type.toBe<string | null>()
  expect(parseMediaType('text/plain')?.essence).type.toBe<string | undefined>()
  expect(jsonToXml({ a: 1 }, 'root')).type.toBe<string>()
  expect(xmlBodyToJson('<a/>')).type.toBe<unknown>()
  expect(applyJsonPatch({}, [])).type.not.toBeAssignableTo<string>()
  expect(applyMergePatch({}, {})).type.toBe<unknown>()
  expect(createBearerKeyMatcher(['k'])).type.toBe<(token: string) => boolean>()
  expect(redactUrl('/?token=x')).type.toBe<string>()
  expect(createRedactingSerializers()).type.toHaveProperty('req')
  expect(SECRET_QUERY_NAMES).type.toBe<readonly string[]>()
})

test('a route\'s providers read its params under strict without casts (route generics do not reach config)', () => {
  const app = Fastify({ ...serverOptions })
  app.put<{ Params: { id: string } }>('/articles/:id', {
    config: {
      conditional: { validators: (request) => ({ etag: `"${String(request.params.id)}"` }) },
      patch: { schema: {}, load: (request) => ({ document: { id: request.params.id as string } }), save: (_request, document) => ({ document }) }
    }
  }, async (request) => request.params.id)
})

test('config.patch.schema takes a TypeBox schema without a cast; conventionAuth and auth.app are typed', () => {
  const app = Fastify({ ...serverOptions })
  const Note = Type.Object({ id: Type.String({ readOnly: true }), text: Type.String() })
  app.patch('/notes/:id', { config: { patch: { schema: Note, load: () => null, save: () => false } } }, async () => 'x')
  expect(app.conventionAuth).type.toBeCallableWith({ schemes: ['app', 'basic'] as const })
  expect(app.conventionAuth).type.not.toBeCallableWith({ schemes: ['ntlm'] })
  expect(app.register).type.toBeCallableWith(httpConventions, { auth: { basic: { users: {} }, digestFirst: 'MD5' as const, app: { verify: () => ({ subject: 'ann' }) } } })
})
