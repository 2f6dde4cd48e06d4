'use strict'
// Foundation: what the suite costs a route, with every plugin registered, next to bare Fastify.
const { comparePaired, printRows } = require('./harness')

const body = JSON.stringify({ slug: 'hello-world', title: 'Hello', body: 'x'.repeat(500), tags: ['a', 'b'], published: true })

// Every convention plugin registered (the umbrella's defaults): the cost a service pays for the suite.
const WHOLE = { options: {} }

async function run () {
  const rows = []
  rows.push(await comparePaired('GET 2 KB JSON, every plugin registered', { name: 'whole suite', variant: 'suite', extra: WHOLE, request: { path: '/doc' }, target: '>= 0.95' }, { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' } }))
  const post = { path: '/doc', method: 'POST', headers: { 'content-type': 'application/json' }, body }
  rows.push(await comparePaired('POST JSON + body schema, every plugin registered', { name: 'whole suite', variant: 'suite', extra: WHOLE, request: post, expectStatus: 201, target: '>= 0.93' }, { name: 'bare Fastify', variant: 'bare', request: post, expectStatus: 201 }))
  // A route that turns off the conventions that apply to every route by default (resource
  // policy, Content-Length, Content-Type, "not modified"): it gets no hook of its own.
  rows.push(await comparePaired('GET 2 KB JSON, a route that uses no convention', { name: 'whole suite', variant: 'suite', extra: WHOLE, request: { path: '/plain' }, target: '>= 0.98' }, { name: 'bare Fastify', variant: 'bare', request: { path: '/plain' } }))
  // Where a POST's cost comes from: each plugin alone, and the suite with the route's
  // conventions off (its body reader and error mapping stay), each against bare Fastify.
  const parts = [
    ['the Content-Length plugin alone', { variant: 'alone', extra: { plugin: 'httpConventionsContentLength' } }],
    ['the Content-Type plugin alone (the suite\'s body reader)', { variant: 'alone', extra: { plugin: 'httpConventionsContentType' } }],
    ['the Validation plugin alone', { variant: 'alone', extra: { plugin: 'httpConventionsValidation' } }],
    ['whole suite, route with every convention off', { variant: 'suite', extra: WHOLE, path: '/plain' }]
  ]
  for (const [name, v] of parts) {
    const request = { ...post, path: v.path ?? '/doc' }
    rows.push(await comparePaired(`POST decomposition: ${name}`, { name, variant: v.variant, extra: v.extra, request, expectStatus: 201, target: 'reported' }, { name: 'bare Fastify', variant: 'bare', request, expectStatus: 201 }))
  }
  // A/A: two sets of processes of the same server: how far apart identical sides land in this
  // run (the noise floor every ratio above should be read against on a shared machine).
  rows.push(await comparePaired('A/A: bare Fastify against bare Fastify, GET 2 KB', { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' }, target: 'reported' }, { name: 'bare Fastify', variant: 'bare', extra: { twin: true }, request: { path: '/doc' } }))
  return rows
}

module.exports = { run }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
