/**
 * `fastify-http-conventions/openapi`: the responses, parameters and security the suite's
 * plugins add to each route, for @fastify/swagger (`transform: conventionsOpenApiTransform`).
 */
export {
  conventionsOpenApiTransform, withConventionResponses, conventionResponses, recordResponse,
  conventionSecurity, recordSecurity, conventionSecuritySchemes
} from '../openapi'
export type { ConventionResponse, ConventionSecurity, ResponseBody } from '../openapi'
