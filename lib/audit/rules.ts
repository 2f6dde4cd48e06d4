/**
 * Every rule the auditor checks, as data: one entry per rule of the conventions
 * (docs/conventions.md, docs/audit.md), plus the RFC 9110 behaviour a client relies on beside
 * them. `section` is the heading of the conventions it holds; `rfc` the RFC text it follows.
 * `write`: the rule needs requests that change the service (`--write`).
 * `global`: checked on every answer of the run, not on one probe.
 */
export interface Rule {
  id: string
  title: string
  section: string
  rfc?: string
  write?: boolean
  global?: boolean
}

export const RULES = [
  // 4.1 Content-Type
  { id: 'content-type.response', title: 'A response with a body carries Content-Type', section: '4.1 Content-Type', rfc: 'RFC 9110 8.3', global: true },
  { id: 'content-type.charset', title: 'A text response (text/*, XML) names its charset', section: '4.1 Content-Type', rfc: 'RFC 9110 8.3.2', global: true },
  { id: 'content-type.request-required', title: 'A request body without Content-Type is not accepted', section: '4.1 Content-Type', rfc: 'RFC 9110 8.3', write: true },
  // 4.2 Content-Length
  { id: 'content-length.missing', title: 'A POST without Content-Length is refused with 411', section: '4.2 Content-Length', rfc: 'RFC 9110 15.5.12', write: true },
  { id: 'content-length.chunked', title: 'A chunked request body is refused with 411 (rfc9110: accepted)', section: '4.2 Content-Length', rfc: 'RFC 9112 6.1, 7.1', write: true },
  { id: 'content-length.invalid', title: 'A Content-Length that is not a decimal number is refused with 411 (rfc9110: 400)', section: '4.2 Content-Length', rfc: 'RFC 9112 6.3', write: true },
  { id: 'content-length.duplicate', title: 'Two different Content-Length values are refused with 411 (rfc9110: 400)', section: '4.2 Content-Length', rfc: 'RFC 9112 6.3', write: true },
  { id: 'content-length.with-transfer-encoding', title: 'Content-Length with Transfer-Encoding is refused with 411 (rfc9110: 400)', section: '4.2 Content-Length', rfc: 'RFC 9112 6.1', write: true },
  { id: 'content-length.limit', title: 'A body over the size limit is refused with 411 (rfc9110: 413) before it is sent', section: '4.2 Content-Length, 8 Limits', rfc: 'RFC 9110 15.5.14', write: true },
  { id: 'content-length.411-text', title: 'A 411 says why in a text/plain body', section: '7 Errors (411)', global: true },
  // 7 Errors: 412, 422
  { id: 'validation.422', title: 'A body that breaks the schema is answered 422', section: '7 Errors (422)', rfc: 'RFC 9110 15.5.21', write: true },
  { id: 'validation.errors-shape', title: 'A 422 body is {"errors":[{"field","message"}]} with Content-Length, naming the field', section: '7 Errors (422 body shape)', global: true },
  { id: 'errors.json-media-type', title: 'A 412 or 422 is application/json', section: '7 Errors (412, 422)', global: true },
  // 4.3 PATCH and Accept-Patch
  { id: 'patch.accept-patch', title: 'A resource that takes PATCH lists Accept-Patch on its 2xx answers', section: '4.3 PATCH and Accept-Patch', rfc: 'RFC 5789 3.1' },
  { id: 'patch.unsupported-415', title: 'A PATCH body in an unsupported media type is answered 415', section: '4.3 PATCH and Accept-Patch', rfc: 'RFC 5789 2.2', write: true },
  { id: 'patch.accept-patch-415', title: 'A 415 to a PATCH carries Accept-Patch', section: '4.3 PATCH and Accept-Patch, 7 Errors (415)', rfc: 'RFC 5789 2.2', global: true },
  { id: 'patch.json-patch', title: 'A JSON Patch replace is applied', section: '4.3 PATCH and Accept-Patch', rfc: 'RFC 6902', write: true },
  { id: 'patch.merge-patch', title: 'A JSON Merge Patch is applied', section: '4.3 PATCH and Accept-Patch', rfc: 'RFC 7396', write: true },
  // 4.4 Conditional requests
  { id: 'conditional.etag', title: 'A resource answers GET with an entity tag as a quoted string', section: '4.4 Conditional requests', rfc: 'RFC 9110 8.8.3' },
  { id: 'conditional.if-none-match', title: 'GET with a matching If-None-Match is 412 (rfc9110: 304); a stale one is 200', section: '4.4 Conditional requests', rfc: 'RFC 9110 13.1.2' },
  { id: 'conditional.if-modified-since', title: 'GET with If-Modified-Since at Last-Modified is 412 (rfc9110: 304)', section: '4.4 Conditional requests', rfc: 'RFC 9110 13.1.3' },
  { id: 'conditional.if-match', title: 'PUT with a stale If-Match is 412 and changes nothing', section: '4.4 Conditional requests', rfc: 'RFC 9110 13.1.1', write: true },
  { id: 'conditional.if-unmodified-since', title: 'PUT with If-Unmodified-Since before Last-Modified is 412', section: '4.4 Conditional requests', rfc: 'RFC 9110 13.1.4', write: true },
  { id: 'conditional.if-match-star-missing', title: 'If-Match: * on a missing resource: 412, or the answer without it (404)', section: '4.4 Conditional requests', rfc: 'RFC 9110 13.1.1, 13.2.1', write: true },
  // 4.5 A-IM, IM, 226
  { id: 'delta.226', title: 'A-IM: vcdiff with a known ETag: 226 with IM and a delta that decodes to the current instance, or a normal 200', section: '4.5 Instance manipulation', rfc: 'RFC 3229 10.4.1, RFC 3284', write: true },
  { id: 'delta.unknown-ignored', title: 'An A-IM the service does not apply is ignored: the normal answer', section: '4.5 Instance manipulation', rfc: 'RFC 3229 10.5.3' },
  // 4.6 Redirects
  { id: 'redirect.307', title: 'A redirect is 307 with a Location that answers', section: '4.6 Redirects', rfc: 'RFC 9110 15.4.8' },
  { id: 'redirect.method-kept', title: 'A POST is redirected with 307 (not 301/302/303), and the same POST at Location succeeds', section: '4.6 Redirects', rfc: 'RFC 9110 15.4.8', write: true },
  // 4.7 CORP
  { id: 'corp.every-answer', title: 'Every answer carries Cross-Origin-Resource-Policy (same-origin, same-site or cross-origin)', section: '4.7 Cross-Origin-Resource-Policy', global: true },
  // 5 Authentication
  { id: 'auth.401-without-credentials', title: 'A protected request without credentials is 401', section: '5.2 Challenge flow', rfc: 'RFC 9110 15.5.2', write: true },
  { id: 'auth.401-invalid-basic', title: 'Invalid Basic credentials are 401', section: '5.2 Challenge flow', rfc: 'RFC 7617', write: true },
  { id: 'auth.401-invalid-bearer', title: 'An invalid Bearer token is 401', section: '5.2 Challenge flow', rfc: 'RFC 6750 3.1', write: true },
  { id: 'auth.401-invalid-digest', title: 'An invalid Digest response is 401', section: '5.2 Challenge flow', rfc: 'RFC 7616 3.4', write: true },
  { id: 'auth.credentials-accepted', title: 'Valid credentials of each given scheme fulfil the request', section: '5.2 Challenge flow', write: true },
  { id: 'auth.www-authenticate', title: 'Every 401 carries WWW-Authenticate', section: '5.3 WWW-Authenticate header', rfc: 'RFC 9110 11.6.1', global: true },
  { id: 'auth.challenge-form', title: 'Every challenge reads <scheme> realm="<realm>"', section: '5.3 WWW-Authenticate header', rfc: 'RFC 9110 11.6.1', global: true },
  // RFC 9110 beside the conventions
  { id: 'rfc.405-allow', title: 'A method the resource does not support is 405 with Allow', section: '4 Endpoints', rfc: 'RFC 9110 15.5.6', write: true },
  { id: 'rfc.options', title: 'OPTIONS on a resource is 2xx with Allow', section: '4 Endpoints', rfc: 'RFC 9110 9.3.7' },
  { id: 'rfc.vary-accept', title: 'An answer whose Content-Type follows Accept says Vary: Accept', section: '4.1 Content-Type', rfc: 'RFC 9110 12.5.5' },
  { id: 'rfc.head', title: 'HEAD answers as GET does, without a body', section: '4 Endpoints', rfc: 'RFC 9110 9.3.2' },
  { id: 'rfc.date', title: 'Every 2xx, 3xx and 4xx answer carries Date', section: '1 What the service does', rfc: 'RFC 9110 6.6.1', global: true },
  { id: 'rfc.version-505', title: 'A request line of HTTP/2.0 is 505', section: '9 Versioning', rfc: 'RFC 9110 6.2, 15.6.6' },
  { id: 'rfc.one-content-type', title: 'A request with two Content-Type fields is refused (400 or 415)', section: '4.1 Content-Type', rfc: 'RFC 9110 5.3, 8.3', write: true }
] as const satisfies readonly Rule[]

export type RuleId = typeof RULES[number]['id']

export const RULE_IDS: readonly RuleId[] = RULES.map((r) => r.id)
