'use strict'
// Bytes allocated per request: steady where CPU time is not (a shared machine). Each variant
// runs in its own process under V8's `--trace-gc-nvp`; a full collection (`global.gc()`) opens
// and closes a window of exactly N keep-alive requests after a warm-up, and the window's
// `allocated=` fields are summed (each is what was allocated since the collection before).
// Run: `npm run build && node bench/allocation.js` (or as the "allocation" section of npm run bench).
const { fork } = require('node:child_process')
const path = require('node:path')
const { Pool } = require('undici')

const WARMUP = 3000
const WINDOW = 20000
const CONNECTIONS = 4

const POST_VARIANTS = [
  { name: 'POST: bare Fastify', variant: 'bare', path: '/doc', method: 'POST' },
  { name: 'POST: bare Fastify (A/A twin)', variant: 'bare', path: '/doc', method: 'POST', extra: { twin: true } },
  { name: 'POST: + Content-Length plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsContentLength' } },
  { name: 'POST: + Content-Type plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsContentType' } },
  { name: 'POST: + Validation plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsValidation' } },
  { name: 'POST: + whole suite', variant: 'suite', path: '/doc', method: 'POST', extra: { options: {} } }
]

const VARIANTS = [
  { name: 'bare Fastify', variant: 'bare', path: '/doc' },
  { name: 'bare Fastify (A/A twin)', variant: 'bare', path: '/doc', extra: { twin: true } },
  { name: '+ three request decorators (null)', variant: 'decorated', path: '/doc', extra: { names: ['patched', 'preconditions', 'parsedContentType'] } },
  { name: '+ a no-op onRequest hook', variant: 'hooked', path: '/doc', extra: { hooks: ['onRequest'] } },
  { name: '+ a no-op onSend hook', variant: 'hooked', path: '/doc', extra: { hooks: ['onSend'] } },
  { name: '+ an onRequest hook that reads request.headers', variant: 'hooked', path: '/doc', extra: { hooks: ['onRequest'], readHeaders: true } },
  { name: '+ serverOptions only', variant: 'serverOptions', path: '/doc' },
  { name: '+ Content-Length plugin alone', variant: 'alone', path: '/doc', extra: { plugin: 'httpConventionsContentLength' } },
  { name: '+ whole suite, route with every convention off', variant: 'suite', path: '/plain', extra: { options: {} } },
  { name: '+ whole suite, only the resource policy on', variant: 'suite', path: '/custom', extra: { options: {}, config: { contentLength: false, contentType: false, conditional: false } } },
  { name: '+ whole suite, only Content-Length on', variant: 'suite', path: '/custom', extra: { options: {}, config: { resourcePolicy: false, contentType: false, conditional: false } } },
  { name: '+ whole suite, only Content-Type on', variant: 'suite', path: '/custom', extra: { options: {}, config: { resourcePolicy: false, contentLength: false, conditional: false } } },
  { name: '+ whole suite, default route', variant: 'suite', path: '/doc', extra: { options: {} } }
]

function start (variant, extra) {
  const child = fork(path.join(__dirname, 'server.js'), [variant, JSON.stringify(extra ?? {})], {
    execArgv: ['--expose-gc', '--trace-gc', '--trace-gc-nvp'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  const next = (key) => new Promise((resolve) => {
    const on = (m) => { if (m !== null && typeof m === 'object' && key in m) { child.off('message', on); resolve(m) } }
    child.on('message', on)
  })
  return { child, next, output: () => out }
}

const POST_BODY = JSON.stringify({ slug: 'hello-world', title: 'Hello', body: 'x'.repeat(500), tags: ['a', 'b'], published: true })

let uniques = 0

/**
 * Sends `n` requests of variant `v`: its `request` ({ path, method, headers, body, unique }, as
 * bench/harness.js takes them: `unique` is a string of the body each request replaces with a
 * value of its own), else a GET of `v.path` or the POST body to it. With `v.expectStatus`, any
 * other status is an error.
 */
async function drive (pool, v, n) {
  let left = n
  const request = v.request ?? (v.method === 'POST'
    ? { path: v.path, method: 'POST', headers: { 'content-type': 'application/json' }, body: POST_BODY }
    : { path: v.path, method: 'GET' })
  const { unique, ...fixed } = { method: 'GET', ...request }
  const next = unique === undefined ? () => fixed : () => ({ ...fixed, body: fixed.body.replace(unique, `a${process.pid.toString(36)}-${++uniques}`) })
  async function worker () {
    while (left-- > 0) {
      const res = await pool.request(next())
      await res.body.dump()
      if (v.expectStatus !== undefined && res.statusCode !== v.expectStatus) throw new Error(`${v.name}: expected ${v.expectStatus}, got ${res.statusCode}`)
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
}

/** Sums `allocated=` of the GC lines from the line after `from` characters up to the end. */
function allocatedSince (text, from) {
  let sum = 0
  // `allocated=N` (name=value lines, Node 22 and 24) or `"allocated":N` (JSON lines, Node 26).
  for (const m of text.slice(from).matchAll(/(?:\ballocated=|"allocated":)(\d+)/g)) sum += Number(m[1])
  return sum
}

/**
 * Bytes (and CPU µs) per request of variant `v` in a fresh server process. `v.request` may be
 * a function of the started server ({ port }) that resolves the request.
 */
async function measure (v, { warmup = WARMUP, window = WINDOW } = {}) {
  const server = start(v.variant, v.extra)
  const { port } = await server.next('port')
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS })
  try {
    if (typeof v.request === 'function') v = { ...v, request: await v.request({ port }) }
    await drive(pool, v, warmup)
    server.child.send('gc')
    await server.next('gc')
    const from = server.output().length
    server.child.send('cpu')
    const cpu0 = (await server.next('cpu')).cpu
    await drive(pool, v, window)
    server.child.send('cpu')
    const cpu1 = (await server.next('cpu')).cpu
    server.child.send('gc')
    await server.next('gc')
    // Lines are written before the acknowledgement; give the pipe a turn.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const bytes = allocatedSince(server.output(), from) / window
    const cpuUs = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / window
    return { name: v.name, bytes, cpuUs }
  } finally {
    await pool.close()
    server.child.kill()
  }
}

async function run ({ rounds = 3, post = false } = {}) {
  const variants = post ? POST_VARIANTS : VARIANTS
  const results = new Map(variants.map((v) => [v.name, []]))
  // Interleaved: each round runs every variant once, so drift in the machine spreads evenly.
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) results.get(v.name).push(await measure(v))
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const bare = median(results.get(variants[0].name).map((x) => x.bytes))
  const bareCpu = median(results.get(variants[0].name).map((x) => x.cpuUs))
  return variants.map((v) => {
    const xs = results.get(v.name)
    const bytes = median(xs.map((x) => x.bytes))
    const cpuUs = median(xs.map((x) => x.cpuUs))
    return { name: v.name, bytes: Math.round(bytes), bytesRatio: bytes / bare, spread: Math.max(...xs.map((x) => x.bytes)) / Math.min(...xs.map((x) => x.bytes)), cpuUs, cpuRatio: bareCpu / cpuUs }
  })
}

function table (rows) {
  const lines = ['| variant (GET 2 KB JSON) | bytes/request | vs bare | max/min over rounds | CPU µs/request | speed vs bare |', '|---|---:|---:|---:|---:|---:|']
  for (const r of rows) lines.push(`| ${r.name} | ${r.bytes} | ${r.bytesRatio.toFixed(3)} | ${r.spread.toFixed(3)} | ${r.cpuUs.toFixed(1)} | ${r.cpuRatio.toFixed(2)} |`)
  return lines.join('\n')
}

/** Targets: a route that uses no convention allocates what bare Fastify does; the default route at most 3% more. */
function targets (rows) {
  const find = (name) => rows.find((r) => r.name === name)
  const goals = [
    ['+ whole suite, route with every convention off', 1.005, 'a route that uses no convention: bytes/request <= 1.005x bare (1.00 within the A/A row)'],
    ['+ whole suite, default route', 1.03, 'the whole suite, default route: bytes/request <= 1.03x bare']
  ]
  return goals.map(([name, max, target]) => {
    const row = find(name)
    const met = row.bytesRatio <= max
    return { section: 'allocation', target, measured: `${row.bytesRatio.toFixed(3)}x (${row.bytes} B)`, status: met ? 'MET' : 'MISSED', why: met ? '' : `${row.bytes} B against ${find('bare Fastify').bytes} B: each Fastify hook phase a route runs costs about 280 B (the no-op hook rows), the Cross-Origin-Resource-Policy header about 260 B, the Content-Type check about 90 B (the "only ... on" rows)` }
  })
}

module.exports = { run, table, targets, measure, VARIANTS }

if (require.main === module) {
  run({ rounds: Number(process.env.BENCH_ROUNDS ?? 3), post: process.argv.includes('--post') }).then((rows) => console.log(table(rows)), (err) => { console.error(err); process.exit(1) })
}
