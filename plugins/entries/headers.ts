/**
 * `fastify-http-conventions/headers`: the header grammar the plugins are built on, for
 * services that read the same headers: content negotiation (Accept, RFC 9110 12.5.1) and
 * media types (RFC 9110 8.3.1).
 *
 * @module fastify-http-conventions/headers
 */
export { negotiateMediaType } from '@http-conventions/grammar'
export { parseMediaType } from '@http-conventions/grammar'
export type { MediaType } from '@http-conventions/grammar'
