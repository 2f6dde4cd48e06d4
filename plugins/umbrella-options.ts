/**
 * The umbrella plugin's options as JSON Schema, built from each convention plugin's own
 * schema: what plugins/index.ts checks its options against at registration, and what the
 * `fastify-http-conventions/options` entry exports for tools.
 */
import { authOptionsSchema } from './conventions/auth/index'
import { conditionalOptionsSchema } from './conventions/conditional'
import { contentLengthOptionsSchema } from './conventions/content-length'
import { contentTypeOptionsSchema } from './conventions/content-type'
import { deltaEncodingOptionsSchema } from './conventions/delta-encoding'
import { methodsOptionsSchema } from './conventions/methods'
import { patchOptionsSchema } from './conventions/patch'
import { preferOptionsSchema } from './conventions/prefer'
import { redirectOptionsSchema } from './conventions/redirect'
import { resourcePolicyOptionsSchema } from './conventions/resource-policy'
import { validationOptionsSchema } from './conventions/validation'
import { FUNCTION_SCHEMA, MESSAGE, PROFILE_SCHEMA, type OptionsSchema } from './services/options'

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
