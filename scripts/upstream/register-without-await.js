'use strict'
// The app of the routes proposal (scripts/upstream.js): the suite registered without await,
// then a route with `config.auth`. Prints, as JSON, what a user sees: `ready()`'s rejection,
// or the answer to a request with the route's credentials. Run on stock Fastify, or with
// `--require scripts/upstream/use-patched.js` on a patched copy.
const Fastify = require('fastify')
const suite = require('../../dist/plugins/index.js')

async function main () {
  const app = Fastify({ ...suite.serverOptions })
  app.register(suite.httpConventions, { auth: { realm: 'r', basic: { users: { alice: 'secret' } } } })
  app.delete('/admin', { config: { auth: true } }, async () => 'deleted')
  try {
    await app.ready()
  } catch (err) {
    return { fastify: typeof app.routes === 'function' ? 'with fastify.routes()' : 'stock', ready: 'rejected', message: err.message }
  }
  const res = await app.inject({ method: 'DELETE', url: '/admin', headers: { authorization: 'Basic ' + Buffer.from('alice:secret').toString('base64') } })
  await app.close()
  return { fastify: typeof app.routes === 'function' ? 'with fastify.routes()' : 'stock', ready: 'resolved', status: res.statusCode, body: JSON.parse(res.body) }
}

main().then((out) => process.stdout.write(JSON.stringify(out) + '\n'), (err) => { console.error(err); process.exit(1) })
