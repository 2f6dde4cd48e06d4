/**
 * `@http-conventions/client`: a client of a conventions service, with no server framework.
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
 * @module @http-conventions/client
 */
export { DeltaClient, DeltaClientError, BODY_TOO_LARGE } from './delta-client'
export type { DeltaClientOptions, DeltaResult } from './delta-client'
export { authInterceptor } from './auth'
export type { AuthInterceptorOptions, AuthEvent, ClientCredential, PasswordCredential, TokenCredential, TokenProvider, WeakestAuth } from './auth'
export { framingInterceptor } from './framing'
export type { FramingInterceptorOptions } from './framing'
export { redirectInterceptor } from './redirect'
export type { RedirectInterceptorOptions } from './redirect'
export { deltaInterceptor } from './delta'
export type { DeltaInterceptorOptions, DeltaEvent } from './delta'
export { ConventionsClient, createConventionsClient } from './client'
export type { ConventionsClientOptions, ClientEvent, ClientResponse, RequestOptions, Change, UpdateOptions, PatchFormat } from './client'
export { ConventionsClientError, clientErrorCodes, isConventionsClientError } from './errors'
export type { ClientErrorCode, ClientErrorEntry, ClientErrorDetails } from './errors'
