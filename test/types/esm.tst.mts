// Type tests of the package as an ES module sees it (module node16, a .mts file): the
// default export is the plugin, not the CommonJS module object, and every subpath resolves.
import Fastify from 'fastify'
import { expect, test } from 'tstyche'
import httpConventions, { httpConventions as named, serverOptions, type HttpConventionsOptions } from 'fastify-http-conventions'
import { encode } from 'fastify-http-conventions/vcdiff'
import { DeltaClient, type DeltaResult, createConventionsClient, type ClientResponse } from 'fastify-http-conventions/client'
import { MemoryInstanceStore, type InstanceStore } from 'fastify-http-conventions/stores'
import { conventionsOpenApiTransform } from 'fastify-http-conventions/openapi'
import { negotiateMediaType } from 'fastify-http-conventions/headers'

test('ESM: the default import is the plugin', () => {
  expect(httpConventions).type.toBe<typeof named>()
  const app = Fastify({ ...serverOptions, http2: true })
  expect(app.register).type.toBeCallableWith(httpConventions, { profile: 'spec' as const } satisfies HttpConventionsOptions)
  expect(app.register).type.not.toBeCallableWith(httpConventions, { profile: 'http2' })
})

test('ESM: every subpath resolves with its types', () => {
  expect(encode(new Uint8Array(1), new Uint8Array(1))).type.toBe<Uint8Array>()
  expect(new DeltaClient().get('http://x/')).type.toBe<Promise<DeltaResult>>()
  expect(createConventionsClient().get<{ a: 1 }>('http://x/')).type.toBe<Promise<ClientResponse<{ a: 1 }>>>()
  expect(new MemoryInstanceStore()).type.toBeAssignableTo<InstanceStore>()
  expect(conventionsOpenApiTransform).type.toBeCallableWith({ url: '/', route: {} })
  expect(negotiateMediaType('*/*', ['text/html'])).type.toBe<string | null>()
})
