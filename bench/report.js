'use strict'
/**
 * The benchmark report: every benchmark of the suite side by side in one run, plus the
 * articles service against the same service written on Express 5
 * (bench/express-service.js), written to bench/RESULTS.md and bench/results.svg.
 *
 *   npm run build && node bench/report.js              # everything (about 8 minutes)
 *   node bench/report.js express conditional           # only these sections
 *   BENCH_QUICK=1 node bench/report.js                 # smoke test: 1 round of 1 s per pair
 *
 * Env: BENCH_ROUNDS (default 5) and BENCH_SECONDS (default 3) for the autocannon pairs;
 * BENCH_PROCESSES (3), BENCH_CPU_ROUNDS (3) and BENCH_REQUESTS (15000), BENCH_WARMUP_MS (300) for the CPU rows
 * (bench/harness.js `comparePaired`: wrk, which must be installed); BENCH_QUICK=1,
 * BENCH_OUT (directory of RESULTS.md and results.svg, default bench/).
 *
 * Sections: foundation (Content-Type, Content-Length, validation), real-shaped (a shared
 * schema, a $ref body, a coerced query string), conditional, patch, auth, bodies (the
 * 1 MiB worst case of every body reader against JSON.parse),
 * delta and vcdiff (A-IM), express (the service vs Express 5), stack (the service vs the same
 * service assembled from Fastify plugins by hand, and vs plain Fastify), postgres (the service on
 * PostgreSQL vs SQLite).
 * Peak memory: VmHWM of every server process this process forks, sampled from /proc.
 */
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { performance } = require('node:perf_hooks')
const { comparePaired } = require('./harness')
const { ARTICLE_IDS, BASIC, BODY_2KB } = require('./express-service')

const SECTIONS = ['allocation', 'foundation', 'real-shaped', 'conditional', 'patch', 'auth', 'bodies', 'delta', 'delta-scale', 'vcdiff', 'express', 'stack', 'postgres']
const EXPRESS_TARGET = '>= 1.6'

// ---------------------------------------------------------------- options

function options (opts = {}) {
  const env = process.env
  const quick = opts.quick ?? env.BENCH_QUICK === '1'
  const num = (v, d) => (v === undefined || v === '' ? d : Number(v))
  const rounds = opts.rounds ?? (quick ? 1 : num(env.BENCH_ROUNDS, 5))
  const seconds = opts.seconds ?? (quick ? 1 : num(env.BENCH_SECONDS, 3))
  if (!(Number.isInteger(rounds) && rounds > 0) || !(seconds > 0)) throw new Error('BENCH_ROUNDS must be a positive integer and BENCH_SECONDS positive')
  const only = opts.only ?? SECTIONS
  for (const s of only) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; sections: ${SECTIONS.join(', ')}`)
  const expressRoutes = opts.expressRoutes ?? Object.keys(EXPRESS_ROUTES)
  for (const r of expressRoutes) if (EXPRESS_ROUTES[r] === undefined) throw new Error(`unknown Express route ${r}`)
  return {
    quick,
    rounds,
    seconds,
    only,
    expressRoutes,
    outDir: opts.outDir ?? env.BENCH_OUT ?? __dirname,
    log: opts.log ?? ((line) => process.stderr.write(line + '\n'))
  }
}

// ---------------------------------------------------------------- peak memory of server processes

/**
 * Samples the peak RSS (VmHWM) of every child process of this one, from /proc. `take()`
 * returns the processes first seen since the previous call, in start order.
 */
class MemoryWatcher {
  constructor (intervalMs = 100) {
    this.intervalMs = intervalMs
    this.procs = new Map()
    this.taken = new Set()
    this.available = fs.existsSync(`/proc/${process.pid}/status`)
  }

  start () {
    if (!this.available) return
    this.timer = setInterval(() => this.sample(), this.intervalMs)
    this.timer.unref()
  }

  stop () {
    clearInterval(this.timer)
  }

  children () {
    try {
      return fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
    } catch {
      // no CONFIG_PROC_CHILDREN: scan /proc for our children
      const out = []
      for (const d of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(d)) continue
        try {
          const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8')
          if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) out.push(Number(d))
        } catch {}
      }
      return out
    }
  }

  sample () {
    for (const pid of this.children()) {
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status)
        if (hwm === null) continue
        let p = this.procs.get(pid)
        if (p === undefined) {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
          const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
          const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
          const script = argv.findIndex((a) => a.endsWith('.js'))
          const label = argv.slice(script + 1).filter((a) => a !== '--serve' && !a.startsWith('{')).join(' ') || path.basename(argv[script] ?? '?')
          p = { pid, start, label, script: path.basename(argv[script] ?? ''), peakKB: 0 }
          this.procs.set(pid, p)
        }
        p.peakKB = Math.max(p.peakKB, Number(hwm[1]))
      } catch {}
    }
  }

  take () {
    this.sample()
    const fresh = [...this.procs.values()].filter((p) => !this.taken.has(p.pid)).sort((a, b) => a.start - b.start || a.pid - b.pid)
    for (const p of fresh) this.taken.add(p.pid)
    return fresh
  }
}

// A server process lives in `compare` or `comparePaired` until its last round; sampling while
// it runs catches its peak. A CPU row starts `processes` pairs of processes (A then B, or one
// process when both sides are one variant); a side's peak is the largest of its processes.
// Processes started after the rows (the bytes-per-request ones) are not attributed. CPU rows
// get a peak only where `cpuRows` (the Express section, which showed it with autocannon).
function attachMemory (rows, all, { cpuRows = false } = {}) {
  // only server processes (wrk, the CPU rows' load generator, is a child process too)
  const procs = all.filter((p) => p.script === 'server.js')
  // in-process rows (no latency) have no server process
  const pairs = rows.filter((r) => typeof r.bReqPerSec === 'number' && typeof r.aP99ms === 'number')
  if (!cpuRows && pairs.some((r) => r.method === 'cpu')) return
  const per = (r) => (r.processes ?? 1) * (r.shared ? 1 : 2)
  if (procs.length < pairs.reduce((n, r) => n + per(r), 0)) return
  let at = 0
  for (const r of pairs) {
    const mine = procs.slice(at, at + per(r))
    at += per(r)
    const a = r.shared ? mine : mine.filter((_, i) => i % 2 === 0)
    const b = r.shared ? mine : mine.filter((_, i) => i % 2 === 1)
    r.aPeakMB = round(Math.max(...a.map((p) => p.peakKB)) / 1024, 1)
    r.bPeakMB = round(Math.max(...b.map((p) => p.peakKB)) / 1024, 1)
    r.aProcess = a[0].label
    r.bProcess = b[0].label
  }
}

// ---------------------------------------------------------------- the sections

/** Runs `fn` with console.log captured (and still shown on stderr); returns { value, output }. */
async function captured (fn) {
  const lines = []
  const original = console.log
  console.log = (...args) => {
    const line = args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')
    lines.push(line)
    process.stderr.write(line + '\n')
  }
  try {
    return { value: await fn(), output: lines.join('\n') }
  } finally {
    console.log = original
  }
}

// Same routes on both services: a 2 KB article, the list of the 10 seeded (21 KB), writes with
// Basic auth; `aa`: the A/A row (ours against ours in other processes, the GET).
const writeHeaders = { authorization: BASIC, 'content-type': 'application/json' }
const UNIQUE = 'uniq0'
const EXPRESS_ROUTES = {
  get: { title: 'GET /articles/:id (2 KB article)', expect: 200, request: { path: `/articles/${ARTICLE_IDS[0]}` } },
  list: { title: 'GET /articles (10 articles, 21 KB)', expect: 200, request: { path: '/articles' } },
  post: {
    title: 'POST /articles (Basic auth, validation, insert)',
    expect: 201,
    // every POST creates an article: the harness gives each its own slug (`unique`)
    request: { path: '/articles', method: 'POST', headers: writeHeaders, body: JSON.stringify({ slug: `post-${UNIQUE}`, title: 'A new article', body: BODY_2KB.slice(0, 1000), tags: ['bench', 'new'], published: true }), unique: UNIQUE }
  },
  put: {
    title: 'PUT /articles/:id (Basic auth, validation, replace)',
    expect: 200,
    request: { path: `/articles/${ARTICLE_IDS[1]}`, method: 'PUT', headers: writeHeaders, body: JSON.stringify({ slug: 'bench-article-2', title: 'Replaced', body: BODY_2KB, tags: ['bench', 'odd'], published: false }) }
  },
  aa: { title: 'A/A: ours against ours, GET /articles/:id', expect: 200, aa: true, request: { path: `/articles/${ARTICLE_IDS[0]}` } }
}

/**
 * The service against Express 5 on the CPU harness (bench/harness.js `comparePaired`: CPU
 * time per request, paired rounds), then the bytes each allocates per request (bench/
 * allocation.js `measure`), each side twice (a twin process: the A/A of the bytes).
 */
async function runExpress (o) {
  const rows = []
  const ours = (request, expect) => ({ name: 'ours (reference service)', variant: 'express-service:fastify', request, expectStatus: expect })
  for (const key of o.expressRoutes) {
    const { title, request, expect, aa } = EXPRESS_ROUTES[key]
    o.log(`express: ${title}`)
    rows.push(aa === true
      ? await comparePaired(title, { ...ours(request, expect), target: 'reported' }, { ...ours(request, expect), extra: { twin: true } })
      : await comparePaired(title, { ...ours(request, expect), target: EXPRESS_TARGET }, { name: 'Express 5', variant: 'express-service:express', request, expectStatus: expect }))
  }
  o.log('express: bytes allocated per request')
  const allocation = require('./allocation.js')
  const opts = o.quick ? { warmup: 500, window: 1000 } : { warmup: 3000, window: 20000 }
  const refused = []
  // null where the GC trace was refused twice (bench/allocation.js `readWindow`): printed as unmeasured, never as a number.
  const bytes = async (variant, title, request, expect, extra) => {
    const result = await allocation.measure({ name: `${variant}: ${title}`, variant: `express-service:${variant}`, request, expectStatus: expect, ...(extra ? { extra } : {}) }, opts)
    if (result.bytes === null) refused.push(`${result.name}${extra?.twin ? ' (twin)' : ''}: ${result.untrusted}`)
    return allocation.wholeBytes(result)
  }
  // An array property, as bodies' growth rows: the section's value stays its rows.
  rows.allocation = []
  for (const key of o.expressRoutes) {
    const { title, request, expect, aa } = EXPRESS_ROUTES[key]
    if (aa === true) continue
    rows.allocation.push({
      request: title,
      ours: await bytes('fastify', title, request, expect),
      oursTwin: await bytes('fastify', title, request, expect, { twin: true }),
      express: await bytes('express', title, request, expect),
      expressTwin: await bytes('express', title, request, expect, { twin: true })
    })
  }
  rows.allocation.untrusted = refused
  return rows
}

function expressAllocationTable (rows) {
  const lines = ['| request | ours B/req | ours A/A twin B/req | Express 5 B/req | Express A/A twin B/req | ours/Express |', '|---|---:|---:|---:|---:|---:|']
  const { UNMEASURED } = require('./allocation.js')
  const cell = (x) => x ?? UNMEASURED
  for (const r of rows) lines.push(`| ${r.request} | ${cell(r.ours)} | ${cell(r.oursTwin)} | ${cell(r.express)} | ${cell(r.expressTwin)} | ${r.ours === null || r.express === null ? UNMEASURED : (r.ours / r.express).toFixed(3)} |`)
  for (const why of rows.untrusted ?? []) lines.push('', `- ${why}`)
  return lines.join('\n')
}

async function runSection (name, o) {
  switch (name) {
    case 'foundation':
    case 'real-shaped':
    case 'conditional':
    case 'auth':
      return captured(() => require(`./${name}.js`).run())
    case 'bodies':
      return captured(() => require('./bodies.js').run())
    case 'allocation':
      return captured(() => require('./allocation.js').run({ rounds: o.quick ? 1 : 3 }))
    case 'delta':
      return captured(() => require('./delta.js').run())
    case 'delta-scale':
      return captured(() => require('./delta-scale.js').run({ quick: o.quick, rounds: o.rounds, seconds: o.seconds }))
    case 'vcdiff':
      return captured(() => require('./vcdiff.js').runFresh())
    case 'patch':
      return captured(() => require('./patch.js').run())
    case 'express':
      return captured(() => runExpress(o))
    case 'stack':
      return captured(() => require('./stack.js').run({ quick: o.quick }))
    case 'postgres':
      return captured(() => require('./postgres.js').run({ rounds: o.rounds, duration: o.seconds }))
  }
}

// ---------------------------------------------------------------- targets

function parseTarget (t) {
  const m = /^(>=|<=)\s*([\d.]+)/.exec(String(t ?? ''))
  return m === null ? null : { op: m[1], value: Number(m[2]) }
}

function meets (value, target) {
  return target.op === '>=' ? value >= target.value : value <= target.value
}

// Where a missed ratio most likely comes from, from what each side does per request.
const HINTS = {
  'GET /articles/:id (2 KB article)': 'per 200 ours evaluates the preconditions on its validators, negotiates Accept for the ETag, and keeps the 2 KB body as a delta base in the instance store (RFC 3229: every 200 to GET is a possible base); Express reads the article and hashes the body (sha1) for its ETag',
  'GET /articles (10 articles, 21 KB)': 'both read 10 rows; ours serializes through the response schema (fast-json-stringify), Express through JSON.stringify and then hashes the 21 KB body for its ETag',
  'POST /articles (Basic auth, validation, insert)': 'ours runs the auth plugin (Basic among Digest/Bearer), Content-Length and media-type checks and Ajv; Express runs express-basic-auth and a hand-written validator; both hash the new article (sha256) in the store and insert into SQLite, which costs both sides the same and shrinks the ratio',
  'PUT /articles/:id (Basic auth, validation, replace)': 'ours evaluates preconditions (an extra SQLite read for the validators) before the replace, which reads again and writes; the shared SQLite write and sha256 dominate both sides'
}

function ratioTarget (section, row) {
  const t = parseTarget(row.target)
  if (t === null || typeof row.ratio !== 'number') return null
  const ok = meets(row.ratio, t)
  let why = ''
  if (!ok) {
    const pct = Math.abs(100 * (row.ratio - t.value) / t.value).toFixed(0)
    why = `${row.ratio}x is ${pct}% short of ${t.value}x: ` +
      (row.method === 'cpu'
        ? `${row.a} ${row.aCpuUs} µs of CPU per request against ${row.b} ${row.bCpuUs} µs (medians; B/A per process ${row.perProcess.join(', ')}), ${row.aReqPerSec} vs ${row.bReqPerSec} req/s`
        : `${row.a} ${row.aReqPerSec}/s against ${row.b} ${row.bReqPerSec}/s`) +
      (typeof row.aP99ms === 'number' ? `, p99 ${row.aP99ms} vs ${row.bP99ms} ms` : '') +
      (HINTS[row.benchmark] ? `; ${HINTS[row.benchmark]}` : '') +
      (row.detail ? `; ${row.detail}` : '')
  }
  return { section, target: `${row.benchmark}: ${row.target}x`, measured: `${row.ratio}x`, status: ok ? 'MET' : 'MISSED', why }
}

/** The corpus rows of one encoder level (rows without a level: results from before levels, the default). */
function vcdiffRows (all, level) {
  // The "unrelated" row proves tryEncode gives up (no delta, no xdelta3 figures): not a corpus document.
  return all.filter((r) => !r.doc.startsWith('unrelated') && (r.level ?? 'default') === level)
}

/** Every row at or under (`<=`) or at or over (`>=`) `limit` in `key`: one target. */
function vcdiffTarget (rows, key, op, limit, label, detail) {
  const geo = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length)
  const bad = (r) => (op === '>=' ? !(r[key] >= limit) : r[key] > limit)
  const worst = rows.reduce((m, r) => ((op === '>=' ? r[key] < m[key] : r[key] > m[key]) ? r : m))
  const missed = rows.filter(bad)
  return {
    section: 'vcdiff',
    target: `VCDIFF ${label}`,
    limit: `${op} ${limit}`,
    measured: `worst ${worst[key]}x (${worst.doc}), geomean ${round(geo(rows.map((r) => r[key])), 3)}x, ${rows.length - missed.length} of ${rows.length} documents met`,
    status: missed.length === 0 ? 'MET' : 'MISSED',
    why: missed.length === 0 ? '' : `${op === '>=' ? 'below' : 'over'} ${limit}x on ${missed.length} of ${rows.length} documents: ${missed.map((r) => `${r.doc} ${r[key]}x${detail(r)}`).join(', ')}`
  }
}

/**
 * The default level: deltas about the size of `xdelta3 -3`'s (its speed against xdelta3 -1
 * is shown in the table, no target). The fast level: at least the speed of `xdelta3 -1`, net
 * of its process start, with deltas no larger than its own, on every document.
 */
function vcdiffTargets (all) {
  const out = []
  const def = vcdiffRows(all, 'default')
  if (def.length > 0) {
    out.push(vcdiffTarget(def, 'sizeVsXd3Level3', '<=', 1.25, 'default level: delta size <= 1.25x `xdelta3 -3 -S none -A -n` on every document', (r) => ` (${r.deltaBytes} B vs ${r.xd3Level3Bytes} B)`))
    out.push(vcdiffTarget(def, 'gzipVsXd3Level3', '<=', 1.0, 'default level: gzipped delta size <= 1.0x gzipped `xdelta3 -3` on every document', (r) => ` (${r.gzipBytes} B vs ${r.xd3Level3GzipBytes} B gzipped)`))
  }
  const fast = vcdiffRows(all, 'fast')
  if (fast.length > 0) {
    out.push(vcdiffTarget(fast, 'speedVsXd3Fast1', '>=', 1.0, 'fast level: encode speed >= 1.0x `xdelta3 -1` (net of its process start) on every document', () => ''))
    out.push(vcdiffTarget(fast, 'sizeVsXd3Level1', '<=', 1.0, 'fast level: delta size <= 1.0x `xdelta3 -1 -S none -A -n` on every document', (r) => ` (${r.deltaBytes} B vs ${r.xd3Level1Bytes} B)`))
  }
  return out
}

function deltaTargets (v) {
  const pct = (x) => `${(100 * x).toFixed(2)}%`
  const MiB = 1024 * 1024
  return [
    {
      section: 'delta',
      target: '226 <= 2% of the 200 (one-paragraph edit of a 100 KB article, bytes on the wire)',
      measured: `${pct(v.wire.ratio)} (${v.wire.delta} B vs ${v.wire.full} B)`,
      status: v.wire.ratio <= 0.02 ? 'MET' : 'MISSED',
      why: v.wire.ratio <= 0.02 ? '' : `the 226 is ${v.wire.delta} B of ${v.wire.full} B`
    },
    {
      section: 'delta',
      target: 'instance store within its bound under 10k distinct instances',
      measured: `charged ${(v.memory.peak / MiB).toFixed(1)} MiB, held ${(v.memory.measured / MiB).toFixed(1)} MiB, bound ${(v.memory.maxBytes / MiB).toFixed(0)} MiB`,
      status: v.memory.peak <= v.memory.maxBytes && v.memory.measured <= v.memory.maxBytes ? 'MET' : 'MISSED',
      why: v.memory.peak <= v.memory.maxBytes && v.memory.measured <= v.memory.maxBytes ? '' : `the process holds ${(v.memory.measured / MiB).toFixed(1)} MiB for a ${(v.memory.maxBytes / MiB).toFixed(0)} MiB bound`
    }
  ]
}

// The PostgreSQL comparison has no target: its ratio is printed for information.
const TITLES = {
  allocation: 'Bytes allocated per request: what each part of the suite costs a GET 2 KB JSON',
  express: 'Ours vs Express 5, same articles service',
  stack: 'Ours vs the stack a user would assemble (Fastify + @fastify/basic-auth + fast-json-patch + the contract by hand), and vs plain Fastify',
  foundation: 'Foundation: Content-Type, Content-Length, validation',
  'real-shaped': 'An app shaped like a real service: a shared schema, a body schema that $refs it, a coerced query string',
  conditional: 'Conditional requests',
  patch: 'PATCH',
  auth: 'Authentication',
  bodies: 'Hostile bodies: the 1 MiB worst case of every body reader',
  delta: 'Delta encoding on the wire, instance store memory',
  'delta-scale': 'Delta encoding of a 6 MiB document under load, beside a tiny route',
  vcdiff: 'VCDIFF encoder vs xdelta3',
  postgres: 'Articles on PostgreSQL vs SQLite, same reference service'
}

function targetsOf (name, result) {
  if (result.error !== undefined) {
    return [{ section: name, target: `${name} benchmarks`, measured: '-', status: 'NOT MEASURED', why: `the ${name} benchmark failed: ${result.error}` }]
  }
  const v = result.value
  if (name === 'vcdiff') return vcdiffTargets(v)
  if (name === 'delta') return deltaTargets(v)
  if (name === 'delta-scale') return require('./delta-scale.js').targets(v)
  if (name === 'bodies') return require('./bodies.js').targets(v)
  if (name === 'allocation') return require('./allocation.js').targets(v)
  if (name === 'stack') return v.rows.map((row) => ratioTarget(name, row)).filter((t) => t !== null).concat(require('./stack.js').allocationTargets(v.allocation))
  return v.map((row) => ratioTarget(name, row)).filter((t) => t !== null)
}

// ---------------------------------------------------------------- the scorecard

/**
 * The cost targets, one line each (a line may hold several rows of a section, e.g. every stack
 * route): which target of the run decides it (`section` and a test on the target's text).
 * A target of a section that did not run is "not measured".
 */
const SCORECARD = [
  ['ours vs the hand-built stack, every route (CPU)', '>= 1.0x', 'stack', (t) => / ours vs hand-built stack: >= 1\.0x$/.test(t)],
  ['ours vs the hand-built stack, every route (bytes/request)', '<= 1.0x', 'stack', (t) => t.startsWith('bytes/request: ')],
  ['default GET route, bytes/request vs bare', '<= 1.03x', 'allocation', (t) => t.startsWith('the whole suite, default route')],
  ['POST JSON + body schema, whole suite, bytes/request vs bare', '<= 1.05x', 'allocation', (t) => t.startsWith('POST JSON + body schema, the whole suite')],
  ['POST JSON + body schema, route with every convention off, bytes/request vs bare', '<= 1.00x', 'allocation', (t) => t.startsWith('POST JSON + body schema, a route with every convention off')],
  ['foundation: GET 2 KB vs bare (CPU)', '>= 0.95x', 'foundation', (t) => t.startsWith('GET 2 KB JSON, every plugin registered')],
  ['foundation: POST + schema vs bare (CPU)', '>= 0.93x', 'foundation', (t) => t.startsWith('POST JSON + body schema, every plugin registered')],
  ['real-shaped: POST ($ref) vs bare (CPU)', '>= 0.93x', 'real-shaped', (t) => t.startsWith('real-shaped app: POST')],
  ['real-shaped: GET ?limit vs bare (CPU)', '>= 0.98x', 'real-shaped', (t) => t.startsWith('real-shaped app: GET ?limit')],
  ['conditional hit vs full 200, 2 KB (CPU)', '>= 1.2x', 'conditional', (t) => t.startsWith('(c) ')],
  ['payload-hashed ETag vs @fastify/etag (CPU)', '>= 1.0x', 'conditional', (t) => t.startsWith('(b) ')],
  ['Basic vs the same route open (CPU)', '>= 0.92x', 'auth', (t) => t.startsWith('GET 2 KB JSON, Basic (one user) vs the same route open')],
  ['PATCH core vs raw fast-json-patch, in process', '>= 0.80x', 'patch', (t) => t.startsWith('apply + validate core')],
  ['XML reader, 1 MiB worst case vs JSON.parse', '<= 3x', 'bodies', (t) => t.startsWith('XML reader')],
  ['vs Express 5, same service, every route (CPU)', '>= 1.6x', 'express', (t) => !t.startsWith('A/A')]
]

/** A section's A/A rows: "ratio (within 3%)" each, or "-". */
function aaOf (results, section) {
  const r = results[section]
  if (r === undefined || r.error !== undefined) return '-'
  if (section === 'allocation') {
    const twin = r.value.find((x) => x.name === 'bare Fastify (A/A twin)')
    return twin === undefined ? '-' : `bytes twin ${twin.bytesRatio.toFixed(4)}x`
  }
  if (section === 'bodies' || section === 'patch') return 'in process, median of runs'
  const rows = section === 'stack' ? r.value.rows : r.value
  const aa = rows.filter((x) => String(x.benchmark).startsWith('A/A') && typeof x.ratio === 'number')
  const out = aa.map((x) => `${x.ratio}x ${Math.abs(x.ratio - 1) <= 0.03 ? '(within 3%)' : '(**outside 3%**)'}`)
  const bytes = r.value.allocation
  if (Array.isArray(bytes)) {
    const pairs = bytes.flatMap((b) => [[b.ours, b.oursTwin], [b.stack ?? b.express, b.stackTwin ?? b.expressTwin]]).filter(([x, y]) => typeof x === 'number' && typeof y === 'number')
    const equal = pairs.filter(([x, y]) => x === y).length
    out.push(`bytes twins equal on ${equal} of ${pairs.length}`)
  }
  return out.join('; ') || '-'
}

function scorecard (results, targets) {
  const lines = ['| cost target | target | measured | status | A/A of its section |', '|---|---|---|---|---|']
  for (const [label, target, section, matches] of SCORECARD) {
    const mine = targets.filter((t) => t.section === section && matches(t.target))
    if (mine.length === 0) {
      lines.push(`| ${cell(label)} | ${target} | not measured in this run | - | - |`)
      continue
    }
    const measured = mine.length === 1 ? mine[0].measured : mine.map((t) => `${t.target.replace(/^bytes\/request: /, '').replace(/, ours vs hand-built stack: >= 1\.0x$|, ours \/ hand-built stack <= 1\.0x$|: >= 1\.6x$/, '').replace(/^(read|write): /, '')}: ${t.measured}`).join('; ')
    const status = mine.every((t) => t.status === 'MET') ? 'MET' : mine.some((t) => t.status === 'NOT MEASURED') ? 'NOT MEASURED' : '**MISSED**'
    lines.push(`| ${cell(label)} | ${target} | ${cell(measured)} | ${status} | ${cell(aaOf(results, section))} |`)
  }
  lines.push('', 'One line per cost target; a line over several routes is MET when every route meets it. The A/A column is the noise floor of the section the line comes from: a CPU ratio is read against it (a run whose A/A rows are outside 3% says little about ratios within a few percent of their target); bytes twins are two processes of one variant, equal to the byte on a steady request.')
  return lines.join('\n')
}

// ---------------------------------------------------------------- RESULTS.md

const cell = (x) => (x === undefined || x === null ? '' : String(x).replace(/\|/g, '\\|'))

function rowsTable (rows) {
  const lines = [
    '| benchmark | A | B | A req/s | B req/s | A p99 ms | B p99 ms | A CPU µs/req | B CPU µs/req | A peak RSS MB | B peak RSS MB | A/B req/s | B/A CPU | B/A CPU per process | decided on | target |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|'
  ]
  for (const r of rows) {
    const t = parseTarget(r.target)
    const status = t !== null && typeof r.ratio === 'number' ? (meets(r.ratio, t) ? ' MET' : ' **MISSED**') : ''
    const decided = typeof r.ratio !== 'number' ? '-' : r.method === 'cpu' ? 'CPU' : 'req/s'
    lines.push(`| ${cell(r.benchmark)} | ${cell(r.a)} | ${cell(r.b)} | ${cell(r.aReqPerSec)} | ${cell(r.bReqPerSec)} | ${cell(r.aP99ms)} | ${cell(r.bP99ms)} | ${cell(r.aCpuUs ?? '-')} | ${cell(r.bCpuUs ?? '-')} | ${cell(r.aPeakMB ?? '-')} | ${cell(r.bPeakMB ?? '-')} | ${cell(r.rpsRatio ?? r.ratio)} | ${cell(r.cpuRatio ?? '-')} | ${cell((r.perProcess ?? []).join(', ') || '-')} | ${decided} | ${cell(r.target)}${status} |`)
  }
  return lines.join('\n')
}

function vcdiffTable (rows) {
  const lines = [
    `xdelta3 -1 process start on empty files: ${round(rows.spawnMs ?? 0, 2)} ms (subtracted from its times).`,
    '',
    '| document | level | target B | encode ms | MB/s | vs xd3 -1 | delta B | xd3 -1 B | size/xd3-1 | xd3 -3 B | size/xd3-3 | gz/xd3-3 | status |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|'
  ]
  for (const r of rows) lines.push(`| ${r.doc} | ${r.level ?? 'default'} | ${r.targetBytes ?? '-'} | ${r.encodeMs ?? '-'} | ${r.mbPerS} | ${r.speedVsXd3Fast1} | ${r.deltaBytes} | ${r.xd3Level1Bytes ?? '-'} | ${r.sizeVsXd3Level1 ?? '-'} | ${r.xd3Level3Bytes} | ${r.sizeVsXd3Level3} | ${r.gzipVsXd3Level3} | ${r.status ?? '-'} |`)
  lines.push('', 'Targets: default level, gz/xd3-3 <= 1.0 (its speed is shown for information); fast level, vs xd3 -1 >= 1.0 and size/xd3-1 <= 1.0.')
  return lines.join('\n')
}

function machine (load) {
  const cpus = os.cpus()
  const models = [...new Set(cpus.map((c) => c.model.trim()))].join(', ')
  return [
    '| | |',
    '|---|---|',
    `| CPU | ${cell(models)}, ${cpus.length} logical CPUs${cpus[0]?.speed ? `, ${cpus[0].speed} MHz` : ''} |`,
    `| memory | ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB |`,
    `| OS | ${os.type()} ${os.release()} ${os.arch()} |`,
    `| Node.js | ${process.version} |`,
    `| load average (1, 5, 15 min) at start | ${load.start.map((x) => x.toFixed(2)).join(', ')} |`,
    `| load average (1, 5, 15 min) at end | ${load.end.map((x) => x.toFixed(2)).join(', ')} |`
  ].join('\n')
}

function markdown ({ o, results, targets, load, started, elapsedS }) {
  const out = []
  out.push('# Benchmark results', '')
  out.push(`Written by \`bench/report.js\` (\`npm run bench\`) on ${started.toISOString()}, in ${Math.round(elapsedS)} s. ` +
    `The foundation, real-shaped, conditional, auth, stack and Express sections measure the server's CPU time per request (user + system of the server process, every thread, over exactly ${process.env.BENCH_REQUESTS ?? 15000} requests counted by the server after a warm-up): ` +
    `each side runs as ${process.env.BENCH_PROCESSES ?? 3} server process(es) (a fresh pair each time; one process when both sides are two kinds of request to one variant), each pair of processes gets ${process.env.BENCH_CPU_ROUNDS ?? 3} paired round(s) (A then B, then B then A), ` +
    'the server is pinned to CPU 0 and wrk drives it from CPU 1 (32 connections, saturating it). A pair\'s ratio is the median over its rounds of B\'s CPU per request over A\'s, and a row\'s ratio is the median over its pairs of processes (listed per process); targets of those rows are decided on that CPU ratio ("decided on: CPU"). ' +
    'Each section has an A/A row (a variant against itself in other processes): ratios within its distance from 1 are within the noise of the run. ' +
    'The stack and Express sections also give the bytes each side allocates per request (bench/allocation.js\'s method), each side measured in two processes (a twin: the A/A of the bytes). ' +
    `The other sections (PATCH vs PUT, PostgreSQL) still alternate autocannon rounds of ${o.seconds} s, pipelined, and are decided on req/s. ` +
    'The machine is shared: other engineers ran tests on its 2 cores during the run (load averages below); only ratios measured in one run mean something; absolute req/s and µs do not travel.' +
    (o.quick ? ' **Quick mode (BENCH_QUICK=1): a smoke test, not a measurement.**' : ''), '')
  out.push('## Machine', '', machine(load), '')
  out.push('## Scorecard', '', scorecard(results, targets), '')
  out.push('## Targets', '', '| section | target | measured | status |', '|---|---|---|---|')
  for (const t of targets) out.push(`| ${t.section} | ${cell(t.target)} | ${cell(t.measured)} | ${t.status === 'MET' ? 'MET' : `**${t.status}**`} |`)
  const short = targets.filter((t) => t.status !== 'MET')
  out.push('')
  if (short.length === 0) out.push('Every target measured in this run is met.')
  else {
    out.push('Shortfalls, from the numbers of this run:', '')
    for (const t of short) out.push(`- ${t.section}, ${t.target}: ${t.why}`)
  }
  out.push('', '![ratios against their targets](results.svg)', '')
  for (const name of SECTIONS) {
    const r = results[name]
    if (r === undefined) continue
    out.push(`## ${TITLES[name]}`, '')
    if (r.error !== undefined) {
      out.push(`Not measured: ${r.error}`, ...(r.detail ?? []), '')
      continue
    }
    if (name === 'vcdiff') out.push(vcdiffTable(r.value))
    else if (name === 'allocation') out.push(require('./allocation.js').table(r.value))
    else if (name === 'delta' || name === 'delta-scale' || name === 'bodies') out.push(r.output.trim())
    else if (name === 'stack') out.push(rowsTable(r.value.rows), '', 'Bytes allocated per request (bench/allocation.js\'s method: a window of requests between forced collections, one process each, ours and the stack twice):', '', require('./stack.js').allocationTable(r.value.allocation))
    else out.push(rowsTable(r.value))
    if (name === 'express') {
      if (r.value.allocation !== undefined) out.push('', 'Bytes allocated per request (bench/allocation.js\'s method: a window of requests between forced collections, one process each, each side twice):', '', expressAllocationTable(r.value.allocation))
      out.push('', 'A: the reference service (example/app.ts, `buildService`, profile spec, in-memory SQLite), B: bench/express-service.js (Express 5: express.json with the same 1 MiB limit, strong ETag with its own 304, express-basic-auth on writes, hand-written validation, the same SQLite store). ' +
        'Both seeded with the same 10 articles of 2 KB; each POST creates an article with a fresh slug (wrk builds each body), each PUT replaces the same article. CPU harness as the other CPU sections (wrk, 32 connections, server pinned to CPU 0); the A/A row is ours against ours in other processes. Peak RSS: VmHWM of each side\'s server processes, the largest (POST grows the in-memory database on both sides).')
    }
    if (name === 'stack') {
      out.push('', 'A: the reference service with its defaults (example/app.ts `buildService`, profile spec, in-memory SQLite). ' +
        'B: bench/stack-server.js, the same contract built by hand: Fastify with allErrors and removeAdditional off and no text/plain parser; JSON or XML by Accept (fast-xml-parser\'s XMLBuilder, Vary: Accept, an XML ETag of its own) and XML bodies (XMLParser); If-None-Match (412 on GET), If-Match (PATCH), If-Match, If-Unmodified-Since and If-None-Match (PUT, DELETE) against the representation\'s ETag; Basic (@fastify/basic-auth), Bearer and Digest (RFC 7616, MD5 and SHA-256) by hand on writes, each 401 with the four challenges; 405 with Allow and OPTIONS (204 with Allow); framing checks in an onRequest hook (two Host lines 400, a chunked or oversized GET body 411); 411 for a write without Content-Length or over the limit, before the credentials; 415 for a body type a route does not take (Accept-Patch on PATCH), fast-json-patch and a merge patch with the readOnly and schema checks, a setErrorHandler that maps Ajv errors to the 422 `{ errors: [...] }`, Cross-Origin-Resource-Policy, Cache-Control, Accept-Patch, Date and Last-Modified set by hand; or plain Fastify, the same routes and handlers with no convention (no target). ' +
        `Same store, same schemas, the same 10 seeded articles. Before timing, every benchmarked request and ${require('./stack.js').ERROR_CHECKS.length + require('./stack.js').CONTRACT_CHECKS.length} error, edge and contract answers (XML, 405, OPTIONS, Bearer, Digest, framing, PUT, DELETE) are sent to each side: status, body (or the errors[] fields) and convention headers (Vary and Allow included) must match; Date, Last-Modified and ETag values, Content-Length and the Digest nonce and opaque values are not compared. ` +
        'What ours does and the stack does not: A-IM delta bases (no request of the section asks for one), the answers written before any route runs (417, 505, a text 400 without Host), the OpenAPI document. B/A CPU above 1: ours costs less CPU per request; ours/stack bytes at most 1: ours allocates no more.')
    }
    if (name === 'conditional') out.push('', 'Requests pipelined 10 deep (BENCH_PIPELINING) so that the server is the bottleneck.')
    if (name === 'patch') {
      out.push('', 'The PATCH vs PUT ratio is printed (no target); the in-process core ratio has the target. ' +
        'The core row does on both sides what a PATCH needs before the write: A applyJsonPatch with the plugin\'s default bounds, the readOnly check and the resource schema (plugins/conventions/patch.ts); ' +
        'B fast-json-patch applyPatch, validated and on a copy (atomic), the readOnly members compared and the same validator, as bench/stack-server.js does. ' +
        'A also bounds the patch\'s cost (operations, size, depth, shifted elements) and refuses the pointers RFC 6901 forbids that fast-json-patch takes; B does not. ' +
        'Operations per second of CPU time, alternating slices of 0.4 s, median of 12 each.')
    }
    if (name === 'postgres') {
      out.push('', 'A: the reference service with DATABASE_URL (PostgreSQL 15 on 127.0.0.1, a pool of 10 connections, synchronous_commit=off), B: the same service on a SQLite file (WAL, synchronous=NORMAL): the same durability on both sides. ' +
        'Both seeded with the same 10 articles of 2 KB (bench/postgres.js). A/B below 1 is the cost of a database over TCP, in another process, against one in the service\'s own process; PostgreSQL is what lets several instances share the articles (docs/fleet.md). No target: printed for information.')
    }
    out.push('')
  }
  out.push('## Method', '',
    '- Every server variant runs in its own process (bench/server.js); a pair of two kinds of request to one variant (412 against 200, PATCH against PUT) shares one process. Identical processes of one variant differ by up to 15% for their whole life, so the CPU rows start several processes per side and take the median over them.',
    '- CPU rows (bench/harness.js `comparePaired`): wrk (a Debian package: `apt-get install -y wrk`; the bench says so when it is missing) pinned to CPU 1 with taskset, the server (every thread) pinned to CPU 0; the server counts requests itself and reports the CPU time and wall time of exactly BENCH_REQUESTS of them; wrk\'s script checks every status. BENCH_PROCESSES, BENCH_ROUNDS, BENCH_REQUESTS tune them; BENCH_PIN=0 turns pinning off.',
    '- autocannon runs in the report process only (PATCH vs PUT, PostgreSQL sections); the in-process PATCH core row and the VCDIFF encoder section run in fresh processes of their own.',
    '- Cost curves (CPU and bytes per request against body size, number of routes, connections and the delta store\'s fill) are a separate command, `npm run bench:curves` (bench/curves.js), written to bench/CURVES.md and bench/curves-*.svg.',
    '- Peak RSS is the kernel\'s high-water mark (VmHWM in /proc/<pid>/status) of each server process, sampled every 100 ms while it runs; "-" where not measured (in-process benchmarks, or no /proc).',
    '- `BENCH_ROUNDS`, `BENCH_SECONDS` tune the autocannon pairs; `BENCH_PROCESSES`, `BENCH_CPU_ROUNDS`, `BENCH_REQUESTS`, `BENCH_WARMUP_MS` (default 300: load before each counted window) the CPU rows; `BENCH_QUICK=1` runs 1 round of 1 s (CPU rows: one process, one round of 2000 requests); `node bench/report.js express` runs one section.', '')
  return out.join('\n')
}

// ---------------------------------------------------------------- results.svg

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** Bars: every ratio with a target (req/s ratios, the PATCH core, VCDIFF speed and size). */
function chartBars (results) {
  const bars = []
  for (const name of SECTIONS) {
    const r = results[name]
    if (r === undefined || r.error !== undefined) continue
    if (name === 'vcdiff') {
      for (const t of vcdiffTargets(r.value)) {
        const value = Number(/([\d.]+)x/.exec(t.measured)[1])
        const target = parseTarget(t.limit)
        bars.push({ label: t.target.replace(/`/g, '').replace(/^VCDIFF /, 'VCDIFF ').slice(0, 70), value, target, ok: meets(value, target) })
      }
      continue
    }
    if (name === 'delta' || name === 'delta-scale' || name === 'bodies') continue
    for (const row of name === 'stack' ? r.value.rows : r.value) {
      const target = parseTarget(row.target)
      if (target === null || typeof row.ratio !== 'number') continue
      bars.push({ label: `${name}: ${row.benchmark}`, value: row.ratio, target, ok: meets(row.ratio, target) })
    }
  }
  return bars
}

function svg (bars, title) {
  const labelW = 430
  const barW = 420
  const rowH = 26
  const top = 48
  const width = labelW + barW + 90
  const height = top + Math.max(bars.length, 1) * rowH + 40
  const max = Math.max(2, ...bars.map((b) => b.value), ...bars.map((b) => b.target.value)) * 1.05
  const x = (v) => labelW + (Math.max(0, v) / max) * barW
  const parts = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`)
  parts.push(`<title>${esc(title)}</title>`)
  parts.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`)
  parts.push(`<text x="10" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`)
  parts.push('<text x="10" y="38" fill="#555555">bar: measured ratio (green met, red missed); black tick: target (&gt;= higher is better, &lt;= lower is better); grey line: 1.0x</text>')
  // scale
  for (let v = 0; v <= max; v += 0.5) {
    const gx = x(v).toFixed(1)
    parts.push(`<line class="grid" x1="${gx}" y1="${top - 4}" x2="${gx}" y2="${height - 30}" stroke="${v === 1 ? '#888888' : '#e4e4e4'}" stroke-width="1"/>`)
    parts.push(`<text x="${gx}" y="${height - 16}" text-anchor="middle" fill="#555555">${v.toFixed(1)}x</text>`)
  }
  bars.forEach((b, i) => {
    const y = top + i * rowH
    const tx = x(b.target.value).toFixed(1)
    parts.push(`<g class="bar" data-value="${b.value}" data-target="${esc(b.target.op + ' ' + b.target.value)}" data-status="${b.ok ? 'MET' : 'MISSED'}">`)
    parts.push(`<text x="${labelW - 8}" y="${y + 16}" text-anchor="end">${esc(b.label.length > 68 ? b.label.slice(0, 67) + '…' : b.label)}</text>`)
    parts.push(`<rect class="ratio" x="${labelW}" y="${y + 5}" width="${(x(b.value) - labelW).toFixed(1)}" height="${rowH - 10}" fill="${b.ok ? '#3a9a4a' : '#c8423b'}"/>`)
    parts.push(`<line class="target" x1="${tx}" y1="${y + 1}" x2="${tx}" y2="${y + rowH - 1}" stroke="#000000" stroke-width="2.5"/>`)
    parts.push(`<text x="${(x(b.value) + 6).toFixed(1)}" y="${y + 16}">${b.value}x (${esc(b.target.op)} ${b.target.value})</text>`)
    parts.push('</g>')
  })
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

// ---------------------------------------------------------------- main

async function report (opts = {}) {
  const o = options(opts)
  const saved = { BENCH_ROUNDS: process.env.BENCH_ROUNDS, BENCH_SECONDS: process.env.BENCH_SECONDS, BENCH_DIGEST_ITERATIONS: process.env.BENCH_DIGEST_ITERATIONS, BENCH_PROCESSES: process.env.BENCH_PROCESSES, BENCH_CPU_ROUNDS: process.env.BENCH_CPU_ROUNDS, BENCH_REQUESTS: process.env.BENCH_REQUESTS }
  // CPU rows in quick mode: one process per side, one round of a few requests
  if (o.quick) {
    process.env.BENCH_PROCESSES ??= '1'
    process.env.BENCH_CPU_ROUNDS ??= '1'
    process.env.BENCH_REQUESTS ??= '2000'
  }
  // the modules read these: every pair of the run gets the same rounds and seconds
  process.env.BENCH_ROUNDS = String(o.rounds)
  process.env.BENCH_SECONDS = String(o.seconds)
  if (o.quick && saved.BENCH_DIGEST_ITERATIONS === undefined) process.env.BENCH_DIGEST_ITERATIONS = '5000'
  const started = new Date()
  const t0 = performance.now()
  const load = { start: os.loadavg() }
  const watcher = new MemoryWatcher()
  watcher.start()
  const results = {}
  try {
    for (const name of SECTIONS) {
      if (!o.only.includes(name)) continue
      o.log(`\n## ${name}`)
      watcher.take()
      try {
        results[name] = await runSection(name, o)
        if (Array.isArray(results[name].value)) attachMemory(results[name].value, watcher.take(), { cpuRows: name === 'express' })
      } catch (err) {
        o.log(`${name} failed: ${err.stack}`)
        // The first line for the targets table; every line (a list of differences) in the section.
        const [first, ...rest] = String(err.message).split('\n')
        results[name] = { error: first, detail: rest }
      }
    }
  } finally {
    watcher.stop()
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  load.end = os.loadavg()
  const elapsedS = (performance.now() - t0) / 1000
  const targets = []
  for (const name of SECTIONS) if (results[name] !== undefined) targets.push(...targetsOf(name, results[name]))
  const bars = chartBars(results)
  fs.mkdirSync(o.outDir, { recursive: true })
  const md = markdown({ o, results, targets, load, started, elapsedS })
  const chart = svg(bars, `Benchmark ratios against targets, ${started.toISOString().slice(0, 10)}${o.quick ? ' (quick mode)' : ''}`)
  const files = { markdown: path.join(o.outDir, 'RESULTS.md'), svg: path.join(o.outDir, 'results.svg') }
  fs.writeFileSync(files.markdown, md)
  fs.writeFileSync(files.svg, chart)
  // Machine-readable targets, for a table across Node.js lines (bench/lines.js).
  fs.writeFileSync(path.join(o.outDir, 'targets.json'), JSON.stringify({ node: process.version, started: started.toISOString(), elapsedS: Math.round(elapsedS), load, targets }, null, 2) + '\n')
  return { results, targets, bars, files, elapsedS }
}

function round (x, d) {
  const f = 10 ** d
  return Math.round(x * f) / f
}

module.exports = { report, options, svg, markdown, scorecard, SECTIONS, EXPRESS_ROUTES, MemoryWatcher }

if (require.main === module) {
  const only = process.argv.slice(2)
  report(only.length > 0 ? { only } : {}).then(({ results, targets, files, elapsedS }) => {
    console.log(`\n${targets.map((t) => `${t.status.padEnd(12)} ${t.section}: ${t.target}: ${t.measured}`).join('\n')}`)
    console.log(`\n${scorecard(results, targets)}`)
    console.log(`\nwrote ${files.markdown} and ${files.svg} in ${Math.round(elapsedS)} s`)
  }, (err) => { console.error(err); process.exit(1) })
}
