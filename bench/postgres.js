'use strict'
/**
 * The reference service's articles routes on PostgreSQL next to the same service on
 * SQLite (its default store), side by side (bench/harness.js).
 *
 *   npm run build && node bench/postgres.js
 *   node bench/report.js postgres                  # as a section of the report
 *
 * PostgreSQL 15 is started by this module (scripts/fleet.js startPostgres: a temporary
 * cluster on 127.0.0.1) unless BENCH_DATABASE_URL names one (every server process gets its
 * own database there, so the role needs CREATEDB). Durability is set alike on both sides:
 * SQLite runs WAL with synchronous=NORMAL (no fsync per commit), PostgreSQL
 * synchronous_commit=off (no WAL flush per commit); both keep a consistent database after
 * a crash and may lose the last commits.
 *
 * `variants` (started by bench/server.js as `postgres:<name>`), seeded like the Express
 * comparison (bench/express-service.js: 10 articles of 2 KB with fixed ids):
 *   sqlite     the service on a SQLite file in a temporary directory
 *   postgres   the service on a fresh database of `extra.adminUrl`
 */
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { compare, printRows } = require('./harness')
const { seed, BASIC, BODY_2KB, ARTICLE_IDS } = require('./express-service')

const BODY_LIMIT = 1048576

async function service (config) {
  const { buildService, authFromEnv } = require('../dist/example/app.js')
  const app = await buildService({ bodyLimit: BODY_LIMIT, profile: 'spec', auth: authFromEnv({}), ...config })
  await seed(async (input) => {
    const res = await app.inject({ method: 'POST', url: '/articles', headers: { authorization: BASIC, 'content-type': 'application/json' }, payload: input })
    if (res.statusCode !== 201) throw new Error(`seeding: ${res.statusCode} ${res.body}`)
  })
  return app
}

const variants = {
  async sqlite () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sqlite-'))
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
    return service({ database: path.join(dir, 'articles.db') })
  },
  async postgres (extra = {}) {
    const pg = require('pg')
    const name = `bench_${process.pid}`
    const admin = new pg.Client({ connectionString: extra.adminUrl })
    await admin.connect()
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)}`)
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`)
    } finally {
      await admin.end()
    }
    const url = new URL(extra.adminUrl)
    url.pathname = `/${name}`
    return service({ database: ':memory:', databaseUrl: url.toString() })
  }
}

let postCounter = 0
const writeHeaders = { authorization: BASIC, 'content-type': 'application/json' }
const ROUTES = [
  { title: 'GET /articles/:id (2 KB article)', request: { path: `/articles/${ARTICLE_IDS[0]}` } },
  { title: 'GET /articles (10 articles, 21 KB)', request: { path: '/articles' } },
  {
    title: 'POST /articles (insert)',
    request: {
      path: '/articles',
      method: 'POST',
      headers: writeHeaders,
      body: JSON.stringify({ slug: 'post-0', title: 'A new article', body: BODY_2KB.slice(0, 1000), tags: ['bench'], published: true }),
      setupRequest: (req) => ({ ...req, body: JSON.stringify({ slug: `pg-post-${process.pid}-${++postCounter}`, title: 'A new article', body: BODY_2KB.slice(0, 1000), tags: ['bench'], published: true }) })
    },
    expectStatus: 201
  },
  {
    title: 'PUT /articles/:id (read, replace)',
    request: { path: `/articles/${ARTICLE_IDS[1]}`, method: 'PUT', headers: writeHeaders, body: JSON.stringify({ slug: 'bench-article-2', title: 'Replaced', body: BODY_2KB, tags: ['bench', 'odd'], published: false }) }
  }
]

/** Runs every route on both stores; starts (and stops) PostgreSQL unless BENCH_DATABASE_URL is set. */
async function run ({ rounds, duration } = {}) {
  let adminUrl = process.env.BENCH_DATABASE_URL
  let server
  if (adminUrl === undefined || adminUrl === '') {
    const { startPostgres } = require('../scripts/fleet.js')
    server = await startPostgres({ settings: { synchronous_commit: 'off', shared_buffers: "'128MB'" } })
    adminUrl = server.url
  }
  const rows = []
  try {
    for (const route of ROUTES) {
      const row = await compare(route.title,
        { name: 'PostgreSQL', variant: 'postgres:postgres', extra: { adminUrl }, request: route.request, expectStatus: route.expectStatus },
        { name: 'SQLite', variant: 'postgres:sqlite', request: route.request, expectStatus: route.expectStatus },
        { rounds, duration })
      rows.push(row)
    }
  } finally {
    await server?.stop()
  }
  return rows
}

module.exports = { run, variants, ROUTES }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
