'use strict'
/**
 * Cost curves: CPU time and bytes allocated per request against one dimension at a time,
 * the suite against bare Fastify (or, for delta encoding, the 226 against the 200), each
 * written as a table (bench/CURVES.md) and an SVG figure (bench/curves-<name>.svg, made by
 * bench/plot.js) beside it:
 *
 *   body-get      GET of a JSON body of 1 KB to 1 MiB
 *   body-post     POST of a JSON body of 1 KB to 1 MiB, with a body schema (201)
 *   routes        GET 2 KB JSON in an app of 10 to 10,000 routes
 *   connections   GET 2 KB JSON from 1 to 256 connections
 *   delta-fill    A-IM: vcdiff on a 16 KB article, the instance store filled to 0%..100% of
 *                 its capacity before the measured instances are kept
 *
 *   npm run bench:curves                          # every curve (npm run build first: it does)
 *   node bench/curves.js routes connections       # only these curves
 *   BENCH_QUICK=1 node bench/curves.js            # smoke test: 3 points a curve, few requests
 *
 * Each point: CPU per request from bench/harness.js `comparePaired` (one process per side,
 * BENCH_CURVE_ROUNDS paired rounds of BENCH_CURVE_REQUESTS requests; wrk from CPU 1, the
 * server on CPU 0), shown as the median with the smallest and largest round (the repeat
 * spread); bytes per request from bench/allocation.js `measure`, each side in two processes
 * (a twin: the A/A of the bytes), shown as their mean with both values. Large bodies get
 * fewer requests (as many as 32 KB bodies' worth of bytes, at least BENCH_CURVE_MIN).
 * Env: BENCH_OUT (directory of CURVES.md and the SVGs, default bench/).
 */
const fs = require('node:fs')
const path = require('node:path')
const Fastify = require('fastify')
const suite = require('../dist/plugins/index.js')
const { figure } = require('./plot')
const { doc, articleBodySchema } = require('./fixtures')

const KB = 1024
const MiB = 1024 * 1024
// Both sides take bodies up to 2 MiB: the 1 MiB point is a 1 MiB JSON text.
const BODY_LIMIT = 2 * MiB

// ---------------------------------------------------------------- server variants (bench/server.js `curves:<name>`)

/** A JSON article of `size` bytes when serialized. */
function articleOf (size) {
  const base = { slug: 'hello-world', title: 'Hello', tags: ['a', 'b'], published: true, body: '' }
  const overhead = JSON.stringify(base).length
  return { ...base, body: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(Math.ceil(size / 57)).slice(0, Math.max(0, size - overhead)) }
}

const sizedSchema = articleBodySchema(BODY_LIMIT)

/** Fastify with the suite's defaults (every plugin) or bare, taking bodies up to 2 MiB. */
async function app (withSuite) {
  const a = Fastify({ bodyLimit: BODY_LIMIT, ...(withSuite ? suite.serverOptions : {}) })
  if (withSuite) await a.register(suite.httpConventions, {})
  return a
}

/** A 16 KB article of paragraphs; `edited`: one paragraph rewritten (the next version). */
function paragraphs (edited) {
  const words = 'the of and to in is that for request response header server client cache delta encoding instance version resource'.split(' ')
  const out = []
  let s = 7
  for (let p = 0; p < 24; p++) {
    const w = []
    for (let i = 0; i < 110; i++) { s = (s * 1103515245 + 12345) & 0x7fffffff; w.push(words[(s >>> 4) % words.length]) }
    out.push(w.join(' ') + '.')
  }
  if (edited) out[12] = 'This paragraph was rewritten: the delta carries these words and little else.'
  return { id: 'a1', title: 'A long article', body: out.join('\n\n') }
}

const variants = {
  // GET /doc: a JSON body of extra.size bytes; POST /doc: a body schema, 201.
  async sized (extra) {
    const a = await app(extra.suite === true)
    const body = articleOf(extra.size)
    a.get('/doc', async () => body)
    a.post('/doc', { schema: { body: sizedSchema } }, async (req, reply) => reply.code(201).send({ ok: true, slug: req.body.slug }))
    return a
  },
  // extra.n routes in all: n - 1 parametric routes of a REST-shaped API, and GET /doc (2 KB).
  async routes (extra) {
    const a = await app(extra.suite === true)
    for (let i = 0; i < extra.n - 1; i++) a.get(`/r${i}/items/:id`, async (req) => ({ route: i, id: req.params.id }))
    a.get('/doc', async () => doc)
    return a
  },
  // The suite with A-IM on GET /doc; its instance store (a MemoryInstanceStore of
  // extra.capacity bytes) filled to extra.fill of its capacity with other resources' instances.
  // POST /next makes the next version current (the bench records the first as a base).
  async delta (extra) {
    const { MemoryInstanceStore } = require('../dist/plugins/entries/stores.js')
    const capacity = extra.capacity ?? 16 * MiB
    const store = new MemoryInstanceStore({ maxBytes: capacity })
    const unit = 8 * KB
    for (let i = 0; store.bytes + unit <= capacity * extra.fill; i++) {
      await store.set(`/filler/${i}\napplication/json; charset=utf-8\n${i.toString(16).padStart(16, '0')}`, Buffer.alloc(unit, i & 0xff))
    }
    const versions = [paragraphs(false), paragraphs(true)]
    let current = 0
    const a = Fastify({ bodyLimit: BODY_LIMIT, ...suite.serverOptions })
    await a.register(suite.httpConventions, { deltaEncoding: { store } })
    a.get('/doc', { config: { conditional: { validators: () => ({ etag: `v${current + 1}` }) }, deltaEncoding: true } }, async () => versions[current])
    a.post('/next', { config: { contentLength: false, contentType: false } }, async (_req, reply) => { current = 1; return reply.code(204).send() })
    return a
  }
}

// ---------------------------------------------------------------- the curves

const sizeLabel = (b) => (b >= MiB ? `${b / MiB} MiB` : `${b / KB} KB`)
const POST_HEADERS = { 'content-type': 'application/json' }

/** The base of a delta: GET /doc once (the suite keeps the instance), then the next version. */
async function deltaRequest (server) {
  const url = `http://127.0.0.1:${server.port}`
  // As a delta client: A-IM from the first GET, so that the server keeps the base.
  const first = await fetch(`${url}/doc`, { headers: { 'a-im': 'vcdiff' } })
  await first.arrayBuffer()
  const etag = first.headers.get('etag')
  if (etag === null) throw new Error('GET /doc gave no ETag')
  const next = await fetch(`${url}/next`, { method: 'POST' })
  await next.arrayBuffer()
  return { path: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': etag } }
}

/**
 * Each curve: its points (full and quick), and the two sides of a point. `bytesOf(x)`: the
 * bytes each request carries, which sets how many requests a point gets.
 */
const CURVES = {
  'body-get': {
    title: 'GET of a JSON body, 1 KB to 1 MiB: the whole suite vs bare Fastify',
    xLabel: 'response body size',
    xFormat: sizeLabel,
    points: [KB, 4 * KB, 16 * KB, 64 * KB, 256 * KB, MiB],
    quick: [KB, 32 * KB, MiB],
    bytesOf: (x) => x,
    sides: (x) => [
      { name: 'whole suite', variant: 'curves:sized', extra: { suite: true, size: x }, request: { path: '/doc' } },
      { name: 'bare Fastify', variant: 'curves:sized', extra: { suite: false, size: x }, request: { path: '/doc' } }
    ]
  },
  'body-post': {
    title: 'POST JSON with a body schema (201), 1 KB to 1 MiB: the whole suite vs bare Fastify',
    xLabel: 'request body size',
    xFormat: sizeLabel,
    points: [KB, 4 * KB, 16 * KB, 64 * KB, 256 * KB, MiB],
    quick: [KB, 32 * KB, MiB],
    bytesOf: (x) => x,
    sides: (x) => {
      const request = { path: '/doc', method: 'POST', headers: POST_HEADERS, body: JSON.stringify(articleOf(x)) }
      return [
        { name: 'whole suite', variant: 'curves:sized', extra: { suite: true, size: KB }, request, expectStatus: 201 },
        { name: 'bare Fastify', variant: 'curves:sized', extra: { suite: false, size: KB }, request, expectStatus: 201 }
      ]
    }
  },
  routes: {
    title: 'GET 2 KB JSON in an app of 10 to 10,000 routes: the whole suite vs bare Fastify',
    xLabel: 'routes in the app',
    points: [10, 100, 1000, 10000],
    quick: [10, 1000, 10000],
    sides: (x) => [
      { name: 'whole suite', variant: 'curves:routes', extra: { suite: true, n: x }, request: { path: '/doc' } },
      { name: 'bare Fastify', variant: 'curves:routes', extra: { suite: false, n: x }, request: { path: '/doc' } }
    ]
  },
  connections: {
    title: 'GET 2 KB JSON from 1 to 256 connections: the whole suite vs bare Fastify',
    xLabel: 'connections (wrk)',
    points: [1, 4, 16, 64, 256],
    quick: [1, 16, 256],
    connections: (x) => x,
    sides: () => [
      { name: 'whole suite', variant: 'suite', extra: { options: {} }, request: { path: '/doc' } },
      { name: 'bare Fastify', variant: 'bare', request: { path: '/doc' } }
    ]
  },
  'delta-fill': {
    title: 'A-IM: vcdiff, 16 KB article, instance store (16 MiB) filled 0-100%: the 226 vs the 200',
    xLabel: 'instance store fill before the measured instances',
    xFormat: (x) => `${Math.round(x * 100)}%`,
    logX: false,
    points: [0, 0.25, 0.5, 0.75, 1],
    quick: [0, 0.5, 1],
    // One process: the 226 and the 200 of the same store.
    sides: (x) => [
      { name: '226, A-IM: vcdiff', variant: 'curves:delta', extra: { fill: x }, request: deltaRequest, expectStatus: 226 },
      { name: '200, no A-IM', variant: 'curves:delta', extra: { fill: x }, request: { path: '/doc' } }
    ]
  }
}

// ---------------------------------------------------------------- measuring

function num (v, d) {
  return v === undefined || v === '' ? d : Number(v)
}

function settings (quick) {
  const env = process.env
  return {
    quick,
    rounds: num(env.BENCH_CURVE_ROUNDS, quick ? 2 : 3),
    requests: num(env.BENCH_CURVE_REQUESTS, quick ? 600 : 5000),
    min: num(env.BENCH_CURVE_MIN, quick ? 100 : 300),
    warmup: num(env.BENCH_CURVE_WARMUP, quick ? 200 : 1000),
    window: num(env.BENCH_CURVE_WINDOW, quick ? 400 : 4000)
  }
}

/** Requests of a point: fewer for large bodies (as many bytes as 32 KB bodies would carry). */
function scaled (n, bytes, min) {
  return bytes === undefined || bytes <= 32 * KB ? n : Math.max(min, Math.round(n * 32 * KB / bytes))
}

/** One point: CPU of both sides (paired rounds, one process each) and bytes (each side twice). */
async function point (curve, x, s) {
  const { comparePaired } = require('./harness')
  const allocation = require('./allocation')
  const [a, b] = curve.sides(x)
  const bytes = curve.bytesOf?.(x)
  const cpu = await comparePaired(`${curve.title}: ${x}`, a, b, {
    processes: 1,
    rounds: s.rounds,
    requests: scaled(s.requests, bytes, s.min),
    ...(curve.connections ? { connections: curve.connections(x) } : {})
  })
  const alloc = { warmup: scaled(s.warmup, bytes, Math.min(s.min, s.warmup)), window: scaled(s.window, bytes, s.min) }
  const twice = async (side) => {
    const one = await allocation.measure({ ...side, name: side.name }, alloc)
    const two = await allocation.measure({ ...side, name: `${side.name} (twin)`, extra: { ...side.extra, twin: true } }, alloc)
    // null where the GC trace was refused twice (bench/allocation.js `readWindow`)
    return [allocation.wholeBytes(one), allocation.wholeBytes(two)]
  }
  return {
    x,
    a: { cpu: cpu.aCpuUs, cpuLo: cpu.aCpuRange[0], cpuHi: cpu.aCpuRange[1], bytes: await twice(a) },
    b: { cpu: cpu.bCpuUs, cpuLo: cpu.bCpuRange[0], cpuHi: cpu.bCpuRange[1], bytes: await twice(b) },
    cpuRatio: cpu.cpuRatio,
    requests: scaled(s.requests, bytes, s.min),
    window: alloc.window
  }
}

const mean = (xs) => xs.reduce((t, v) => t + v, 0) / xs.length
const { UNMEASURED } = require('./allocation')
/** A point whose four byte figures were all read from a trusted GC trace (the others are not drawn). */
const measured = (p) => [...p.a.bytes, ...p.b.bytes].every((x) => x !== null)
const r1 = (v) => Number(v.toFixed(1))

function table (curve, points) {
  const [a, b] = curve.sides(curve.points[0]).map((s) => s.name)
  const fmt = curve.xFormat ?? String
  const lines = [
    `| ${curve.xLabel} | ${a}: CPU µs/req (min-max) | ${b}: CPU µs/req (min-max) | B/A CPU | ${a}: B/req (twin) | ${b}: B/req (twin) | A/B bytes | requests a round, bytes window |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const p of points) {
    const b = (x) => x ?? UNMEASURED
    const ratio = measured(p) ? (mean(p.a.bytes) / mean(p.b.bytes)).toFixed(3) : UNMEASURED
    lines.push(`| ${fmt(p.x)} | ${p.a.cpu} (${r1(p.a.cpuLo)}-${r1(p.a.cpuHi)}) | ${p.b.cpu} (${r1(p.b.cpuLo)}-${r1(p.b.cpuHi)}) | ${p.cpuRatio} | ${b(p.a.bytes[0])} (${b(p.a.bytes[1])}) | ${b(p.b.bytes[0])} (${b(p.b.bytes[1])}) | ${ratio} | ${p.requests}, ${p.window} |`)
  }
  return lines.join('\n')
}

function chart (curve, points, quick) {
  const names = curve.sides(curve.points[0]).map((s) => s.name)
  const series = (key, pick) => names.map((name, i) => ({ name, points: (key === 'bytes' ? points.filter(measured) : points).map((p) => pick(p[i === 0 ? 'a' : 'b'], p.x)) }))
  const base = { xLabel: curve.xLabel, xFormat: curve.xFormat, logX: curve.logX }
  return figure({
    title: curve.title,
    subtitle: `median of paired rounds, bar: smallest to largest round (CPU) or the two twin processes (bytes)${quick ? '; quick mode, a smoke test' : ''}`,
    panels: [
      { ...base, yLabel: 'CPU µs per request', series: series('cpu', (s, x) => ({ x, y: s.cpu, lo: s.cpuLo, hi: s.cpuHi })) },
      { ...base, yLabel: 'KB allocated per request', series: series('bytes', (s, x) => ({ x, y: mean(s.bytes) / KB, lo: Math.min(...s.bytes) / KB, hi: Math.max(...s.bytes) / KB })) },
      // What the first line costs over the second, per request: the curves' question
      {
        ...base,
        logY: false,
        yLabel: `${names[0]} / ${names[1]}, per request`,
        series: [
          { name: 'CPU (medians)', points: points.map((p) => ({ x: p.x, y: Number((p.a.cpu / p.b.cpu).toFixed(3)) })) },
          { name: 'bytes (twin means)', points: points.filter(measured).map((p) => ({ x: p.x, y: Number((mean(p.a.bytes) / mean(p.b.bytes)).toFixed(3)) })) }
        ]
      }
    ]
  })
}

async function run ({ only = Object.keys(CURVES), quick = process.env.BENCH_QUICK === '1', outDir = process.env.BENCH_OUT ?? __dirname, log = (line) => process.stderr.write(line + '\n') } = {}) {
  for (const name of only) if (CURVES[name] === undefined) throw new Error(`unknown curve ${name}; curves: ${Object.keys(CURVES).join(', ')}`)
  const s = settings(quick)
  const started = new Date()
  const out = {}
  for (const name of only) {
    const curve = CURVES[name]
    const points = []
    for (const x of quick ? curve.quick : curve.points) {
      log(`curves: ${name} at ${(curve.xFormat ?? String)(x)}`)
      points.push(await point(curve, x, s))
    }
    out[name] = points
    fs.mkdirSync(outDir, { recursive: true })
    fs.writeFileSync(path.join(outDir, `curves-${name}.svg`), chart(curve, points, quick))
  }
  const md = ['# Cost curves', '',
    `Written by \`bench/curves.js\` (\`npm run bench:curves\`) on ${started.toISOString()}, Node.js ${process.version}${quick ? '. **Quick mode (BENCH_QUICK=1): a smoke test, not a measurement.**' : '.'}`, '',
    `Per point: CPU µs per request of each side, the median of ${s.rounds} paired rounds in one process per side (bench/harness.js \`comparePaired\`: wrk on CPU 1, the server on CPU 0), with the smallest and largest round; B/A CPU above 1: A costs less. ` +
    'Bytes allocated per request (bench/allocation.js): each side in two processes, the second in brackets (a twin: the A/A of the bytes). Large bodies get fewer requests a round (the last column).', '']
  for (const name of only) md.push(`## ${CURVES[name].title}`, '', `![${name}](curves-${name}.svg)`, '', table(CURVES[name], out[name]), '')
  fs.writeFileSync(path.join(outDir, 'CURVES.md'), md.join('\n'))
  return out
}

module.exports = { run, variants, CURVES, articleOf }

if (require.main === module) {
  const only = process.argv.slice(2)
  run(only.length > 0 ? { only } : {}).then(() => {
    const dir = process.env.BENCH_OUT ?? __dirname
    console.log(fs.readFileSync(path.join(dir, 'CURVES.md'), 'utf8'))
  }, (err) => { console.error(err); process.exit(1) })
}
