'use strict'
/**
 * The articles service three ways, for the `stack` section (bench/stack.js):
 *
 *   ours    the reference service (dist/example/app.js `buildService`), in-memory SQLite,
 *           profile rfc9110 (a matching If-None-Match is 304, as @fastify/etag answers)
 *   stack   the same service as a user would assemble it without the suite: Fastify,
 *           @fastify/etag, @fastify/basic-auth on writes, fast-json-patch for PATCH, and a
 *           hand-written error handler that turns Ajv's errors into the suite's 422
 *           `{ errors: [...] }`. Same store, same schemas, same headers on the benchmarked
 *           answers (bench/stack.js checks them before timing).
 *   plain   the same routes and handlers on plain Fastify, no convention: no auth, no
 *           ETag handling, no errors[] mapper, no read-only or schema check of a patched article.
 *
 * What `stack` leaves out, because a user would not assemble it for these routes: XML
 * (ours negotiates JSON or XML by Accept, hence its `Vary: Accept`), A-IM delta encoding
 * (ours keeps every 200 of GET /articles/:id as a possible delta base), Digest and Bearer
 * (ours offers them beside Basic), JSON Merge Patch, Content-Length and media-type
 * conventions beyond Fastify's own, preconditions on writes (If-Match), the OpenAPI document.
 * Started by bench/server.js as `stack-server:<name>`; the three seed the same 10 articles.
 */
const Fastify = require('fastify')
const { openStore, lastModifiedAt } = require('../dist/example/store.js')
const { article: articleSchema, articleBody, idParams, listQuery } = require('../dist/example/schemas.js')
const { seed, BASIC } = require('./express-service')

const BODY_LIMIT = 1048576
const USERS = { demo: 'demo-password' }
const ACCEPT_PATCH = 'application/json-patch+json, application/merge-patch+json'
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

function errorsEnvelope (err, _request, reply) {
  if (err.validation !== undefined) return reply.code(422).send({ errors: toEntries(err.validation, err.validationContext) })
  const status = err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  return reply.code(status).send({ errors: [{ field: '', message: status >= 500 ? 'Internal Server Error' : err.message }] })
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
  app.addContentTypeParser('application/json-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'))

  let validateArticle = null
  if (conventions) {
    await app.register(require('@fastify/basic-auth'), {
      authenticate: { realm: 'articles' },
      validate: async (username, password) => {
        if (!Object.hasOwn(USERS, username) || USERS[username] !== password) throw Object.assign(new Error('Unauthorized'), { statusCode: 401 })
      }
    })
    app.setErrorHandler(errorsEnvelope)
    app.addHook('onRequest', function resourcePolicy (_request, reply, done) {
      reply.header('cross-origin-resource-policy', 'same-origin')
      done()
    })
    const Ajv = require('ajv')
    const ajv = new Ajv({ allErrors: true })
    require('ajv-formats')(ajv)
    validateArticle = ajv.compile(articleSchema)
  }
  const write = conventions ? { onRequest: app.basicAuth } : {}

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

  // @fastify/etag only where an ETag is answered: registered globally it would hash every
  // list it sends and add an ETag the reference service does not send there.
  await app.register(async function item (scope) {
    if (conventions) {
      await scope.register(require('@fastify/etag'))
      // RFC 9110 15.4.5: a 304 carries no representation metadata (the suite's 304 has none).
      scope.addHook('onSend', function bareNotModified (_request, reply, payload, done) {
        if (reply.statusCode === 304) reply.removeHeader('content-type').removeHeader('last-modified').removeHeader('accept-patch')
        done(null, payload)
      })
    }
    scope.get('/articles/:id', {
      schema: { params: idParams, response: { 200: { $ref: `${articleSchema.$id}#` } } }
    }, async (request, reply) => {
      const stored = await store.get(request.params.id)
      if (stored === undefined) return notFound(reply)
      // @fastify/etag compares If-None-Match with this ETag in onSend and answers 304.
      if (conventions) reply.header('cache-control', 'no-cache').header('accept-patch', ACCEPT_PATCH)
      return sendArticle(reply, stored)
    })
  })

  const { applyPatch, JsonPatchError } = require('fast-json-patch')
  app.patch('/articles/:id', { ...write, schema: { params: idParams } }, async (request, reply) => {
    const id = request.params.id
    // Compare-and-set on the ETag of the version the patch was applied to; a lost race re-applies it.
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await store.get(id)
      if (stored === undefined) return notFound(reply)
      let patched
      try {
        patched = applyPatch(stored.article, request.body, conventions, false).newDocument
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
      if (result === 'precondition-failed') continue
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
  const app = await buildService({ database: ':memory:', bodyLimit: BODY_LIMIT, profile: 'rfc9110', auth: authFromEnv({}) })
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
