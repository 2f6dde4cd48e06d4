/**
 * The pipeline: which conventions exist, the order they compile a route in, and the order of
 * their steps in each phase of Fastify's request lifecycle. The kernel derives everything
 * else from these two lists; docs/architecture.md gives the reason for each position.
 */

/** Every convention, in the order it compiles a route (a PATCH route's loader is read by the conditional convention after it). */
export const CONVENTIONS = [
  { key: 'redirect', configKey: 'redirect', plugin: 'fastify-http-conventions-redirect' },
  { key: 'content-length', configKey: 'contentLength', plugin: 'fastify-http-conventions-content-length' },
  { key: 'auth', configKey: 'auth', plugin: 'fastify-http-conventions-auth' },
  { key: 'content-type', configKey: 'contentType', plugin: 'fastify-http-conventions-content-type' },
  { key: 'validation', configKey: undefined, plugin: 'fastify-http-conventions-validation' },
  { key: 'patch', configKey: 'patch', plugin: 'fastify-http-conventions-patch' },
  { key: 'conditional', configKey: 'conditional', plugin: 'fastify-http-conventions-conditional' },
  { key: 'delta-encoding', configKey: 'deltaEncoding', plugin: 'fastify-http-conventions-delta-encoding' },
  { key: 'prefer', configKey: 'prefer', plugin: 'fastify-http-conventions-prefer' },
  // No step of its own: it records each route's methods for the 405 and OPTIONS of unrouted requests.
  { key: 'methods', configKey: 'methods', plugin: 'fastify-http-conventions-methods' },
  { key: 'resource-policy', configKey: 'resourcePolicy', plugin: 'fastify-http-conventions-resource-policy' }
] as const

/** The steps of each phase, first to last. */
export const PIPELINE = {
  // Nothing in onRequest: every onRequest hook of the app and of other plugins (a rate
  // limiter, load shedding) sees a request before the suite refuses it. preParsing still
  // runs before Fastify reads a byte of the body.
  preParsing: [
    'resource-policy', // Fetch: the route's policy travels with every answer, errors included
    'redirect', // RFC 9110 15.4.8: 307 before any body is read
    'content-length', // RFC 9112 6: 411 before any byte of the body is read, before credentials
    'auth', // 401 before the body is parsed
    'content-type', // 415 from the headers alone
    'patch:media-type', // 415 with Accept-Patch for a patch document of another type
    'content-length:body' // the body another parser reads, joined into blocks (its stream, once every check passed)
  ],
  preValidation: ['content-length:framing'], // RFC 9112 6.3: a body longer than its Content-Length
  preHandler: [
    'conditional', // RFC 9110 13.2.1: after auth and validation, before the handler
    'patch' // the write happens where the handler would run
  ],
  preSerialization: ['content-type:xml'], // RFC 9110 12.5.1: XML when the client prefers it
  onSend: [
    'resource-policy:missing', // an answer given before preParsing (another plugin's 429 in onRequest) gets the policy too
    'errors:passed-on', // a suite error the app's handlers passed on to Fastify's is answered as the suite's
    'auth:challenges', // RFC 9110 15.5.2: a 401 another plugin wrote gets WWW-Authenticate
    'content-length:close', // an answer that closes its connection ends the connection's pipeline
    'conditional:elsewhere', // a 304 another plugin wrote on an opted-in route becomes the 412
    'content-type:charset', // the charset is settled before the ETag is computed
    'conditional', // ETag, 412/304 for payload-hashed GET/HEAD
    'patch:accept-patch', // Accept-Patch on the 2xx and 415 answers
    'delta-encoding', // RFC 3229 10.5.3: the delta is made of the final payload and ETag
    'prefer' // RFC 7240 4.2: the minimal answer is made of the final one
  ]
} as const

/**
 * The steps for requests no route serves (unrouted.ts: one preParsing hook per context runs
 * them), first to last.
 */
export const UNROUTED = [
  'resource-policy', // Fetch: the context's policy on the 405, the 307 and the not-found handler's answer alike
  'redirect', // RFC 9110 15.4.8: a rule's 307 for a URL no route serves
  'methods' // RFC 9110 15.5.6 / 9.3.7: 405 with Allow, OPTIONS, for a path routes serve with other methods
] as const

export type UnroutedStepName = (typeof UNROUTED)[number]

export type ConventionKey = (typeof CONVENTIONS)[number]['key']
export type RoutePhase = keyof typeof PIPELINE
export type StepName<P extends RoutePhase = RoutePhase> = (typeof PIPELINE)[P][number]

/** Config keys that ask for a convention; `false` turns each off for the route. */
export const CONFIG_KEYS: ReadonlyArray<{ readonly configKey: string, readonly key: ConventionKey, readonly plugin: string }> =
  CONVENTIONS.flatMap((c) => c.configKey === undefined ? [] : [c])

export function pluginOf (key: ConventionKey): string {
  return CONVENTIONS.find((c) => c.key === key)?.plugin ?? key
}
