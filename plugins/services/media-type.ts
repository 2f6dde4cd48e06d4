/** The request's Content-Type, parsed once per request whichever convention asks first. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseMediaType, type MediaType } from '@http-conventions/grammar'
import { kMediaType } from './symbols'

type WithMediaType = FastifyRequest & { [kMediaType]?: MediaType | false | null }

/** Adds the request decorator requestMediaType keeps its result in (once per app). */
export function useRequestMediaType (fastify: FastifyInstance): void {
  if (!fastify.hasRequestDecorator(kMediaType)) fastify.decorateRequest(kMediaType, null)
}

/**
 * The request's Content-Type (RFC 9110 8.3), parsed once per request whichever convention
 * asks first (the Content-Type check, the PATCH media type, the body parsers); null when
 * it is absent or not a media type. The result is only read.
 */
export function requestMediaType (request: FastifyRequest): MediaType | null {
  const r = request as WithMediaType
  const known = r[kMediaType]
  if (known !== null && known !== undefined) return known === false ? null : known
  const value = request.headers['content-type']
  const parsed = value === undefined || value === '' ? null : parseMediaType(value)
  r[kMediaType] = parsed ?? false
  return parsed
}
