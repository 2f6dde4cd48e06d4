/**
 * `fastify-http-conventions/client`: a client of A-IM delta encoding (RFC 3229) that keeps
 * the last instance it received and applies the deltas the server sends.
 */
export { DeltaClient, DeltaClientError, BODY_TOO_LARGE } from '../../lib/delta-client'
export type { DeltaClientOptions, DeltaResult } from '../../lib/delta-client'
