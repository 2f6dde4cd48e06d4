'use strict'
/**
 * The articles service (docs/reference-service.md) written on Express 5 with its usual
 * middleware, as the peer of the benchmark report (bench/report.js):
 *
 * - `express.json({ limit })` for bodies, validation written by hand (Express has no
 *   schemas) with the same rules and the same 422 `errors[]` as the reference service;
 * - Express's built-in strong ETag (`app.set('etag', 'strong')`: a hash of each body it
 *   sends) and its own 304 through `req.fresh`;
 * - `express-basic-auth` on writes;
 * - the very same SQLite store as the reference service (dist/example/store.js).
 *
 * Routes: GET /articles/:id, GET /articles (?tag, ?limit), POST /articles, PUT /articles/:id.
 *
 * `variants` (started by bench/server.js as `express-service:<name>`):
 *   express   this service, in-memory database, seeded
 *   fastify   the reference service (dist/example/app.js buildService), in-memory, seeded the same way
 * Seeded articles have fixed ids (ARTICLE_IDS) so the load generator knows the paths.
 */
const crypto = require('node:crypto')
const express = require('express')
const basicAuth = require('express-basic-auth')
const { ArticleStore } = require('../dist/example/store.js')

const USER = 'demo'
const PASSWORD = 'demo-password'
const BASIC = 'Basic ' + Buffer.from(`${USER}:${PASSWORD}`).toString('base64')
const BODY_LIMIT = 1048576

// ---------------------------------------------------------------- validation

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/
const FIELDS = new Set(['slug', 'title', 'body', 'tags', 'published'])

/** The rules of example/schemas.ts articleInput; returns [] or the violations, each { field, message }. */
function validateArticle (input) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return [{ field: '', message: 'must be object' }]
  const errors = []
  for (const key of Object.keys(input)) {
    if (!FIELDS.has(key)) errors.push({ field: key, message: 'is not allowed' })
  }
  for (const key of ['slug', 'title', 'body']) {
    if (input[key] === undefined) errors.push({ field: key, message: 'is required' })
  }
  const { slug, title, body, tags, published } = input
  if (slug !== undefined) {
    if (typeof slug !== 'string') errors.push({ field: 'slug', message: 'must be string' })
    else if (slug.length < 1 || slug.length > 100) errors.push({ field: 'slug', message: 'must be 1 to 100 characters' })
    else if (!SLUG.test(slug)) errors.push({ field: 'slug', message: `must match pattern "${SLUG.source}"` })
  }
  if (title !== undefined) {
    if (typeof title !== 'string') errors.push({ field: 'title', message: 'must be string' })
    else if (title.length < 1 || title.length > 200) errors.push({ field: 'title', message: 'must be 1 to 200 characters' })
  }
  if (body !== undefined) {
    if (typeof body !== 'string') errors.push({ field: 'body', message: 'must be string' })
    else if (body.length > 200000) errors.push({ field: 'body', message: 'must NOT have more than 200000 characters' })
  }
  if (tags !== undefined) {
    if (!Array.isArray(tags)) errors.push({ field: 'tags', message: 'must be array' })
    else {
      if (tags.length > 20) errors.push({ field: 'tags', message: 'must NOT have more than 20 items' })
      tags.forEach((tag, i) => {
        if (typeof tag !== 'string') errors.push({ field: `tags/${i}`, message: 'must be string' })
        else if (tag.length < 1 || tag.length > 50) errors.push({ field: `tags/${i}`, message: 'must be 1 to 50 characters' })
      })
      if (new Set(tags).size !== tags.length) errors.push({ field: 'tags', message: 'must NOT have duplicate items' })
    }
  }
  if (published !== undefined && typeof published !== 'boolean') errors.push({ field: 'published', message: 'must be boolean' })
  return errors
}

// ---------------------------------------------------------------- the Express service

function unprocessable (res, errors) {
  return res.status(422).json({ errors })
}

/** The Express application and its store. */
function buildExpressService ({ database = ':memory:', bodyLimit = BODY_LIMIT, users = { [USER]: PASSWORD }, realm = 'articles' } = {}) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', 'strong')
  const store = new ArticleStore(database)
  const json = express.json({ limit: bodyLimit })
  const auth = basicAuth({ users, challenge: true, realm })
  const etagOf = app.get('etag fn')

  // A body that is not JSON is refused (Express would leave req.body undefined).
  function jsonOnly (req, res, next) {
    if (!req.is('application/json')) return res.status(415).json({ errors: [{ field: '', message: 'Content-Type must be application/json' }] })
    next()
  }

  function input (req, res) {
    const errors = validateArticle(req.body)
    if (errors.length > 0) {
      unprocessable(res, errors)
      return undefined
    }
    return { published: false, ...req.body }
  }

  function send (res, stored, status = 200) {
    // No ETag set here: Express hashes the body it sends (strong) and answers 304 itself.
    res.status(status).set('Last-Modified', new Date(stored.updatedAtMs).toUTCString())
    return res.json(stored.article)
  }

  app.get('/articles', (req, res) => {
    const { tag, limit } = req.query
    const errors = []
    if (tag !== undefined && (typeof tag !== 'string' || tag.length < 1 || tag.length > 50)) errors.push({ field: 'tag', message: 'must be 1 to 50 characters' })
    let n = 100
    if (limit !== undefined) {
      n = typeof limit === 'string' && /^-?\d+$/.test(limit) ? Number(limit) : NaN
      if (!Number.isInteger(n)) errors.push({ field: 'limit', message: 'must be integer' })
      else if (n < 1 || n > 100) errors.push({ field: 'limit', message: 'must be 1 to 100' })
    }
    if (errors.length > 0) return unprocessable(res, errors)
    res.json(store.list({ tag, limit: n }))
  })

  app.get('/articles/:id', (req, res) => {
    const stored = store.get(req.params.id)
    if (stored === undefined) return res.status(404).json({ errors: [{ field: '', message: 'Not Found' }] })
    send(res, stored)
  })

  app.post('/articles', auth, jsonOnly, json, (req, res) => {
    const article = input(req, res)
    if (article === undefined) return
    const created = store.create(article)
    if (created === 'duplicate-slug') return unprocessable(res, [{ field: 'slug', message: 'is already used by another article' }])
    res.set('Location', `/articles/${created.article.id}`)
    send(res, created, 201)
  })

  app.put('/articles/:id', auth, jsonOnly, json, (req, res) => {
    const article = input(req, res)
    if (article === undefined) return
    // If-Match against the ETag Express gave the current representation.
    const ifMatch = req.get('if-match')
    if (ifMatch !== undefined) {
      const current = store.get(req.params.id)
      if (current === undefined) return res.status(404).json({ errors: [{ field: '', message: 'Not Found' }] })
      const etag = etagOf(JSON.stringify(current.article))
      if (ifMatch.trim() !== '*' && !ifMatch.split(',').map((s) => s.trim()).includes(etag)) return res.status(412).json({ errors: [{ field: '', message: 'Precondition Failed' }] })
    }
    const result = store.replace(req.params.id, article)
    if (result === 'not-found') return res.status(404).json({ errors: [{ field: '', message: 'Not Found' }] })
    if (result === 'duplicate-slug') return unprocessable(res, [{ field: 'slug', message: 'is already used by another article' }])
    send(res, result)
  })

  // Body parser errors (413 too large, 400 malformed JSON) and anything else.
  app.use((err, req, res, next) => {
    const status = err.status ?? err.statusCode ?? 500
    res.status(status).json({ errors: [{ field: '', message: status >= 500 ? 'Internal Server Error' : err.message }] })
  })

  return { app, store }
}

// ---------------------------------------------------------------- seeded data, variants

// The 2 KB body of the other benchmarks' document.
const BODY_2KB = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(33)
const SEED_COUNT = 10
const ARTICLE_IDS = Array.from({ length: SEED_COUNT }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`)

function seedInput (i) {
  return { slug: `bench-article-${i + 1}`, title: `Benchmark article ${i + 1}`, body: BODY_2KB, tags: ['bench', i % 2 === 0 ? 'even' : 'odd'], published: i % 3 === 0 }
}

/** Seeds SEED_COUNT articles through `create(input)`, with the fixed ids of ARTICLE_IDS. */
async function seed (create) {
  const original = crypto.randomUUID
  let next = 0
  crypto.randomUUID = () => ARTICLE_IDS[next++]
  try {
    for (let i = 0; i < SEED_COUNT; i++) await create(seedInput(i))
  } finally {
    crypto.randomUUID = original
  }
  if (next !== SEED_COUNT) throw new Error('seeding did not use the fixed ids')
}

/** An Express app as bench/server.js expects an app: `listen({ port, host })`, then `server`. */
function listenable (app) {
  const wrapper = {
    server: undefined,
    listen ({ port = 0, host = '127.0.0.1' } = {}) {
      return new Promise((resolve, reject) => {
        const server = app.listen(port, host, (err) => (err ? reject(err) : resolve()))
        wrapper.server = server
      })
    },
    close () {
      return new Promise((resolve) => (wrapper.server === undefined ? resolve() : wrapper.server.close(() => resolve())))
    }
  }
  return wrapper
}

const variants = {
  async express () {
    const { app, store } = buildExpressService()
    await seed((input) => store.create(input))
    return listenable(app)
  },
  async fastify () {
    const { buildService, authFromEnv } = require('../dist/example/app.js')
    const app = await buildService({ database: ':memory:', bodyLimit: BODY_LIMIT, profile: 'spec', auth: authFromEnv({}) })
    await seed(async (input) => {
      const res = await app.inject({ method: 'POST', url: '/articles', headers: { authorization: BASIC, 'content-type': 'application/json' }, payload: input })
      if (res.statusCode !== 201) throw new Error(`seeding: ${res.statusCode} ${res.body}`)
    })
    return app
  }
}

module.exports = { variants, buildExpressService, validateArticle, seed, seedInput, ARTICLE_IDS, BASIC, BODY_2KB }
