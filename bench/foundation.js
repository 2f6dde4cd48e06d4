'use strict'
// Foundation (issue 2): the cost of Content-Type, Content-Length and validation plugins.
const { compare, printRows } = require('./harness')

const body = JSON.stringify({ slug: 'hello-world', title: 'Hello', body: 'x'.repeat(500), tags: ['a', 'b'], published: true })

async function run () {
  const rows = []
  rows.push(await compare('GET 2 KB JSON', { name: 'suite', variant: 'suite', request: { path: '/doc' }, target: '>= 0.90' }, { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' } }))
  const post = { path: '/doc', method: 'POST', headers: { 'content-type': 'application/json' }, body }
  rows.push(await compare('POST JSON + schema validation', { name: 'suite', variant: 'suite', request: post, target: '>= 0.90' }, { name: 'bare Fastify', variant: 'bare', request: post }))
  return rows
}

module.exports = { run }

if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
