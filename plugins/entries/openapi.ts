/**
 * `fastify-http-conventions/openapi`: the responses, parameters and security the suite's
 * plugins add to each route, for @fastify/swagger (`transform: conventionsOpenApiTransform`).
 *
 * @module fastify-http-conventions/openapi
 */
export {
  conventionsOpenApiTransform, conventionsOpenApiTransformObject, withConventionResponses, conventionResponses, recordResponse,
  conventionSuccessHeaders, recordSuccessHeaders, conventionAnswerHeaders, recordAnswerHeader, conventionSecurity, recordSecurity, conventionSecuritySchemes, conventionSecurityDefinitions
} from '../services/openapi'
export type { ConventionResponse, ConventionSecurity, DocumentFormat, HeaderSchema, ResponseBody } from '../services/openapi'
