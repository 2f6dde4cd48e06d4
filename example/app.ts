/**
 * The reference service (docs/reference-service.md): an articles API built only from the
 * package's public exports. `buildService()` returns the Fastify app; server.ts runs it.
 */
import { createHash, randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import Redis from 'ioredis'
import {
  httpConventions, serverOptions, unprocessable, type Profile, type AuthOptions, type BearerTokenInfo, type DeltaEncodingOptions, serviceUnavailable
} from '../plugins/index'
import { negotiateMediaType } from '../plugins/entries/headers'
import { createRedactingSerializers } from '../plugins/entries/logging'
import { conventionsOpenApiTransform, conventionsOpenApiTransformObject, recordResponse, recordSuccessHeaders } from '../plugins/entries/openapi'
import { RedisNonceStore, RedisInstanceStore } from '../plugins/entries/stores'
import { lastModifiedAt, openStore, type Article, type ArticleInput, type Stored } from './store'
import { articleBody, article as articleSchema, idParams, listQuery, pageResponse, logoResponse, documentResponse, redirectResponse } from './schemas'
import { homePage, logoSvg } from './pages'

export interface ServiceConfig {
  /** SQLite file (or `:memory:`), the default backend. */
  database: string
  /** `postgres://...`: the articles live in PostgreSQL instead of SQLite. */
  databaseUrl?: string
  bodyLimit: number
  profile: Profile
  logger?: boolean | object
  auth?: ServiceAuth
  /** Slow clients are cut off: the whole request must arrive within `requestMs`, its headers within `headersMs`. */
  timeouts?: { requestMs: number, headersMs: number }
}

/** Who may write (docs/reference-service.md): users (Basic, Digest) and tokens (Bearer) from the environment. */
export interface ServiceAuth {
  realm: string
  users: Record<string, string>
  tokens: Array<{ token: string, scopes: string[] }>
  digestSecret: string
  redisUrl?: string
}

function pairs (value: string, name: string): Array<[string, string]> {
  return value.split(',').filter((p) => p.trim() !== '').map((p) => {
    const colon = p.indexOf(':')
    if (colon <= 0) throw new Error(`${name} holds name:value pairs separated by commas`)
    return [p.slice(0, colon).trim(), p.slice(colon + 1)]
  })
}

export function authFromEnv (env: NodeJS.ProcessEnv = process.env): ServiceAuth {
  return {
    realm: env.AUTH_REALM ?? 'articles',
    users: Object.fromEntries(pairs(env.AUTH_USERS ?? 'demo:demo-password', 'AUTH_USERS')),
    tokens: pairs(env.AUTH_TOKENS ?? 'demo-write-token:read write,demo-read-token:read', 'AUTH_TOKENS')
      .map(([token, scopes]) => ({ token, scopes: scopes.split(' ').filter((s) => s !== '') })),
    // Instances of one fleet share the secret, so any of them verifies any nonce.
    digestSecret: env.DIGEST_SECRET ?? randomBytes(32).toString('hex'),
    redisUrl: env.REDIS_URL
  }
}

export function configFromEnv (env: NodeJS.ProcessEnv = process.env): ServiceConfig & { host: string, port: number } {
  const profile = env.CONVENTIONS_PROFILE ?? 'spec'
  if (profile !== 'spec' && profile !== 'rfc9110') throw new Error(`CONVENTIONS_PROFILE must be spec or rfc9110, got ${profile}`)
  const bodyLimit = Number(env.BODY_LIMIT ?? 1048576)
  if (!Number.isSafeInteger(bodyLimit) || bodyLimit < 0) throw new Error('BODY_LIMIT must be a non-negative integer')
  const port = Number(env.PORT ?? 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('PORT must be a port number')
  const requestMs = Number(env.REQUEST_TIMEOUT_MS ?? 30000)
  const headersMs = Number(env.HEADERS_TIMEOUT_MS ?? 10000)
  if (!Number.isSafeInteger(requestMs) || requestMs <= 0 || !Number.isSafeInteger(headersMs) || headersMs <= 0) throw new Error('REQUEST_TIMEOUT_MS and HEADERS_TIMEOUT_MS must be positive integers')
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    database: env.DATABASE ?? 'data/articles.db',
    databaseUrl: env.DATABASE_URL === undefined || env.DATABASE_URL === '' ? undefined : env.DATABASE_URL,
    bodyLimit,
    profile,
    auth: authFromEnv(env),
    timeouts: { requestMs, headersMs: Math.min(headersMs, requestMs) }
  }
}

/**
 * ioredis options that bound a wait on Redis (the suite's stores bound each operation to
 * 1 s themselves): a command sent while Redis is away fails at the first failed
 * reconnection, not after 20; a host that does not accept is given up on after 2 s; a
 * command a connected Redis does not answer is rejected after 1 s. The offline queue stays
 * on, so that the commands of the first moments (the Digest store learning its
 * generation) wait for the connection.
 */
const REDIS_OPTIONS = { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2000, commandTimeout: 1000 }

// Writes need "write": a configured user (Basic, Digest) or a Bearer token with that scope.
const WRITE = { scopes: ['write'] }

function authOptions (app: FastifyInstance, auth: ServiceAuth): Omit<AuthOptions, 'profile'> {
  // Tokens are looked up by their SHA-256, so the lookup time says nothing about a token's characters.
  const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex')
  const tokens = new Map<string, BearerTokenInfo>(auth.tokens.map((t, i) => [sha256(t.token), { subject: `token-${i + 1}`, scopes: t.scopes }]))
  let store: RedisNonceStore | undefined
  if (auth.redisUrl !== undefined) {
    const redis = new Redis(auth.redisUrl, REDIS_OPTIONS)
    // A connection error is logged; Digest then fails closed (401, within the store's 1 s deadline) until Redis is back.
    redis.on('error', (err) => app.log.warn({ err }, 'Digest nonce counts: Redis connection error'))
    app.addHook('onClose', async function closeRedis () { await redis.quit() })
    store = new RedisNonceStore(redis)
  }
  return {
    realm: auth.realm,
    // Challenges: Digest MD5, Digest SHA-256, Basic, Bearer. MD5 first (RFC 7616 3.7 lets the server
    // order them by its preference) because Python's urllib reads only the first challenge and knows
    // only MD5; curl and Chromium answer the first Digest challenge they find (docs/reference-service.md).
    digestFirst: 'MD5',
    digest: { secret: auth.digestSecret, algorithms: ['SHA-256', 'MD5'], users: auth.users, scopes: ['read', 'write'], store },
    basic: { users: auth.users, scopes: ['read', 'write'] },
    bearer: { verify: (token) => tokens.get(sha256(token)) ?? null }
  }
}

/** Delta bases (RFC 3229): in memory by default; with REDIS_URL in Redis, shared by a fleet. */
function deltaOptions (app: FastifyInstance, redisUrl: string | undefined): Omit<DeltaEncodingOptions, 'profile'> {
  if (redisUrl === undefined) return {}
  const redis = new Redis(redisUrl, REDIS_OPTIONS)
  redis.on('error', (err) => app.log.warn({ err }, 'delta bases: Redis connection error'))
  app.addHook('onClose', async function closeDeltaRedis () { await redis.quit() })
  return { store: new RedisInstanceStore(redis) }
}

// Conventions (Redirects): any method under /v1/ is answered 307 to the same path without /v1, query kept.
const REDIRECTS = [{ from: '/v1/', to: '/' }]

const XML = { root: 'article', itemNames: { tags: 'tag' } }

// Credentials never reach the logs: the suite never logs headers, and secrets a client put in
// the query string (never accepted) are masked in the logged URL, with the package's redaction.
const logSerializers = createRedactingSerializers()

/**
 * A strong ETag names one representation (RFC 9110 8.8.3): the XML representation of an
 * article has its own, derived from the stored (JSON) one. Every method selects the
 * representation by Accept, so a client that reads XML sends the XML ETag with
 * `Accept: application/xml` on its writes too.
 */
function etagFor (request: FastifyRequest, stored: string): string {
  const accept = request.headers.accept
  // As the suite decides (RFC 9110 12.5.1): an Accept with neither `xml` nor a weight cannot prefer XML to JSON.
  return accept !== undefined && (/xml/i.test(accept) || accept.includes('=')) && negotiateMediaType(accept, ['application/json', 'application/xml']) === 'application/xml'
    ? stored.slice(0, -1) + '.xml"'
    : stored
}

function storedEtag (etag: string): string {
  return etag.endsWith('.xml"') ? etag.slice(0, -5) + '"' : etag
}
/** The article the validators read for this request (see buildService). */
const kRead = Symbol('articles.read')
type ReadRequest = FastifyRequest & { [kRead]: Stored | false | null }

const XML_LIST = { root: 'articles', itemNames: { articles: 'article', tags: 'tag' } }

/** RFC 9457 3: a client that names application/problem+json before (or without) application/json. */
function prefersProblem (accept: string | undefined): boolean {
  if (accept === undefined) return false
  const problem = accept.indexOf('application/problem+json')
  const json = accept.search(/application\/json(?![-+\w])/)
  return problem !== -1 && (json === -1 || problem < json)
}

/** `/articles/{id}` and the methods it has routes for: a 404 there is an unknown id. */
const ARTICLE_PATH = /^\/articles\/[^/?#]+(?:[?#]|$)/
const ARTICLE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])

export async function buildService (config: ServiceConfig): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions,
    bodyLimit: config.bodyLimit,
    logger: config.logger === undefined || config.logger === false ? false : { ...(config.logger === true ? {} : config.logger), serializers: { req: logSerializers.req } },
    // Stalled bodies and slow headers are cut off (RFC 9112 9.5 lets a server close idle
    // connections): Node answers 408 and closes. Timeouts are checked every second.
    requestTimeout: config.timeouts?.requestMs ?? 30000,
    http: { headersTimeout: config.timeouts?.headersMs ?? 10000, connectionsCheckingInterval: 1000 },
    connectionTimeout: 60000,
    // close() lets requests in flight finish (RFC 9112 9.6 closes their connections after the
    // answer); Node's server.close() closes idle keep-alive connections itself. Fastify 5.10
    // and 5.11 read the default 'idle' as "close every connection", in-flight ones included.
    forceCloseConnections: false
  })
  // RFC 9110 15.6.4: while the database is out of reach, requests that need it are answered 503.
  const store = await openStore({
    database: config.database,
    databaseUrl: config.databaseUrl,
    // RFC 9110 8.8.2.1: Last-Modified never later than Date, however fast one article is written.
    lastModifiedNeverAfterDate: true,
    unavailable: (cause) => {
      app.log.warn({ err: cause }, 'articles database unavailable')
      return serviceUnavailable('The articles database is unavailable; try again shortly.')
    }
  })
  app.addHook('onClose', async function closeDatabase () { await store.close() })

  app.addSchema(articleSchema)
  // The service's own answers, documented beside the conventions' (OpenAPI): 404 for an id that
  // names no article, 503 (with Retry-After) while the database is out of reach.
  app.addHook('onRoute', function documentServiceAnswers (route) {
    if (route.url !== '/articles' && !route.url.startsWith('/articles/')) return
    recordResponse(route, 503, { description: 'Service Unavailable: the articles database is out of reach; retry after Retry-After seconds', body: 'html', headers: ['Retry-After', 'Cache-Control'] })
    if (route.url.includes(':id')) recordResponse(route, 404, { description: 'Not Found: no article has this id (code ARTICLE_NOT_FOUND)', body: 'envelope' })
    // The handlers' own headers: where a new article is, and its validators on every write.
    if (route.method === 'POST') recordSuccessHeaders(route, ['Location', 'ETag', 'Last-Modified'])
    if (route.method === 'PUT' || route.method === 'PATCH') recordSuccessHeaders(route, ['ETag', 'Last-Modified'])
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Articles API', version: '1.0.0', description: 'Reference service of fastify-http-conventions' }
    },
    transform: conventionsOpenApiTransform,
    // HEAD /articles/{id} is a route of its own (RFC 9110 9.3.2): it is documented too.
    exposeHeadRoutes: true,
    // RFC 5789 3.1: the GET, HEAD and PUT of a resource that takes PATCH document Accept-Patch too.
    transformObject: conventionsOpenApiTransformObject
  })
  await app.register(httpConventions, { profile: config.profile, contentLength: { bodyLimit: config.bodyLimit }, auth: authOptions(app, config.auth ?? authFromEnv({})), deltaEncoding: deltaOptions(app, config.auth?.redisUrl), redirect: { rules: REDIRECTS }, resourcePolicy: { policy: 'same-origin' } })

  function sendArticle (request: FastifyRequest, reply: FastifyReply, stored: Stored, status = 200): FastifyReply {
    // Date is set here, from the same clock reading: Node's own Date is cached per second by a timer that fires late under load.
    const now = Date.now()
    reply.code(status).header('date', new Date(now).toUTCString()).header('etag', etagFor(request, stored.etag)).header('last-modified', new Date(lastModifiedAt(stored, now)).toUTCString())
    return reply.send(stored.article)
  }

  function duplicateSlug (): Error {
    return unprocessable({ field: 'slug', message: 'is already used by another article' })
  }

  // An unknown article id is the service's own "article not found"; any other unknown route is
  // named as Fastify names it. Both in the errors[] envelope, or as RFC 9457 problem details to
  // a client that prefers them. The PATCH plugin's 404 (its load found nothing) comes here
  // too, through reply.callNotFound().
  app.setNotFoundHandler(async function notFound (request, reply) {
    const entry = ARTICLE_METHODS.has(request.method) && ARTICLE_PATH.test(request.url)
      ? { message: 'article not found', code: 'ARTICLE_NOT_FOUND' }
      : { message: `Route ${request.method}:${request.url} not found` }
    // One line, as Fastify's not-found handler logs; the URL only in the request's redacted fields.
    request.log.info(entry.code === undefined ? 'route not found' : 'article not found')
    // The service's 404 is its own answer: it carries the policy of every other answer.
    reply.header('cross-origin-resource-policy', 'same-origin')
    // As the suite's errors: application/json under spec; under rfc9110 problem details to a
    // client that prefers them (RFC 9457 3), and the answer says it chose by Accept (RFC 9110 12.5.5).
    if (config.profile === 'rfc9110') reply.header('vary', 'Accept')
    if (config.profile !== 'rfc9110' || !prefersProblem(request.headers.accept)) return reply.code(404).header('content-type', 'application/json').send(Buffer.from(JSON.stringify({ errors: [entry] })))
    const instance = request.url.split('?')[0]
    return reply.code(404).header('content-type', 'application/problem+json').send(Buffer.from(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: entry.message, instance, errors: [entry] })))
  })

  app.get('/', { schema: { response: { 200: pageResponse } } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(homePage))

  // Conventions (Cross-Origin-Resource-Policy): the logo may be embedded by any origin; every other response is same-origin.
  app.get('/public/logo.svg', { schema: { response: { 200: logoResponse } }, config: { resourcePolicy: 'cross-origin' } }, async (_request, reply) => reply.type('image/svg+xml').send(logoSvg))

  app.get('/openapi.json', { schema: { response: { 200: documentResponse } } }, async () => app.swagger())

  // Conventions (Redirects): the rule answers every request under /v1/ with 307 before these
  // handlers (and before any body is read, so no other convention runs); the routes put the
  // redirect in the OpenAPI document, one operation per method OpenAPI 3.0 can name (TRACE
  // apart: Swagger 2.0 cannot name it, and its own route is left out of a 2.0 document).
  const v1 = { url: '/v1/*', schema: { response: { 307: redirectResponse } }, config: { contentLength: false, contentType: false, methods: false } } as const
  const redirectHandler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => reply.temporaryRedirect(request.url.slice('/v1'.length))
  app.route({ ...v1, method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], handler: redirectHandler })
  app.route({ ...v1, method: 'TRACE', handler: redirectHandler })

  app.get('/articles', {
    schema: { querystring: listQuery, response: { 200: { type: 'array', items: { $ref: `${articleSchema.$id}#` } } } },
    config: { contentType: { xml: XML_LIST } }
  }, async (request) => {
    const { tag, limit } = request.query as { tag?: string, limit?: number }
    return await store.list({ tag, limit })
  })

  app.post('/articles', {
    schema: { body: articleBody, response: { 201: { $ref: `${articleSchema.$id}#` } } },
    config: { contentType: { accept: ['application/json', 'application/xml'], xml: XML }, auth: WRITE }
  }, async (request, reply) => {
    const created = await store.create(request.body as ArticleInput)
    if (created === 'duplicate-slug') throw duplicateSlug()
    reply.header('location', `/articles/${created.article.id}`)
    return sendArticle(request, reply, created, 201)
  })

  const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id
  // What validators read, per request (null: not read; false: no such article): a GET serves
  // the very version its preconditions were evaluated against, with one read of the store
  // rather than two. A request decorator, so that every request has the field from the start.
  app.decorateRequest(kRead, null)
  const validatorsOf = (request: FastifyRequest, stored: Stored | undefined): { etag: string, lastModified: number } | null => {
    (request as ReadRequest)[kRead] = stored ?? false
    return stored === undefined ? null : { etag: etagFor(request, stored.etag), lastModified: stored.updatedAtMs }
  }
  // The current validators of an article (RFC 9110 8.8): read before the handler, for
  // preconditions. At once where the store reads synchronously (SQLite): no promise to wait for.
  const getNow = store.getNow?.bind(store)
  const validators = getNow !== undefined
    ? (request: FastifyRequest) => validatorsOf(request, getNow(idOf(request)))
    : async (request: FastifyRequest) => validatorsOf(request, await store.get(idOf(request)))
  // The ETag the compare-and-set must find in the store (the JSON one), from the one the request named.
  const expected = (request: FastifyRequest): string | null => {
    const e = request.preconditions?.expectedEtag ?? null
    return e === null ? null : storedEtag(e)
  }

  // What a PATCH applies to: the article as stored, and its validators.
  const loaded = (request: FastifyRequest, stored: Stored | undefined): { document: Article, etag: string, lastModified: number } | null =>
    stored === undefined ? null : { document: stored.article, etag: etagFor(request, stored.etag), lastModified: stored.updatedAtMs }

  app.get('/articles/:id', {
    schema: { params: idParams, response: { 200: { $ref: `${articleSchema.$id}#` } } },
    config: { contentType: { xml: XML }, conditional: { validators }, deltaEncoding: true }
  }, async (request, reply) => {
    const read = (request as ReadRequest)[kRead]
    const stored = read === null ? await store.get(idOf(request)) : read === false ? undefined : read
    if (stored === undefined) return reply.callNotFound()
    return sendArticle(request, reply, stored)
  })

  app.put('/articles/:id', {
    schema: { params: idParams, body: articleBody, response: { 200: { $ref: `${articleSchema.$id}#` } } },
    config: { contentType: { accept: ['application/json', 'application/xml'], xml: XML }, conditional: { validators, creates: false }, auth: WRITE }
  }, async (request, reply) => {
    // Compare-and-set on the ETag the preconditions were evaluated against: check and write are one statement.
    const result = await store.replace(idOf(request), request.body as ArticleInput, expected(request))
    if (result === 'not-found') return reply.callNotFound()
    if (result === 'duplicate-slug') throw duplicateSlug()
    if (result === 'precondition-failed') throw (request.preconditions as NonNullable<FastifyRequest['preconditions']>).failed(undefined, (await validators(request))?.etag)
    return sendArticle(request, reply, result)
  })

  app.patch('/articles/:id', {
    schema: { params: idParams },
    config: {
      // RFC 9110 8.8.3: the answer is the representation its ETag names (XML to a client preferring it).
      contentType: { xml: XML },
      auth: WRITE,
      patch: {
        schema: articleSchema,
        load: getNow !== undefined ? (request) => loaded(request, getNow(idOf(request))) : async (request) => loaded(request, await store.get(idOf(request))),
        save: async (request, document, expectedEtag) => {
          const { slug, title, body, tags, published } = document as Article
          const result = await store.replace(idOf(request), { slug, title, body, tags, published }, expectedEtag === undefined ? null : storedEtag(expectedEtag))
          if (result === 'duplicate-slug') throw duplicateSlug()
          if (typeof result === 'string') return false
          return { document: result.article, etag: etagFor(request, result.etag), lastModified: result.updatedAtMs }
        }
      }
    }
  }, async (request, reply) => {
    const patched = request.patched as { document: Article, etag: string, lastModified: number }
    return sendArticle(request, reply, { article: patched.document, etag: storedEtag(patched.etag), updatedAtMs: patched.lastModified })
  })

  // Its preconditions are evaluated against the representation Accept selects: its answers say Vary: Accept.
  app.delete('/articles/:id', { schema: { params: idParams }, config: { contentType: { xml: XML }, conditional: { validators }, auth: WRITE } }, async (request, reply) => {
    const result = await store.delete(idOf(request), expected(request))
    if (result === 'not-found') return reply.callNotFound()
    if (result === 'precondition-failed') throw (request.preconditions as NonNullable<FastifyRequest['preconditions']>).failed()
    return reply.code(204).send()
  })

  return app
}
