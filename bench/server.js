'use strict'
// One benchmark server variant per process: `node bench/server.js <variant> <json extra>`.
const Fastify = require('fastify')
const suite = require('../dist/plugins/index.js')

const variant = process.argv[2]
const extra = JSON.parse(process.argv[3] ?? '{}')

const { doc } = require('./fixtures')

const bodySchema = {
  type: 'object',
  required: ['slug', 'title', 'body'],
  additionalProperties: false,
  properties: {
    slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    body: { type: 'string', maxLength: 200000 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 20 },
    published: { type: 'boolean' }
  }
}

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
    return app
  }
}

function routes (app, suiteRoute = false) {
  app.get('/doc', async () => doc)
  app.get('/plain', { config: suiteRoute ? { resourcePolicy: false, contentLength: false, contentType: false, conditional: false } : {} }, async () => doc)
  app.post('/doc', { schema: { body: bodySchema } }, async (req, reply) => reply.code(201).send({ ok: true, slug: req.body.slug }))
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
  process.on('message', (m) => { if (m === 'cpu') process.send({ cpu: process.cpuUsage() }) })
  process.send({ port: app.server.address().port })
}

main().catch((err) => { console.error(err); process.exit(1) })

module.exports = { doc, bodySchema }
