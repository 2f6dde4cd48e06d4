'use strict'
/**
 * Benchmark harness: each variant runs in its own child process (bench/server.js) and
 * autocannon drives it from this process. Pairs are measured side by side in one run,
 * alternating A and B over several rounds so the shared machine's noise hits both; the
 * ratio is taken of the medians. Besides req/s and p99, each round reads the server
 * process's CPU time, so the CPU each request costs is compared too: on a 2-core machine the
 * load generator can be the bottleneck, and CPU per request is what a plugin adds.
 */
const { execFile, fork } = require('node:child_process')
const { join } = require('node:path')

/**
 * autocannon, loaded on first use: bench modules that also hold server variants are loaded by
 * the server processes too, and loading autocannon there (its histogram module) was measured to
 * make every request of that server cost about 4 µs more, in Node's `process.nextTick`.
 */
let autocannonModule = null
function autocannon (...args) {
  autocannonModule ??= require('autocannon')
  return autocannonModule(...args)
}

function startServer (variant, extra = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'server.js'), [variant, JSON.stringify(extra)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', (m) => resolve({
      port: m.port,
      pid: child.pid,
      // CPU time the server process has used so far (user + system, microseconds)
      cpu: () => new Promise((resolve) => {
        child.once('message', (r) => resolve(r.cpu.user + r.cpu.system))
        child.send('cpu')
      }),
      stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill() })
    }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench server ${variant} exited with ${code}`)))
  })
}

// Pipelined requests keep the server, not the load generator, the bottleneck on a small machine.
const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 10)

function once (opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 20, pipelining: PIPELINING, duration: 3, ...opts }, (err, result) => {
      if (err) return reject(err)
      const expected = opts.expectStatus ?? 200
      const total = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']
      if (result.errors > 0 || total === 0 || result[`${Math.floor(expected / 100)}xx`] !== total) {
        return reject(new Error(`${opts.url}: expected only ${expected} answers, got ${JSON.stringify({ '2xx': result['2xx'], '4xx': result['4xx'], '5xx': result['5xx'], errors: result.errors })}`))
      }
      resolve(result)
    })
  })
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Runs one round against one server; returns req/s, p99 and the server's CPU microseconds per request. */
async function round (server, opts) {
  const before = await server.cpu()
  const r = await once(opts)
  const used = (await server.cpu()) - before
  return { rps: r.requests.average, p99: r.latency.p99, cpuUs: used / Math.max(1, r.requests.total) }
}

/**
 * Measures two variants side by side. `a` and `b`: { name, variant, request: { path, method, headers, body }, extra, expectStatus? }.
 * Each side has its own server process, except when both name the same variant and extra.
 * Returns a row with req/s, p99 and server CPU per request of each side, the throughput ratio a/b,
 * and the CPU ratio (b's CPU per request / a's: above 1 when a costs less).
 */
async function compare (title, a, b, { rounds = Number(process.env.BENCH_ROUNDS ?? 3), duration = Number(process.env.BENCH_SECONDS ?? 3) } = {}) {
  const sa = await startServer(a.variant, a.extra)
  // Two kinds of request to the same server code (a 412 against a 200, PATCH against PUT) go to
  // one server process: processes of one variant differ by 10% and more from each other.
  const shared = a.variant === b.variant && JSON.stringify(a.extra ?? {}) === JSON.stringify(b.extra ?? {})
  const sb = shared ? sa : await startServer(b.variant, b.extra)
  const res = { a: [], b: [] }
  try {
    const make = (side, port) => ({
      url: `http://127.0.0.1:${port}${side.request.path}`,
      method: side.request.method ?? 'GET',
      headers: side.request.headers,
      body: side.request.body,
      // `setupRequest(request)`: rewrites each request before it is sent (e.g. a unique slug per POST)
      ...(side.request.setupRequest === undefined ? {} : { requests: [{ setupRequest: side.request.setupRequest }] }),
      duration,
      expectStatus: side.expectStatus
    })
    await once({ ...make(a, sa.port), duration: 1 })
    await once({ ...make(b, sb.port), duration: 1 })
    for (let i = 0; i < rounds; i++) {
      res.a.push(await round(sa, make(a, sa.port)))
      res.b.push(await round(sb, make(b, sb.port)))
    }
  } finally {
    await sa.stop()
    if (!shared) await sb.stop()
  }
  const m = (side, key) => median(res[side].map((r) => r[key]))
  return {
    benchmark: title,
    a: a.name,
    b: b.name,
    aReqPerSec: Math.round(m('a', 'rps')),
    bReqPerSec: Math.round(m('b', 'rps')),
    aP99ms: m('a', 'p99'),
    bP99ms: m('b', 'p99'),
    aCpuUs: Number(m('a', 'cpuUs').toFixed(1)),
    bCpuUs: Number(m('b', 'cpuUs').toFixed(1)),
    ratio: Number((m('a', 'rps') / m('b', 'rps')).toFixed(3)),
    cpuRatio: Number((m('b', 'cpuUs') / m('a', 'cpuUs')).toFixed(3)),
    target: a.target
  }
}

function printRows (rows) {
  const lines = ['| benchmark | A | B | A req/s | B req/s | A p99 ms | B p99 ms | A CPU µs/req | B CPU µs/req | A/B req/s | B/A CPU | target |', '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|']
  for (const r of rows) {
    lines.push(`| ${r.benchmark} | ${r.a} | ${r.b} | ${r.aReqPerSec} | ${r.bReqPerSec} | ${r.aP99ms} | ${r.bP99ms} | ${r.aCpuUs ?? '-'} | ${r.bCpuUs ?? '-'} | ${r.ratio} | ${r.cpuRatio ?? '-'} | ${r.target ?? ''} |`)
  }
  return lines.join('\n')
}

/**
 * Runs `node <script> <flag>` and resolves what it wrote to stdout, parsed as JSON. For
 * in-process measurements: a process that has loaded the load generator, forked servers
 * and run other benchmarks times them slower, and not equally for both sides.
 */
function inFreshProcess (script, flag) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, flag], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(err)
      resolve(JSON.parse(stdout))
    })
  })
}

module.exports = { startServer, compare, printRows, inFreshProcess }
