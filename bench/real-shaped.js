'use strict'
/**
 * An app shaped like a real service, with the whole suite and without it (bench/server.js,
 * `realSuite` and `realBare`): one shared schema (`addSchema`), a body schema that `$ref`s
 * it, a coerced query-string route (`?limit=5` is the integer 5). Such an app builds both of
 * the suite's Ajv instances (strict bodies, coerced query strings), both holding the shared
 * schema, as the reference service does.
 */
const { comparePaired, printRows } = require('./harness')

const body = JSON.stringify({ slug: 'hello-world', title: 'Hello', body: 'x'.repeat(500), tags: ['a', 'b'], published: true })

async function run () {
  const rows = []
  const suite = { name: 'whole suite', variant: 'realSuite' }
  const bare = { name: 'bare Fastify', variant: 'realBare' }
  rows.push(await comparePaired('real-shaped app: GET 2 KB JSON', { ...suite, request: { path: '/doc' }, target: '>= 0.95' }, { ...bare, request: { path: '/doc' } }))
  const post = { path: '/doc', method: 'POST', headers: { 'content-type': 'application/json' }, body }
  rows.push(await comparePaired('real-shaped app: POST JSON + schema ($ref to a shared schema)', { ...suite, request: post, expectStatus: 201, target: '>= 0.93' }, { ...bare, request: post, expectStatus: 201 }))
  rows.push(await comparePaired('real-shaped app: GET ?limit=5 (coerced query string)', { ...suite, request: { path: '/search?limit=5' }, target: '>= 0.98' }, { ...bare, request: { path: '/search?limit=5' } }))
  // What the second Ajv instance costs the whole process: the same app without its query route.
  rows.push(await comparePaired('real-shaped app, GET 2 KB: two Ajv instances against one', { name: 'with the query route', variant: 'realSuite', request: { path: '/doc' }, target: 'reported' }, { name: 'without it', variant: 'realSuiteOneAjv', request: { path: '/doc' } }))
  rows.push(await comparePaired('A/A: the whole suite against itself, real-shaped GET 2 KB', { ...suite, request: { path: '/doc' }, target: 'reported' }, { ...suite, extra: { twin: true }, request: { path: '/doc' } }))
  return rows
}

module.exports = { run }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
