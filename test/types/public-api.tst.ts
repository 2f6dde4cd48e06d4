// Type tests of the public API, against the generated .d.ts through the package's exports map.
import Fastify, { type FastifyError, type FastifyReply } from 'fastify'
import { expect, test } from 'tstyche'
import httpConventions, {
  httpConventionsContentLength, serverOptions, unprocessable, isConventionError, errorCodes, negotiateMediaType,
  MemoryInstanceStore, MemoryNonceStore, DeltaClient, applyJsonPatch,
  type ConventionError, type ErrorEntry, type HttpConventionsOptions, type Profile, type PatchableResource, type AuthPrincipal,
  type InstanceStore, type NonceCountStore, type DeltaResult
} from 'fastify-http-conventions'

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

test('stores and the client helper are typed', () => {
  expect(new MemoryInstanceStore({ maxBytes: 1024 })).type.toBeAssignableTo<InstanceStore>()
  expect(new MemoryNonceStore()).type.toBeAssignableTo<NonceCountStore>()
  expect(new DeltaClient().get('http://x/')).type.toBe<Promise<DeltaResult>>()
  expect(applyJsonPatch({}, [])).type.not.toBeAssignableTo<string>()
})
