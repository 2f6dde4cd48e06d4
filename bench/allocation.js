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

// ---------------------------------------------------------------- reading the GC trace, or refusing it

/**
 * Bytes a window may allocate per request before its trace is not believed: the largest
 * request a bench sends is 1 MiB, and a request allocating 256 times that is no measurement.
 */
const MAX_BYTES_PER_REQUEST = 256 * 1024 * 1024

/** A field's token on a GC line: `name=value` (Node 22 and 24) or `"name":value` (JSON lines, Node 26). */
function fieldOf (line, name) {
  const m = new RegExp(`(?:\\b${name}=|"${name}":)([^\\s,}]*)`).exec(line)
  return m === null ? undefined : m[1]
}

/** Why an `allocated=` token cannot be counted, or null: a plain, safe, non-negative integer no larger than the heap. */
function refusedAllocated (token, heapLimit) {
  if (token === undefined) return 'a GC line has no allocated= field'
  if (token.startsWith('-')) return `a GC line reports a negative allocation (allocated=${token})`
  if (!/^\d+$/.test(token)) return `a GC line's allocated= field is not an integer (allocated=${token.slice(0, 40)})`
  const n = Number(token)
  if (!Number.isSafeInteger(n)) return `a GC line's allocated= field overflowed (allocated=${token}, above 2^53)`
  // Nothing is freed between two collections: what was allocated since the one before fits in the heap.
  if (heapLimit !== undefined && n > heapLimit) return `a GC line reports ${n} B allocated since the collection before, more than the heap holds (heap_size_limit ${heapLimit} B)`
  return null
}

/**
 * The GC lines V8's `--trace-gc-nvp` wrote from `from` (a character offset of the trace) on:
 * the bytes they allocated and their pauses, or `{ untrusted }` saying why they cannot be
 * believed. A window is refused whole when its last line was cut, when it has no GC line (the
 * closing collection's line is missing), when any line's `allocated=` is not a plain integer,
 * is negative, past 2^53 or larger than the heap (`heapLimit`, the server's heap_size_limit),
 * or when the sum is over `maxBytesPerRequest` per request of the window (`requests`).
 */
function readWindow (text, from, { requests, heapLimit, maxBytesPerRequest = MAX_BYTES_PER_REQUEST } = {}) {
  // A window that starts inside a line starts at the next one: that line's collection ran before the window.
  const start = from === 0 || text[from - 1] === '\n' ? from : text.indexOf('\n', from) + 1
  const body = start === 0 && from > 0 ? '' : text.slice(start)
  if (body !== '' && !body.endsWith('\n')) return { untrusted: 'the trace\'s last line was cut (the closing collection\'s line had not arrived whole)' }
  const lines = body.split('\n').filter((l) => /\bpause=|"pause":|\ballocated=|"allocated":/.test(l))
  if (lines.length === 0) return { untrusted: 'the window has no GC line (the closing collection\'s line is missing)' }
  let bytes = 0
  let pauseMs = 0
  let lastPauseMs = 0
  for (const line of lines) {
    const refused = refusedAllocated(fieldOf(line, 'allocated'), heapLimit)
    if (refused !== null) return { untrusted: refused }
    const pause = fieldOf(line, 'pause')
    if (pause === undefined || !/^\d+(?:\.\d+)?$/.test(pause)) return { untrusted: `a GC line's pause= field is not a number (pause=${String(pause).slice(0, 40)})` }
    bytes += Number(fieldOf(line, 'allocated'))
    lastPauseMs = Number(pause)
    pauseMs += lastPauseMs
  }
  if (requests !== undefined && bytes > requests * maxBytesPerRequest) {
    return { untrusted: `the window's GC lines sum to ${bytes} B over ${requests} requests, more than ${maxBytesPerRequest} B a request` }
  }
  return { bytes, pauseMs, lastPauseMs, lines: lines.length }
}

// ---------------------------------------------------------------- one measurement

/** A full collection in the server, then a turn for its trace line to come through the pipe. */
async function collect (server) {
  server.child.send('gc')
  await server.next('gc')
  // Lines are written before the acknowledgement, on another pipe: give it a turn.
  await new Promise((resolve) => setTimeout(resolve, 50))
}

/** One window of `n` requests between two full collections: the trace it wrote and the server's CPU time. */
async function runWindow (server, pool, v, n) {
  await collect(server)
  const from = server.output().length
  server.child.send('cpu')
  const cpu0 = (await server.next('cpu')).cpu
  await drive(pool, v, n)
  server.child.send('cpu')
  const cpu1 = (await server.next('cpu')).cpu
  await collect(server)
  return { text: server.output(), from, cpuUs: (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / n }
}

/**
 * A window (`once`) read by `read`; a window `read` refuses is run once more, and a second
 * refusal gives `{ untrusted }` with both reasons. Else the window with its reading (`gc`),
 * and the first refusal (`retried`) if there was one.
 */
async function trustedWindow (once, read) {
  const refusals = []
  for (let attempt = 0; attempt < 2; attempt++) {
    const w = await once()
    const gc = read(w)
    if (gc.untrusted === undefined) return { ...w, gc, ...(refusals.length === 0 ? {} : { retried: refusals[0] }) }
    refusals.push(gc.untrusted)
  }
  return { untrusted: `untrusted GC trace, twice: ${refusals.join('; then ')}` }
}

/**
 * Bytes (and CPU µs) per request of variant `v` in a fresh server process. `v.request` may be
 * a function of the started server ({ port }) that resolves the request. `server`: another
 * server file and the Node flags to run it with ({ file, flags }). A window whose GC trace
 * cannot be trusted (`readWindow`) is run once more; if the second is refused too, the result
 * has `bytes: null` and `untrusted` (the reasons): never a number read from such a trace.
 */
async function measure (v, { warmup = WARMUP, window = WINDOW, server: serverFile } = {}) {
  const server = start(v.variant, v.extra, serverFile)
  const { port } = await server.next('port')
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS })
  try {
    if (typeof v.request === 'function') v = { ...v, request: await v.request({ port }) }
    server.child.send('heap')
    const { heap: heapLimit } = await server.next('heap')
    await drive(pool, v, warmup)
    const w = await trustedWindow(() => runWindow(server, pool, v, window), (w) => readWindow(w.text, w.from, { requests: window, heapLimit }))
    if (w.untrusted !== undefined) return { name: v.name, bytes: null, gcUs: null, cpuUs: null, untrusted: w.untrusted }
    // The closing full collection is forced, not caused by the window: its pause is left out.
    return { name: v.name, bytes: w.gc.bytes / window, gcUs: (w.gc.pauseMs - w.gc.lastPauseMs) * 1000 / window, cpuUs: w.cpuUs, ...(w.retried === undefined ? {} : { retried: w.retried }) }
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
  // Only rounds whose trace was trusted count; a row with none is unmeasured (`untrusted`).
  const trusted = (name) => results.get(name).filter((x) => x.bytes !== null)
  const of = (name, key) => (trusted(name).length === 0 ? null : median(trusted(name).map((x) => x[key])))
  const ratio = (a, b) => (a === null || b === null ? null : a / b)
  // Each row against bare Fastify, or (`against`) against the row it adds to.
  return variants.map((v) => {
    const xs = trusted(v.name)
    const refused = results.get(v.name).filter((x) => x.bytes === null)
    const base = v.against ?? variants[0].name
    const bytes = of(v.name, 'bytes')
    const cpuUs = of(v.name, 'cpuUs')
    const row = { name: v.name, against: v.against, gcUs: of(v.name, 'gcUs'), bytes: bytes === null ? null : Math.round(bytes), bytesRatio: ratio(bytes, of(base, 'bytes')), spread: xs.length === 0 ? null : Math.max(...xs.map((x) => x.bytes)) / Math.min(...xs.map((x) => x.bytes)), cpuUs, cpuRatio: ratio(of(base, 'cpuUs'), cpuUs), rounds: xs.length }
    return refused.length === 0 ? row : { ...row, untrusted: `${refused.length} of ${rounds} round(s) refused: ${refused[0].untrusted}` }
  })
}

/** What a table cell shows for a figure the trace could not give: never a number. */
const UNMEASURED = 'unmeasured (untrusted GC trace)'

/** Whole bytes per request of a `measure` result, or null where its trace was refused. */
function wholeBytes (result) {
  return result.bytes === null ? null : Math.round(result.bytes)
}

function table (rows) {
  const head = (what) => [`| variant (${what}) | bytes/request | vs bare | max/min over rounds | GC pause µs/request | CPU µs/request | speed vs bare |`, '|---|---:|---:|---:|---:|---:|---:|']
  const get = rows.filter((r) => !r.name.startsWith('POST: '))
  const post = rows.filter((r) => r.name.startsWith('POST: '))
  const lines = head('GET 2 KB JSON')
  for (const r of get) lines.push(row(r))
  if (post.length > 0) lines.push('', ...head('POST JSON + body schema, 201'), ...post.map(row))
  const refused = rows.filter((r) => r.untrusted !== undefined)
  if (refused.length > 0) lines.push('', ...refused.map((r) => `- ${r.name}: ${r.untrusted}${r.bytes === null ? '' : ` (the row is the median of the ${r.rounds} trusted round(s))`}`))
  return lines.join('\n')
}

function row (r) {
  const f = (x, d) => (x === null ? UNMEASURED : x.toFixed(d))
  return `| ${r.name}${r.against === undefined ? '' : ` (vs "${r.against}")`} | ${r.bytes ?? UNMEASURED} | ${f(r.bytesRatio, 3)} | ${f(r.spread, 3)} | ${f(r.gcUs, 2)} | ${f(r.cpuUs, 1)} | ${f(r.cpuRatio, 2)} |`
}

/** Targets: a route that uses no convention allocates what bare Fastify does; the default route at most 3% more. */
function fmt (row) {
  return row === undefined || row.bytesRatio === null ? 'n/a' : `${row.bytesRatio.toFixed(3)}x`
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
    if (row.bytesRatio === null) return { section: 'allocation', target, measured: UNMEASURED, status: 'NOT MEASURED', why: row.untrusted ?? `its bare row is ${UNMEASURED}` }
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

module.exports = { run, table, targets, measure, readWindow, trustedWindow, wholeBytes, UNMEASURED, VARIANTS, POST_VARIANTS }

if (require.main === module) {
  run({ rounds: Number(process.env.BENCH_ROUNDS ?? 3), post: !process.argv.includes('--get') }).then((rows) => console.log(table(rows)), (err) => { console.error(err); process.exit(1) })
}
