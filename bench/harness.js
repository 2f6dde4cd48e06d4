'use strict'
/**
 * Benchmark harness: each variant runs in its own child process (bench/server.js) and
 * autocannon drives it from this process. Pairs are measured side by side in one run,
 * alternating A and B over several rounds so the shared machine's noise hits both; the
 * ratio is taken of the medians.
 */
const { fork } = require('node:child_process')
const { join } = require('node:path')
const autocannon = require('autocannon')

function startServer (variant, extra = {}) {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'server.js'), [variant, JSON.stringify(extra)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    child.once('message', (m) => resolve({ port: m.port, stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill() }) }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`bench server ${variant} exited with ${code}`)))
  })
}

function once (opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 20, pipelining: 1, duration: 3, ...opts }, (err, result) => {
      if (err) return reject(err)
      if (result.non2xx > 0 && opts.expectStatus === undefined) return reject(new Error(`${opts.url}: ${result.non2xx} non-2xx answers`))
      resolve(result)
    })
  })
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/**
 * Measures two variants side by side. `a` and `b`: { name, variant, request: { path, method, headers, body }, extra }.
 * Returns a row with req/s and p99 of each side and the ratio a/b.
 */
async function compare (title, a, b, { rounds = Number(process.env.BENCH_ROUNDS ?? 3), duration = Number(process.env.BENCH_SECONDS ?? 3) } = {}) {
  const sa = await startServer(a.variant, a.extra)
  const sb = await startServer(b.variant, b.extra)
  const res = { a: [], b: [], pa: [], pb: [] }
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
      const ra = await once(make(a, sa.port))
      const rb = await once(make(b, sb.port))
      res.a.push(ra.requests.average)
      res.b.push(rb.requests.average)
      res.pa.push(ra.latency.p99)
      res.pb.push(rb.latency.p99)
    }
  } finally {
    await sa.stop()
    await sb.stop()
  }
  const row = {
    benchmark: title,
    a: a.name,
    b: b.name,
    aReqPerSec: Math.round(median(res.a)),
    bReqPerSec: Math.round(median(res.b)),
    aP99ms: median(res.pa),
    bP99ms: median(res.pb),
    ratio: Number((median(res.a) / median(res.b)).toFixed(3)),
    target: a.target
  }
  return row
}

function printRows (rows) {
  const lines = ['| benchmark | A | B | A req/s | B req/s | A p99 ms | B p99 ms | A/B | target |', '|---|---|---|---:|---:|---:|---:|---:|---|']
  for (const r of rows) {
    lines.push(`| ${r.benchmark} | ${r.a} | ${r.b} | ${r.aReqPerSec} | ${r.bReqPerSec} | ${r.aP99ms} | ${r.bP99ms} | ${r.ratio} | ${r.target ?? ''} |`)
  }
  return lines.join('\n')
}

module.exports = { startServer, compare, printRows }
