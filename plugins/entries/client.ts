/**
 * `fastify-http-conventions/client`: a client of a conventions service.
 *
 * - `DeltaClient`: A-IM delta encoding (RFC 3229) over any fetch: it keeps the last
 *   instance it received and applies the deltas the server sends.
 * - undici interceptors, composable with `new Agent().compose(...)` beside undici's own:
 *   `deltaInterceptor`, `authInterceptor` (Digest, Bearer, Basic), `redirectInterceptor`
 *   (307/308 with the same method and body) and `framingInterceptor` (Content-Length and
 *   Content-Type on every body). undici is an optional peer dependency: only these need it.
 * - `createConventionsClient()`: the four composed, JSON in and out, conditional updates
 *   and patches, and typed errors (`ConventionsClientError`).
 *
 * @module fastify-http-conventions/client
 */
export { DeltaClient, DeltaClientError, BODY_TOO_LARGE } from '../../lib/client/delta-client'
export type { DeltaClientOptions, DeltaResult } from '../../lib/client/delta-client'
export { authInterceptor } from '../../lib/client/auth'
export type { AuthInterceptorOptions, AuthEvent, ClientCredential, PasswordCredential, TokenCredential, TokenProvider, WeakestAuth } from '../../lib/client/auth'
export { framingInterceptor } from '../../lib/client/framing'
export type { FramingInterceptorOptions } from '../../lib/client/framing'
export { redirectInterceptor } from '../../lib/client/redirect'
export type { RedirectInterceptorOptions } from '../../lib/client/redirect'
export { deltaInterceptor } from '../../lib/client/delta'
export type { DeltaInterceptorOptions, DeltaEvent } from '../../lib/client/delta'
export { ConventionsClient, createConventionsClient } from '../../lib/client/client'
export type { ConventionsClientOptions, ClientEvent, ClientResponse, RequestOptions, Change, UpdateOptions, PatchFormat } from '../../lib/client/client'
export { ConventionsClientError, clientErrorCodes, isConventionsClientError } from '../../lib/client/errors'
export type { ClientErrorCode, ClientErrorEntry, ClientErrorDetails } from '../../lib/client/errors'
