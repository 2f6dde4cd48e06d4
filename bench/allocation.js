'use strict'
// Bytes allocated per request: steady where CPU time is not (a shared machine). Each variant
// runs in its own process under V8's `--trace-gc-nvp`; a full collection (`global.gc()`) opens
// and closes a window of exactly N keep-alive requests after a warm-up, and the window's
// `allocated=` fields are summed (each is what was allocated since the collection before).
// The CPU column is the server's own CPU time over the same window (server pinned to CPU 0,
// this driver to CPU 1): steady enough to decompose, noisier than the bytes.
// Run: `npm run build && node bench/allocation.js [--get]` (or as the "allocation" section of npm run bench).
const { execFileSync, fork } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')
const { Pool } = require('undici')

const WARMUP = 3000
const WINDOW = 20000
const CONNECTIONS = 4

const POST_VARIANTS = [
  { name: 'POST: bare Fastify', variant: 'bare', path: '/doc', method: 'POST' },
  { name: 'POST: bare Fastify (A/A twin)', variant: 'bare', path: '/doc', method: 'POST', extra: { twin: true } },
  { name: 'POST: + serverOptions only', variant: 'serverOptions', path: '/doc', method: 'POST' },
  { name: 'POST: + Content-Length plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsContentLength' } },
  { name: 'POST: + Content-Type plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsContentType' } },
  { name: 'POST: + Validation plugin alone', variant: 'alone', path: '/doc', method: 'POST', extra: { plugin: 'httpConventionsValidation' } },
  { name: 'POST: + whole suite, route with every convention off', variant: 'suite', path: '/plain', method: 'POST', extra: { options: {} } },
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
  { name: '+ whole suite, default route', variant: 'suite', path: '/doc', extra: { options: {} } },
  // An app whose other plugins already hook onRequest and onSend (CORS, security headers,
  // request ids...): Fastify runs each phase's hooks with one runner, so the suite's steps
  // join phases already paid for. Its bare row is the one before it.
  { name: 'app with an onRequest and an onSend hook', variant: 'hooked', path: '/doc', extra: { hooks: ['onRequest', 'onSend'] } },
  { name: 'same app + whole suite, default route', variant: 'hooked', path: '/doc', extra: { hooks: ['onRequest', 'onSend'], suite: true }, against: 'app with an onRequest and an onSend hook' }
]

// The server on CPU 0 (every thread), this driver on CPU 1, as the CPU sections do (BENCH_PIN=0: off).
const PIN = process.env.BENCH_PIN !== '0' && os.cpus().length >= 2
function pin (pid, cpu) {
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' })
}

/** The server file and extra Node flags (scripts/upstream.js: a copy of the tree with a patched Fastify). */
const SERVER = { file: path.join(__dirname, 'server.js'), flags: [] }

function start (variant, extra, server = SERVER) {
  const child = fork(server.file, [variant, JSON.stringify(extra ?? {})], {
    execArgv: [...server.flags, '--expose-gc', '--trace-gc', '--trace-gc-nvp'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
  pin(child.pid, '0')
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

/** Sums `allocated=` and `pause=` (ms) of the GC lines from the line after `from` characters up to the end. */
function gcSince (text, from) {
  let bytes = 0
  let pauseMs = 0
  // `allocated=N` (name=value lines, Node 22 and 24) or `"allocated":N` (JSON lines, Node 26); the same for pause.
  for (const m of text.slice(from).matchAll(/(?:\b(allocated|pause)=|"(allocated|pause)":)([\d.]+)/g)) {
    if ((m[1] ?? m[2]) === 'allocated') bytes += Number(m[3])
    else pauseMs += Number(m[3])
  }
  return { bytes, pauseMs }
}

/** The pause of the last GC line (the forced collection that closed the window), in ms. */
function lastPause (text) {
  const all = [...text.matchAll(/(?:\bpause=|"pause":)([\d.]+)/g)]
  return all.length === 0 ? 0 : Number(all[all.length - 1][1])
}

/**
 * Bytes (and CPU µs) per request of variant `v` in a fresh server process. `v.request` may be
 * a function of the started server ({ port }) that resolves the request. `server`: another
 * server file and the Node flags to run it with ({ file, flags }).
 */
async function measure (v, { warmup = WARMUP, window = WINDOW, server: serverFile } = {}) {
  const server = start(v.variant, v.extra, serverFile)
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
    const gc = gcSince(server.output(), from)
    const cpuUs = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / window
    // The closing full collection is forced, not caused by the window: its pause is left out.
    return { name: v.name, bytes: gc.bytes / window, gcUs: (gc.pauseMs - lastPause(server.output())) * 1000 / window, cpuUs }
  } finally {
    await pool.close()
    server.child.kill()
  }
}

/** The GET decomposition, then (`post`) the POST one: each table against its own bare row. */
async function run ({ rounds = 3, post = true } = {}) {
  // This process drives the requests from CPU 1 while the section runs, then gets back the
  // CPUs it had: the report's later sections fork servers and load generators from it.
  const before = affinity(process.pid)
  pin(process.pid, '1')
  try {
    const rows = await runTable(VARIANTS, rounds)
    return post ? rows.concat(await runTable(POST_VARIANTS, rounds)) : rows
  } finally {
    if (before !== null) pin(process.pid, before)
  }
}

/** The CPU list a process may run on (`taskset -c -p`), or null where pinning is off. */
function affinity (pid) {
  if (!PIN) return null
  return execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' }).trim().split(': ').pop()
}

async function runTable (variants, rounds) {
  const results = new Map(variants.map((v) => [v.name, []]))
  // Interleaved: each round runs every variant once, so drift in the machine spreads evenly.
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) results.get(v.name).push(await measure(v))
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const of = (name, key) => median(results.get(name).map((x) => x[key]))
  // Each row against bare Fastify, or (`against`) against the row it adds to.
  return variants.map((v) => {
    const xs = results.get(v.name)
    const base = v.against ?? variants[0].name
    const bytes = of(v.name, 'bytes')
    const cpuUs = of(v.name, 'cpuUs')
    return { name: v.name, against: v.against, gcUs: of(v.name, 'gcUs'), bytes: Math.round(bytes), bytesRatio: bytes / of(base, 'bytes'), spread: Math.max(...xs.map((x) => x.bytes)) / Math.min(...xs.map((x) => x.bytes)), cpuUs, cpuRatio: of(base, 'cpuUs') / cpuUs }
  })
}

function table (rows) {
  const head = (what) => [`| variant (${what}) | bytes/request | vs bare | max/min over rounds | GC pause µs/request | CPU µs/request | speed vs bare |`, '|---|---:|---:|---:|---:|---:|---:|']
  const get = rows.filter((r) => !r.name.startsWith('POST: '))
  const post = rows.filter((r) => r.name.startsWith('POST: '))
  const lines = head('GET 2 KB JSON')
  for (const r of get) lines.push(row(r))
  if (post.length > 0) lines.push('', ...head('POST JSON + body schema, 201'), ...post.map(row))
  return lines.join('\n')
}

function row (r) {
  return `| ${r.name}${r.against === undefined ? '' : ` (vs "${r.against}")`} | ${r.bytes} | ${r.bytesRatio.toFixed(3)} | ${r.spread.toFixed(3)} | ${r.gcUs.toFixed(2)} | ${r.cpuUs.toFixed(1)} | ${r.cpuRatio.toFixed(2)} |`
}

/** Targets: a route that uses no convention allocates what bare Fastify does; the default route at most 3% more. */
function fmt (row) {
  return row === undefined ? 'n/a' : `${row.bytesRatio.toFixed(3)}x`
}

function targets (rows) {
  const find = (name) => rows.find((r) => r.name === name)
  const goals = [
    ['+ whole suite, route with every convention off', 1.005, 'a route that uses no convention: bytes/request <= 1.005x bare (1.00 within the A/A row)'],
    ['+ whole suite, default route', 1.03, 'the whole suite, default route: bytes/request <= 1.03x bare'],
    // The POST table (run with `post`): the whole suite's POST JSON + body schema, and the same
    // POST to a route with every convention off (1.00: at most 0.5% over, as for the GET).
    ['POST: + whole suite', 1.05, 'POST JSON + body schema, the whole suite: bytes/request <= 1.05x bare'],
    ['POST: + whole suite, route with every convention off', 1.005, 'POST JSON + body schema, a route with every convention off: bytes/request <= 1.00x bare (1.005)']
  ]
  return goals.filter(([name]) => find(name) !== undefined).map(([name, max, target]) => {
    const row = find(name)
    if (name.startsWith('POST: ')) {
      const met = row.bytesRatio <= max
      const bare = find('POST: bare Fastify')
      return { section: 'allocation', target, measured: `${row.bytesRatio.toFixed(3)}x (${row.bytes} B)`, status: met ? 'MET' : 'MISSED', why: met ? '' : `${row.bytes} B against ${bare.bytes} B (the POST decomposition rows above say which part adds what)` }
    }
    const met = row.bytesRatio <= max
    if (name === '+ whole suite, route with every convention off') {
      return { section: 'allocation', target, measured: `${row.bytesRatio.toFixed(3)}x (${row.bytes} B)`, status: met ? 'MET' : 'MISSED', why: met ? '' : `${row.bytes} B against ${find('bare Fastify').bytes} B: no step of the suite runs on the route, but Fastify runs the context's one hook for requests no route serves (preParsing: 405 and OPTIONS, redirect rules), which returns at once for a routed request; its phase costs what a no-op hook costs (the no-op hook rows). Fastify has no public hook that runs for its not-found handler alone; \`methods: false\` (and no redirect rules) removes it` }
    }
    return { section: 'allocation', target, measured: `${row.bytesRatio.toFixed(3)}x (${row.bytes} B)`, status: met ? 'MET' : 'MISSED', why: met ? '' : `${row.bytes} B against ${find('bare Fastify').bytes} B: the route runs two hook phases, preParsing (the resource policy, repeated Host lines and a declared body, after every onRequest hook and before the handler; the requests no route serves, 405 and redirect rules, share its hook) and onSend (the answer's charset), each about 280 B in Fastify's hook runner (the no-op hook rows); the Cross-Origin-Resource-Policy header every answer carries about 260 B (Fastify lower-cases a header name per call, about 48 B each, and Node writes one more line); the Content-Type check about 90 B (the "only ... on" rows). In an app whose other plugins already hook onRequest and onSend the suite adds ${fmt(find('same app + whole suite, default route'))} (the last row)` }
  })
}

module.exports = { run, table, targets, measure, VARIANTS, POST_VARIANTS }

if (require.main === module) {
  run({ rounds: Number(process.env.BENCH_ROUNDS ?? 3), post: !process.argv.includes('--get') }).then((rows) => console.log(table(rows)), (err) => { console.error(err); process.exit(1) })
}
