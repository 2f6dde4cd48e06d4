'use strict'
/**
 * PATCH.
 *
 *   npm run build && node bench/patch.js
 *
 * (a) PATCH of a small document (JSON Patch: apply + validate + compare-and-set + respond)
 *     vs a PUT of the same change (body validation + store + respond): ratio printed.
 * (b) the apply+validate core (applyJsonPatch + the resource schema) vs raw fast-json-patch
 *     applyPatch (validated operations, not mutating), in process: target >= 0.8. It runs in a
 *     fresh process of its own (`node bench/patch.js --core`), which loads only the two
 *     libraries: a process that has loaded the load generator and run the other benchmarks
 *     times both sides slower, and not equally.
 *
 * bench/server.js starts the variants as `patch:<name>`.
 */
const { performance } = require('node:perf_hooks')
const Fastify = require('fastify')
const AjvCompiler = require('@fastify/ajv-compiler')
const { applyPatch } = require('fast-json-patch')
const { compare, inFreshProcess, printRows } = require('./harness')
const suite = require('../dist/plugins/index.js')
const { applyJsonPatch } = require('../dist/plugins/entries/json-patch.js')

const schema = {
  type: 'object',
  required: ['id', 'slug', 'title', 'tags', 'published'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', readOnly: true },
    slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    tags: { type: 'array', items: { type: 'string', maxLength: 50 }, maxItems: 20 },
    published: { type: 'boolean' }
  }
}
const { readOnly: _r, ...idSchema } = schema.properties.id
const putSchema = { ...schema, properties: { ...schema.properties, id: idSchema } }

const doc = { id: 'a1', slug: 'hello-world', title: 'Hello', tags: ['intro', 'bench'], published: false }
const patch = [{ op: 'replace', path: '/title', value: 'Hello again' }, { op: 'add', path: '/tags/-', value: 'x' }, { op: 'remove', path: '/tags/2' }]
const changed = { ...doc, title: 'Hello again' }

async function app () {
  let current = { document: doc, etag: '"v1"', version: 1 }
  const a = Fastify({ ...suite.serverOptions })
  await a.register(suite.httpConventions)
  a.patch('/doc', {
    config: {
      patch: {
        schema,
        load: () => current,
        save: (_request, document, expected) => {
          if (expected !== current.etag) return false
          current = { document, etag: `"v${current.version + 1}"`, version: current.version + 1 }
          return current
        }
      }
    }
  }, async (request, reply) => reply.header('etag', request.patched.etag).send(request.patched.document))
  a.put('/doc', { schema: { body: putSchema } }, async (request, reply) => {
    current = { document: request.body, etag: `"v${current.version + 1}"`, version: current.version + 1 }
    return reply.header('etag', current.etag).send(current.document)
  })
  return a
}

const variants = { app }

function opsPerSecond (fn, ms = 1500) {
  for (let i = 0; i < 2000; i++) fn()
  let n = 0
  const end = performance.now() + ms
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) fn()
    n += 200
  }
  return n / (ms / 1000)
}

function coreRow () {
  const validate = AjvCompiler()({}, { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, strict: false } })({ schema, httpPart: 'body' })
  const ours = () => {
    const r = applyJsonPatch(doc, patch)
    if (!r.ok || !validate(r.document)) throw new Error('bench patch failed')
  }
  const raw = () => applyPatch(doc, patch, true, false)
  const rounds = []
  for (let i = 0; i < 3; i++) rounds.push([opsPerSecond(ours), opsPerSecond(raw)])
  const med = (k) => rounds.map((r) => r[k]).sort((x, y) => x - y)[1]
  const a = med(0)
  const b = med(1)
  return { benchmark: 'apply + validate core vs raw applyPatch (in process)', a: 'applyJsonPatch + schema', b: 'fast-json-patch applyPatch', aReqPerSec: Math.round(a), bReqPerSec: Math.round(b), aP99ms: '-', bP99ms: '-', ratio: Number((a / b).toFixed(3)), target: '>= 0.80' }
}

async function run () {
  const rows = []
  rows.push(await compare('PATCH small document vs PUT of the same change',
    { name: 'PATCH json-patch', variant: 'patch:app', request: { path: '/doc', method: 'PATCH', headers: { 'content-type': 'application/json-patch+json' }, body: JSON.stringify(patch) }, target: 'printed' },
    { name: 'PUT', variant: 'patch:app', request: { path: '/doc', method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(changed) } }))
  rows.push(await inFreshProcess(__filename, '--core'))
  return rows
}

module.exports = { run, variants }

if (require.main === module && process.argv[2] === '--core') {
  console.log(JSON.stringify(coreRow()))
} else if (require.main === module) {
  run().then((rows) => console.log(printRows(rows)), (err) => { console.error(err); process.exit(1) })
}
