'use strict'
/**
 * Delta encoding at scale: a 6 MiB JSON document that changes a few bytes per version, fetched
 * in a loop as full 200s (A) or as 226 deltas (B), next to a tiny route whose latency shows
 * what the big route does to everyone else on the same event loop.
 *
 *   npm run build && node bench/delta-scale.js
 *   BENCH_QUICK=1 node bench/delta-scale.js          # smoke test: 1 round of 1 s per mode
 *   node bench/report.js delta-scale                  # as a section of the report
 *
 * Env: BENCH_ROUNDS (default 5), BENCH_SECONDS (default 3), BENCH_QUICK=1,
 * BENCH_DELTA_SCALE_MIB (document size, default 6), BENCH_DELTA_SCALE_EVERY (the version
 * advances every N requests to the big route, default 1), BENCH_DELTA_SCALE_OPTIONS (JSON,
 * merged into the delta-encoding plugin options).
 *
 * One server process (`--serve`): GET /big (config.deltaEncoding, an ETag from a
 * config.conditional.validators provider, the document as a pre-serialized string of
 * application/json) and GET /tiny (2 bytes). The server measures its event-loop delay with
 * perf_hooks.monitorEventLoopDelay (10 ms sampling period, subtracted; reset at the start of
 * each round, p99 sent over IPC); a first second with no client shows what the shared
 * machine alone adds.
 *
 * Two modes, alternated for several rounds against the same server (medians, ratios of
 * medians; the machine is shared, only side-by-side ratios mean something):
 *   A  one client GETs /big in a loop without A-IM: full 200s;
 *   B  one client GETs /big with `A-IM: vcdiff` and `If-None-Match: <the ETag it last
 *      received>`: it holds a stored base, so the answer is a 226 delta (or a 200 when the
 *      encoder pool is saturated or past its deadline).
 * In both, another client (in a worker thread, so that the big client's bodies do not delay
 * its timings) GETs /tiny in a loop and records each latency.
 *
 * Targets: deltas/s >= full GETs/s; /tiny p99 with A-IM <= 1.3x without; server event-loop
 * delay p99 <= 20 ms. The share of 226 among B's answers is printed: B is checked to really
 * receive deltas, and one of them is decoded against its base in the warm-up.
 *
 * The version advances in an onRequest hook of /big, so with the default (every request) the
 * base a B request names is always the version just before the current one: every delta is
 * against a fresh base, the case of one client following a document that changes as fast as
 * it polls. The plugin runs with its default options (but a long encoder deadline in quick
 * mode): the per-client insert budget counts new representations, not new versions of one.
 *
 * After load (a server of its own, the document changing every 20 ms by the clock): one
 * client GETs /big without A-IM for 5 s (quick: 1.5 s), then fetches it once and keeps asking
 * with `A-IM: vcdiff` and `If-None-Match: <that ETag>` for 5 s (quick: 1 s). Target: >= 95%
 * of those answers are 226 (a 412, the document unchanged since the fetch, is not counted).
 * It once got none: the full GETs had spent the client's insert budget, so the instance it
 * fetched was never stored.
 */
const { fork } = require('node:child_process')
const { performance } = require('node:perf_hooks')
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads')

const MiB = 1024 * 1024
const TARGETS = { deltaVsFull: 1.0, tinyP99Ratio: 1.3, eldP99Ms: 20, afterLoadShare: 0.95 }
const AFTER_LOAD = { changeMs: 20, loadMs: 5000, probeMs: 5000, quickLoadMs: 1500, quickProbeMs: 1000 }

// ---------------------------------------------------------------- the document

/** A JSON document of about `bytes` bytes, serialized once, split around a fixed-width revision field in its middle. */
function documentParts (bytes) {
  let seed = 7
  const next = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed >>> 4 }
  const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega'.split(' ')
  const items = []
  let size = 0
  while (size < bytes) {
    const w = []
    for (let i = 0; i < 12 + (next() % 20); i++) w.push(words[next() % words.length])
    const item = { id: items.length, sku: `SKU-${next().toString(36)}`, price: next() % 100000 / 100, stock: next() % 500, tags: [words[next() % words.length], words[next() % words.length]], description: w.join(' ') }
    items.push(item)
    size += JSON.stringify(item).length + 1
  }
  const MARK = '@@REVISION@@'
  items[Math.floor(items.length / 2)].revision = MARK
  const json = JSON.stringify({ kind: 'catalogue', items })
  const at = json.indexOf(MARK)
  return { head: json.slice(0, at), tail: json.slice(at + MARK.length) }
}

const revision = (v) => String(v).padStart(12, '0')
const etagOf = (v) => `"r${v}"`

// ---------------------------------------------------------------- the server (child process)

async function serve (settings) {
  const Fastify = require('fastify')
  const { monitorEventLoopDelay } = require('node:perf_hooks')
  const suite = require('../dist/plugins/index.js')

  const { head, tail } = documentParts(settings.docBytes)
  const every = settings.every
  // settings.changeMs: a new version every changeMs by the clock, instead of every `every` requests.
  const changeMs = settings.changeMs ?? 0
  const t0 = performance.now()
  let version = 1
  let requests = 0
  // The last few versions, serialized once each (the document's bytes around the revision are shared).
  const bodies = new Map()
  function bodyOf (v) {
    let s = bodies.get(v)
    if (s === undefined) {
      s = head + revision(v) + tail
      bodies.set(v, s)
      for (const k of bodies.keys()) if (k < v - 4) bodies.delete(k)
    }
    return s
  }

  const app = Fastify({ ...suite.serverOptions })
  await app.register(suite.httpConventions, { deltaEncoding: settings.deltaEncoding })
  app.decorateRequest('docVersion', 0)
  const validators = (request) => ({ etag: etagOf(request.docVersion) })
  let tally = { statuses: {}, handledMs: {} }
  app.get('/big', {
    config: { deltaEncoding: true, conditional: { validators } },
    onRequest (request, reply, done) {
      if (changeMs > 0) version = 1 + Math.floor((performance.now() - t0) / changeMs)
      else if (requests++ % every === 0 && requests > 1) version++
      request.docVersion = version
      done()
    },
    onResponse (request, reply, done) {
      const s = reply.statusCode
      tally.statuses[s] = (tally.statuses[s] ?? 0) + 1
      tally.handledMs[s] = (tally.handledMs[s] ?? 0) + reply.elapsedTime
      done()
    }
  }, async (request, reply) => {
    reply.type('application/json')
    return bodyOf(request.docVersion)
  })
  app.get('/tiny', async (request, reply) => {
    reply.type('text/plain')
    return 'ok'
  })
  await app.listen({ port: 0, host: '127.0.0.1' })

  // Node's histogram records the interval between samples, the sampling period included:
  // the delay is what exceeds it.
  const RESOLUTION_MS = 10
  const eld = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  eld.enable()
  const delayMs = (ns) => Math.max(0, ns / 1e6 - RESOLUTION_MS)
  let cpu = process.cpuUsage()
  let since = performance.now()
  process.on('message', (m) => {
    if (m.cmd === 'reset') {
      eld.reset()
      cpu = process.cpuUsage()
      since = performance.now()
      tally = { statuses: {}, handledMs: {} }
      process.send({ id: m.id })
    } else if (m.cmd === 'stats') {
      const used = process.cpuUsage(cpu)
      process.send({
        id: m.id,
        eldP99Ms: delayMs(eld.percentile(99)),
        eldMaxMs: delayMs(eld.max),
        cpuMs: (used.user + used.system) / 1000,
        wallMs: performance.now() - since,
        statuses: tally.statuses,
        handledMs: tally.handledMs,
        peakRssMB: process.resourceUsage().maxRSS / 1024
      })
    } else if (m.cmd === 'close') {
      // A clean exit (the encoder pool closed, profiles written under --cpu-prof).
      app.close().then(() => process.exit(0), () => process.exit(1))
    }
  })
  process.send({ port: app.server.address().port, docBytes: Buffer.byteLength(bodyOf(version)) })
}

function startServer (settings) {
  return new Promise((resolve, reject) => {
    // execArgv: []: the server runs on plain node, as in bench/harness.js.
    const child = fork(__filename, ['--serve', JSON.stringify(settings)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let nextId = 1
    const waiting = new Map()
    const ask = (cmd) => new Promise((resolve) => {
      const id = nextId++
      waiting.set(id, resolve)
      child.send({ cmd, id })
    })
    const failed = (code) => reject(new Error(`delta-scale server exited with ${code}`))
    child.once('error', reject)
    child.once('exit', failed)
    child.once('message', (ready) => {
      child.on('message', (m) => {
        const w = waiting.get(m.id)
        waiting.delete(m.id)
        if (w !== undefined) w(m)
      })
      resolve({
        port: ready.port,
        docBytes: ready.docBytes,
        reset: () => ask('reset'),
        stats: () => ask('stats'),
        stop: () => new Promise((resolve) => {
          child.off('exit', failed)
          if (child.exitCode !== null) return resolve()
          const timer = setTimeout(() => child.kill(), 5000)
          child.once('exit', () => { clearTimeout(timer); resolve() })
          child.send({ cmd: 'close' })
        })
      })
    })
  })
}

// ---------------------------------------------------------------- the clients

function percentile (sorted, p) {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function median (xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

async function drain (body) {
  let n = 0
  for await (const chunk of body) n += chunk.length
  return n
}

/** GETs /big in a loop for `ms`; B (`aim`) names the ETag it last received. Returns answers/s, statuses, latencies. */
async function bigLoop (client, ms, aim, state) {
  const statuses = {}
  const latencies = []
  let bytes = 0
  const t0 = performance.now()
  const end = t0 + ms
  while (performance.now() < end) {
    // B is a delta client: A-IM from its first GET (the server keeps bases once a client asked).
    const headers = !aim ? {} : state.etag !== undefined ? { 'a-im': 'vcdiff', 'if-none-match': state.etag } : { 'a-im': 'vcdiff' }
    const t = performance.now()
    const res = await client.request({ path: '/big', method: 'GET', headers })
    bytes += await drain(res.body)
    latencies.push(performance.now() - t)
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    if (typeof res.headers.etag === 'string') state.etag = res.headers.etag
  }
  const elapsed = (performance.now() - t0) / 1000
  latencies.sort((a, b) => a - b)
  const answers = latencies.length
  return { answers, rps: answers / elapsed, statuses, bytesPerS: bytes / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

/** The /tiny client, in a worker thread: { port, ms } in, latencies summary out. */
function tinyWorker () {
  const { Client } = require('undici')
  let client = null
  parentPort.on('message', async ({ port, ms, close }) => {
    if (close) {
      if (client !== null) await client.close()
      parentPort.close()
      return
    }
    client ??= new Client(`http://127.0.0.1:${port}`)
    const latencies = []
    const statuses = {}
    const t0 = performance.now()
    const end = t0 + ms
    while (performance.now() < end) {
      const t = performance.now()
      const res = await client.request({ path: '/tiny', method: 'GET' })
      await res.body.text()
      latencies.push(performance.now() - t)
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    }
    const elapsed = (performance.now() - t0) / 1000
    latencies.sort((a, b) => a - b)
    parentPort.postMessage({ rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1], statuses })
  })
}

function startTiny () {
  const worker = new Worker(__filename, { workerData: { role: 'tiny' } })
  let failed = null
  let pending = null
  worker.on('error', (err) => {
    failed = err
    if (pending !== null) pending.reject(err)
  })
  worker.on('message', (m) => {
    if (pending !== null) pending.resolve(m)
    pending = null
  })
  return {
    run: (port, ms) => new Promise((resolve, reject) => {
      if (failed !== null) return reject(failed)
      pending = { resolve, reject }
      worker.postMessage({ port, ms })
    }),
    close: () => new Promise((resolve) => {
      worker.once('exit', resolve)
      worker.postMessage({ close: true })
    })
  }
}

/** One round of one mode: both clients at once for `ms`, the server's figures around them. */
async function round (server, big, tiny, mode, ms, state) {
  await server.reset()
  const [b, t] = await Promise.all([bigLoop(big, ms, mode === 'B', state), tiny.run(server.port, ms)])
  const s = await server.stats()
  for (const [code, n] of Object.entries(t.statuses)) if (code !== '200' && n > 0) throw new Error(`/tiny answered ${code} (${n} times)`)
  return { mode, big: b, tiny: t, server: s }
}

/** Warm-up check: a 226 decodes, against the instance it names, to the next version of the document. */
async function checkDelta (client, decode) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const first = await client.request({ path: '/big', method: 'GET' })
    const base = Buffer.from(await first.body.arrayBuffer())
    const etag = first.headers.etag
    const res = await client.request({ path: '/big', method: 'GET', headers: { 'a-im': 'vcdiff', 'if-none-match': etag } })
    const body = Buffer.from(await res.body.arrayBuffer())
    if (res.statusCode !== 226) continue
    if (res.headers.im !== 'vcdiff' || res.headers['delta-base'] !== etag) throw new Error(`226 with IM ${res.headers.im} and Delta-Base ${res.headers['delta-base']} (expected vcdiff and ${etag})`)
    const instance = Buffer.from(decode(base, body))
    const v = Number(/^"r(\d+)"$/.exec(res.headers.etag)?.[1])
    if (instance.length !== base.length || !instance.includes(`"revision":"${revision(v)}"`)) throw new Error('the 226 does not decode to the version its ETag names')
    JSON.parse(instance.toString('utf8'))
    return { baseBytes: base.length, deltaBytes: body.length }
  }
  throw new Error('no 226 in 5 attempts: the delta path does not answer (store, budget or encoder pool)')
}

/**
 * After load: full GETs for `loadMs`, then one fetch, then A-IM requests naming that fetch's
 * ETag for `probeMs` (the document changes every AFTER_LOAD.changeMs). Returns the counts.
 */
async function afterLoad (serverSettings, loadMs, probeMs) {
  const { Client } = require('undici')
  const server = await startServer({ ...serverSettings, changeMs: AFTER_LOAD.changeMs })
  const client = new Client(`http://127.0.0.1:${server.port}`, { bodyTimeout: 60_000, headersTimeout: 60_000 })
  try {
    let loadGets = 0
    let end = performance.now() + loadMs
    while (performance.now() < end) {
      const res = await client.request({ path: '/big', method: 'GET' })
      await drain(res.body)
      if (res.statusCode !== 200) throw new Error(`after load: a full GET answered ${res.statusCode}`)
      loadGets++
    }
    // The client fetches once as a delta client does (A-IM), then asks for deltas against it.
    const first = await client.request({ path: '/big', method: 'GET', headers: { 'a-im': 'vcdiff' } })
    await drain(first.body)
    const etag = first.headers.etag
    const statuses = {}
    end = performance.now() + probeMs
    while (performance.now() < end) {
      const res = await client.request({ path: '/big', method: 'GET', headers: { 'a-im': 'vcdiff', 'if-none-match': etag } })
      await drain(res.body)
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1
    }
    const answers = Object.values(statuses).reduce((a, b) => a + b, 0)
    const counted = answers - (statuses[412] ?? 0)
    const s226 = statuses[226] ?? 0
    return { loadMs, probeMs, loadGets, answers, s226, s200: statuses[200] ?? 0, s412: statuses[412] ?? 0, share226: counted === 0 ? 0 : s226 / counted }
  } finally {
    await client.close()
    await server.stop()
  }
}

// ---------------------------------------------------------------- the benchmark

function settingsFrom (opts) {
  const env = process.env
  const num = (v, d) => (v === undefined || v === '' ? d : Number(v))
  const quick = opts.quick ?? env.BENCH_QUICK === '1'
  const rounds = opts.rounds ?? (quick ? 1 : num(env.BENCH_ROUNDS, 5))
  const seconds = opts.seconds ?? (quick ? 1 : num(env.BENCH_SECONDS, 3))
  const mib = num(env.BENCH_DELTA_SCALE_MIB, 6)
  const every = num(env.BENCH_DELTA_SCALE_EVERY, 1)
  if (!(Number.isInteger(rounds) && rounds > 0) || !(seconds > 0) || !(mib > 0) || !(Number.isInteger(every) && every > 0)) {
    throw new Error('BENCH_ROUNDS and BENCH_DELTA_SCALE_EVERY must be positive integers, BENCH_SECONDS and BENCH_DELTA_SCALE_MIB positive')
  }
  // Quick mode checks that the path works (on a loaded machine too): the pool gets a long deadline.
  const deltaEncoding = env.BENCH_DELTA_SCALE_OPTIONS ? JSON.parse(env.BENCH_DELTA_SCALE_OPTIONS) : quick ? { offload: { deadlineMs: 60_000 } } : {}
  const afterLoad = quick ? { loadMs: AFTER_LOAD.quickLoadMs, probeMs: AFTER_LOAD.quickProbeMs } : { loadMs: AFTER_LOAD.loadMs, probeMs: AFTER_LOAD.probeMs }
  return { quick, rounds, seconds, afterLoad, server: { docBytes: Math.round(mib * MiB), every, deltaEncoding } }
}

const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-')
const status = (ok) => (ok ? 'MET' : 'MISSED')

/** Runs the benchmark; prints its tables with console.log; returns medians, ratios and the targets' inputs. */
async function run (opts = {}) {
  const { Client } = require('undici')
  const { decode } = require('../packages/vcdiff/dist/index.js')
  const s = settingsFrom(opts)
  const server = await startServer(s.server)
  const big = new Client(`http://127.0.0.1:${server.port}`, { bodyTimeout: 60_000, headersTimeout: 60_000 })
  const tiny = startTiny()
  const rounds = { A: [], B: [] }
  let check
  let idle
  try {
    check = await checkDelta(big, decode)
    // The server with no client: the delay the shared machine alone causes.
    await server.reset()
    await new Promise((resolve) => setTimeout(resolve, s.quick ? 500 : 1000))
    idle = await server.stats()
    const state = { etag: undefined }
    const warm = s.quick ? 500 : 1000
    await round(server, big, tiny, 'A', warm, state)
    await round(server, big, tiny, 'B', warm, state)
    for (let i = 0; i < s.rounds; i++) {
      rounds.A.push(await round(server, big, tiny, 'A', s.seconds * 1000, state))
      rounds.B.push(await round(server, big, tiny, 'B', s.seconds * 1000, state))
    }
  } finally {
    await big.close()
    await tiny.close()
    await server.stop()
  }

  const m = (mode, f) => median(rounds[mode].map(f))
  const sum = (mode, code) => rounds[mode].reduce((n, r) => n + (r.big.statuses[code] ?? 0), 0)
  const total = (mode) => rounds[mode].reduce((n, r) => n + r.big.answers, 0)
  const serverMs = (mode, code) => {
    let n = 0
    let ms = 0
    for (const r of rounds[mode]) { n += r.server.statuses[code] ?? 0; ms += r.server.handledMs[code] ?? 0 }
    return n === 0 ? NaN : ms / n
  }
  const side = (mode) => ({
    bigPerS: m(mode, (r) => r.big.rps),
    bigP50Ms: m(mode, (r) => r.big.p50),
    bigP99Ms: m(mode, (r) => r.big.p99),
    bigKiBPerS: m(mode, (r) => r.big.bytesPerS / 1024),
    tinyP50Ms: m(mode, (r) => r.tiny.p50),
    tinyP99Ms: m(mode, (r) => r.tiny.p99),
    tinyPerS: m(mode, (r) => r.tiny.rps),
    eldP99Ms: m(mode, (r) => r.server.eldP99Ms),
    eldMaxMs: m(mode, (r) => r.server.eldMaxMs),
    cpuPct: m(mode, (r) => 100 * r.server.cpuMs / r.server.wallMs),
    serverMs200: serverMs(mode, 200),
    serverMs226: serverMs(mode, 226),
    answers: total(mode),
    s200: sum(mode, 200),
    s226: sum(mode, 226)
  })
  const A = side('A')
  const B = side('B')
  // After the rounds, on a server of its own (the other's store and encoder cache left behind).
  const after = await afterLoad(s.server, s.afterLoad.loadMs, s.afterLoad.probeMs)
  const deltasPerS = m('B', (r) => (r.big.statuses[226] ?? 0) / (r.big.answers / r.big.rps))
  const v = {
    quick: s.quick,
    rounds: s.rounds,
    seconds: s.seconds,
    docBytes: server.docBytes,
    every: s.server.every,
    check,
    idleEldP99Ms: idle.eldP99Ms,
    idleEldMaxMs: idle.eldMaxMs,
    A,
    B,
    deltasPerS,
    share226: B.answers === 0 ? 0 : B.s226 / B.answers,
    share200: B.answers === 0 ? 0 : B.s200 / B.answers,
    otherB: B.answers - B.s226 - B.s200,
    otherA: A.answers - A.s200,
    deltaVsFull: deltasPerS / A.bigPerS,
    tinyP99Ratio: B.tinyP99Ms / A.tinyP99Ms,
    peakRssMB: Math.max(...[...rounds.A, ...rounds.B].map((r) => r.server.peakRssMB)),
    afterLoad: after
  }
  print(v)
  if (v.otherA > 0) throw new Error(`mode A received ${v.otherA} answers other than 200`)
  if (B.s226 === 0) throw new Error('mode B received no 226: the benchmark measured no deltas')
  return v
}

function print (v) {
  const { A, B } = v
  const ok = {
    delta: v.deltaVsFull >= TARGETS.deltaVsFull,
    tiny: v.tinyP99Ratio <= TARGETS.tinyP99Ratio,
    eldA: A.eldP99Ms <= TARGETS.eldP99Ms,
    eldB: B.eldP99Ms <= TARGETS.eldP99Ms
  }
  console.log(`${(v.docBytes / MiB).toFixed(2)} MiB JSON document, a new version every ${v.every} request(s) to /big (a few bytes change in its middle); ` +
    `${v.rounds} round(s) of ${v.seconds} s per mode, alternated, medians.${v.quick ? ' Quick mode: a smoke test, not a measurement.' : ''}`)
  console.log(`Warm-up check: a 226 of ${v.check.deltaBytes} B decoded against its ${v.check.baseBytes} B base to the version its ETag names.`)
  console.log('')
  console.log('| metric | A: no A-IM (200s) | B: A-IM vcdiff + If-None-Match | B/A | target |')
  console.log('|---|---:|---:|---:|---|')
  console.log(`| /big answers/s (B: 226 deltas/s) | ${fmt(A.bigPerS)} | ${fmt(v.deltasPerS)} | ${fmt(v.deltaVsFull, 2)} | deltas/s >= full GETs/s: ${status(ok.delta)} |`)
  console.log(`| /big answers/s, every status | ${fmt(A.bigPerS)} | ${fmt(B.bigPerS)} | ${fmt(B.bigPerS / A.bigPerS, 2)} | |`)
  console.log(`| /big latency p50 / p99 ms | ${fmt(A.bigP50Ms)} / ${fmt(A.bigP99Ms)} | ${fmt(B.bigP50Ms)} / ${fmt(B.bigP99Ms)} | | |`)
  console.log(`| /big KiB/s received | ${fmt(A.bigKiBPerS, 0)} | ${fmt(B.bigKiBPerS, 2)} | | |`)
  console.log(`| /tiny p99 ms | ${fmt(A.tinyP99Ms, 2)} | ${fmt(B.tinyP99Ms, 2)} | ${fmt(v.tinyP99Ratio, 2)} | <= ${TARGETS.tinyP99Ratio}x: ${status(ok.tiny)} |`)
  console.log(`| /tiny p50 ms, req/s | ${fmt(A.tinyP50Ms, 2)}, ${fmt(A.tinyPerS, 0)} | ${fmt(B.tinyP50Ms, 2)}, ${fmt(B.tinyPerS, 0)} | | |`)
  console.log(`| server event-loop delay p99 ms (max) | ${fmt(A.eldP99Ms)} (${fmt(A.eldMaxMs)}) | ${fmt(B.eldP99Ms)} (${fmt(B.eldMaxMs)}) | | <= ${TARGETS.eldP99Ms} ms: A ${status(ok.eldA)}, B ${status(ok.eldB)}; idle server ${fmt(v.idleEldP99Ms)} (${fmt(v.idleEldMaxMs)}) |`)
  console.log(`| server CPU, % of one core (all threads, both routes) | ${fmt(A.cpuPct, 0)} | ${fmt(B.cpuPct, 0)} | | |`)
  console.log(`| server time per /big answer, onRequest to onResponse, ms | 200: ${fmt(A.serverMs200)} | 226: ${fmt(B.serverMs226)}, 200: ${fmt(B.serverMs200)} | | |`)
  console.log('')
  console.log(`B's answers: ${B.answers}, of which 226: ${B.s226} (${(100 * v.share226).toFixed(1)}%), 200: ${B.s200} (${(100 * v.share200).toFixed(1)}%), other: ${v.otherB}. ` +
    'A 200 in B means the encoder pool was saturated or past its deadline, the delta was not smaller, or the base was not stored (insert budget, store bound). ' +
    `Server peak RSS ${fmt(v.peakRssMB, 0)} MB.`)
  const L = v.afterLoad
  console.log('')
  console.log(`After load (a new version every ${AFTER_LOAD.changeMs} ms): ${L.loadGets} full GETs in ${fmt(L.loadMs / 1000)} s, one fetch, then ${L.answers} requests with A-IM: vcdiff and its ETag in ${fmt(L.probeMs / 1000)} s: ` +
    `226: ${L.s226}, 200: ${L.s200}, 412: ${L.s412}; 226 share (412s aside) ${(100 * L.share226).toFixed(1)}%, target >= ${100 * TARGETS.afterLoadShare}%: ${status(L.share226 >= TARGETS.afterLoadShare)}.`)
}

/** The report's targets (bench/report.js), from `run`'s result. */
function targets (v) {
  const { A, B } = v
  const share = `226 share ${(100 * v.share226).toFixed(1)}%`
  const eldOk = A.eldP99Ms <= TARGETS.eldP99Ms && B.eldP99Ms <= TARGETS.eldP99Ms
  return [
    {
      section: 'delta-scale',
      target: `6 MiB document: 226 deltas/s >= full GETs/s (>= ${TARGETS.deltaVsFull}x)`,
      measured: `${fmt(v.deltaVsFull, 2)}x (${fmt(v.deltasPerS)} vs ${fmt(A.bigPerS)}/s; ${share})`,
      status: status(v.deltaVsFull >= TARGETS.deltaVsFull),
      why: v.deltaVsFull >= TARGETS.deltaVsFull ? '' : `${fmt(v.deltasPerS)} deltas/s against ${fmt(A.bigPerS)} full GETs/s; server time per 226 ${fmt(B.serverMs226)} ms against ${fmt(A.serverMs200)} ms per 200; ${share}`
    },
    {
      section: 'delta-scale',
      target: `/tiny p99 beside the 6 MiB route, with A-IM <= ${TARGETS.tinyP99Ratio}x without`,
      measured: `${fmt(v.tinyP99Ratio, 2)}x (${fmt(B.tinyP99Ms, 2)} vs ${fmt(A.tinyP99Ms, 2)} ms)`,
      status: status(v.tinyP99Ratio <= TARGETS.tinyP99Ratio),
      why: v.tinyP99Ratio <= TARGETS.tinyP99Ratio ? '' : `p99 ${fmt(B.tinyP99Ms, 2)} ms with A-IM against ${fmt(A.tinyP99Ms, 2)} ms without; server event-loop delay p99 ${fmt(B.eldP99Ms)} vs ${fmt(A.eldP99Ms)} ms`
    },
    {
      section: 'delta-scale',
      target: `server event-loop delay p99 <= ${TARGETS.eldP99Ms} ms (6 MiB route, with and without A-IM)`,
      measured: `without ${fmt(A.eldP99Ms)} ms, with ${fmt(B.eldP99Ms)} ms`,
      status: status(eldOk),
      why: eldOk ? '' : `p99 without A-IM ${fmt(A.eldP99Ms)} ms (max ${fmt(A.eldMaxMs)}), with ${fmt(B.eldP99Ms)} ms (max ${fmt(B.eldMaxMs)})`
    },
    {
      section: 'delta-scale',
      target: `after ${fmt(v.afterLoad.loadMs / 1000)} s of full GETs of the 6 MiB document (a version every ${AFTER_LOAD.changeMs} ms), >= ${100 * TARGETS.afterLoadShare}% of delta requests get a 226`,
      measured: `${(100 * v.afterLoad.share226).toFixed(1)}% (${v.afterLoad.s226} of ${v.afterLoad.answers - v.afterLoad.s412}; ${v.afterLoad.loadGets} full GETs before)`,
      status: status(v.afterLoad.share226 >= TARGETS.afterLoadShare),
      why: v.afterLoad.share226 >= TARGETS.afterLoadShare ? '' : `226: ${v.afterLoad.s226}, 200: ${v.afterLoad.s200}, 412: ${v.afterLoad.s412}`
    }
  ]
}

module.exports = { run, targets, documentParts, afterLoad }

if (!isMainThread) {
  if (workerData?.role === 'tiny') tinyWorker()
} else if (process.argv[2] === '--serve') {
  serve(JSON.parse(process.argv[3])).catch((err) => { console.error(err); process.exit(1) })
} else if (require.main === module) {
  run().catch((err) => { console.error(err); process.exit(1) })
}
