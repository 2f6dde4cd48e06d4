'use strict'
// Foundation (issue 2): the cost of Content-Type, Content-Length and validation plugins.
const { compare, printRows } = require('./harness')

const body = JSON.stringify({ slug: 'hello-world', title: 'Hello', body: 'x'.repeat(500), tags: ['a', 'b'], published: true })

// The plugins of issue 2 only (errors, Content-Length, Content-Type, validation): the target is their cost.
const FOUNDATION = { options: { conditional: false, patch: false, deltaEncoding: false, redirect: false, resourcePolicy: false } }

async function run () {
  const rows = []
  rows.push(await compare('GET 2 KB JSON', { name: 'suite', variant: 'suite', extra: FOUNDATION, request: { path: '/doc' }, target: '>= 0.90' }, { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' } }))
  const post = { path: '/doc', method: 'POST', headers: { 'content-type': 'application/json' }, body }
  rows.push(await compare('POST JSON + schema validation', { name: 'suite', variant: 'suite', extra: FOUNDATION, request: post, target: '>= 0.90' }, { name: 'bare Fastify', variant: 'bare', request: post }))
  // For information: every plugin of the suite registered (routes opting in to none of them).
  rows.push(await compare('GET 2 KB JSON, every plugin registered', { name: 'whole suite', variant: 'suite', request: { path: '/doc' } }, { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' } }))
  return rows
}

module.exports = { run }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
