/**
 * `fastify-http-conventions/client`: the client of a conventions service, `@http-conventions/client`
 * (docs/client.md), re-exported for the apps that import it from here.
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
export {
  DeltaClient, DeltaClientError, BODY_TOO_LARGE, authInterceptor, framingInterceptor, redirectInterceptor, deltaInterceptor,
  ConventionsClient, createConventionsClient, ConventionsClientError, clientErrorCodes, isConventionsClientError
} from '@http-conventions/client'
export type {
  DeltaClientOptions, DeltaResult, AuthInterceptorOptions, AuthEvent, ClientCredential, PasswordCredential, TokenCredential, TokenProvider, WeakestAuth,
  FramingInterceptorOptions, RedirectInterceptorOptions, DeltaInterceptorOptions, DeltaEvent, ConventionsClientOptions, ClientEvent, ClientResponse,
  RequestOptions, Change, UpdateOptions, PatchFormat, ClientErrorCode, ClientErrorEntry, ClientErrorDetails
} from '@http-conventions/client'
