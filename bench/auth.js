'use strict'
/**
 * Authentication: the cost of the auth plugin on a protected route.
 *
 *   npm run build && node bench/auth.js
 *
 * (a) GET 2 KB JSON protected by Bearer (trivial verifier) vs the same route open   target >= 0.90
 * (b) the same protected by Basic (one configured user)    vs the same route open   target >= 0.92
 * (c) the suite's Basic vs @fastify/basic-auth (one user, constant-time compare) on bare Fastify  target >= 1.0
 * and an A/A row (the open route against itself).
 * (d) Digest verification throughput of the core, in process (SHA-256, MD5): one nonce,
 *     increasing nonce-counts, the default in-memory nonce-count store.
 *
 * Both sides of a pair run the same app (every plugin of the suite, auth registered);
 * only the route's `config.auth` differs. bench/server.js starts the variants as
 * `auth:<name>`.
 */
const { performance } = require('node:perf_hooks')
const Fastify = require('fastify')
const { comparePaired, printRows } = require('./harness')
const suite = require('../dist/plugins/index.js')
const { createDigest, digestResponse } = require('../dist/lib/auth/digest.js')

const { doc } = require('./fixtures')

const TOKEN = 'bench-token-0123456789abcdef'
const BASIC = 'Basic ' + Buffer.from('bench:bench-password').toString('base64')
const SECRET = 'bench-secret-bench-secret-bench-secret!!'

async function app (routeAuth) {
  const a = Fastify({ ...suite.serverOptions })
  await a.register(suite.httpConventions, {
    auth: {
      realm: 'bench',
      basic: { users: { bench: 'bench-password' } },
      // a trivial verifier: the plugin's own cost is what is measured
      bearer: { verify: (token) => (token === TOKEN ? { subject: 'bench', scopes: ['read'] } : null) },
      digest: { secret: SECRET, users: { bench: 'bench-password' } }
    }
  })
  a.get('/doc', { config: { auth: routeAuth } }, async () => doc)
  return a
}

/**
 * The peer a user would pick for Basic: @fastify/basic-auth on bare Fastify, with the same
 * user, a constant-time password compare, and the same route.
 */
async function basicAuthPeer () {
  const crypto = require('node:crypto')
  const a = Fastify()
  const expected = crypto.createHash('sha256').update('bench-password').digest()
  await a.register(require('@fastify/basic-auth'), {
    authenticate: { realm: 'bench' },
    validate (username, password, _req, _reply, done) {
      const given = crypto.createHash('sha256').update(password).digest()
      if (username === 'bench' && crypto.timingSafeEqual(given, expected)) return done()
      done(new Error('Unauthorized'))
    }
  })
  a.get('/doc', { onRequest: a.basicAuth }, async () => doc)
  return a
}

const variants = {
  basicAuthPeer,
  open: () => app(false),
  bearer: () => app({ schemes: ['bearer'], scopes: ['read'] }),
  basic: () => app({ schemes: ['basic'] })
}

/** Digest verifications per second of the core, for one algorithm. */
async function digestThroughput (algorithm, iterations) {
  const digest = createDigest({ realm: 'bench', secret: SECRET, algorithms: [algorithm] })
  const challenge = digest.challenges()[0]
  const nonce = /nonce="([^"]+)"/.exec(challenge)[1]
  const opaque = /opaque="([^"]+)"/.exec(challenge)[1]
  const lookup = () => ({ password: 'bench-password' })
  const headers = []
  for (let i = 1; i <= iterations; i++) {
    const nc = i.toString(16).padStart(8, '0')
    const cnonce = `c${i}`
    const response = digestResponse({ algorithm, username: 'bench', realm: 'bench', password: 'bench-password', method: 'GET', uri: '/doc', nonce, nc, cnonce, qop: 'auth' })
    headers.push(`Digest username="bench", realm="bench", nonce="${nonce}", uri="/doc", algorithm=${algorithm}, response="${response}", opaque="${opaque}", qop=auth, nc=${nc}, cnonce="${cnonce}"`)
  }
  const start = performance.now()
  for (const h of headers) {
    const r = await digest.verifyAuthorization(h, 'GET', '/doc', lookup)
    if (!r.ok) throw new Error(`verification failed: ${r.reason} ${r.detail}`)
  }
  const seconds = (performance.now() - start) / 1000
  return Math.round(iterations / seconds)
}

async function run () {
  const rows = []
  // The open side gets the very same request (it ignores the header), so the client does equal work.
  const bearer = { path: '/doc', headers: { authorization: `Bearer ${TOKEN}` } }
  const basic = { path: '/doc', headers: { authorization: BASIC } }
  rows.push(await comparePaired('GET 2 KB JSON, Bearer (trivial verifier)', { name: 'Bearer', variant: 'auth:bearer', request: bearer, target: '>= 0.90' }, { name: 'open route', variant: 'auth:open', request: bearer }))
  rows.push(await comparePaired('GET 2 KB JSON, Basic (one user) vs the same route open', { name: 'Basic', variant: 'auth:basic', request: basic, target: '>= 0.92' }, { name: 'open route', variant: 'auth:open', request: basic }))
  rows.push(await comparePaired('GET 2 KB JSON, Basic: the whole suite vs bare Fastify + @fastify/basic-auth', { name: 'suite Basic', variant: 'auth:basic', request: basic, target: '>= 1.0' }, { name: 'Fastify + @fastify/basic-auth', variant: 'auth:basicAuthPeer', request: basic }))
  rows.push(await comparePaired('A/A: the open route against itself', { name: 'open route', variant: 'auth:open', request: basic, target: 'reported' }, { name: 'open route', variant: 'auth:open', extra: { twin: true }, request: basic }))
  const iterations = Number(process.env.BENCH_DIGEST_ITERATIONS ?? 50000)
  for (const algorithm of ['SHA-256', 'MD5']) {
    const ops = await digestThroughput(algorithm, iterations)
    rows.push({ benchmark: `Digest ${algorithm} verifications/s (core, in process)`, a: 'verifyAuthorization', b: '-', aReqPerSec: ops, bReqPerSec: '-', aP99ms: '-', bP99ms: '-', ratio: '-', target: 'reported' })
  }
  return rows
}

module.exports = { run, variants }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
