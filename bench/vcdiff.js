'use strict'
/**
 * VCDIFF encoder benchmark: our encoder, at both levels, against xdelta3 on one generated corpus.
 *
 *   npm run build -w @http-conventions/vcdiff && node bench/vcdiff.js
 *   VCDIFF_DIST=/tmp/vcdiff-build node bench/vcdiff.js   # the package compiled elsewhere (tsc --outDir)
 *   BENCH_ONLY='8MB' node bench/vcdiff.js   # only the documents whose label contains this
 *   BENCH_FULL=1 node bench/vcdiff.js     # adds the 32 MB documents
 *   VCDIFF_OPTIONS='{"maxProbes":8}' node bench/vcdiff.js   # encoder options (JSON), both levels
 *   VCDIFF_LEVELS=fast node bench/vcdiff.js   # only these levels (comma-separated; default: default,fast)
 *   VCDIFF_COMPARE=/tmp/old-build node bench/vcdiff.js   # also time another build, interleaved
 *                                                        # with ours in the same run (column "other")
 *
 * One row per document and level: `default` (deltas about the size of xdelta3 -3's) and
 * `fast` (at least the speed of xdelta3 -1, deltas no larger than its own).
 *
 * Columns:
 *   level       the encoder level (`level` option)
 *   MB/s        our encode throughput (target bytes / best encode time)
 *   prep MB/s   the same with the source prepared once (prepareSource), as for many targets
 *               against one base
 *   vs xd3 -1   the target: our speed / the speed of `xdelta3 -1` net of its process start,
 *               i.e. (best xdelta3 -1 time - best time of the same command on empty files)
 *               / our best time; >= 1.0 meets it. Ours and xdelta3 are timed in alternate
 *               rounds (ours, xdelta3 on the document, xdelta3 on empty files, ours, ...),
 *               so that both see the same load on a shared machine; best of the rounds.
 *   med         the same ratio from the medians of the rounds (per round, xdelta3 less its
 *               start in that round), as a check on the best-of figure
 *   size/xd3-1  our delta size / `xdelta3 -1 -S none -A -n` delta size: the fast level's size
 *               target is <= 1.0
 *   size/xd3-3  our delta size / `xdelta3 -3 -S none -A -n` delta size
 *   gz/xd3-3    gzip(our delta) / gzip(xdelta3 -3 delta): the default level's size target is <= 1.0
 *   status      met, or what is missed of the level's targets: default: size (gz/xd3-3 > 1.0);
 *               fast: speed (vs xd3 -1 < 1.0), size (size/xd3-1 > 1.0). The default level's
 *               speed is shown against xdelta3 -1 too, for information.
 *   other       (VCDIFF_COMPARE) MB/s of the other build, measured alternately with ours
 *   oth size    (VCDIFF_COMPARE) its delta size / xdelta3 -3
 * A last row, "unrelated", encodes random bytes against a text source with
 * tryEncode: the encoder gives up early (null, the plain instance is sent);
 * its MB/s is the time to give up, its size columns are the plain target.
 * Every delta of ours is checked before it is counted: decoded exactly by our
 * decoder, by `xdelta3 -d` and by @ably/vcdiff-decoder.
 */
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const zlib = require('node:zlib')
const { spawnSync } = require('node:child_process')
const DIST = process.env.VCDIFF_DIST !== undefined ? path.resolve(process.env.VCDIFF_DIST) : path.join(__dirname, '..', 'packages', 'vcdiff', 'dist')
const { encode: encode0, decode, prepareSource } = require(path.join(DIST, 'index.js'))
const OPTIONS = process.env.VCDIFF_OPTIONS ? JSON.parse(process.env.VCDIFF_OPTIONS) : {}
const LEVELS = (process.env.VCDIFF_LEVELS ?? 'default,fast').split(',')
/** The options of one level (a dist/ built before levels existed ignores `level`). */
const optionsOf = (level) => ({ ...OPTIONS, level })
const OTHER = process.env.VCDIFF_COMPARE !== undefined
  ? require(path.join(path.resolve(process.env.VCDIFF_COMPARE), 'lib', 'vcdiff', 'index.js'))
  : null
const { tryEncode } = require(path.join(DIST, 'index.js'))
const { decode: ablyDecode } = require('@ably/vcdiff-decoder')
const { inFreshProcess } = require('./harness')

const KB = 1024
const MB = 1024 * KB

function rng (seed) {
  // mulberry32
  return function () {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ('the of and to in is that for it as was with be by on not he this are or his from at which but ' +
  'have an they you were her she there been one all we their has would when if so no what can more out up ' +
  'request response header server client cache delta encoding instance version resource entity validator ' +
  'window source target address instruction section length buffer stream token status').split(' ')

// Content words: 4000 pseudo-words; with the common words above, the mix
// resembles prose (frequent function words, a long tail of rarer words).
const SYLLABLES = 'ka ri to na me lu so pe vi do ra ne mi ta lo ku se fa zo bi'.split(' ')
const CONTENT = []
{
  const r = rng(42)
  for (let i = 0; i < 4000; i++) {
    let w = ''
    const n = 2 + Math.floor(r() * 3)
    for (let j = 0; j < n; j++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)]
    CONTENT.push(w)
  }
}

function word (r) {
  return r() < 0.5 ? WORDS[Math.floor(r() * WORDS.length)] : CONTENT[Math.floor(r() * CONTENT.length)]
}

function sentence (r) {
  const n = 5 + Math.floor(r() * 15)
  const w = []
  for (let i = 0; i < n; i++) w.push(word(r))
  const s = w.join(' ')
  return s[0].toUpperCase() + s.slice(1) + '.'
}

function textDoc (size, r) {
  const parts = []
  let len = 0
  while (len < size) {
    const para = []
    const n = 2 + Math.floor(r() * 6)
    for (let i = 0; i < n; i++) para.push(sentence(r))
    const p = para.join(' ') + '\n\n'
    parts.push(p)
    len += p.length
  }
  return parts.join('').slice(0, size)
}

function record (id, r) {
  return {
    id,
    name: word(r) + '-' + Math.floor(r() * 1e6),
    price: Math.round(r() * 1e5) / 100,
    active: r() < 0.5,
    tags: [word(r), word(r)],
    author: { name: word(r), rank: Math.floor(r() * 100) },
    summary: sentence(r)
  }
}

function jsonRecords (size, r) {
  const recs = []
  let len = 0
  while (len < size) {
    const rec = record(recs.length, r)
    recs.push(rec)
    len += JSON.stringify(rec, null, 2).length + 4
  }
  return recs
}

const EDIT_RATE = { small: 0.0005, medium: 0.02, heavy: 0.25 }

function editText (doc, level, r) {
  // Each edit replaces, inserts or deletes a short run of text.
  const edits = Math.max(1, Math.round(doc.length * EDIT_RATE[level] / 40))
  const cuts = []
  for (let i = 0; i < edits; i++) cuts.push(Math.floor(r() * doc.length))
  cuts.sort((a, b) => a - b)
  const out = []
  let at = 0
  for (const c of cuts) {
    if (c < at) continue
    out.push(doc.slice(at, c))
    const kind = r()
    if (kind < 0.4) {
      out.push(sentence(r))
      at = c + Math.floor(r() * 40)
    } else if (kind < 0.7) {
      out.push(sentence(r))
      at = c
    } else {
      at = c + Math.floor(r() * 60)
    }
  }
  out.push(doc.slice(Math.min(at, doc.length)))
  return out.join('')
}

function editJson (recs, level, r) {
  const next = recs.map((x) => x)
  const edits = Math.max(1, Math.round(recs.length * EDIT_RATE[level] * 4))
  for (let i = 0; i < edits; i++) {
    const k = Math.floor(r() * next.length)
    const kind = r()
    if (kind < 0.6) {
      next[k] = { ...next[k], price: Math.round(r() * 1e5) / 100, active: !next[k].active }
    } else if (kind < 0.8) {
      next.splice(k, 0, record(1e6 + i, r))
    } else if (next.length > 1) {
      next.splice(k, 1)
    }
  }
  return next
}

function corpus (full) {
  const sizes = [1 * KB, 16 * KB, 256 * KB, 1 * MB, 8 * MB]
  if (full) sizes.push(32 * MB)
  const cases = []
  for (const size of sizes) {
    for (const level of ['small', 'medium', 'heavy']) {
      const r = rng(size ^ level.length)
      const text = textDoc(size, r)
      cases.push({ kind: 'text', size, level, source: Buffer.from(text), target: Buffer.from(editText(text, level, r)) })
      const recs = jsonRecords(size, r)
      cases.push({
        kind: 'json',
        size,
        level,
        source: Buffer.from(JSON.stringify(recs, null, 2)),
        target: Buffer.from(JSON.stringify(editJson(recs, level, r), null, 2))
      })
    }
  }
  return cases
}

/** Times `enc` and `other` alternately (same load for both), best of each. */
function timePair (source, target, enc, other) {
  enc(source, target)
  other(source, target)
  let runs = 0
  let best = Infinity
  let bestOther = Infinity
  const start = process.hrtime.bigint()
  let delta
  let otherDelta
  do {
    let t0 = process.hrtime.bigint()
    delta = enc(source, target)
    best = Math.min(best, Number(process.hrtime.bigint() - t0))
    t0 = process.hrtime.bigint()
    otherDelta = other(source, target)
    bestOther = Math.min(bestOther, Number(process.hrtime.bigint() - t0))
    runs++
  } while (runs < 50 && Number(process.hrtime.bigint() - start) < 600e6)
  return { ms: best / 1e6, delta, otherMs: bestOther / 1e6, otherDelta }
}

function timeOurs (source, target, enc) {
  // Warm up, then repeat until at least 300 ms (or 50 runs) have been measured.
  enc(source, target)
  let runs = 0
  let best = Infinity
  const start = process.hrtime.bigint()
  let delta
  do {
    const t0 = process.hrtime.bigint()
    delta = enc(source, target)
    const ns = Number(process.hrtime.bigint() - t0)
    if (ns < best) best = ns
    runs++
  } while (runs < 50 && Number(process.hrtime.bigint() - start) < 300e6)
  return { ms: best / 1e6, delta }
}

function xdelta3 (args) {
  const t0 = process.hrtime.bigint()
  const res = spawnSync('xdelta3', args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (res.status !== 0) throw new Error(`xdelta3 ${args.join(' ')} failed: ${res.stderr}`)
  return ms
}

function timeXdelta (dir, level, reps, s = 's', t = 't') {
  let best = Infinity
  for (let i = 0; i < reps; i++) {
    best = Math.min(best, xdelta3(['-e', '-f', level, '-s', path.join(dir, s), path.join(dir, t), path.join(dir, 'x')]))
  }
  return best
}

function median (xs) {
  const a = xs.slice().sort((x, y) => x - y)
  return a.length % 2 === 1 ? a[a.length >> 1] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2
}

/**
 * Our encode against `xdelta3 -1` in alternate rounds: ours once, xdelta3 on the
 * document (files s, t), xdelta3 on empty files (es, et: its process start), and again;
 * enough rounds for a few hundred ms of ours (at least `minRounds`).
 */
function timeAgainstXdelta (dir, source, target, enc, minRounds) {
  enc(source, target)
  const ours = []
  const x1 = []
  const start = []
  let delta
  const t0 = process.hrtime.bigint()
  do {
    const t = process.hrtime.bigint()
    delta = enc(source, target)
    ours.push(Number(process.hrtime.bigint() - t) / 1e6)
    x1.push(timeXdelta(dir, '-1', 1))
    start.push(timeXdelta(dir, '-1', 1, 'es', 'et'))
  } while (ours.length < minRounds || (ours.length < 50 && Number(process.hrtime.bigint() - t0) < 400e6))
  const oursBest = Math.min(...ours)
  const x1Best = Math.min(...x1)
  const startBest = Math.min(...start)
  return {
    delta,
    rounds: ours.length,
    ms: oursBest,
    x1Ms: x1Best,
    startMs: startBest,
    x1NetMs: Math.max(x1Best - startBest, 0.01),
    ratio: Math.max(x1Best - startBest, 0.01) / oursBest,
    medianRatio: Math.max(median(x1.map((x, i) => x - start[i])), 0.01) / median(ours)
  }
}

async function run (opts = {}) {
  const full = opts.full ?? process.env.BENCH_FULL === '1'
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcdiff-bench-'))
  const rows = []
  try {
    // Process start and file handling of xdelta3, measured on empty files (and again in every round).
    fs.writeFileSync(path.join(dir, 'es'), '')
    fs.writeFileSync(path.join(dir, 'et'), '')
    const spawnMs = timeXdelta(dir, '-1', 10, 'es', 'et')
    const only = opts.only ?? process.env.BENCH_ONLY
    for (const c of corpus(full)) {
      if (only !== undefined && !`${c.kind} ${fmtSize(c.size)} ${c.level}`.includes(only)) continue
      fs.writeFileSync(path.join(dir, 's'), c.source)
      fs.writeFileSync(path.join(dir, 't'), c.target)
      xdelta3(['-e', '-f', '-3', '-S', 'none', '-A', '-n', '-s', path.join(dir, 's'), path.join(dir, 't'), path.join(dir, 'x')])
      const x3 = fs.readFileSync(path.join(dir, 'x'))
      xdelta3(['-e', '-f', '-1', '-S', 'none', '-A', '-n', '-s', path.join(dir, 's'), path.join(dir, 't'), path.join(dir, 'x')])
      const x1 = fs.readFileSync(path.join(dir, 'x'))
      for (const level of LEVELS) rows.push(measure(dir, c, level, x1, x3))
    }
    if (tryEncode !== undefined && (only === undefined || 'unrelated'.includes(only))) rows.push(unrelatedRow())
    rows.spawnMs = spawnMs
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

/** One document at one level: timed against xdelta3 -1, verified by three decoders, sized against xdelta3 -1 and -3. */
function measure (dir, c, level, x1, x3) {
  const name = `${c.kind} ${c.size} ${c.level} (level ${level})`
  const options = optionsOf(level)
  const encode = (s, t) => encode0(s, t, options)
  const vs = timeAgainstXdelta(dir, c.source, c.target, encode, c.target.length > 4 * MB ? 7 : 11)
  const other = OTHER === null ? null : timePair(c.source, c.target, encode, (s, t) => OTHER.encode(s, t, options))
  // The plugin's case: many targets against one base, its index built once (prepareSource).
  // (A dist/ built before prepareSource existed has no such column.)
  let oursPrepared = null
  if (prepareSource !== undefined) {
    const prepared = prepareSource(c.source, options)
    oursPrepared = timeOurs(c.source, c.target, (s, t) => prepared.encode(t))
  }
  const delta = vs.delta
  if (Buffer.compare(Buffer.from(decode(c.source, delta)), c.target) !== 0) throw new Error(`round trip failed for ${name}`)
  if (Buffer.compare(Buffer.from(ablyDecode(delta, c.source)), c.target) !== 0) throw new Error(`@ably/vcdiff-decoder: round trip failed for ${name}`)
  fs.writeFileSync(path.join(dir, 'd'), delta)
  xdelta3(['-d', '-f', '-s', path.join(dir, 's'), path.join(dir, 'd'), path.join(dir, 'o')])
  if (Buffer.compare(fs.readFileSync(path.join(dir, 'o')), c.target) !== 0) throw new Error(`xdelta3 -d: round trip failed for ${name}`)
  const mbps = c.target.length / MB / (vs.ms / 1000)
  const gzipVs = round(zlib.gzipSync(delta).length / zlib.gzipSync(x3).length, 3)
  const speed = round(vs.ratio, 2)
  const sizeVs1 = round(delta.length / x1.length, 3)
  const missed = level === 'fast'
    ? [...(speed < 1 ? ['speed'] : []), ...(sizeVs1 > 1 ? ['size'] : [])]
    : gzipVs > 1 ? ['size'] : []
  return {
    doc: `${c.kind} ${fmtSize(c.size)} ${c.level}`,
    level,
    targetBytes: c.target.length,
    encodeMs: round(vs.ms, 3),
    mbPerS: round(mbps, 1),
    preparedMbPerS: oursPrepared === null ? '-' : round(c.target.length / MB / (oursPrepared.ms / 1000), 1),
    rounds: vs.rounds,
    xd3Fast1Ms: round(vs.x1Ms, 2),
    xd3StartMs: round(vs.startMs, 2),
    xd3Fast1NetMs: round(vs.x1NetMs, 2),
    speedVsXd3Fast1: speed,
    speedVsXd3Fast1Median: round(vs.medianRatio, 2),
    deltaBytes: delta.length,
    xd3Level1Bytes: x1.length,
    sizeVsXd3Level1: sizeVs1,
    xd3Level3Bytes: x3.length,
    sizeVsXd3Level3: round(delta.length / x3.length, 3),
    gzipBytes: zlib.gzipSync(delta).length,
    xd3Level3GzipBytes: zlib.gzipSync(x3).length,
    gzipVsXd3Level3: gzipVs,
    status: missed.length === 0 ? 'met' : `MISSED ${missed.join('+')}`,
    otherMbPerS: other === null ? '-' : round(c.target.length / MB / (other.otherMs / 1000), 1),
    otherSizeVsXd3Level3: other === null ? '-' : round(other.otherDelta.length / x3.length, 3)
  }
}

/** Random bytes against 1 MB of text: tryEncode gives up (null) instead of searching the whole target. */
function unrelatedRow () {
  const r = rng(7)
  const source = Buffer.from(textDoc(MB, r))
  const target = Buffer.alloc(MB)
  for (let i = 0; i < target.length; i++) target[i] = Math.floor(r() * 256)
  const res = timeOurs(source, target, (s, t) => tryEncode(s, t, optionsOf('default')))
  if (res.delta !== null) throw new Error('tryEncode did not give up on unrelated bytes')
  return {
    doc: 'unrelated 1MB (null)',
    level: 'default',
    mbPerS: round(target.length / MB / (res.ms / 1000), 1),
    preparedMbPerS: '-',
    speedVsXd3Fast1: '-',
    speedVsXd3Fast1Median: '-',
    deltaBytes: target.length,
    xd3Level1Bytes: '-',
    sizeVsXd3Level1: '-',
    xd3Level3Bytes: '-',
    sizeVsXd3Level3: '-',
    gzipVsXd3Level3: '-',
    status: '-',
    otherMbPerS: '-',
    otherSizeVsXd3Level3: '-'
  }
}

function round (x, d) {
  const f = 10 ** d
  return Math.round(x * f) / f
}

function fmtSize (n) {
  return n >= MB ? `${n / MB}MB` : `${n / KB}KB`
}

function print (rows) {
  const cols = [
    ['doc', 22], ['level', 7], ['mbPerS', 8, 'MB/s'], ['preparedMbPerS', 9, 'prep MB/s'], ['speedVsXd3Fast1', 10, 'vs xd3 -1'],
    ['speedVsXd3Fast1Median', 6, 'med'], ['deltaBytes', 10, 'delta B'], ['xd3Level1Bytes', 10, 'xd3-1 B'], ['sizeVsXd3Level1', 10, 'size/xd3-1'],
    ['xd3Level3Bytes', 10, 'xd3-3 B'], ['sizeVsXd3Level3', 11, 'size/xd3-3'], ['gzipVsXd3Level3', 9, 'gz/xd3-3'], ['status', 20, 'status'],
    ...(OTHER === null ? [] : [['otherMbPerS', 8, 'other'], ['otherSizeVsXd3Level3', 9, 'oth size']])
  ]
  const line = (cells) => cells.map((c, i) => i <= 1 ? String(c).padEnd(cols[i][1]) : String(c).padStart(cols[i][1])).join(' ')
  console.log(`xdelta3 -1 process start on empty files: ${round(rows.spawnMs, 2)} ms before the rounds; each round measures it again and the best is subtracted`)
  console.log('targets: default level: gzipped delta <= 1.0x gzipped xdelta3 -3 (its speed vs xdelta3 -1 for information); ' +
    'fast level: >= 1.0x the speed of xdelta3 -1 (net of its process start) and delta <= 1.0x xdelta3 -1 (-S none -A -n), on every document')
  console.log(line(cols.map((c) => c[2] ?? c[0])))
  for (const r of rows) console.log(line(cols.map((c) => r[c[0]])))
  for (const level of LEVELS) {
    const corpusRows = rows.filter((r) => typeof r.sizeVsXd3Level3 === 'number' && r.level === level)
    if (corpusRows.length === 0) continue
    const geo = (key) => Math.exp(corpusRows.reduce((s, r) => s + Math.log(r[key]), 0) / corpusRows.length)
    const worst = (key) => Math.max(...corpusRows.map((r) => r[key]))
    const slowest = corpusRows.reduce((m, r) => (r.speedVsXd3Fast1 < m.speedVsXd3Fast1 ? r : m))
    console.log(`level ${level}: geometric means: speed vs xd3 -1 ${round(geo('speedVsXd3Fast1'), 2)}, size vs xd3 -1 ${round(geo('sizeVsXd3Level1'), 3)}, size vs xd3 -3 ${round(geo('sizeVsXd3Level3'), 3)}, gzip vs xd3 -3 ${round(geo('gzipVsXd3Level3'), 3)}`)
    console.log(`level ${level}: slowest ${slowest.doc} ${slowest.speedVsXd3Fast1}x; worst size vs xd3 -1: ${worst('sizeVsXd3Level1')}, vs xd3 -3: ${worst('sizeVsXd3Level3')}, worst gzip vs xd3 -3: ${worst('gzipVsXd3Level3')}`)
    const missed = corpusRows.filter((r) => r.status !== 'met')
    console.log(`level ${level}: targets met on ${corpusRows.length - missed.length} of ${corpusRows.length} documents${missed.length === 0 ? '' : `; missed: ${missed.map((r) => `${r.doc} (${r.speedVsXd3Fast1}x, size/xd3-1 ${r.sizeVsXd3Level1}, gz ${r.gzipVsXd3Level3})`).join(', ')}`}`)
  }
}

module.exports = { run, corpus, editText, textDoc }

/**
 * `run` in a fresh process of its own, as the report calls it: encode timings taken in a
 * process that has run other benchmarks (large heaps, servers forked) came out up to 2.5x
 * slower, and xdelta3's start up to 5x slower.
 */
async function runFresh () {
  const out = await inFreshProcess(__filename, '--json')
  const rows = out.rows
  rows.spawnMs = out.spawnMs
  return rows
}

module.exports.runFresh = runFresh

if (require.main === module && process.argv[2] === '--json') {
  run().then((rows) => process.stdout.write(JSON.stringify({ rows, spawnMs: rows.spawnMs })), (err) => {
    console.error(err)
    process.exitCode = 1
  })
} else if (require.main === module) {
  run().then(print, (err) => {
    console.error(err)
    process.exitCode = 1
  })
}
