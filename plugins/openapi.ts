/**
 * OpenAPI: each plugin records, per route, the error responses it can give that route;
 * `conventionsOpenApiTransform` (for @fastify/swagger's `transform` option) adds them to
 * the route's documented responses, so no route lists them by hand.
 */
import type { RouteOptions } from 'fastify'
import envelopeSchema from '../schemas/errors.json'

export type ResponseBody = 'envelope' | 'text' | 'html' | 'none'

export interface ConventionResponse { description: string, body: ResponseBody, headers?: string[] }

const kResponses = Symbol.for('fastify-http-conventions.responses')

type WithResponses = { [kResponses]?: Record<string, ConventionResponse> }

/** Called by plugins from their onRoute hooks. */
export function recordResponse (route: RouteOptions, status: number, response: ConventionResponse): void {
  const config = (route.config ?? (route.config = {})) as WithResponses
  const map = config[kResponses] ?? (config[kResponses] = {})
  map[String(status)] ??= response
}

/** The error responses the suite's plugins can give this route, by status. */
export function conventionResponses (route: { config?: unknown }): Record<string, ConventionResponse> {
  return (route.config as WithResponses | undefined)?.[kResponses] ?? {}
}

const { $id: _id, $schema: _schema, ...envelopeBody } = envelopeSchema

function openApiResponse (r: ConventionResponse): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description }
  if (r.body === 'envelope') out.content = { 'application/json': { schema: envelopeBody } }
  else if (r.body === 'text') out.content = { 'text/plain': { schema: { type: 'string' } } }
  else if (r.body === 'html') out.content = { 'text/html': { schema: { type: 'string' } } }
  if (r.headers !== undefined) {
    out.headers = Object.fromEntries(r.headers.map((h) => [h, { schema: { type: 'string' } }]))
  }
  return out
}

/** Adds the recorded responses to a route schema (those the route documents itself win). */
export function withConventionResponses (schema: Record<string, unknown> | undefined, route: { config?: unknown }): Record<string, unknown> {
  const recorded = conventionResponses(route)
  const keys = Object.keys(recorded)
  if (keys.length === 0) return schema ?? {}
  const response: Record<string, unknown> = { ...(schema?.response as Record<string, unknown> | undefined) }
  for (const status of keys) response[status] ??= openApiResponse(recorded[status])
  return { ...schema, response }
}

/** `transform` for @fastify/swagger: `fastify.register(swagger, { openapi: {...}, transform: conventionsOpenApiTransform })`. */
export function conventionsOpenApiTransform ({ schema, url, route }: { schema?: unknown, url: string, route: { config?: unknown } }): { schema: Record<string, unknown>, url: string } {
  return { schema: withConventionResponses(schema as Record<string, unknown> | undefined, route), url }
}
