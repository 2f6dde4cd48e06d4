/**
 * `fastify-http-conventions/options`: every plugin's options and route config as the JSON
 * Schemas they are checked against (at registration, and when a route is added), and the
 * umbrella's, built from them. For tools that check or document a configuration; an app that
 * only registers the plugins does not need them.
 *
 * @module fastify-http-conventions/options
 */
import { authOptionsSchema } from '../conventions/auth/index'
import { conditionalOptionsSchema } from '../conventions/conditional'
import { contentLengthOptionsSchema } from '../conventions/content-length'
import { contentTypeOptionsSchema } from '../conventions/content-type'
import { deltaEncodingOptionsSchema } from '../conventions/delta-encoding'
import { methodsOptionsSchema } from '../conventions/methods'
import { patchOptionsSchema } from '../conventions/patch'
import { preferOptionsSchema } from '../conventions/prefer'
import { redirectOptionsSchema } from '../conventions/redirect'
import { resourcePolicyOptionsSchema } from '../conventions/resource-policy'
import { validationOptionsSchema } from '../conventions/validation'
import { FUNCTION_SCHEMA, MESSAGE, PROFILE_SCHEMA, type OptionsSchema } from '../infrastructure/options'

/**
 * A section of the umbrella's options: the plugin's options schema without `profile` (the
 * umbrella gives its own to every plugin), or false. A problem inside it is reported as the
 * plugin registered alone reports it (its schema's `x-where`).
 */
function section (schema: OptionsSchema): OptionsSchema {
  const { type: _object, properties = {}, ...rest } = schema as { type: unknown, properties?: Record<string, unknown> }
  const { profile: _profile, ...own } = properties
  return { type: ['boolean', 'object'], not: { const: true }, allOf: [{ ...rest, properties: own }], [MESSAGE]: 'must be an options object or false' }
}

/** The umbrella's options as JSON Schema, built from the plugins' schemas, checked at registration. */
export const httpConventionsOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    errorHandler: { ...FUNCTION_SCHEMA, [MESSAGE]: 'must be a function' },
    errorFormat: { enum: ['envelope', 'problem'], [MESSAGE]: "must be 'envelope' or 'problem'" },
    contentLength: section(contentLengthOptionsSchema),
    contentType: section(contentTypeOptionsSchema),
    validation: section(validationOptionsSchema),
    conditional: section(conditionalOptionsSchema),
    patch: section(patchOptionsSchema),
    deltaEncoding: section(deltaEncodingOptionsSchema),
    auth: section(authOptionsSchema),
    redirect: section(redirectOptionsSchema),
    resourcePolicy: section(resourcePolicyOptionsSchema),
    prefer: section(preferOptionsSchema),
    methods: section(methodsOptionsSchema)
  }
} as const

export { contentLengthOptionsSchema, contentLengthRouteConfigSchema } from '../conventions/content-length'
export { contentTypeOptionsSchema, contentTypeRouteConfigSchema } from '../conventions/content-type'
export { validationOptionsSchema, validationRouteConfigSchema } from '../conventions/validation'
export { patchOptionsSchema, patchRouteConfigSchema } from '../conventions/patch'
export { conditionalOptionsSchema, conditionalRouteConfigSchema } from '../conventions/conditional'
export { deltaEncodingOptionsSchema, deltaEncodingRouteConfigSchema } from '../conventions/delta-encoding'
export { authOptionsSchema, authRouteConfigSchema } from '../conventions/auth/index'
export { redirectOptionsSchema, redirectRouteConfigSchema } from '../conventions/redirect'
export { resourcePolicyOptionsSchema, resourcePolicyRouteConfigSchema } from '../conventions/resource-policy'
export { preferOptionsSchema, preferRouteConfigSchema } from '../conventions/prefer'
export { methodsOptionsSchema, methodsRouteConfigSchema } from '../conventions/methods'
