/**
 * `fastify-http-conventions/auth`: helpers for the Authentication plugin's callbacks:
 * constant-time matching of Bearer keys (RFC 6750) for `bearer.verify`.
 *
 * @module fastify-http-conventions/auth
 */
export { createBearerKeyMatcher } from '../../lib/auth/bearer'
