'use strict'
/**
 * Conditional requests: the cost of validators and precondition evaluation.
 *
 *   npx tsc -p tsconfig.build.json && node bench/conditional.js
 *
 * (a) GET 2 KB JSON, every plugin of the suite, provider-given ETag   vs bare Fastify           target >= 0.90
 * (b) the same, payload-hashed ETag (@fastify/etag through the suite) vs Fastify + @fastify/etag target >= 1.00
 * (c) a conditional hit (If-None-Match matches: 412, spec profile)    vs the full 200, 2 KB     target >= 1.2
 * (d) the same on a 100 KB document                                    vs the full 200, 100 KB   target >= 3
 * and an A/A row (the provider variant against itself).
 *
 * Targets are decided on the server's CPU time per request (bench/harness.js, comparePaired).
 *
 * Each variant runs in its own process (bench/server.js starts them as `conditional:<variant>`)
 * and bench/harness.js alternates the two sides of a pair (see there).
 */
const Fastify = require('fastify')
const fastifyEtag = require('@fastify/etag')
const { comparePaired, printRows } = require('./harness')
const suite = require('../dist/plugins/index.js')

// The 2 KB JSON document (bench/fixtures.js), and its validators as a store would keep them.
const { doc } = require('./fixtures')
const ETAG = 'a1b2c3-7'
const LAST_MODIFIED = Date.UTC(2024, 0, 15, 12, 45, 26)
const validators = () => ({ etag: ETAG, lastModified: LAST_MODIFIED })
// A 100 KB JSON document: a list of 50 articles of about 2 KB.
const big = Object.freeze({ items: Array.from({ length: 50 }, (_, i) => ({ ...doc, id: `a${i}` })) })

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
  async providedBig (extra = {}) {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    app.get('/doc', { config: { conditional: { validators } } }, async () => big)
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
  const hit = { path: '/doc', headers: { 'if-none-match': `"${ETAG}"` } }
  const rows = []
  rows.push(await comparePaired('(a) GET 2 KB JSON, provider-given ETag',
    { name: 'suite + conditional', variant: 'conditional:provided', request: get, target: '>= 0.90' },
    { name: 'bare Fastify', variant: 'conditional:bare', request: get }))
  rows.push(await comparePaired('(b) GET 2 KB JSON, payload-hashed ETag',
    { name: 'suite + conditional', variant: 'conditional:hashed', request: get, target: '>= 1.00' },
    { name: 'Fastify + @fastify/etag', variant: 'conditional:etagAlone', request: get }))
  rows.push(await comparePaired('(c) conditional hit (412) vs full 200, 2 KB document',
    { name: '412 If-None-Match', variant: 'conditional:provided', request: hit, expectStatus: 412, target: '>= 1.2' },
    { name: 'full 200', variant: 'conditional:provided', request: get }))
  rows.push(await comparePaired('(d) conditional hit (412) vs full 200, 100 KB document',
    { name: '412 If-None-Match', variant: 'conditional:providedBig', request: hit, expectStatus: 412, target: '>= 3' },
    { name: 'full 200', variant: 'conditional:providedBig', request: get }))
  rows.push(await comparePaired('A/A: suite + conditional against itself, GET 2 KB',
    { name: 'suite + conditional', variant: 'conditional:provided', request: get, target: 'reported' },
    { name: 'suite + conditional', variant: 'conditional:provided', extra: { twin: true }, request: get }))
  return rows
}

module.exports = { run, variants }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
