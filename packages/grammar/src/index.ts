/**
 * `@http-conventions/grammar`: the header grammar the conventions are built on, shared by the
 * Fastify plugins, the client and the auditor, with no dependency.
 *
 * - tokens, lists and quoted strings (RFC 9110 5.6), weighted lists and Accept (RFC 9110 12.4.2, 12.5.1)
 * - media types (RFC 9110 8.3.1), entity tags (RFC 9110 8.8.3), HTTP-dates (RFC 9110 5.6.7)
 * - Authorization and WWW-Authenticate (RFC 9110 11.4, 11.6.1), the Basic (RFC 7617) and
 *   Digest (RFC 7616 3.4) credentials as a client computes them
 * - credentials kept out of logged URLs
 *
 * @module @http-conventions/grammar
 */
export * from './tokens'
export * from './qlist'
export * from './media-type'
export * from './etag'
export * from './http-date'
export * from './authorization'
export * from './challenges'
export * from './basic'
export * from './digest'
export * from './redact'
