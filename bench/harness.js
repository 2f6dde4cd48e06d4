'use strict'
/**
 * Benchmark harness: each variant runs in its own child process (bench/server.js) and
 * autocannon drives it from this process. Pairs are measured side by side in one run,
 * alternating A and B over several rounds so the shared machine's noise hits both; the
 * ratio is taken of the medians. Besides req/s and p99, each round reads the server
 * process's CPU time, so the CPU each request costs is compared too: on a 2-core machine the
 * load generator can be the bottleneck, and CPU per request is what a plugin adds.
 */
const { execFile, execFileSync, fork, spawn, spawnSync } = require('node:child_process')
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

/**
 * V8 flags of every measured server: a young generation of one fixed size. V8 sizes it as it
 * goes: it shrinks it at a full collection that falls in a quiet moment, and grows it again only
 * as objects survive their first collection. The paired rows load one process while its twin
 * waits, and the reference service's requests leave almost nothing alive (280 B to 40 KB per
 * scavenge, --trace-gc-nvp): a process whose boot-time full collection fell in a wait kept a
 * 1-2 MB young generation under load for the rest of its life and scavenged ten times as often
 * as its twin (380 scavenges against 30-47 over the same requests, Node 24), which made an
 * A/A row of the same code read 0.75. One size for every process, ours and the others alike,
 * takes that draw out: the size a loaded process grows to (16 MB semi-spaces).
 */
const SERVER_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=16']

function startServer (variant, extra = {}) {
  return new Promise((resolve, reject) => {
    // Only SERVER_FLAGS: the measured server runs without the flags of whatever runs the bench
    // (a test runner's loaders or coverage would be measured with it).
    const child = fork(join(__dirname, 'server.js'), [variant, JSON.stringify(extra)], { execArgv: SERVER_FLAGS, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', (m) => resolve({
      port: m.port,
      pid: child.pid,
      // CPU time the server process has used so far (user + system, microseconds)
      cpu: () => new Promise((resolve) => {
        child.once('message', (r) => resolve(r.cpu.user + r.cpu.system))
        child.send('cpu')
      }),
      // the server's CPU time and wall time over its next n requests (bench/server.js)
      window: (n) => new Promise((resolve) => {
        const on = (r) => {
          if (r.window === undefined) return
          child.off('message', on)
          resolve(r.window)
        }
        child.on('message', on)
        child.send({ window: n })
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
    // warm-up: as long as a round, at most 1 s
    await once({ ...make(a, sa.port), duration: Math.min(1, duration) })
    await once({ ...make(b, sb.port), duration: Math.min(1, duration) })
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
    ...sides(title, a, b, m, (x) => x),
    ratio: Number((m('a', 'rps') / m('b', 'rps')).toFixed(3)),
    cpuRatio: Number((m('b', 'cpuUs') / m('a', 'cpuUs')).toFixed(3)),
    target: a.target
  }
}

/** The columns a row shows of each side: the medians of its rounds. */
function sides (title, a, b, m, p99) {
  return {
    benchmark: title,
    a: a.name,
    b: b.name,
    aReqPerSec: Math.round(m('a', 'rps')),
    bReqPerSec: Math.round(m('b', 'rps')),
    aP99ms: p99(m('a', 'p99')),
    bP99ms: p99(m('b', 'p99')),
    aCpuUs: Number(m('a', 'cpuUs').toFixed(1)),
    bCpuUs: Number(m('b', 'cpuUs').toFixed(1))
  }
}

// ---------------------------------------------------------------- CPU per request, wrk from the other core

/**
 * The server's own core and the load generator's: the server process (every thread) is pinned
 * to one CPU and wrk to another, so that the load generator never takes the server's CPU time.
 * BENCH_PIN=0 turns pinning off (one CPU, or no taskset).
 */
const PIN = process.env.BENCH_PIN !== '0' && require('node:os').cpus().length >= 2
const SERVER_CPU = '0'
const LOAD_CPU = '1'

let wrkChecked = false
/** wrk must be on PATH: the bench names what to install when it is not. */
function requireWrk () {
  if (wrkChecked) return
  // `wrk -v` prints its version and exits with 1: only a missing binary is an error here
  if (spawnSync('wrk', ['-v'], { stdio: 'ignore' }).error !== undefined) {
    throw new Error('wrk (the HTTP load generator) is not installed: apt-get install -y wrk (Debian/Ubuntu), brew install wrk (macOS), or build it from https://github.com/wg/wrk')
  }
  wrkChecked = true
}

function pin (pid) {
  if (!PIN) return
  // -a: every thread of the process (libuv's pool, V8's GC helpers)
  execFileSync('taskset', ['-a', '-p', '-c', SERVER_CPU, String(pid)], { stdio: 'ignore' })
}

const hex = (s) => Buffer.from(s).toString('hex')

let wrkRuns = 0

/**
 * A wrk script that sends `request` and counts the answers whose status is not `expect`.
 * `request.unique`: a string of the body that each request replaces with a value of its own
 * (`<run>-<n>`, unique in this process), for writes that must not repeat (a POST whose slug
 * is unique); wrk then builds each request in its `request()` function.
 */
function wrkScript ({ method = 'GET', headers = {}, body, unique }, expect) {
  const lines = [
    'local function unhex (s) return (s:gsub("..", function (c) return string.char(tonumber(c, 16)) end)) end',
    `wrk.method = unhex("${hex(method)}")`
  ]
  if (body !== undefined) lines.push(`wrk.body = unhex("${hex(body)}")`)
  for (const [k, v] of Object.entries(headers)) lines.push(`wrk.headers[unhex("${hex(k)}")] = unhex("${hex(String(v))}")`)
  if (unique !== undefined) {
    const at = body === undefined ? -1 : body.indexOf(unique)
    if (at === -1) throw new Error(`request.unique ${JSON.stringify(unique)} is not in the body`)
    lines.push(
      `local before, after, run, n = unhex("${hex(body.slice(0, at))}"), unhex("${hex(body.slice(at + unique.length))}"), "${process.pid.toString(36)}x${(++wrkRuns).toString(36)}", 0`,
      'function request () n = n + 1; return wrk.format(nil, nil, nil, before .. run .. "-" .. n .. after) end')
  }
  lines.push(
    `expected = ${expect}`,
    'bad = 0',
    'firstBad = 0',
    'function response (status) if status ~= expected then bad = bad + 1; if firstBad == 0 then firstBad = status end end end',
    'local threads = {}',
    'function setup (thread) table.insert(threads, thread) end',
    'function done (summary, latency)',
    '  local b, f = 0, 0',
    '  for _, t in ipairs(threads) do b = b + t:get("bad"); if f == 0 then f = t:get("firstBad") end end',
    '  local e = summary.errors',
    '  io.write(string.format("WRK {\\"requests\\":%d,\\"bad\\":%d,\\"firstBad\\":%d,\\"socketErrors\\":%d,\\"p50Us\\":%d,\\"p99Us\\":%d}\\n", summary.requests, b, f, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))',
    'end')
  return lines.join('\n') + '\n'
}

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)

/**
 * Runs wrk against `url` until the server has served `requests` requests after a short
 * warm-up, then stops it. Returns the server's CPU µs per request and req/s over exactly those
 * requests (counted and timed by the server), and wrk's latency percentiles.
 */
async function measure (server, url, request, { requests, expect = 200, warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 300), connections = CONNECTIONS }) {
  requireWrk()
  const script = join(require('node:os').tmpdir(), `bench-wrk-${process.pid}-${hex(url + (request.method ?? '') + expect).slice(0, 40)}.lua`)
  require('node:fs').writeFileSync(script, wrkScript(request, expect))
  const args = ['-t1', `-c${connections}`, '-d600s', '-s', script, url]
  const child = spawn(PIN ? 'taskset' : 'wrk', PIN ? ['-c', LOAD_CPU, 'wrk', ...args] : args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  try {
    await new Promise((resolve) => setTimeout(resolve, warmupMs))
    const win = await server.window(requests)
    child.kill('SIGINT')
    await exited
    const m = /WRK (\{.*\})/.exec(out)
    if (m === null) throw new Error(`wrk gave no summary: ${out}`)
    const w = JSON.parse(m[1])
    if (w.bad > 0 || w.requests === 0) throw new Error(`${url}: expected only ${expect} answers, got ${w.bad} other (first: ${w.firstBad}) of ${w.requests}`)
    return { cpuUs: win.cpuUs / requests, rps: requests / (win.ms / 1000), p99: w.p99Us / 1000 }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
  }
}

/**
 * Starts a server variant pinned to the server's core, with `window(n)`: the server's CPU time
 * and wall time over its next n requests.
 */
async function startPinned (variant, extra) {
  const s = await startServer(variant, extra)
  pin(s.pid)
  return s
}

/**
 * Measures a pair of server variants by CPU time per request. `a` and `b` as for `compare`
 * (`request` may also be a function of the started server that resolves the request).
 * Each side runs as `processes` server processes (a fresh pair each time; one process for
 * both sides when they are the same variant, two kinds of request); each pair of processes
 * gets `rounds` paired rounds (A then B, then B then A, ...) of `requests` requests each.
 * The ratio of a pair of processes is the median over its rounds of B's CPU per request over
 * A's (above 1: A costs less); the row's ratio is the median over the pairs of processes.
 * Throughput ratios are taken the same way from req/s (A over B).
 * `opts.connections`: wrk's connections (default BENCH_CONNECTIONS, 32). Each side's spread
 * (largest over smallest CPU per request of its rounds) is returned beside the medians.
 */
async function comparePaired (title, a, b, opts = {}) {
  const processes = opts.processes ?? Number(process.env.BENCH_PROCESSES ?? 3)
  const rounds = opts.rounds ?? Number(process.env.BENCH_CPU_ROUNDS ?? 3)
  const requests = opts.requests ?? Number(process.env.BENCH_REQUESTS ?? 15000)
  const connections = opts.connections ?? CONNECTIONS
  const shared = a.variant === b.variant && JSON.stringify(a.extra ?? {}) === JSON.stringify(b.extra ?? {})
  const rounds$ = { a: [], b: [] }
  const cpuRatios = []
  const rpsRatios = []
  for (let p = 0; p < processes; p++) {
    const sa = await startPinned(a.variant, a.extra)
    const sb = shared ? sa : await startPinned(b.variant, b.extra)
    try {
      // `request` may be a function of the started server (e.g. an If-None-Match with the ETag it gives)
      const reqA = typeof a.request === 'function' ? await a.request(sa) : a.request
      const reqB = shared && a.request === b.request ? reqA : typeof b.request === 'function' ? await b.request(sb) : b.request
      const requestOf = (side) => (side === a ? reqA : reqB)
      const run = (side, s) => measure(s, `http://127.0.0.1:${s.port}${requestOf(side).path}`, requestOf(side), { requests, expect: side.expectStatus ?? 200, connections })
      // warm-up: the JIT settles on both sides before anything is counted
      await run(a, sa)
      await run(b, sb)
      const pc = []
      const pr = []
      for (let r = 0; r < rounds; r++) {
        let ra, rb
        if (r % 2 === 0) { ra = await run(a, sa); rb = await run(b, sb) } else { rb = await run(b, sb); ra = await run(a, sa) }
        rounds$.a.push(ra)
        rounds$.b.push(rb)
        pc.push(rb.cpuUs / ra.cpuUs)
        pr.push(ra.rps / rb.rps)
      }
      cpuRatios.push(median(pc))
      rpsRatios.push(median(pr))
    } finally {
      await sa.stop()
      if (!shared) await sb.stop()
    }
  }
  const m = (side, key) => median(rounds$[side].map((r) => r[key]))
  const spread = (side) => Number((Math.max(...rounds$[side].map((r) => r.cpuUs)) / Math.min(...rounds$[side].map((r) => r.cpuUs))).toFixed(3))
  return {
    ...sides(title, a, b, m, (x) => Number(x.toFixed(2))),
    // largest over smallest CPU per request of each side's rounds (every process): the repeat spread
    aCpuSpread: spread('a'),
    bCpuSpread: spread('b'),
    aCpuRange: [Math.min(...rounds$.a.map((r) => r.cpuUs)), Math.max(...rounds$.a.map((r) => r.cpuUs))],
    bCpuRange: [Math.min(...rounds$.b.map((r) => r.cpuUs)), Math.max(...rounds$.b.map((r) => r.cpuUs))],
    processes,
    shared,
    // Targets are decided on CPU per request: the median over processes of paired rounds.
    ratio: Number(median(cpuRatios).toFixed(3)),
    cpuRatio: Number(median(cpuRatios).toFixed(3)),
    rpsRatio: Number(median(rpsRatios).toFixed(3)),
    perProcess: cpuRatios.map((x) => Number(x.toFixed(3))),
    method: 'cpu',
    target: a.target
  }
}

function printRows (rows) {
  const lines = ['| benchmark | A | B | A req/s | B req/s | A p99 ms | B p99 ms | A CPU µs/req | B CPU µs/req | A/B req/s | B/A CPU | B/A CPU per process | target |', '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|']
  for (const r of rows) {
    lines.push(`| ${r.benchmark} | ${r.a} | ${r.b} | ${r.aReqPerSec} | ${r.bReqPerSec} | ${r.aP99ms} | ${r.bP99ms} | ${r.aCpuUs ?? '-'} | ${r.bCpuUs ?? '-'} | ${r.rpsRatio ?? r.ratio} | ${r.cpuRatio ?? '-'} | ${(r.perProcess ?? []).join(', ') || '-'} | ${r.target ?? ''} |`)
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

module.exports = { startServer, compare, comparePaired, printRows, inFreshProcess }
