'use strict'
/**
 * The articles service three ways, for the `stack` section (bench/stack.js):
 *
 *   ours    the reference service (dist/example/app.js `buildService`) with the defaults
 *           `npm start` gives it (profile spec: a matching If-None-Match on GET is 412),
 *           in-memory SQLite
 *   stack   the same contract as a user would assemble it without the suite, for the routes
 *           the bench drives: Fastify, @fastify/basic-auth on writes (401 with
 *           WWW-Authenticate), fast-json-patch and a merge patch for PATCH, If-None-Match
 *           (412 on GET) and If-Match (412 on PATCH) against the stored ETag, 411 for a write
 *           without Content-Length, 415 for a body type the route does not take (with
 *           Accept-Patch on PATCH), Cross-Origin-Resource-Policy on every answer, Date and
 *           Last-Modified from one clock, and a hand-written error handler that turns Ajv's
 *           errors into the suite's 422 `{ errors: [...] }`. Same store, same schemas, same
 *           statuses, bodies and headers on the checked answers (bench/stack.js checks them
 *           before timing; RESULTS.md lists them item by item).
 *   plain   the same routes and handlers on plain Fastify, no convention: no auth, no
 *           ETag handling, no errors[] mapper, no read-only or schema check of a patched article.
 *
 * What `stack` leaves out, because a user would not assemble it for these routes: XML
 * (ours negotiates JSON or XML by Accept, hence its `Vary: Accept`; the stack serves JSON
 * only and needs no Vary), A-IM delta encoding (ours keeps the 200s of GET /articles/:id as
 * delta bases once a client has asked it with A-IM), Digest and Bearer (ours offers them beside Basic), the framing
 * checks ours makes on every request (repeated Host lines, a body on a GET), the 404/405
 * and OPTIONS answers, the OpenAPI document.
 * Started by bench/server.js as `stack-server:<name>`; the three seed the same 10 articles.
 */
const Fastify = require('fastify')
const { openStore, lastModifiedAt } = require('../dist/example/store.js')
const { article: articleSchema, articleBody, idParams, listQuery } = require('../dist/example/schemas.js')
const { seed, BASIC } = require('./express-service')

const BODY_LIMIT = 1048576
const USERS = { demo: 'demo-password' }
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
  if (status === 411) return reply.code(411).type('text/plain; charset=utf-8').send(`Length Required\n${err.message}`)
  if (status === 415) {
    // A PATCH body in a type the server does not take: 415 with Accept-Patch (RFC 5789 2.2).
    if (request.method === 'PATCH') reply.header('accept-patch', ACCEPT_PATCH)
    return reply.code(415).send({ errors: [{ field: 'Content-Type', message: err.message }] })
  }
  return reply.code(status).send({ errors: [{ field: '', message: status >= 500 ? 'Internal Server Error' : err.message }] })
}

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

/** The spec: a request with a body but without Content-Length (chunked) is refused with 411. */
function lengthRequired (request, _reply, done) {
  if (request.headers['transfer-encoding'] !== undefined) return done(Object.assign(new Error('a request body must be sent with Content-Length, not chunked'), { statusCode: 411 }))
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

// ---------------------------------------------------------------- the hand-built service

/**
 * The articles service on Fastify without the suite. `conventions`: true for the stack a user
 * assembles to give the suite's answers (etag, basic-auth, errors[], patch checks, headers),
 * false for the plain app (same routes and handlers, nothing else).
 */
async function buildHandBuilt ({ conventions }) {
  const app = Fastify({
    ...SERVICE_OPTIONS,
    // Every problem reported and unknown properties refused, as the suite's 422 lists them.
    ...(conventions ? { ajv: { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: 'array', useDefaults: true } } } : {})
  })
  const store = await openStore({
    database: ':memory:',
    lastModifiedNeverAfterDate: true,
    unavailable: (cause) => Object.assign(new Error('The articles database is unavailable; try again shortly.'), { statusCode: 503, cause })
  })
  app.addHook('onClose', async function closeDatabase () { await store.close() })
  app.addSchema(articleSchema)
  app.addContentTypeParser(PATCH_TYPES, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))

  let validateArticle = null
  if (conventions) {
    await app.register(require('@fastify/basic-auth'), {
      authenticate: { realm: 'articles' },
      validate: async (username, password) => {
        if (!Object.hasOwn(USERS, username) || USERS[username] !== password) throw Object.assign(new Error('Unauthorized'), { statusCode: 401 })
      }
    })
    app.setErrorHandler(errorsEnvelope)
    // Bodies are JSON (and the patch types): Fastify's text/plain parser would hand a string to
    // the schema (422) where the contract says 415.
    app.removeContentTypeParser('text/plain')
    app.addHook('onRequest', function resourcePolicy (_request, reply, done) {
      reply.header('cross-origin-resource-policy', 'same-origin')
      done()
    })
    const Ajv = require('ajv')
    const ajv = new Ajv({ allErrors: true })
    require('ajv-formats')(ajv)
    validateArticle = ajv.compile(articleSchema)
  }
  const write = conventions ? { onRequest: [lengthRequired, app.basicAuth] } : {}

  function sendArticle (reply, stored, status = 200) {
    const now = Date.now()
    reply.code(status).header('date', new Date(now).toUTCString()).header('etag', stored.etag).header('last-modified', new Date(lastModifiedAt(stored, now)).toUTCString())
    return reply.send(stored.article)
  }
  const notFound = (reply) => reply.code(404).send({ errors: [{ message: 'article not found', code: 'ARTICLE_NOT_FOUND' }] })
  const duplicateSlug = (reply) => unprocessable(reply, [{ field: 'slug', message: 'is already used by another article' }])

  app.get('/articles', {
    schema: { querystring: listQuery, response: { 200: { type: 'array', items: { $ref: `${articleSchema.$id}#` } } } }
  }, async (request) => {
    const { tag, limit } = request.query
    return await store.list({ tag, limit })
  })

  app.post('/articles', {
    ...write,
    schema: { body: articleBody, response: { 201: { $ref: `${articleSchema.$id}#` } } }
  }, async (request, reply) => {
    const created = await store.create(request.body)
    if (created === 'duplicate-slug') return duplicateSlug(reply)
    reply.header('location', `/articles/${created.article.id}`)
    return sendArticle(reply, created, 201)
  })

  app.get('/articles/:id', {
    schema: { params: idParams, response: { 200: { $ref: `${articleSchema.$id}#` } } }
  }, async (request, reply) => {
    const stored = await store.get(request.params.id)
    if (stored === undefined) return notFound(reply)
    if (conventions) {
      // The spec: a GET whose If-None-Match matches the current ETag is 412 (weak comparison, RFC 9110 13.1.2).
      const inm = request.headers['if-none-match']
      if (inm !== undefined && listMatches(inm, stored.etag, true)) {
        return reply.code(412).header('etag', stored.etag).send({ errors: [{ field: 'If-None-Match', message: 'not modified: the current entity-tag matches If-None-Match' }] })
      }
      reply.header('cache-control', 'no-store').header('accept-patch', ACCEPT_PATCH)
    }
    return sendArticle(reply, stored)
  })

  const { applyPatch, JsonPatchError } = require('fast-json-patch')
  app.patch('/articles/:id', { ...write, schema: { params: idParams } }, async (request, reply) => {
    const id = request.params.id
    const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
    const merge = type === 'application/merge-patch+json'
    // RFC 5789 2.2: a patch document in a type the resource does not take is 415, with Accept-Patch.
    if (conventions && !merge && type !== 'application/json-patch+json') {
      return reply.code(415).header('accept-patch', ACCEPT_PATCH).send({ errors: [{ field: 'Content-Type', message: `a PATCH body must be one of: ${ACCEPT_PATCH}` }] })
    }
    const ifMatch = conventions ? request.headers['if-match'] : undefined
    // Compare-and-set on the ETag of the version the patch was applied to; a lost race re-applies it
    // (with If-Match, the client named the version: a lost race is its 412).
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await store.get(id)
      if (stored === undefined) return notFound(reply)
      // RFC 9110 13.1.1: If-Match, strong comparison, before the patch is applied.
      if (ifMatch !== undefined && !listMatches(ifMatch, stored.etag, false)) {
        return reply.code(412).header('etag', stored.etag).send({ errors: [{ field: 'If-Match', message: 'the current entity-tag of the resource does not match If-Match' }] })
      }
      let patched
      try {
        patched = merge ? mergePatch(stored.article, request.body) : applyPatch(stored.article, request.body, conventions, false).newDocument
      } catch (err) {
        if (err instanceof JsonPatchError) return unprocessable(reply, [{ field: 'body', message: err.message.split('\n')[0] }])
        throw err
      }
      if (conventions) {
        const readOnly = READ_ONLY.filter((k) => patched[k] !== stored.article[k]).map((k) => ({ field: k, message: 'is read-only' }))
        if (readOnly.length > 0) return unprocessable(reply, readOnly)
        if (!validateArticle(patched)) return unprocessable(reply, toEntries(validateArticle.errors, 'body'))
      }
      const { slug, title, body, tags, published } = patched
      const result = await store.replace(id, { slug, title, body, tags, published }, stored.etag)
      if (result === 'not-found') return notFound(reply)
      if (result === 'duplicate-slug') return duplicateSlug(reply)
      if (result === 'precondition-failed') {
        if (ifMatch !== undefined) return reply.code(412).send({ errors: [{ field: 'If-Match', message: 'the current entity-tag of the resource does not match If-Match' }] })
        continue
      }
      if (conventions) reply.header('accept-patch', ACCEPT_PATCH)
      return sendArticle(reply, result)
    }
    throw new Error('PATCH lost 20 races in a row')
  })

  await seed((input) => store.create(input))
  return app
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
