'use strict'
/**
 * The articles service three ways, for the `stack` section (bench/stack.js):
 *
 *   ours    the reference service (dist/example/app.js `buildService`) with the defaults
 *           `npm start` gives it (profile spec: a matching If-None-Match on GET is 412),
 *           in-memory SQLite
 *   stack   the same contract (docs/reference-service.md, profile spec) as a user would
 *           assemble it without the suite, on the service's article routes (GET and POST
 *           /articles; GET, HEAD, PUT, PATCH and DELETE /articles/:id), with the packages such
 *           a user picks and the rest written by hand:
 *           - JSON, or XML by Accept (RFC 9110 12.5.1; a tie is JSON) through fast-xml-parser's
 *             XMLBuilder, on every article answer and the list, with `Vary: Accept` and an XML
 *             ETag of its own (RFC 9110 8.8.3); XML request bodies through XMLParser;
 *           - preconditions: If-None-Match on GET (412), If-Match on PATCH, If-Match,
 *             If-Unmodified-Since and If-None-Match on PUT and DELETE (RFC 9110 13.2.2), with
 *             compare-and-set writes;
 *           - auth on writes (bench/stack-auth.js): Basic by @fastify/basic-auth, Bearer and
 *             Digest (RFC 7616, MD5 and SHA-256, qop=auth, nonces in a Map) by hand
 *             (@fastify/bearer-auth is not installed, nor any server Digest package); each 401
 *             carries the four challenges and an HTML page;
 *           - 405 with Allow for a method a resource does not serve (the not-found handler),
 *             OPTIONS answered 204 with Allow (and Accept-Patch on /articles/:id), OPTIONS *;
 *           - framing checks in an onRequest hook: two Host lines, or a body with two
 *             Content-Type lines, are a 400; a chunked GET or HEAD body, or one declaring more
 *             than the body limit, a 411; each closes the connection;
 *           - 411 for a write without Content-Length, 415 for a body type the route does not
 *             take (with Accept-Patch on PATCH), fast-json-patch and a merge patch with the
 *             read-only and schema checks, Cross-Origin-Resource-Policy on every answer, Date
 *             and Last-Modified from one clock, and an error handler that turns Ajv's errors
 *             into the suite's 422 `{ errors: [...] }`.
 *           bench/stack.js checks, before timing, that its answers are ours (status, body,
 *           the convention headers; RESULTS.md lists the items).
 *   plain   the same routes and handlers on plain Fastify, no convention: no auth, no XML, no
 *           ETag handling, no errors[] mapper, no 405, OPTIONS or framing check, no read-only
 *           or schema check of a patched article.
 *
 * What `stack` still leaves out, and why: A-IM delta encoding (no package a user would pick;
 * ours keeps delta bases only once a client has asked a route with A-IM, and no request of
 * the bench does); the OpenAPI document, the home page, the logo and the /v1 redirect (routes
 * the bench never requests); the answers ours writes before any route runs (417 for an
 * unknown Expect, 505 for another HTTP major version, a text 400 for HTTP/1.1 without Host:
 * the stack leaves them to Node, which answers 417 and 400 bare); problem details (profile
 * rfc9110 only). The stack's framing hook also runs on 404s, 405s and OPTIONS, where ours
 * checks no Host lines (bench/stack.js does not compare those).
 * Started by bench/server.js as `stack-server:<name>`; the three seed the same 10 articles.
 */
const Fastify = require('fastify')
const Ajv = require('ajv')
const { XMLBuilder, XMLParser, XMLValidator } = require('fast-xml-parser')
const { applyPatch, JsonPatchError } = require('fast-json-patch')
const { openStore, lastModifiedAt } = require('../dist/example/store.js')
const { authenticator, unauthorized, USERS } = require('./stack-auth')
const { article: articleSchema, articleBody, idParams, listQuery } = require('../dist/example/schemas.js')
const { seed, BASIC } = require('./express-service')

const BODY_LIMIT = 1048576
const ACCEPT_PATCH = 'application/json-patch+json, application/merge-patch+json'
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json']
const READ_ONLY = ['id', 'createdAt', 'updatedAt']

/** Server options the reference service gives Fastify beside the suite's (example/app.ts). */
const SERVICE_OPTIONS = {
  bodyLimit: BODY_LIMIT,
  logger: false,
  requestTimeout: 30000,
  http: { headersTimeout: 10000, connectionsCheckingInterval: 1000 },
  connectionTimeout: 60000
}

// ---------------------------------------------------------------- the hand-written errors[] mapper

/** An Ajv error's field as the suite names it: dotted body paths, `query:limit`, `path:id`. */
function fieldOf (base, name) {
  return base === '' || base.endsWith(':') ? base + name : `${base}.${name}`
}

const PREFIX = { body: '', querystring: 'query:', params: 'path:', headers: 'header:' }

/** Ajv errors -> `errors[]` entries: missing and unknown properties named by their own path. */
function toEntries (errors, context) {
  const prefix = PREFIX[context] ?? `${context}:`
  const out = []
  for (const e of errors) {
    const path = e.instancePath === '' ? prefix : fieldOf(prefix, e.instancePath.slice(1).split('/').join('.'))
    if (e.keyword === 'required') out.push({ field: fieldOf(path, e.params.missingProperty), message: 'is required' })
    else if (e.keyword === 'additionalProperties') out.push({ field: fieldOf(path, e.params.additionalProperty), message: 'is not allowed' })
    else out.push({ field: path === '' ? 'body' : path, message: e.message })
  }
  return out
}

function errorsEnvelope (err, request, reply) {
  if (err.validation !== undefined) return reply.code(422).send({ errors: toEntries(err.validation, err.validationContext) })
  // The spec answers a body over the size limit with 411, as a write without Content-Length.
  const status = err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 411 : err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  if (status === 411) return refuse(reply, 411, 'Length Required', `the body is larger than the limit of ${BODY_LIMIT} bytes`)
  // Every challenge on one 401, and its HTML page, or its JSON body for a client that prefers JSON (bench/stack-auth.js).
  if (status === 401) return unauthorized(reply, err, prefersJsonToHtml(request.headers.accept))
  if (status === 415) {
    // A PATCH body in a type the server does not take: 415 with Accept-Patch (RFC 5789 2.2).
    if (request.method === 'PATCH') reply.header('accept-patch', ACCEPT_PATCH)
    return reply.code(415).send({ errors: [{ field: 'Content-Type', message: err.message }] })
  }
  // A body that does not parse (JSON or XML) is a 400 with field `body`.
  const field = err.field ?? (status === 400 ? 'body' : '')
  return reply.code(status).send({ errors: [{ field, message: status >= 500 ? 'Internal Server Error' : err.message }] })
}

/**
 * The spec: POST, PUT and PATCH must carry a Content-Length within the body limit, else 411
 * (chunked or no length at all), decided before the body is read and before the
 * credentials, closing the connection (RFC 9112 9.6).
 */
function lengthRequired (request, reply, done) {
  const { 'transfer-encoding': chunked, 'content-length': length } = request.headers
  if (chunked !== undefined) return refuse(reply, 411, 'Length Required', 'a request body must be sent with Content-Length, not chunked')
  if (length === undefined) return refuse(reply, 411, 'Length Required', `${request.method} requires a Content-Length header`)
  if (Number(length) > BODY_LIMIT) return refuse(reply, 411, 'Length Required', `the body is larger than the limit of ${BODY_LIMIT} bytes`)
  done()
}

/** RFC 7396: a JSON Merge Patch applied to a copy of `target`. */
function mergePatch (target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

const unprocessable = (reply, errors) => reply.code(422).send({ errors })

// ---------------------------------------------------------------- representations: JSON or XML by Accept

const XML_TYPE = 'application/xml; charset=utf-8'
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
const xmlBuilder = new XMLBuilder({})

/** The quality Accept gives `type` (RFC 9110 12.5.1): the most specific range that matches decides. */
function qualityOf (accept, type) {
  const major = type.slice(0, type.indexOf('/') + 1) + '*'
  let best = -1
  let q = 0
  for (const range of accept.split(',')) {
    const [name, ...params] = range.split(';')
    const m = name.trim().toLowerCase()
    const specificity = m === type ? 2 : m === major ? 1 : m === '*/*' ? 0 : -1
    if (specificity <= best) continue
    const weight = params.map((x) => x.trim().toLowerCase()).find((x) => x.startsWith('q='))
    best = specificity
    q = weight === undefined ? 1 : Number(weight.slice(2)) || 0
  }
  return q
}

/** Does Accept prefer application/xml to application/json? A tie is JSON, the service's first choice. */
function prefersXml (accept) {
  // Without `xml` or a weight in it, no Accept can prefer XML: the common cases cost one test.
  if (accept === undefined || (!/xml/i.test(accept) && !accept.includes('='))) return false
  return qualityOf(accept, 'application/xml') > qualityOf(accept, 'application/json')
}

/**
 * Does Accept prefer JSON (plain or problem details) to the 401's HTML page? A tie is the page.
 * The page's media type is chosen by Accept either way (the 401 says `Vary: Accept`).
 */
function prefersJsonToHtml (accept) {
  if (accept === undefined || !accept.includes('json')) return false
  return Math.max(qualityOf(accept, 'application/json'), qualityOf(accept, 'application/problem+json')) > qualityOf(accept, 'text/html')
}

/** RFC 9110 8.8.3: a strong ETag names one representation; the XML one gets its own, derived from the stored (JSON) one. */
const xmlEtag = (etag) => etag.slice(0, -1) + '.xml"'

/** The article as XML: `<tags>` wraps one `<tag>` per item. */
const xmlArticle = (article) => ({ ...article, tags: { tag: article.tags } })
const articleXml = (article) => XML_DECLARATION + xmlBuilder.build({ article: xmlArticle(article) })
const listXml = (articles) => XML_DECLARATION + xmlBuilder.build({ articles: { article: articles.map(xmlArticle) } })

// ---------------------------------------------------------------- preconditions (RFC 9110 13)

/** RFC 9110 13.1.1 / 13.1.2: does an If-Match (strong) or If-None-Match (weak) list name `etag`? */
function listMatches (header, etag, weak) {
  if (header.trim() === '*') return true
  const opaque = (t) => (weak && t.startsWith('W/') ? t.slice(2) : t)
  for (const tag of header.split(',')) {
    const t = tag.trim()
    if (!weak && t.startsWith('W/')) continue
    if (opaque(t) === etag) return true
  }
  return false
}

/**
 * RFC 9110 13.2.2: the preconditions of a write (PUT, DELETE) in their order against the
 * representation's ETag and Last-Modified: the field that failed, or null.
 */
function writePreconditionFailed (headers, etag, lastModifiedMs) {
  if (headers['if-match'] !== undefined) {
    if (!listMatches(headers['if-match'], etag, false)) return 'If-Match'
  } else if (headers['if-unmodified-since'] !== undefined) {
    // RFC 9110 13.1.4: ignored when not a valid date; the dates have one-second resolution.
    const since = Date.parse(headers['if-unmodified-since'])
    if (!Number.isNaN(since) && Math.floor(lastModifiedMs / 1000) * 1000 > since) return 'If-Unmodified-Since'
  }
  if (headers['if-none-match'] !== undefined && listMatches(headers['if-none-match'], etag, true)) return 'If-None-Match'
  return null
}

const PRECONDITION_MESSAGES = {
  'If-Match': 'the current entity-tag of the resource does not match If-Match',
  'If-Unmodified-Since': 'the resource was modified after If-Unmodified-Since',
  'If-None-Match': 'the current entity-tag of the resource matches If-None-Match'
}

/** The 412 of a route whose answers are chosen by Accept (its ETags name a representation): Vary: Accept too. */
function preconditionFailed (reply, field, etag, message = PRECONDITION_MESSAGES[field]) {
  reply.code(412).header('vary', 'Accept')
  if (etag !== undefined) reply.header('etag', etag)
  return reply.send({ errors: [{ field, message }] })
}

// ---------------------------------------------------------------- framing, 405 and OPTIONS

/** A text/plain refusal that closes the connection (RFC 9112 9.6), as the contract's 400 and 411 are. */
function refuse (reply, status, phrase, reason) {
  return reply.code(status).header('connection', 'close').type('text/plain; charset=utf-8').send(`${phrase}\n${reason}\n`)
}

/**
 * The framing checks of every request, before anything else reads it: more than one Host
 * line is a 400 (RFC 9112 3.2), and so is a body with more than one Content-Type line (RFC
 * 9110 8.3: a singleton field, of which Node keeps the first); a GET or HEAD body is never
 * read, and refused with 411 when it is chunked or declares more than the body limit (the
 * contract refuses what it cannot frame without reading it).
 */
function framing (request, reply, done) {
  const raw = request.raw.rawHeaders
  let hosts = 0
  let types = 0
  for (let i = 0; i < raw.length; i += 2) {
    const length = raw[i].length
    if (length === 4 && raw[i].toLowerCase() === 'host') hosts++
    else if (length === 12 && raw[i].toLowerCase() === 'content-type') types++
  }
  if (hosts > 1) return refuse(reply, 400, 'Bad Request', 'the request carries more than one Host field (RFC 9112 3.2)')
  const body = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0
  if (types > 1 && body) return refuse(reply, 400, 'Bad Request', 'the request carries more than one Content-Type field (RFC 9110 8.3)')
  if (request.method === 'GET' || request.method === 'HEAD') {
    if (request.headers['transfer-encoding'] !== undefined) return refuse(reply, 411, 'Length Required', 'a request body must be sent with Content-Length, not chunked')
    const length = request.headers['content-length']
    if (length !== undefined && Number(length) > BODY_LIMIT) return refuse(reply, 411, 'Length Required', `the body is larger than the limit of ${BODY_LIMIT} bytes`)
  }
  done()
}

/** The service's resources and the methods each serves: 405 and OPTIONS answer with them (RFC 9110 10.2.1). */
const RESOURCES = [
  { url: '/articles', path: /^\/articles(?:\?|$)/, allow: 'GET, HEAD, POST, OPTIONS' },
  { url: '/articles/:id', path: /^\/articles\/[^/?#]+(?:\?|$)/, allow: 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS', acceptPatch: true }
]

/**
 * Requests no route serves: a method a resource does not serve is 405 with Allow (RFC 9110
 * 15.5.6), anything else a 404; both in the errors[] envelope.
 */
function notFound (request, reply) {
  // RFC 9110 9.3.7: OPTIONS * asks about the server, not a resource.
  if (request.method === 'OPTIONS' && request.url === '*') return reply.code(204).header('allow', 'GET, HEAD, OPTIONS').send()
  const resource = RESOURCES.find((r) => r.path.test(request.url))
  if (resource !== undefined) {
    return reply.code(405).header('allow', resource.allow).send({ errors: [{ message: `${request.method} is not allowed here; this resource serves ${resource.allow}` }] })
  }
  return reply.code(404).send({ errors: [{ message: `Route ${request.method}:${request.url} not found` }] })
}

/** OPTIONS on each resource (RFC 9110 9.3.7): 204 with Allow, and Accept-Patch where PATCH is served (RFC 5789 3.1). */
function optionsRoutes (app) {
  for (const r of RESOURCES) {
    app.options(r.url, function options (_request, reply) {
      reply.code(204).header('allow', r.allow)
      if (r.acceptPatch) reply.header('accept-patch', ACCEPT_PATCH)
      return reply.send()
    })
  }
}

// ---------------------------------------------------------------- the hand-built service

const notFoundArticle = (reply) => reply.code(404).send({ errors: [{ message: 'article not found', code: 'ARTICLE_NOT_FOUND' }] })
const duplicateSlug = (reply) => unprocessable(reply, [{ field: 'slug', message: 'is already used by another article' }])
const ARTICLE_REF = { $ref: `${articleSchema.$id}#` }

/** XML request bodies (RFC 7303) for POST and PUT: `<article>` with `<tags><tag>`; a DOCTYPE is refused (no entities). */
function xmlBodies (app) {
  const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, isArray: (_name, jpath) => jpath === 'article.tags.tag' })
  app.addContentTypeParser('application/xml', { parseAs: 'string' }, function parseXml (_request, text, done) {
    const invalid = () => done(Object.assign(new Error('the body is not a well-formed <article> document'), { statusCode: 400, field: 'body' }))
    if (/<!DOCTYPE|<!ENTITY/i.test(text) || XMLValidator.validate(text) !== true) return invalid()
    const article = parser.parse(text).article
    if (article === null || typeof article !== 'object') return invalid()
    if (article.tags !== undefined) article.tags = article.tags === '' ? [] : article.tags.tag ?? []
    // XML is text: the body schema's boolean is converted here, as the contract converts it by the schema.
    if (article.published === 'true' || article.published === 'false') article.published = article.published === 'true'
    done(null, article)
  })
}

/**
 * Ajv as the contract validates: every problem reported and unknown properties refused, as
 * the suite's 422 lists them; bodies strictly (a JSON `"true"` is not a boolean), query
 * strings and params coerced (they are text). Two instances behind one validator compiler.
 */
function validatorCompiler () {
  const options = { allErrors: true, removeAdditional: false, useDefaults: true }
  const strict = require('ajv-formats')(new Ajv({ ...options, coerceTypes: false }))
  const coercing = require('ajv-formats')(new Ajv({ ...options, coerceTypes: 'array' }))
  return ({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema)
}

/** The conventions the stack assembles on `app`; returns what its routes use. */
async function addConventions (app) {
  app.setValidatorCompiler(validatorCompiler())
  await app.register(require('@fastify/basic-auth'), {
    validate: async (username, password) => {
      if (!Object.hasOwn(USERS, username) || USERS[username] !== password) throw Object.assign(new Error('Unauthorized'), { statusCode: 401 })
    }
  })
  app.setErrorHandler(errorsEnvelope)
  // Bodies are JSON, XML or the patch types: Fastify's text/plain parser would hand a string to
  // the schema (422) where the contract says 415.
  app.removeContentTypeParser('text/plain')
  xmlBodies(app)
  app.addHook('onRequest', function resourcePolicy (_request, reply, done) {
    reply.header('cross-origin-resource-policy', 'same-origin')
    done()
  })
  app.addHook('onRequest', framing)
  app.setNotFoundHandler(notFound)
  optionsRoutes(app)
  const ajv = new Ajv({ allErrors: true })
  require('ajv-formats')(ajv)
  const authenticate = authenticator(app)
  // DELETE carries no body: credentials only.
  return { write: { onRequest: [lengthRequired, authenticate] }, remove: { onRequest: [authenticate] }, validateArticle: ajv.compile(articleSchema) }
}

/**
 * The articles service on Fastify without the suite. `conventions`: true for the stack a user
 * assembles to give the suite's answers (XML by Accept, preconditions, auth, errors[], 405 and
 * OPTIONS, framing checks, patch checks, headers), false for the plain app (same routes and
 * handlers, nothing else).
 */
async function buildHandBuilt ({ conventions }) {
  const app = Fastify(SERVICE_OPTIONS)
  const store = await openStore({
    database: ':memory:',
    lastModifiedNeverAfterDate: true,
    unavailable: (cause) => Object.assign(new Error('The articles database is unavailable; try again shortly.'), { statusCode: 503, cause })
  })
  app.addHook('onClose', async function closeDatabase () { await store.close() })
  app.addSchema(articleSchema)
  app.addContentTypeParser(PATCH_TYPES, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))
  const c = conventions ? await addConventions(app) : null
  const ctx = { app, store, c, write: c?.write ?? {}, remove: c?.remove ?? {}, send: sender(c) }
  readRoutes(ctx)
  writeRoutes(ctx)
  patchRoute(ctx)
  await seed((input) => store.create(input))
  return app
}

/** `send(request, reply, stored, status)`: the article with its validators, as JSON or (with conventions) XML by Accept. */
function sender (c) {
  return function sendArticle (request, reply, stored, status = 200) {
    const now = Date.now()
    const xml = c !== null && prefersXml(request.headers.accept)
    reply.code(status).header('date', new Date(now).toUTCString()).header('etag', xml ? xmlEtag(stored.etag) : stored.etag).header('last-modified', new Date(lastModifiedAt(stored, now)).toUTCString())
    if (c === null) return reply.send(stored.article)
    // RFC 9110 12.5.5: the answer was chosen by Accept.
    reply.header('vary', 'Accept')
    return xml ? reply.type(XML_TYPE).send(articleXml(stored.article)) : reply.send(stored.article)
  }
}

/** The ETag of the representation the request selects (RFC 9110 8.8.3). */
const etagOf = (ctx, request, stored) => (ctx.c !== null && prefersXml(request.headers.accept) ? xmlEtag(stored.etag) : stored.etag)

function readRoutes ({ app, store, c, send }) {
  app.get('/articles', {
    schema: { querystring: listQuery, response: { 200: { type: 'array', items: ARTICLE_REF } } }
  }, async (request, reply) => {
    const { tag, limit } = request.query
    const articles = await store.list({ tag, limit })
    if (c === null) return articles
    reply.header('vary', 'Accept')
    return prefersXml(request.headers.accept) ? reply.type(XML_TYPE).send(listXml(articles)) : articles
  })

  app.get('/articles/:id', {
    schema: { params: idParams, response: { 200: ARTICLE_REF } }
  }, async (request, reply) => {
    const stored = await store.get(request.params.id)
    if (stored === undefined) return notFoundArticle(reply)
    if (c !== null) {
      // The spec: a GET whose If-None-Match matches the current ETag is 412 (weak comparison, RFC 9110 13.1.2).
      const inm = request.headers['if-none-match']
      const etag = etagOf({ c }, request, stored)
      if (inm !== undefined && listMatches(inm, etag, true)) return preconditionFailed(reply, 'If-None-Match', etag, 'not modified: the current entity-tag matches If-None-Match')
      reply.header('cache-control', 'no-store').header('accept-patch', ACCEPT_PATCH)
    }
    return send(request, reply, stored)
  })
}

function writeRoutes (ctx) {
  const { app, store, c, write, remove, send } = ctx
  app.post('/articles', { ...write, schema: { body: articleBody, response: { 201: ARTICLE_REF } } }, async (request, reply) => {
    const created = await store.create(request.body)
    if (created === 'duplicate-slug') return duplicateSlug(reply)
    reply.header('location', `/articles/${created.article.id}`)
    return send(request, reply, created, 201)
  })

  // PUT never creates (404 for an unknown id); with a precondition, the write is a compare-and-set on the ETag it was checked against.
  app.put('/articles/:id', { ...write, schema: { params: idParams, body: articleBody, response: { 200: ARTICLE_REF } } }, async (request, reply) => {
    const stored = await store.get(request.params.id)
    if (stored === undefined) return notFoundArticle(reply)
    const failed = c === null ? null : writePreconditionFailed(request.headers, etagOf(ctx, request, stored), stored.updatedAtMs)
    if (failed !== null) return preconditionFailed(reply, failed, etagOf(ctx, request, stored))
    const conditional = c !== null && (request.headers['if-match'] !== undefined || request.headers['if-unmodified-since'] !== undefined)
    const result = await store.replace(request.params.id, request.body, conditional ? stored.etag : null)
    if (result === 'not-found') return notFoundArticle(reply)
    if (result === 'duplicate-slug') return duplicateSlug(reply)
    if (result === 'precondition-failed') return preconditionFailed(reply, 'If-Match', etagOf(ctx, request, stored))
    // RFC 5789 3.1: the PUT of a resource that takes PATCH says which patch types it takes.
    if (c !== null) reply.header('accept-patch', ACCEPT_PATCH)
    return send(request, reply, result)
  })

  app.delete('/articles/:id', { ...remove, schema: { params: idParams } }, async (request, reply) => {
    const stored = await store.get(request.params.id)
    if (stored === undefined) return notFoundArticle(reply)
    const failed = c === null ? null : writePreconditionFailed(request.headers, etagOf(ctx, request, stored), stored.updatedAtMs)
    if (failed !== null) return preconditionFailed(reply, failed, etagOf(ctx, request, stored))
    const result = await store.delete(request.params.id, failed === null && c !== null && request.headers['if-match'] !== undefined ? stored.etag : null)
    if (result === 'not-found') return notFoundArticle(reply)
    if (result === 'precondition-failed') return preconditionFailed(reply, 'If-Match', etagOf(ctx, request, stored))
    // Its preconditions were evaluated against the representation Accept selects.
    if (c !== null) reply.header('vary', 'Accept')
    return reply.code(204).send()
  })
}

/** RFC 5789: JSON Patch (fast-json-patch) or JSON Merge Patch, checked and written with a compare-and-set. */
function patchRoute (ctx) {
  const { app, store, c, write, send } = ctx
  app.patch('/articles/:id', { ...write, schema: { params: idParams } }, async (request, reply) => {
    const id = request.params.id
    const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
    const merge = type === 'application/merge-patch+json'
    // RFC 5789 2.2: a patch document in a type the resource does not take is 415, with Accept-Patch.
    if (c !== null && !merge && type !== 'application/json-patch+json') {
      return reply.code(415).header('accept-patch', ACCEPT_PATCH).send({ errors: [{ field: 'Content-Type', message: `a PATCH body must be one of: ${ACCEPT_PATCH}` }] })
    }
    const ifMatch = c !== null ? request.headers['if-match'] : undefined
    // Compare-and-set on the ETag of the version the patch was applied to; a lost race re-applies it
    // (with If-Match, the client named the version: a lost race is its 412).
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await store.get(id)
      if (stored === undefined) return notFoundArticle(reply)
      // RFC 9110 13.1.1: If-Match, strong comparison, before the patch is applied.
      if (ifMatch !== undefined && !listMatches(ifMatch, etagOf(ctx, request, stored), false)) return preconditionFailed(reply, 'If-Match', etagOf(ctx, request, stored))
      const patched = patchedArticle(c, stored.article, request.body, merge)
      if (patched.errors !== undefined) return unprocessable(reply, patched.errors)
      const { slug, title, body, tags, published } = patched.article
      const result = await store.replace(id, { slug, title, body, tags, published }, stored.etag)
      if (result === 'not-found') return notFoundArticle(reply)
      if (result === 'duplicate-slug') return duplicateSlug(reply)
      if (result === 'precondition-failed') {
        if (ifMatch !== undefined) return preconditionFailed(reply, 'If-Match')
        continue
      }
      if (c !== null) reply.header('accept-patch', ACCEPT_PATCH)
      return send(request, reply, result)
    }
    throw new Error('PATCH lost 20 races in a row')
  })
}

/** The patched article, or `errors` (422): the patch's own failure, a read-only property changed, the article schema. */
function patchedArticle (c, article, patch, merge) {
  let patched
  try {
    patched = merge ? mergePatch(article, patch) : applyPatch(article, patch, c !== null, false).newDocument
  } catch (err) {
    if (err instanceof JsonPatchError) return { errors: [{ field: 'body', message: err.message.split('\n')[0] }] }
    throw err
  }
  if (c !== null) {
    const readOnly = READ_ONLY.filter((k) => patched[k] !== article[k]).map((k) => ({ field: k, message: 'is read-only' }))
    if (readOnly.length > 0) return { errors: readOnly }
    if (!c.validateArticle(patched)) return { errors: toEntries(c.validateArticle.errors, 'body') }
  }
  return { article: patched }
}

// ---------------------------------------------------------------- variants

async function buildOurs () {
  const { buildService, authFromEnv } = require('../dist/example/app.js')
  // The service's defaults (configFromEnv with no variable set), on an in-memory database.
  const app = await buildService({ database: ':memory:', bodyLimit: BODY_LIMIT, profile: 'spec', auth: authFromEnv({}) })
  await seed(async (input) => {
    const res = await app.inject({ method: 'POST', url: '/articles', headers: { authorization: BASIC, 'content-type': 'application/json' }, payload: input })
    if (res.statusCode !== 201) throw new Error(`seeding: ${res.statusCode} ${res.body}`)
  })
  return app
}

const variants = {
  ours: buildOurs,
  stack: () => buildHandBuilt({ conventions: true }),
  plain: () => buildHandBuilt({ conventions: false })
}

module.exports = { variants, toEntries }
