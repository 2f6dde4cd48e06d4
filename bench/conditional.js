'use strict'
/**
 * Conditional requests: the cost of validators and precondition evaluation.
 *
 *   npx tsc -p tsconfig.build.json && node bench/conditional.js
 *
 * (a) GET 2 KB JSON, every plugin of the suite, provider-given ETag   vs bare Fastify           target >= 0.90
 * (b) the same, payload-hashed ETag (@fastify/etag through the suite) vs Fastify + @fastify/etag target >= 1.00
 * (c) a conditional hit (If-None-Match matches: 412, spec profile)    vs the full 200           target >= 1.20
 *
 * Each variant runs in its own process (bench/server.js starts them as `conditional:<variant>`)
 * and bench/harness.js alternates the two sides of a pair (see there).
 */
const Fastify = require('fastify')
const fastifyEtag = require('@fastify/etag')
const { compare, printRows } = require('./harness')
const suite = require('../dist/plugins/index.js')

// The 2 KB JSON document (bench/fixtures.js), and its validators as a store would keep them.
const { doc } = require('./fixtures')
const ETAG = 'a1b2c3-7'
const LAST_MODIFIED = Date.UTC(2024, 0, 15, 12, 45, 26)
const validators = () => ({ etag: ETAG, lastModified: LAST_MODIFIED })

const variants = {
  async bare () {
    const app = Fastify()
    app.get('/doc', async () => doc)
    return app
  },
  async etagAlone () {
    const app = Fastify()
    await app.register(fastifyEtag)
    app.get('/doc', async () => doc)
    return app
  },
  async provided (extra = {}) {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    app.get('/doc', { config: { conditional: { validators } } }, async () => doc)
    return app
  },
  async hashed (extra = {}) {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    app.get('/doc', { config: { conditional: true } }, async () => doc)
    return app
  }
}

async function run () {
  const get = { path: '/doc' }
  const rows = []
  rows.push(await compare('(a) GET 2 KB JSON, provider-given ETag',
    { name: 'suite + conditional', variant: 'conditional:provided', request: get, target: '>= 0.90' },
    { name: 'bare Fastify', variant: 'conditional:bare', request: get }))
  rows.push(await compare('(b) GET 2 KB JSON, payload-hashed ETag',
    { name: 'suite + conditional', variant: 'conditional:hashed', request: get, target: '>= 1.00' },
    { name: 'Fastify + @fastify/etag', variant: 'conditional:etagAlone', request: get }))
  rows.push(await compare('(c) conditional hit (412) vs full 200',
    { name: '412 If-None-Match', variant: 'conditional:provided', request: { path: '/doc', headers: { 'if-none-match': `"${ETAG}"` } }, expectStatus: 412, target: '>= 1.20' },
    { name: 'full 200', variant: 'conditional:provided', request: get }))
  return rows
}

module.exports = { run, variants }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
