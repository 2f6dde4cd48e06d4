'use strict'
// One benchmark server variant per process: `node bench/server.js <variant> <json extra>`.
const Fastify = require('fastify')
const suite = require('../dist/plugins/index.js')

const variant = process.argv[2]
const extra = JSON.parse(process.argv[3] ?? '{}')

const { doc, articleBodySchema } = require('./fixtures')

const bodySchema = articleBodySchema(200000)

const variants = {
  // Bare Fastify with the same routes.
  async bare () {
    const app = Fastify()
    routes(app)
    return app
  },
  // Fastify with the suite registered (options in extra.options).
  async suite () {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    routes(app, true)
    // A route with the config a decomposition asks for (bench/allocation.js).
    if (extra.config !== undefined) app.get('/custom', { config: extra.config }, async () => doc)
    return app
  },
  // An app shaped like a real service: one shared schema (addSchema), a body schema that
  // $refs it, a coerced query-string route. Bare Fastify with the same routes.
  // Only the server options the suite gives (no plugin): what spreading them costs.
  async serverOptions () {
    const app = Fastify({ ...suite.serverOptions })
    routes(app)
    return app
  },
  // Bare Fastify with the request decorators the suite adds (extra.names): what a field on every request costs.
  async decorated () {
    const app = Fastify()
    for (const name of extra.names ?? []) app.decorateRequest(name, null)
    routes(app)
    return app
  },
  // Bare Fastify with no-op hooks of the named phases (extra.hooks) on every route, and
  // optionally one that reads request.headers (extra.readHeaders): what a hook, and Node's
  // lazily built headers object, cost a request. extra.suite: the whole suite as well.
  async hooked () {
    const app = Fastify(extra.suite === true ? { ...suite.serverOptions } : {})
    addNoopHooks(app)
    if (extra.suite === true) await app.register(suite.httpConventions, {})
    routes(app, extra.suite === true)
    return app
  },
  // One convention plugin alone, at the root (extra.plugin: its export name).
  async alone () {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite[extra.plugin], extra.options ?? {})
    routes(app)
    return app
  },
  async realBare () {
    const app = Fastify()
    realRoutes(app)
    return app
  },
  async realSuite () {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    realRoutes(app)
    return app
  },
  // The same app without its query-string route: one Ajv instance (strict bodies) instead of
  // two. Against realSuite, it tells what the second instance costs the rest of the process.
  async realSuiteOneAjv () {
    const app = Fastify({ ...suite.serverOptions })
    await app.register(suite.httpConventions, extra.options ?? {})
    realRoutes(app, false)
    return app
  }
}

/** The shared schema of the real-shaped app, as a service declares its resource once. */
const articleSchema = { $id: 'https://bench.example/article.json', ...bodySchema }

function realRoutes (app, query = true) {
  app.addSchema(articleSchema)
  app.get('/doc', async () => doc)
  app.post('/doc', { schema: { body: { $ref: `${articleSchema.$id}#` } } }, async (req, reply) => reply.code(201).send({ ok: true, slug: req.body.slug }))
  if (query) app.get('/search', { schema: { querystring: { type: 'object', additionalProperties: false, properties: { q: { type: 'string', maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 } } } } }, async (req) => ({ q: req.query.q ?? '', limit: req.query.limit }))
}

// No-op hooks of the named phases (extra.hooks), such as an app's other plugins add.
function addNoopHooks (app) {
  for (const phase of extra.hooks ?? []) {
    if (phase === 'onSend') app.addHook('onSend', function noop (_request, _reply, payload, done) { done(null, payload) })
    else app.addHook(phase, function noop (request, _reply, done) { if (extra.readHeaders === true && request.headers['content-length'] !== undefined) return done(new Error('body')); done() })
  }
}

function routes (app, suiteRoute = false) {
  app.get('/doc', async () => doc)
  const off = { config: suiteRoute ? { resourcePolicy: false, contentLength: false, contentType: false, conditional: false } : {} }
  app.get('/plain', off, async () => doc)
  app.post('/doc', { schema: { body: bodySchema } }, async (req, reply) => reply.code(201).send({ ok: true, slug: req.body.slug }))
  app.post('/plain', { ...off, schema: { body: bodySchema } }, async (req, reply) => reply.code(201).send({ ok: true, slug: req.body.slug }))
  // A query-string schema as well, as most services have: the suite then builds both of its
  // validators (strict bodies, coerced query strings), and every row pays what that costs.
  app.get('/search', { schema: { querystring: { type: 'object', properties: { q: { type: 'string', maxLength: 100 }, limit: { type: 'integer', minimum: 1, maximum: 100 } } } } }, async (req) => ({ q: req.query.q ?? '', limit: req.query.limit ?? 10 }))
}

async function main () {
  const build = variants[variant]
  if (build === undefined) {
    // Variants of other benchmarks live in their own modules: bench/<module>.js exports `variants`.
    const [mod, name] = variant.split(':')
    const other = require(`./${mod}.js`).variants[name]
    if (other === undefined) throw new Error(`unknown variant ${variant}`)
    return start(await other(extra))
  }
  return start(await build())
}

async function start (app) {
  await app.listen({ port: 0, host: '127.0.0.1' })
  // The harness asks for this process's CPU time around each round (CPU per request).
  // A measurement window (bench/harness.js, `measure`): from the next request on, this process
  // counts `window` requests and reports the CPU time (user + system, every thread) and the
  // wall time they took. Every variant pays the same counter.
  let served = 0
  let window = null
  app.server.prependListener('request', function countRequest () {
    served++
    if (window === null) return
    if (served === window.from) {
      window.cpu = process.cpuUsage()
      window.t = process.hrtime.bigint()
    } else if (served === window.to) {
      const cpu = process.cpuUsage(window.cpu)
      const ns = Number(process.hrtime.bigint() - window.t)
      window = null
      process.send({ window: { cpuUs: cpu.user + cpu.system, ms: ns / 1e6 } })
    }
  })
  process.on('message', (m) => {
    // bench/allocation.js: a full collection that closes a window of V8's --trace-gc-nvp lines.
    if (m === 'gc') {
      global.gc()
      process.send({ gc: true })
      return
    }
    if (typeof m === 'object' && m !== null && typeof m.window === 'number') window = { from: served + 1, to: served + 1 + m.window, cpu: null, t: 0n }
    else if (m === 'cpu') process.send({ cpu: process.cpuUsage() })
    // bench/allocation.js: the heap's size limit bounds what one GC line can say was allocated.
    else if (m === 'heap') process.send({ heap: require('node:v8').getHeapStatistics().heap_size_limit })
    // A normal exit, so that `node --cpu-prof bench/server.js ...` writes its profile.
    else if (m === 'exit') app.close().then(() => process.exit(0))
  })
  process.send({ port: app.server.address().port })
}

main().catch((err) => { console.error(err); process.exit(1) })

module.exports = { doc, bodySchema }
