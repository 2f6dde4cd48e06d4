'use strict'
/**
 * PATCH.
 *
 *   npm run build && node bench/patch.js
 *
 * (a) PATCH of a small document (JSON Patch: apply + validate + compare-and-set + respond)
 *     vs a PUT of the same change (body validation + store + respond): ratio printed.
 * (b) the PATCH core vs raw fast-json-patch, in process: target >= 0.8. Both sides do what a
 *     PATCH needs before the write: A what plugins/conventions/patch.ts does (applyJsonPatch
 *     with the plugin's default bounds, the readOnly check, the resource schema); B what a
 *     user does by hand (bench/stack-server.js): fast-json-patch's applyPatch validated and
 *     not mutating (its copy of the document is what makes the patch atomic), the readOnly
 *     members compared, the same validator. A also bounds the patch's cost (operations, size,
 *     depth, shifted elements) and refuses the pointers RFC 6901 forbids that fast-json-patch
 *     takes (an index with a leading zero); B does not. Each side runs in alternating slices,
 *     counted in operations per second of the process's CPU time, so that what else the
 *     machine runs slows neither side. It runs in a fresh process of its own (`node
 *     bench/patch.js --core`), which loads only the two libraries: a process that has loaded
 *     the load generator and run the other benchmarks times both sides slower, and not equally.
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
const { readOnlyViolations } = require('../dist/lib/json-patch.js')

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

/** Operations per second of this process's CPU time (user and system) over a slice of about `ms`. */
function opsPerCpuSecond (fn, ms) {
  let n = 0
  const cpu = process.cpuUsage()
  const end = performance.now() + ms
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) fn()
    n += 100
  }
  const used = process.cpuUsage(cpu)
  return n / ((used.user + used.system) / 1e6)
}

function coreRow () {
  const validate = AjvCompiler()({}, { customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, strict: false } })({ schema, httpPart: 'body' })
  // The plugin's bounds with its defaults: maxDocumentBytes is twice Fastify's 1 MiB body limit.
  const limits = { maxOperations: 1000, maxDepth: 64, maxDocumentBytes: 2 * 1024 * 1024 }
  const ours = () => {
    const r = applyJsonPatch(doc, patch, limits)
    if (!r.ok || readOnlyViolations(doc, r.document, schema).length > 0 || !validate(r.document)) throw new Error('bench patch failed')
  }
  const readOnly = Object.keys(schema.properties).filter((k) => schema.properties[k].readOnly === true)
  const raw = () => {
    const patched = applyPatch(doc, patch, true, false).newDocument
    if (readOnly.some((k) => patched[k] !== doc[k]) || !validate(patched)) throw new Error('bench patch failed')
  }
  for (let i = 0; i < 5000; i++) {
    ours()
    raw()
  }
  // Alternating slices, B first every other round; the ratio is of the medians.
  const a = []
  const b = []
  for (let round = 0; round < 12; round++) {
    if (round % 2 === 0) a.push(opsPerCpuSecond(ours, 400))
    b.push(opsPerCpuSecond(raw, 400))
    if (round % 2 === 1) a.push(opsPerCpuSecond(ours, 400))
  }
  const median = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1]
  const ma = median(a)
  const mb = median(b)
  return { benchmark: 'apply + validate core vs raw applyPatch with the same checks (in process, CPU)', a: 'applyJsonPatch + readOnly + schema', b: 'fast-json-patch applyPatch + readOnly + schema', aReqPerSec: Math.round(ma), bReqPerSec: Math.round(mb), aP99ms: '-', bP99ms: '-', ratio: Number((ma / mb).toFixed(3)), target: '>= 0.80' }
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
