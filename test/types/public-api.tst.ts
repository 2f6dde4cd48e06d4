// Type tests of the public API, against the generated .d.ts through the package's exports map.
import Fastify, { type FastifyError } from 'fastify'
import { expect, test } from 'tstyche'
import httpConventions, {
  httpConventionsContentLength, serverOptions, unprocessable, isConventionError, errorCodes, negotiateMediaType,
  type ConventionError, type ErrorEntry, type HttpConventionsOptions, type Profile
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
