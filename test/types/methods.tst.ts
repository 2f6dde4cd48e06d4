// Type tests of the methods convention's options and route config, through the package's exports map.
import Fastify from 'fastify'
import { expect, test } from 'tstyche'
import { httpConventions, httpConventionsMethods, methodNotAllowed, type ConventionError, type HttpConventionsOptions, type MethodsOptions, type MethodsRouteConfig } from 'fastify-http-conventions'

test('the umbrella takes methods: {} or false, nothing else', () => {
  expect<HttpConventionsOptions>().type.toBeAssignableFrom({ methods: {} })
  expect<HttpConventionsOptions>().type.toBeAssignableFrom({ methods: false as const })
  expect<HttpConventionsOptions>().type.not.toBeAssignableFrom({ methods: true as const })
  expect<HttpConventionsOptions>().type.not.toBeAssignableFrom({ methods: { allow: ['GET'] } })
  expect<MethodsOptions>().type.not.toBeAssignableFrom({ bogus: 1 })
})

test('config.methods is false or absent on every route', () => {
  const app = Fastify()
  app.register(httpConventions, { methods: {} })
  app.register(httpConventionsMethods, {})
  expect(app.get).type.toBeCallableWith('/x', { config: { methods: false } }, async () => 'x')
  expect(app.get).type.not.toBeCallableWith('/x', { config: { methods: true } }, async () => 'x')
  expect<MethodsRouteConfig>().type.toBe<false>()
})

test('methodNotAllowed is one of the catalogue\'s errors', () => {
  expect(methodNotAllowed('POST', 'GET, HEAD, OPTIONS')).type.toBe<ConventionError>()
})
