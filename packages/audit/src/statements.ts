/**
 * The testable statements of the conventions (docs/conventions.md), word for word, each under
 * its section. Every one is checked by at least one rule (the rule's `statement`); the tests
 * fail on a statement no rule checks and on a statement the document no longer says.
 * Left out, as not testable from outside: the optional 428 (`requirePrecondition`), which
 * answers the convention governs, what browsers and caches do, and the option names.
 */
export const STATEMENTS = {
  'content-type.request': { section: 'Content-Type', text: 'A request with a body names its media type in `Content-Type`; a request without one is refused with 415 (field `Content-Type`).' },
  'content-type.charset-utf8': { section: 'Content-Type', text: 'A `charset` parameter, when present, must name UTF-8 (in any case); any other is 415.' },
  'content-type.accepted': { section: 'Content-Type', text: 'A route accepts the media types it lists (`config.contentType.accept`), by default every type with a parser: JSON, XML, `text/plain`, `text/html`. Others are 415.' },
  'content-type.well-formed': { section: 'Content-Type', text: 'A body that is not well-formed in its media type is 400 (field `body`).' },
  'content-type.response': { section: 'Content-Type', text: 'Every response with a body carries `Content-Type`; text types (`text/*`, XML) say `charset=utf-8`.' },
  'content-type.vary': { section: 'Content-Type', text: 'A route may answer XML when the request\'s `Accept` prefers it (JSON otherwise), and then says `Vary: Accept` (RFC 9110 12.5.1, 12.5.5).' },
  'content-length.required': { section: 'Content-Length (411)', text: 'POST, PUT and PATCH declare their body length in `Content-Length`; without it, or with a body sent chunked, the answer is 411 Length Required.' },
  'content-length.untrusted': { section: 'Content-Length (411)', text: 'A Content-Length that is duplicated, not a plain decimal number, sent together with Transfer-Encoding, or that does not match the bytes sent, is 411.' },
  'content-length.limit': { section: 'Content-Length (411)', text: 'A body over the route\'s limit is 411, decided from Content-Length before the body is read; the connection is closed afterwards.' },
  'content-length.get': { section: 'Content-Length (411)', text: 'Bodies of GET and HEAD that arrive chunked or oversized are refused the same way.' },
  'content-length.411-text': { section: 'Content-Length (411)', text: 'A 411 says why in a `text/plain` body that starts with `Length Required`.' },
  'validation.422': { section: 'Validation errors', text: 'A body, query string, path parameter or header that does not satisfy the route\'s JSON Schema is 422 Unprocessable Content (RFC 9110 15.5.21).' },
  'validation.envelope': { section: 'Validation errors', text: 'The body of every 400, 412, 415, 422 and 428 is one envelope: `{ "errors": [ { "field": string, "message": string } ] }`, one entry per problem' },
  'validation.field': { section: 'Validation errors', text: '`field` names where the problem is, so a client can point at it' },
  'validation.duplicate': { section: 'Validation errors', text: 'A service raises its own 422 (a duplicate identifier) with the same envelope.' },
  'patch.formats': { section: 'PATCH', text: 'A PATCH body is a JSON Patch (`application/json-patch+json`, RFC 6902) or a JSON Merge Patch (`application/merge-patch+json`, RFC 7396).' },
  'patch.415': { section: 'PATCH', text: 'Any other media type is 415 with `Accept-Patch` naming the accepted ones (RFC 5789 2.2).' },
  'patch.accept-patch': { section: 'PATCH', text: 'A resource that supports PATCH says so with `Accept-Patch` on its successful GET, HEAD, PUT, PATCH and OPTIONS answers (RFC 5789 3.1).' },
  'patch.atomic': { section: 'PATCH', text: 'A patch that cannot apply (a failed `test`, a path that does not exist, a result that breaks the schema, a read-only property changed) is 422 naming the path.' },
  'conditional.order': { section: 'Conditional requests', text: 'so an unsafe method never runs when its precondition fails.' },
  'conditional.412': { section: 'Conditional requests', text: 'A failed precondition is 412 Precondition Failed, with the envelope (field = the header) and the current `ETag`.' },
  'conditional.not-modified': { section: 'Conditional requests', text: 'A GET or HEAD whose `If-None-Match` or `If-Modified-Since` says the client\'s copy is current is also 412.' },
  'conditional.validators': { section: 'Conditional requests', text: 'GET and HEAD answers carry `ETag` and, when known, `Last-Modified`.' },
  'delta.226': { section: 'Delta encoding', text: 'When the server still has that instance, it answers 226 IM Used with `IM` naming what it applied, the current `ETag`, `Delta-Base`, `Cache-Control: no-store, im`, and a VCDIFF delta (RFC 3284) from the client\'s instance to the current one, gzipped when asked.' },
  'delta.200': { section: 'Delta encoding', text: 'When it does not, or the delta would not be smaller, it answers an ordinary 200 with the whole instance' },
  'delta.tokens': { section: 'Delta encoding', text: 'A-IM tokens are case-insensitive with q-values; unknown tokens are ignored.' },
  'redirect.307': { section: 'Redirects', text: 'A resource that moved answers 307 Temporary Redirect with `Location`; the client repeats the same method with the same body at the new URI (RFC 9110 15.4.8).' },
  'redirect.not-301': { section: 'Redirects', text: '301 and 302 are not used for this: clients may turn a redirected POST into a GET' },
  'redirect.query': { section: 'Redirects', text: 'the query string is kept' },
  'corp.every': { section: 'Cross-Origin-Resource-Policy', text: 'Every response of a covered route carries `Cross-Origin-Resource-Policy`, errors and 404s included' },
  'auth.401': { section: 'Authentication', text: 'A protected resource answers 401 Unauthorized with `WWW-Authenticate` to missing, invalid, expired or insufficient credentials (RFC 9110 11.6.1, 15.5.2)' },
  'auth.lines': { section: 'Authentication', text: 'Challenges are written one per header line, strongest first' },
  'auth.every-401': { section: 'Authentication', text: 'Every 401 of the app carries `WWW-Authenticate`, whoever wrote it' },
  'auth.body': { section: 'Authentication', text: 'The 401 body says what went wrong without saying which part (user name or password); it is `Cache-Control: no-store`.' },
  'auth.header-only': { section: 'Authentication', text: 'Credentials are accepted only from `Authorization`, never from the query string or a form body' },
  'auth.scope': { section: 'Profiles', text: '| valid credentials lacking a scope | 401 | 403 (RFC 6750 3.1) |' }
} as const

export type StatementKey = keyof typeof STATEMENTS

/** The sentence of a statement. */
export function said (key: StatementKey): string { return STATEMENTS[key].text }
