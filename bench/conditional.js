'use strict'
/**
 * Conditional requests (issue 3): the cost of validators and precondition evaluation.
 *
 *   npx tsc -p tsconfig.build.json && node bench/conditional.js
 *
 * (a) GET 2 KB JSON, every plugin of the suite, provider-given ETag   vs bare Fastify           target >= 0.90
 * (b) the same, payload-hashed ETag (@fastify/etag through the suite) vs Fastify + @fastify/etag target >= 1.00
 * (c) a conditional hit (If-None-Match matches: 412, spec profile)    vs the full 200           target >= 1.20
 *
 * Each variant runs in its own process (this file, `--serve <variant>`; bench/server.js
 * can start them too as `conditional:<variant>`). The two sides of a pair alternate for
 * BENCH_ROUNDS rounds of BENCH_SECONDS each; the ratio is taken of the medians. Requests
 * are pipelined (BENCH_PIPELINING, default 10) so that the server, not autocannon sharing
 * the machine, is the bottleneck.
 */
const { fork } = require('node:child_process')
const Fastify = require('fastify')
const fastifyEtag = require('@fastify/etag')
const autocannon = require('autocannon')
const suite = require('../dist/plugins/index.js')

// The 2 KB JSON document of bench/server.js, and its validators as a store would keep them.
const doc = {
  id: 'a1b2c3',
  slug: 'hello-world',
  title: 'Hello',
  tags: ['intro', 'bench'],
  published: true,
  body: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(33)
}
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

function startServer (variant) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--serve', variant], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', (m) => resolve({ port: m.port, stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill() }) }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench server ${variant} exited with ${code}`)))
  })
}

function load (port, side, duration) {
  return new Promise((resolve, reject) => {
    autocannon({
      url: `http://127.0.0.1:${port}${side.request.path}`,
      headers: side.request.headers,
      connections: 20,
      pipelining: Number(process.env.BENCH_PIPELINING ?? 10),
      duration
    }, (err, result) => {
      if (err) return reject(err)
      const expected = side.expectStatus ?? 200
      const total = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']
      if (result.errors > 0 || total === 0 || result[`${Math.floor(expected / 100)}xx`] !== total) {
        return reject(new Error(`${side.name}: expected only ${expected} answers`))
      }
      resolve(result)
    })
  })
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Two variants side by side: alternating rounds, medians, ratio a/b. */
async function compare (title, a, b) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
  const duration = Number(process.env.BENCH_SECONDS ?? 3)
  const sa = await startServer(a.variant)
  const sb = await startServer(b.variant)
  const r = { a: [], b: [], pa: [], pb: [] }
  try {
    await load(sa.port, a, 1)
    await load(sb.port, b, 1)
    for (let i = 0; i < rounds; i++) {
      const ra = await load(sa.port, a, duration)
      const rb = await load(sb.port, b, duration)
      r.a.push(ra.requests.average)
      r.b.push(rb.requests.average)
      r.pa.push(ra.latency.p99)
      r.pb.push(rb.latency.p99)
    }
  } finally {
    await sa.stop()
    await sb.stop()
  }
  return {
    benchmark: title,
    a: a.name,
    b: b.name,
    aReqPerSec: Math.round(median(r.a)),
    bReqPerSec: Math.round(median(r.b)),
    aP99ms: median(r.pa),
    bP99ms: median(r.pb),
    ratio: Number((median(r.a) / median(r.b)).toFixed(3)),
    target: a.target
  }
}

function printRows (rows) {
  const lines = ['| benchmark | A | B | A req/s | B req/s | A p99 ms | B p99 ms | A/B | target |', '|---|---|---|---:|---:|---:|---:|---:|---|']
  for (const r of rows) lines.push(`| ${r.benchmark} | ${r.a} | ${r.b} | ${r.aReqPerSec} | ${r.bReqPerSec} | ${r.aP99ms} | ${r.bP99ms} | ${r.ratio} | ${r.target} |`)
  return lines.join('\n')
}

async function serve (variant) {
  const app = await variants[variant]()
  await app.listen({ port: 0, host: '127.0.0.1' })
  process.send({ port: app.server.address().port })
}

async function run () {
  const get = { path: '/doc' }
  const rows = []
  rows.push(await compare('(a) GET 2 KB JSON, provider-given ETag',
    { name: 'suite + conditional', variant: 'provided', request: get, target: '>= 0.90' },
    { name: 'bare Fastify', variant: 'bare', request: get }))
  rows.push(await compare('(b) GET 2 KB JSON, payload-hashed ETag',
    { name: 'suite + conditional', variant: 'hashed', request: get, target: '>= 1.00' },
    { name: 'Fastify + @fastify/etag', variant: 'etagAlone', request: get }))
  rows.push(await compare('(c) conditional hit (412) vs full 200',
    { name: '412 If-None-Match', variant: 'provided', request: { path: '/doc', headers: { 'if-none-match': `"${ETAG}"` } }, expectStatus: 412, target: '>= 1.20' },
    { name: 'full 200', variant: 'provided', request: get }))
  return rows
}

module.exports = { run, variants }

if (require.main === module && process.argv[2] === '--serve') {
  serve(process.argv[3]).catch((err) => { console.error(err); process.exit(1) })
} else if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
