// Type tests of the options and route config JSON Schemas of the /options subpath: each is its literal schema, read-only.
import { expect, test } from 'tstyche'
import type { HttpConventionsOptions } from 'fastify-http-conventions'
import {
  contentLengthRouteConfigSchema, httpConventionsOptionsSchema, patchRouteConfigSchema, preferOptionsSchema, preferRouteConfigSchema,
  resourcePolicyRouteConfigSchema
} from 'fastify-http-conventions/options'

test('a route config schema is its literal JSON Schema', () => {
  expect(preferRouteConfigSchema.type).type.toBe<'boolean'>()
  expect(patchRouteConfigSchema.required).type.toBe<readonly ['schema', 'load', 'save']>()
  expect(contentLengthRouteConfigSchema.properties.bodyLimit.minimum).type.toBe<0>()
  expect(resourcePolicyRouteConfigSchema.enum).type.toBe<readonly ['same-origin', 'same-site', 'cross-origin', false]>()
  expect(preferOptionsSchema.additionalProperties).type.toBe<false>()
})

test('the umbrella\'s schema has one section per key of its options', () => {
  type Sections = keyof typeof httpConventionsOptionsSchema.properties
  expect<Sections>().type.toBe<keyof Required<HttpConventionsOptions>>()
})
