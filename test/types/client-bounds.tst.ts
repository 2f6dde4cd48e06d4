// Type tests of the client's weakestAuth option and its error, against the generated .d.ts.
import { expect, test } from 'tstyche'
import { authInterceptor, createConventionsClient, clientErrorCodes, isConventionsClientError, type WeakestAuth } from 'fastify-http-conventions/client'

test('client: weakestAuth names a scheme, and an algorithm for Digest only', () => {
  expect(createConventionsClient).type.toBeCallableWith({ weakestAuth: { scheme: 'digest', algorithm: 'SHA-256' } })
  expect(createConventionsClient).type.toBeCallableWith({ weakestAuth: 'any' })
  expect(authInterceptor).type.toBeCallableWith({ credentials: [], weakestAuth: { scheme: 'bearer' } })
  expect(authInterceptor).type.not.toBeCallableWith({ credentials: [], weakestAuth: { scheme: 'basic', algorithm: 'MD5' } })
  expect(authInterceptor).type.not.toBeCallableWith({ credentials: [], weakestAuth: { scheme: 'digest', algorithm: 'SHA-1' } })
  expect<WeakestAuth>().type.toBeAssignableFrom({ scheme: 'digest' as const })
})

test('client: a refused challenge is WEAK_CHALLENGE and names what was offered', () => {
  expect(clientErrorCodes.WEAK_CHALLENGE).type.toBe<'ERR_CONVENTIONS_CLIENT_WEAK_CHALLENGE'>()
  const err: unknown = new Error('x')
  if (isConventionsClientError(err)) expect(err.offered).type.toBe<string[]>()
})
