/**
 * `fastify-http-conventions/options`: every plugin's options and route config as the JSON
 * Schemas they are checked against (at registration, and when a route is added), and the
 * umbrella's, built from them. For tools that check or document a configuration; an app that
 * only registers the plugins does not need them.
 *
 * @module fastify-http-conventions/options
 */
export { httpConventionsOptionsSchema } from '../umbrella-options'

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
