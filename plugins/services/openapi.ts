/**
 * OpenAPI: each plugin records, per route, the responses it can give that route (and the
 * auth plugin the schemes that protect it); `conventionsOpenApiTransform` (for
 * @fastify/swagger's `transform` option) documents them, so no route lists them by hand:
 *
 * - the recorded responses (400, 401, 304, 412, 415, 422, 226, ...), with their headers;
 * - a success response where the route documents none: 200, 204 for DELETE, and for a
 *   PATCH route of the patch plugin the patched resource;
 * - `components.securitySchemes` (basic, bearer, digest) and `security` on protected routes;
 * - the request headers the conventions read: If-Match, If-None-Match, If-Unmodified-Since
 *   and If-Modified-Since where preconditions are evaluated (412), A-IM where deltas are
 *   offered (226);
 * - request bodies in every accepted media type: the two patch formats of a PATCH route,
 *   and application/xml where the route accepts XML; Content-Length where a body needs one (411);
 * - response bodies in every media type the route answers: application/xml beside JSON where
 *   the route answers XML (with `Vary: Accept`), application/problem+json beside every
 *   errors[] envelope (RFC 9457 3: a client that prefers it gets it);
 * - the headers every answer of a route carries, errors included (Cross-Origin-Resource-Policy),
 *   recorded by the plugin that sets them (`recordAnswerHeader`), and the answers of
 *   `EVERY_OPERATION`, which no route records because the server gives them to any request.
 *
 * The transform works on the route schema @fastify/swagger converts: a response is a JSON
 * schema whose `description` and `headers` (JSON schemas by name) become the response's.
 * It writes OpenAPI 3 shapes (`content` by media type) for `openapi: {...}`, and Swagger 2.0
 * shapes for @fastify/swagger's `swagger: {...}` mode: a response's body is its `schema`, the
 * media types go to the operation's `consumes` and `produces`, the security schemes to
 * `securityDefinitions` (Swagger 2.0 has a `basic` type only: Bearer and Digest are described
 * as the `Authorization` header they are sent in).
 */
import type { RouteOptions } from 'fastify'
import envelopeSchema from '../../schemas/errors.json'
import { methodsOf } from './shared'
import type { ConventionResponse, HeaderSchema, JsonAnswer, KernelExtension, PathOptionsDescription, ResponseBody, RouteDescription } from '../kernel/types'

const SWAGGER2_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH'])

/** The methods whose requests carry a body the suite frames (RFC 9110 9.3). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

export type { ResponseBody }

/** The document being built: OpenAPI 3.x (`openapi: {...}`) or Swagger 2.0 (`swagger: {...}`). */
export type DocumentFormat = 'openapi' | 'swagger2'

export type { ConventionResponse }

/** The authentication schemes that protect a route; any one of them is enough. */
export interface ConventionSecurity {
  schemes: ReadonlyArray<'basic' | 'bearer' | 'digest'>
  /** Scopes the route needs (listed in `security` of OpenAPI 3.1 documents; 3.0 allows none for HTTP schemes). */
  scopes?: readonly string[]
}

const kResponses = Symbol.for('fastify-http-conventions.responses')
const kSecurity = Symbol.for('fastify-http-conventions.security')
const kSuccessHeaders = Symbol.for('fastify-http-conventions.success-headers')
const kAnswerHeaders = Symbol.for('fastify-http-conventions.answer-headers')
const kMoreBodies = Symbol.for('fastify-http-conventions.more-bodies')
const kErrorMedia = Symbol.for('fastify-http-conventions.error-media')
const kPathOptions = Symbol.for('fastify-http-conventions.path-options')
const kRequestBody = Symbol.for('fastify-http-conventions.request-body')
const kHeaderTexts = Symbol.for('fastify-http-conventions.header-texts')
const kSuccess = Symbol.for('fastify-http-conventions.success')
const kMedia = Symbol.for('fastify-http-conventions.media')
const kJsonAnswers = Symbol.for('fastify-http-conventions.json-answers')

/**
 * The media type of a route's errors[] bodies: `application/json` always (the spec profile),
 * problem details always (`errorFormat: 'problem'`), or either by Accept with `Vary: Accept`
 * (the rfc9110 profile, RFC 9457 3).
 */
export type ErrorMedia = 'json' | 'problem' | 'negotiated'

export type { HeaderSchema }

interface Recorded {
  [kResponses]?: Record<string, ConventionResponse>
  [kSecurity]?: ConventionSecurity
  [kSuccessHeaders]?: string[]
  [kAnswerHeaders]?: Record<string, HeaderSchema>
  /** A status two conventions give with bodies of different kinds: the kinds after the first. */
  [kMoreBodies]?: Record<string, ResponseBody[]>
  [kErrorMedia]?: ErrorMedia
  [kPathOptions]?: PathOptionsDescription
  [kRequestBody]?: RouteDescription['requestBody']
  [kHeaderTexts]?: Record<string, string>
  [kSuccess]?: RouteDescription['success']
  [kMedia]?: RouteDescription['media']
  [kJsonAnswers]?: Record<string, JsonAnswer>
}

function recordsOf (route: RouteOptions): Recorded {
  return (route.config ?? (route.config = {})) as Recorded
}

/** Called by plugins when they compile a route (`c.respond(status, response)`). */
export function recordResponse (route: RouteOptions, status: number, response: ConventionResponse): void {
  const config = recordsOf(route)
  const map = config[kResponses] ?? (config[kResponses] = {})
  const key = String(status)
  const first = map[key]
  if (first === undefined) {
    map[key] = response
    return
  }
  // The same status from two conventions (415 of Content-Type and of PATCH): the first one's
  // description, the headers of both, and the bodies of both (a 400 of framing is text, of syntax an envelope).
  const headers = [...new Set([...(first.headers ?? []), ...(response.headers ?? [])])]
  if (headers.length > 0) map[key] = { ...first, headers }
  if (response.body !== first.body && response.body !== 'none') {
    const more = config[kMoreBodies] ?? (config[kMoreBodies] = {})
    more[key] = [...new Set([...(more[key] ?? []), response.body])]
  }
}

/** Called when a route is compiled: how its errors[] bodies are written (the profile and `errorFormat` decide). */
export function recordErrorMedia (route: RouteOptions, media: ErrorMedia): void {
  recordsOf(route)[kErrorMedia] = media
}

/**
 * The OpenAPI records, as the kernel's extension: the responses conventions document for a
 * route (`c.respond`), and how its errors[] bodies are written (plugins/services/errors.ts,
 * formatFor).
 */
export const openapiExtension: KernelExtension = {
  compile (c, errors) {
    recordErrorMedia(c.route, errors.policy.format === 'problem' ? 'problem' : errors.problemByAccept ? 'negotiated' : 'json')
  },
  respond: recordResponse,
  describe (route, d) {
    if (d.successHeaders !== undefined) recordSuccessHeaders(route, d.successHeaders)
    for (const [name, schema] of Object.entries(d.answerHeaders ?? {})) recordAnswerHeader(route, name, schema)
    if (d.security !== undefined) recordSecurity(route, d.security)
    if (d.pathOptions !== undefined) recordsOf(route)[kPathOptions] = d.pathOptions
    if (d.requestBody !== undefined) recordsOf(route)[kRequestBody] = d.requestBody
    if (d.success !== undefined) recordsOf(route)[kSuccess] = d.success
    if (d.media !== undefined) recordsOf(route)[kMedia] = d.media
    if (d.jsonAnswers !== undefined) recordsOf(route)[kJsonAnswers] = { ...recordsOf(route)[kJsonAnswers], ...d.jsonAnswers }
    if (d.headerTexts !== undefined) recordsOf(route)[kHeaderTexts] = { ...recordsOf(route)[kHeaderTexts], ...d.headerTexts }
  }
}

/**
 * The paths whose OPTIONS the suite answers (RFC 9110 9.3.7), by document, as @fastify/swagger
 * writes them (`/articles/{id}`): how the methods convention described that operation.
 */
const optionsPaths = new WeakMap<object, Map<string, PathOptionsDescription>>()

/** A Fastify route pattern as the document writes the path (`:id(^\\d+)` is `{id}`, the wildcard `*` is `{path}`). */
function documentPath (url: string): string {
  return url.replace(/:([A-Za-z0-9_$-]+)(\([^)]*\))?/g, '{$1}').replace(/\*/g, `{${WILDCARD}}`)
}

/**
 * A Fastify wildcard (`/v1/*`) in the document: @fastify/swagger writes it `{*}`, a template
 * OpenAPI tools do not read as a variable (RFC 6570 names; Redocly's path-parameters-defined
 * rule), so the transform names it `{path}` and declares the parameter: the rest of the path,
 * slashes included (`x-rest-of-path`).
 */
const WILDCARD = 'path'

function withWildcard (schema: Json | undefined, url: string): { schema: Json | undefined, url: string } {
  if (!url.endsWith('*')) return { schema, url }
  const params = schema?.params ?? {
    type: 'object',
    properties: { [WILDCARD]: { type: 'string', description: 'The rest of the path, slashes included (a wildcard of the route)', 'x-rest-of-path': true } },
    required: [WILDCARD]
  }
  return { schema: { ...schema, params }, url: url.slice(0, -1) + `{${WILDCARD}}` }
}

function errorMediaOf (route: { config?: unknown }): ErrorMedia {
  return (route.config as Recorded | undefined)?.[kErrorMedia] ?? 'json'
}

/** The kinds of body a recorded status has: its own, and those other conventions give with the same status. */
function bodiesOf (route: { config?: unknown }, status: string, r: ConventionResponse): ResponseBody[] {
  return [r.body, ...((route.config as Recorded | undefined)?.[kMoreBodies]?.[status] ?? [])]
}

/** Called by plugins when they compile a route: headers every 2xx answer of the route carries (ETag, Last-Modified, ...). */
export function recordSuccessHeaders (route: RouteOptions, headers: readonly string[]): void {
  const config = recordsOf(route)
  config[kSuccessHeaders] = [...new Set([...(config[kSuccessHeaders] ?? []), ...headers])]
}

/**
 * Called by plugins when they compile a route: a header every answer of the route carries,
 * errors included (Cross-Origin-Resource-Policy). A later record of the same name replaces it.
 */
export function recordAnswerHeader (route: RouteOptions, name: string, schema: HeaderSchema): void {
  const config = recordsOf(route)
  config[kAnswerHeaders] = { ...config[kAnswerHeaders], [name]: { ...schema } }
}

/** The headers every answer of the route carries, by name. */
export function conventionAnswerHeaders (route: { config?: unknown }): Record<string, HeaderSchema> {
  return (route.config as Recorded | undefined)?.[kAnswerHeaders] ?? {}
}

/** The headers the suite adds to the route's 2xx answers: those recorded, then those of its described success (Accept-Patch). */
export function conventionSuccessHeaders (route: { config?: unknown, method?: unknown }): string[] {
  const recorded = (route.config as Recorded | undefined)?.[kSuccessHeaders] ?? []
  const last = ((route.config as Recorded | undefined)?.[kSuccess]?.headers ?? []).filter((h) => !recorded.includes(h))
  return last.length === 0 ? recorded : [...recorded, ...last]
}

/** Called by the auth plugin when it compiles a protected route: the schemes that protect it. */
export function recordSecurity (route: RouteOptions, security: ConventionSecurity): void {
  recordsOf(route)[kSecurity] = { schemes: [...security.schemes], scopes: [...(security.scopes ?? [])] }
}

/** The responses the suite's plugins can give this route, by status. */
export function conventionResponses (route: { config?: unknown }): Record<string, ConventionResponse> {
  return (route.config as Recorded | undefined)?.[kResponses] ?? {}
}

const ALL_SCHEMES = ['basic', 'bearer', 'digest'] as const

/**
 * The schemes that protect this route, or null when it is open: those the auth convention
 * recorded (`c.describe({ security })`); a 401 recorded without them (`recordResponse`)
 * says the route is protected by any of the three.
 */
export function conventionSecurity (route: { config?: unknown }): ConventionSecurity | null {
  const recorded = (route.config as Recorded | undefined)?.[kSecurity]
  if (recorded !== undefined) return recorded
  return conventionResponses(route)['401'] === undefined ? null : { schemes: [...ALL_SCHEMES], scopes: [] }
}

/** The security schemes of the suite, by the name `security` requirements use. */
export const conventionSecuritySchemes: Readonly<Record<string, Record<string, string>>> = Object.freeze({
  basicAuth: Object.freeze({ type: 'http', scheme: 'basic', description: 'HTTP Basic (RFC 7617), UTF-8 credentials' }),
  bearerAuth: Object.freeze({ type: 'http', scheme: 'bearer', description: 'Bearer token (RFC 6750) in the Authorization header' }),
  digestAuth: Object.freeze({ type: 'http', scheme: 'digest', description: 'HTTP Digest (RFC 7616): SHA-256 or MD5, qop=auth' })
})

const SCHEME_NAMES: Record<ConventionSecurity['schemes'][number], string> = { basic: 'basicAuth', bearer: 'bearerAuth', digest: 'digestAuth' }

const { $id: _id, $schema: _schema, ...envelopeBody } = envelopeSchema

const NO_BODY = Object.freeze({ type: 'null' })

/** RFC 9457 3.1 problem details, as the suite writes them: the envelope's entries ride along as `errors` (3.2). */
const PROBLEM_BODY: Json = {
  description: 'Problem details (RFC 9457): the errors[] entries of the envelope are its `errors` member',
  type: 'object',
  required: ['type', 'title', 'status', 'errors'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    errors: envelopeBody.properties.errors
  }
}

/**
 * Each kind of body: its media types and their JSON schemas, by how the route writes its
 * errors[] envelope (`ErrorMedia`): as application/json, as problem details, or either by
 * Accept (RFC 9457 3).
 */
const ENVELOPES: Record<ErrorMedia, Array<[string, Json]>> = {
  json: [['application/json', envelopeBody]],
  problem: [['application/problem+json', PROBLEM_BODY]],
  negotiated: [['application/json', envelopeBody], ['application/problem+json', PROBLEM_BODY]]
}

function bodyTypes (body: Exclude<ResponseBody, 'none'>, media: ErrorMedia): Array<[string, Json]> {
  if (body === 'envelope') return ENVELOPES[media]
  // An HTML error (401, 403, 503) is the route's JSON error body to a client that prefers JSON (plugins/services/errors.ts).
  return body === 'text' ? [['text/plain', { type: 'string' }]] : [['text/html', { type: 'string' }], ...ENVELOPES[media]]
}

const VARY_PAGE: Json = { type: 'string', description: 'Accept: the error body is an HTML page, or the JSON error body to a client that prefers JSON' }
const VARY_NEGOTIATED: Json = { type: 'string', description: 'Accept: the error body is application/json, or application/problem+json to a client that prefers it' }

/**
 * Answers the server gives to a request of any operation, which no route records: one line
 * each, `[status, { description, body, headers }]`; each is added to every operation the
 * suite documents (the route's own and recorded answers win). An answer of a path rather than
 * of an operation (a method the path does not serve) belongs to `conventionsOpenApiTransformObject`.
 */
const EVERY_OPERATION: ReadonlyArray<[number, ConventionResponse]> = []

/**
 * Header schemas, by name, as @fastify/swagger reads them in a response schema (it wraps each
 * into { schema }); `texts`, what the conventions said each header means (`c.describe({ headerTexts })`).
 */
function headerSchemas (names: readonly string[], texts: Record<string, string>): Json {
  return Object.fromEntries(names.map((h) => [h, texts[h] === undefined ? { type: 'string' } : { type: 'string', description: texts[h] }]))
}

/** A recorded response as @fastify/swagger reads a route's response schema; `bodies`, each kind of body it can have. */
function openApiResponse (r: ConventionResponse, texts: Record<string, string>, format: DocumentFormat, media: ErrorMedia, bodies: ResponseBody[] = [r.body]): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description }
  // `type: 'null'`: @fastify/swagger documents no content (304, 226 bodies are not JSON).
  if (r.body === 'none') Object.assign(out, NO_BODY)
  // Swagger 2.0: the response's schema is the body's; its media types are in `produces`.
  else if (format === 'swagger2') Object.assign(out, bodyTypes(r.body, media)[0][1])
  else out.content = Object.fromEntries(bodies.flatMap((b) => b === 'none' ? [] : bodyTypes(b, media)).map(([type, schema]) => [type, { schema }]))
  if (r.headers !== undefined) out.headers = headerSchemas(r.headers, texts)
  // RFC 9110 12.5.5: an error whose media type Accept chose says so.
  if (media === 'negotiated' && bodies.includes('envelope')) out.headers = { ...(out.headers as Json | undefined), Vary: VARY_NEGOTIATED }
  if (bodies.includes('html')) out.headers = { ...(out.headers as Json | undefined), Vary: VARY_PAGE }
  return out
}

type Json = Record<string, unknown>

function isObject (v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A response with a JSON body, in the document's shape. */
function jsonResponse (description: string, schema: Json, format: DocumentFormat): Json {
  return format === 'swagger2' ? { ...schema, description } : { description, content: { 'application/json': { schema } } }
}

/** The statuses that say how a request succeeds: a route that documents one (a 307 included) gets no default 200. */
const SUCCESS = /^([23](\d\d|XX)|default)$/i

/** The success response of a route that documents none. */
function successResponse (route: { method?: unknown, config?: unknown }, format: DocumentFormat): [string, Json] {
  const methods = methodsOf(route)
  const body = (route.config as Recorded | undefined)?.[kSuccess]?.body
  if (body !== undefined) return ['200', jsonResponse(body.description, body.schema, format)]
  if (methods.length > 0 && methods.every((m) => m === 'DELETE')) return ['204', { description: 'No Content: the resource is deleted', ...NO_BODY }]
  return ['200', { description: 'Default Response' }]
}

/** How the route writes XML (`c.describe({ media: { xml } })`): the root element and the names of array items. */
interface XmlNames { root: string, itemNames: Readonly<Record<string, string>> }

function mediaOf (route: { config?: unknown }): RouteDescription['media'] {
  return (route.config as Recorded | undefined)?.[kMedia]
}

function xmlNamesOf (media: RouteDescription['media']): XmlNames | undefined {
  const xml = media?.xml
  return xml === undefined ? undefined : { root: xml.root, itemNames: xml.itemNames ?? {} }
}

/** The element name of an array's items, as the suite writes them: `itemNames`, else the singular (`tags` -> `tag`). */
function itemName (name: string, itemNames: Record<string, string>): string {
  if (Object.prototype.hasOwnProperty.call(itemNames, name)) return itemNames[name]
  return name.length > 1 && name.endsWith('s') ? name.slice(0, -1) : 'item'
}

/**
 * A JSON schema as the XML body it describes (OpenAPI's XML Object): the element `name`,
 * arrays wrapped in an element of their own holding one element per item. A referenced
 * schema keeps its reference (its own members are named by property).
 */
function xmlSchema (schema: Json, name: string, itemNames: Record<string, string>): Json {
  if (schema.$ref !== undefined) return { allOf: [schema], xml: { name } }
  const out: Json = { ...schema, xml: { name } }
  if (isObject(schema.items)) {
    out.xml = { name, wrapped: true }
    out.items = xmlSchema(schema.items, itemName(name, itemNames), itemNames)
  }
  if (isObject(schema.properties)) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, isObject(v) ? xmlSchema(v, k, itemNames) : v]))
  }
  return out
}

/** A 2xx response of the route's own schema, in JSON and, for a client that prefers it, XML (RFC 9110 12.5.1). */
function withXml (r: Json, xml: XmlNames): Json {
  if (isObject(r.content)) return r
  const { description, headers, ...body } = r
  const out: Json = { description: typeof description === 'string' ? description : 'Default Response', content: { 'application/json': { schema: body }, 'application/xml': { schema: xmlSchema(body, xml.root, xml.itemNames) } } }
  if (headers !== undefined) out.headers = headers
  return out
}

const DELTA_BODY: Json = { type: 'string', format: 'binary', description: 'The instance manipulations of IM applied to the instance Delta-Base names (a VCDIFF delta, RFC 3284, and/or gzip)' }

const VARY_ACCEPT: Json = { type: 'string', description: 'Accept: the body is JSON, or XML to a client that prefers it' }

/** Adds header schemas to a response (those it documents itself win); a new object. */
function addHeaders (r: Json, headers: Json): Json {
  return { ...r, headers: { ...headers, ...(isObject(r.headers) ? r.headers : {}) } }
}

/**
 * Adds the recorded responses to a route schema (those the route documents itself win), and
 * a success response if it has none; in OpenAPI 3 shapes, or Swagger 2.0's with `format: 'swagger2'`.
 */
export function withConventionResponses (schema: Json | undefined, route: { config?: unknown, method?: unknown }, format: DocumentFormat = 'openapi'): Json {
  const recorded = conventionResponses(route)
  const keys = Object.keys(recorded)
  const everyAnswer = conventionAnswerHeaders(route)
  const media = errorMediaOf(route)
  if (keys.length === 0 && Object.keys(everyAnswer).length === 0) return schema ?? {}
  const texts = (route.config as Recorded | undefined)?.[kHeaderTexts] ?? {}
  const own = isObject(schema?.response) ? schema.response : undefined
  const response: Json = { ...own }
  // Without a response schema @fastify/swagger documents a default 200: keep one.
  if (!Object.keys(response).some((s) => SUCCESS.test(s))) {
    const [status, success] = successResponse(route, format)
    response[status] = success
  }
  // The headers the conventions add to every 2xx (ETag, Last-Modified, Cache-Control, Accept-Patch),
  // beside the route's own; a new object, never the route's (Fastify serializes with it). A route
  // that answers XML says so, and that its 2xx bodies vary with Accept.
  const successHeaders = headerSchemas(conventionSuccessHeaders(route), texts)
  const xml = xmlNamesOf(mediaOf(route))
  if (xml !== undefined) successHeaders.Vary = VARY_ACCEPT
  // RFC 3229 10.4.1: a 226 is a 2xx of the instance (its validators, its Vary), its body a delta
  // (or gzip) of it, in the instance's media types.
  if (format === 'openapi' && recorded['226']?.body === 'none' && response['226'] === undefined) {
    const { type: _null, ...delta } = openApiResponse(recorded['226'], texts, format, media)
    response['226'] = { ...delta, content: Object.fromEntries(['application/json', ...(xml === undefined ? [] : ['application/xml'])].map((t) => [t, { schema: DELTA_BODY }])) }
  }
  for (const status of Object.keys(response)) {
    const r = response[status]
    if (!/^2/.test(status) || !isObject(r) || r.type === 'null') continue
    const body = xml === undefined || format === 'swagger2' ? r : withXml(r, xml)
    response[status] = Object.keys(successHeaders).length === 0 ? body : addHeaders(body, successHeaders)
  }
  // A status the route documents itself keeps its description and body, and gains the headers the suite sends with it (a 307's Location).
  for (const status of keys) {
    const r = response[status]
    const headers = recorded[status].headers
    response[status] = r === undefined ? openApiResponse(recorded[status], texts, format, media, bodiesOf(route, status, recorded[status])) : headers === undefined || !isObject(r) ? r : addHeaders(r, headerSchemas(headers, texts))
  }
  // RFC 9110 15.4.5: a 304 carries the Vary the 200 would; so does every answer that names a
  // representation by its ETag (a 412), and a 2xx without a body (the representation Accept
  // selected was the one its preconditions were evaluated against).
  if (xml !== undefined) {
    for (const status of Object.keys(response)) {
      if (isObject(response[status]) && (/^2/.test(status) || status === '304' || status === '412')) response[status] = addHeaders(response[status], { Vary: VARY_ACCEPT })
    }
  }
  for (const [status, answer] of EVERY_OPERATION) response[status] ??= openApiResponse(answer, texts, format, media)
  // Answers another part of the app writes (the app's not-found handler): it, not the suite, chooses the body's media type.
  for (const [status, answer] of Object.entries((route.config as Recorded | undefined)?.[kJsonAnswers] ?? {})) response[status] ??= jsonResponse(answer.description, answer.schema, format)
  // The headers every answer carries (Cross-Origin-Resource-Policy), on every status.
  if (Object.keys(everyAnswer).length > 0) for (const status of Object.keys(response)) response[status] = addHeaders(isObject(response[status]) ? response[status] : {}, everyAnswer)
  return { ...schema, response }
}

/** A body in several media types: OpenAPI 3's `content`, or Swagger 2.0's one schema and `consumes`. */
interface RequestBody { content: Json, consumes: string[], schema: Json }

/** The request body a convention described (`c.describe({ requestBody })`): one entry per media type it takes. */
function describedBody (described: NonNullable<RouteDescription['requestBody']>): RequestBody {
  const content: Json = {}
  for (const [type, schema] of Object.entries(described.content)) content[type] = { schema }
  const schemas = Object.values(described.content)
  // Swagger 2.0 has one body schema and no oneOf: several types are told apart by Content-Type.
  return { content, consumes: Object.keys(content), schema: schemas.length === 1 ? schemas[0] : { description: described.summary } }
}

/** The body schema in each media type the route accepts, when that is more than JSON. */
function bodyMedia (body: unknown, media: RouteDescription['media']): RequestBody | undefined {
  if (!isObject(body) || body.content !== undefined || media === undefined) return undefined
  const accept = media.accept?.map((t) => t.toLowerCase())
  const xml = xmlNamesOf(media)
  // XML is documented where the route names it: in its accepted types, or by its XML names.
  const types = accept ?? (xml === undefined ? [] : ['application/json', 'application/xml'])
  if (!types.includes('application/xml')) return undefined
  const content: Json = {}
  const named = xml === undefined ? body : xmlSchema(body, xml.root, xml.itemNames)
  for (const type of types) content[type] = { schema: type === 'application/xml' ? named : body }
  // Swagger 2.0: one schema for every type; the XML element's name rides along (JSON ignores it).
  return { content, consumes: types, schema: named }
}

/** The precondition headers, by the status a GET/HEAD "not modified" gets on the route (304, or the convention's 412). */
function preconditionHeaders (notModified: 304 | 412): Array<[string, string, boolean]> {
  const answered = notModified === 304 ? 'answered 304 Not Modified' : 'answered 412 (the convention\'s "not modified")'
  return [
    ['If-Match', 'Entity tags (or *): the request applies only if the current one is among them (412 otherwise)', false],
    ['If-None-Match', `Entity tags (or *): on GET/HEAD a match is ${answered}; on other methods it is a 412`, false],
    ['If-Modified-Since', `HTTP-date: on GET/HEAD (without If-None-Match), unchanged since then is ${answered}`, true],
    ['If-Unmodified-Since', 'HTTP-date: the request applies only if unchanged since then (412 otherwise; ignored with If-Match)', false]
  ]
}

/** The request headers the conventions read on this route, merged into its own headers schema. */
function requestHeaders (own: unknown, route: { method?: unknown }, recorded: Record<string, ConventionResponse>): Json | undefined {
  const add: Json = {}
  if (recorded['412'] !== undefined) {
    const safe = methodsOf(route).some((m) => m === 'GET' || m === 'HEAD')
    for (const [name, description, safeOnly] of preconditionHeaders(recorded['304'] === undefined ? 412 : 304)) if (safe || !safeOnly) add[name] = { type: 'string', description }
  }
  // Conventions (Content-Length): a request with a body says its length (411 otherwise).
  if (recorded['411'] !== undefined && methodsOf(route).some((m) => BODY_METHODS.has(m))) {
    add['Content-Length'] = { type: 'string', pattern: '^[0-9]+$', description: 'The length of the body in bytes: required, a body without it (chunked) is answered 411' }
  }
  if (recorded['226'] !== undefined) {
    add['A-IM'] = { type: 'string', description: 'Instance manipulations the client accepts (RFC 3229): vcdiff, gzip; If-None-Match names the instance it holds' }
  }
  if (Object.keys(add).length === 0) return undefined
  const required = add['Content-Length'] === undefined ? undefined : ['Content-Length']
  if (own === undefined) return { type: 'object', properties: add, ...(required === undefined ? {} : { required }) }
  // A headers schema the route gives by reference, or without properties, is left as it is.
  if (!isObject(own) || own.$ref !== undefined || (own.properties !== undefined && !isObject(own.properties))) return undefined
  const properties: Json = { ...(own.properties as Json | undefined) }
  const taken = new Set(Object.keys(properties).map((k) => k.toLowerCase()))
  for (const [name, schema] of Object.entries(add)) if (!taken.has(name.toLowerCase())) properties[name] = schema
  const out: Json = { ...own, type: own.type ?? 'object', properties }
  if (required !== undefined && !taken.has('content-length')) out.required = [...(Array.isArray(own.required) ? own.required as unknown[] : []), ...required]
  return out
}

interface OpenApiObject { openapi?: string, swagger?: string, components?: Json, securityDefinitions?: Json, paths?: Json }

const RESOURCE_METHODS = ['get', 'head', 'put', 'patch', 'options']

/**
 * `transformObject` for @fastify/swagger, beside `conventionsOpenApiTransform`: RFC 5789 3.1,
 * the 2xx answers of GET, HEAD and PUT of a resource that takes PATCH carry Accept-Patch too.
 * One route's transform cannot know of a PATCH route at the same path; the whole document can.
 */
export function conventionsOpenApiTransformObject ({ openapiObject, swaggerObject }: { openapiObject?: unknown, swaggerObject?: unknown }): Record<string, unknown> {
  const doc = (openapiObject ?? swaggerObject) as OpenApiObject
  const swagger2 = swaggerObject !== undefined || doc.swagger !== undefined
  const options = optionsPaths.get(doc)
  for (const [path, operations] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    // RFC 9110 9.3.7: OPTIONS on a path the suite serves is 204 with Allow (the path's own OPTIONS route wins).
    const described = options?.get(path)
    if (described !== undefined && isObject(operations) && operations.options === undefined) operations.options = optionsOperation(described, swagger2, pathParameters(operations))
  }
  for (const operations of Object.values(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(operations)) continue
    const patch = operations.patch as { responses?: Record<string, { headers?: Json }> } | undefined
    const documented = patch?.responses?.['415']?.headers?.['Accept-Patch']
    if (documented === undefined) continue
    // The description the PATCH operation gives it (the patch convention's, `c.describe({ headerTexts })`).
    const description: unknown = isObject(documented) ? documented.description : undefined
    const text = typeof description === 'string' ? { description } : {}
    const header: Json = swagger2 ? { type: 'string', ...text } : { schema: { type: 'string' }, ...text }
    for (const method of RESOURCE_METHODS) {
      const responses = (operations[method] as { responses?: unknown } | undefined)?.responses
      if (!isObject(responses)) continue
      for (const [status, r] of Object.entries(responses)) {
        // RFC 5789 3.1 and 2.2: the 2xx answers, and the 415 of a body of a type the resource does not take.
        if (!/^(2|415$)/.test(status) || !isObject(r)) continue
        const headers = (isObject(r.headers) ? r.headers : (r.headers = {}))
        headers['Accept-Patch'] ??= { ...header }
      }
    }
  }
  return doc as Record<string, unknown>
}

/** The path parameters the operations of a path item declare (every operation must declare them). */
function pathParameters (operations: Json): unknown[] {
  for (const op of Object.values(operations)) {
    const parameters = isObject(op) && Array.isArray(op.parameters) ? op.parameters : []
    const inPath = parameters.filter((p) => isObject(p) && p.in === 'path')
    if (inPath.length > 0) return inPath
  }
  return []
}

/** OPTIONS as the methods convention described it (`c.describe({ pathOptions })`); Accept-Patch is added beside the path's PATCH. */
function optionsOperation (described: PathOptionsDescription, swagger2: boolean, parameters: unknown[]): Json {
  const header = (description: string): Json => swagger2 ? { type: 'string', description } : { schema: { type: 'string' }, description }
  return {
    summary: described.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    responses: {
      204: {
        description: described.description,
        headers: Object.fromEntries(Object.entries(described.headers).map(([name, text]) => [name, header(text)]))
      }
    }
  }
}

/**
 * The suite's schemes as Swagger 2.0 security definitions: its only HTTP type is `basic`, so
 * Bearer and Digest are described as the Authorization header that carries them.
 */
export const conventionSecurityDefinitions: Readonly<Record<string, Record<string, string>>> = Object.freeze({
  basicAuth: Object.freeze({ type: 'basic', description: 'HTTP Basic (RFC 7617), UTF-8 credentials' }),
  bearerAuth: Object.freeze({ type: 'apiKey', in: 'header', name: 'Authorization', description: 'Bearer token (RFC 6750): Authorization: Bearer <token>' }),
  digestAuth: Object.freeze({ type: 'apiKey', in: 'header', name: 'Authorization', description: 'HTTP Digest (RFC 7616): SHA-256 or MD5, qop=auth; answer the WWW-Authenticate challenge of a 401' })
})

/** Adds the suite's security schemes the document lacks; returns false when there is no document to add them to. */
function ensureSecuritySchemes (doc: OpenApiObject | undefined, names: string[], format: DocumentFormat): boolean {
  if (doc === undefined) return false
  if (format === 'swagger2') {
    const definitions = (isObject(doc.securityDefinitions) ? doc.securityDefinitions : (doc.securityDefinitions = {}))
    for (const name of names) definitions[name] ??= { ...conventionSecurityDefinitions[name] }
    return true
  }
  if (typeof doc.openapi !== 'string') return false
  const components = doc.components ?? (doc.components = {})
  const schemes = (isObject(components.securitySchemes) ? components.securitySchemes : (components.securitySchemes = {})) as Json
  for (const name of names) schemes[name] ??= { ...conventionSecuritySchemes[name] }
  return true
}

/** The media types of the route's answers, for Swagger 2.0's `produces`: JSON (XML where the route answers it), then the error bodies'. */
function producesOf (recorded: Record<string, ConventionResponse>, xml: boolean, media: ErrorMedia): string[] {
  const types = new Set(['application/json'])
  if (xml) types.add('application/xml')
  for (const r of Object.values(recorded)) if (r.body !== 'none') for (const [type] of bodyTypes(r.body, media)) types.add(type)
  return [...types]
}

/**
 * Swagger 2.0 has no `content` by media type: a response the route gives that way keeps its
 * first type's schema, and every type goes to `produces` (returned).
 */
function swagger2Bodies (response: unknown): string[] {
  const types: string[] = []
  if (!isObject(response)) return types
  for (const [status, r] of Object.entries(response)) {
    if (!isObject(r) || !isObject(r.content)) continue
    const { content, ...rest } = r
    const first = Object.values(content)[0]
    response[status] = { ...rest, ...(isObject(first) && isObject(first.schema) ? first.schema : {}) }
    types.push(...Object.keys(content))
  }
  return types
}

/**
 * Swagger 2.0's Schema Object has no `$schema`: @fastify/swagger keeps the keyword on the
 * shared schemas it lists in `definitions` (the suite's error envelope among them), which
 * makes the document invalid. The definitions are built before any route is transformed.
 */
function withoutSchemaKeyword (doc: OpenApiObject | undefined): void {
  const definitions = (doc as { definitions?: unknown } | undefined)?.definitions
  if (!isObject(definitions)) return
  for (const definition of Object.values(definitions)) if (isObject(definition)) delete definition.$schema
}

/**
 * `transform` for @fastify/swagger: `fastify.register(swagger, { openapi: {...}, transform: conventionsOpenApiTransform })`
 * (or `swagger: {...}` for a Swagger 2.0 document). Security schemes are added to the
 * document being built (`openapiObject`, `swaggerObject`) when a protected route is met.
 */
export function conventionsOpenApiTransform ({ schema, url: routeUrl, route, openapiObject, swaggerObject }: { schema?: unknown, url: string, route: { config?: unknown, method?: unknown }, openapiObject?: unknown, swaggerObject?: unknown }): { schema: Record<string, unknown>, url: string } {
  const { schema: base, url } = withWildcard(schema as Json | undefined, routeUrl)
  const doc = (openapiObject ?? swaggerObject) as OpenApiObject | undefined
  const format: DocumentFormat = swaggerObject !== undefined || doc?.swagger !== undefined ? 'swagger2' : 'openapi'
  if (format === 'swagger2') withoutSchemaKeyword(doc)
  // Swagger 2.0's Path Item has no TRACE (nor any method beyond these): such a route is left out of a 2.0 document.
  if (format === 'swagger2' && methodsOf(route).every((m) => !SWAGGER2_METHODS.has(m))) return { schema: { ...base, hide: true }, url }
  const pathOptions = (route.config as Recorded | undefined)?.[kPathOptions]
  if (pathOptions !== undefined && doc !== undefined && base?.hide !== true) {
    const paths = optionsPaths.get(doc) ?? new Map<string, PathOptionsDescription>()
    optionsPaths.set(doc, paths.set(documentPath(url), pathOptions))
  }
  const recorded = conventionResponses(route)
  if (Object.keys(recorded).length === 0 && Object.keys(conventionAnswerHeaders(route)).length === 0 && conventionSecurity(route) === null) return { schema: base ?? {}, url }
  const out: Json = withConventionResponses(base, route, format)

  const headers = requestHeaders(out.headers, route, recorded)
  if (headers !== undefined) out.headers = headers

  const described = (route.config as Recorded | undefined)?.[kRequestBody]
  const body = described !== undefined && out.body === undefined ? describedBody(described) : bodyMedia(out.body, mediaOf(route))
  if (body !== undefined && format === 'swagger2') {
    out.body = body.schema
    out.consumes ??= body.consumes
  } else if (body !== undefined) {
    out.body = { content: body.content }
  }
  if (format === 'swagger2') out.produces ??= [...new Set([...producesOf(recorded, mediaOf(route)?.xml !== undefined, errorMediaOf(route)), ...swagger2Bodies(out.response)])]

  const security = conventionSecurity(route)
  if (security !== null && out.security === undefined && security.schemes.length > 0) {
    const names = security.schemes.map((s) => SCHEME_NAMES[s])
    if (ensureSecuritySchemes(doc, names, format)) {
      // OpenAPI 3.0 and Swagger 2.0 allow scopes only for OAuth 2 (and OpenID Connect); 3.1 lets HTTP schemes list roles.
      const scopes = format === 'swagger2' || doc?.openapi?.startsWith('3.0') === true ? [] : [...(security.scopes ?? [])]
      out.security = names.map((name) => ({ [name]: scopes }))
    }
  }
  return { schema: out, url }
}
