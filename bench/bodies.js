'use strict'
/**
 * Hostile bodies: the worst case of 1 MiB for every body reader, timed in this process
 * against JSON.parse reading the same characters; and how each reader's CPU time grows from
 * a body of n to one of 8n bytes. The readers' own checks are linear (the
 * tests count their steps: test/lib/linear-work.test.ts); this shows what they cost.
 *
 *   npm run build && node bench/bodies.js
 *   node bench/report.js bodies                       # as a section of the report
 *
 * Env: BENCH_BODY_RUNS (timed runs per case, default 15; the median is kept), BENCH_QUICK=1 (5).
 *
 * Per case: the suite's checks alone (the JSON scan, the XML markup check), the whole reader
 * (the checks, then JSON.parse, fast-xml-parser or the UTF-8 decoder), and JSON.parse of the
 * same bytes (for JSON bodies: the body itself; for the others, the body as one JSON string,
 * so that JSON.parse reads as many characters). Target: the checks and the JSON and text
 * readers within 3x of JSON.parse.
 */
const path = require('node:path')
const { performance } = require('node:perf_hooks')

const DIST = path.join(__dirname, '..', 'dist')
const { parseJsonBuffer, scanJsonText } = require(path.join(DIST, 'lib', 'json-body.js'))
const { parseXmlBody, checkMarkup } = require(path.join(DIST, 'lib', 'xml.js'))

const MiB = 1024 * 1024
const TARGET = 3

/** `unit` repeated between `head` and `tail` to 1 MiB. */
function fill (head, unit, tail = '') {
  return head + unit.repeat(Math.floor((MiB - head.length - tail.length) / unit.length)) + tail
}

const jsonCase = (name, text) => ({
  path: 'JSON (also JSON Patch, merge patch)',
  name,
  bytes: Buffer.from(text),
  checks: (b) => scanJsonText(b.toString('utf8'), 64),
  reader: (b) => parseJsonBuffer(b),
  baseline: (b) => { try { JSON.parse(b.toString('utf8')) } catch {} }
})
const xmlCase = (name, text) => ({
  path: 'XML',
  name,
  bytes: Buffer.from(text),
  checks: (b) => { try { checkMarkup(b.toString('utf8'), 64) } catch {} },
  reader: (b) => parseXmlBody(b, undefined),
  baseline: (b) => JSON.parse(JSON.stringify(b.toString('utf8')))
})
const textCase = (name, bytes) => ({
  path: 'text, HTML',
  name,
  bytes,
  checks: null,
  reader: (b) => b.toString('utf8'),
  baseline: (b) => JSON.parse(JSON.stringify(b.toString('latin1')))
})

const CASES = [
  jsonCase('one \\u0041, then \\n escapes', fill('"\\u0041', '\\n', '"')),
  jsonCase('64 levels, then short strings', fill('['.repeat(63) + '[', '"a",', '1' + ']'.repeat(64))),
  jsonCase('a string never closed', fill('["\\u0041', 'x')),
  jsonCase('escaped quotes between letters', fill('"\\u0041', 'x\\"', '"')),
  xmlCase('<x/> repeated', fill('<r>', '<x/>', '</r>')),
  xmlCase('&amp; repeated', fill('<r>', '&amp;', '</r>')),
  xmlCase('character references repeated', fill('<r>', '&#65;', '</r>')),
  xmlCase('comments between empty elements', fill('<r>', '<a/><!--c-->', '</r>')),
  xmlCase('a comment never closed', fill('<r><!--', '<a>')),
  textCase('invalid UTF-8', Buffer.alloc(MiB, Buffer.from([0xe2, 0x82, 0xc3, 0x28, 0xf0, 0x9f])))
]

function median (xs) {
  const s = xs.slice().sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function time (fn, bytes, runs) {
  for (let i = 0; i < 3; i++) fn(bytes)
  const ms = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    fn(bytes)
    ms.push(performance.now() - t)
  }
  return median(ms)
}

const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d

/**
 * How each reader's CPU time grows with its body: CPU time at 8n over CPU time at n (linear
 * work gives 8, quadratic 64), for the shapes that cost each reader most. The median over
 * seven rounds, each timing eight runs at n and one at 8n back to back, after a full
 * collection when `global.gc` is there (node --expose-gc).
 */
const GROWTH = [
  ['JSON reader, one \\u0041 then \\n escapes', (n) => Buffer.from('"\\u0041' + '\\n'.repeat(n / 2) + '"'), (b) => { parseJsonBuffer(b) }],
  ['JSON reader, 63 levels then many strings', (n) => Buffer.from('['.repeat(63) + '"a",'.repeat(n / 4) + '1' + ']'.repeat(63)), (b) => { parseJsonBuffer(b) }],
  ['XML reader, <x/> repeated', (n) => Buffer.from('<r>' + '<x/>'.repeat(n / 4) + '</r>'), (b) => { parseXmlBody(b, undefined) }],
  ['XML reader, &amp; repeated', (n) => Buffer.from('<r>' + '&amp;'.repeat(n / 5) + '</r>'), (b) => { parseXmlBody(b, undefined) }],
  ['XML reader, comments between tags', (n) => Buffer.from('<r>' + '<a/><!--c-->'.repeat(n / 12) + '</r>'), (b) => { parseXmlBody(b, undefined) }],
  ['XML reader, <![CDATA[x]]> repeated', (n) => Buffer.from('<r>' + '<![CDATA[x]]>'.repeat(Math.floor(n / 13)) + '</r>'), (b) => { parseXmlBody(b, undefined) }],
  ['text and HTML readers, invalid UTF-8', (n) => Buffer.alloc(n, Buffer.from([0xe2, 0x82, 0xc3, 0x28, 0xf0, 0x9f])), (b) => { b.toString('utf8') }]
]
const LINEAR_BOUND = 16

function cpu (fn, times) {
  if (typeof global.gc === 'function') global.gc()
  const start = process.cpuUsage()
  for (let i = 0; i < times; i++) fn()
  const used = process.cpuUsage(start)
  return used.user + used.system
}

function growth () {
  const n = MiB / 4
  const rows = []
  for (const [name, make, read] of GROWTH) {
    const small = make(n)
    const large = make(8 * n)
    read(small)
    const ratios = []
    for (let i = 0; i < 7; i++) {
      const eight = cpu(() => read(small), 8)
      ratios.push(8 * cpu(() => read(large), 1) / Math.max(eight, 1))
    }
    rows.push({ name, small: small.length, large: large.length, ratio: round(median(ratios), 1) })
  }
  console.log('| reader and body | bytes at n | bytes at 8n | CPU at 8n / CPU at n (linear 8, quadratic 64) |')
  console.log('|---|---:|---:|---:|')
  for (const r of rows) console.log(`| ${r.name.replace(/\|/g, '\\|').replace(/</g, '&lt;')} | ${r.small} | ${r.large} | ${r.ratio} |`)
  console.log('')
  return rows
}

function run () {
  const runs = Number(process.env.BENCH_BODY_RUNS ?? (process.env.BENCH_QUICK === '1' ? 5 : 15))
  const rows = []
  for (const c of CASES) {
    const baseline = time(c.baseline, c.bytes, runs)
    const checks = c.checks === null ? null : time(c.checks, c.bytes, runs)
    const reader = time(c.reader, c.bytes, runs)
    rows.push({ path: c.path, name: c.name, bytes: c.bytes.length, baselineMs: round(baseline), checksMs: checks === null ? null : round(checks), readerMs: round(reader), checksRatio: checks === null ? null : round(checks / baseline), readerRatio: round(reader / baseline) })
  }
  console.log('| path | 1 MiB body | JSON.parse ms | checks ms | checks / JSON.parse | reader ms | reader / JSON.parse |')
  console.log('|---|---|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.path} | ${r.name.replace(/\|/g, '\\|').replace(/</g, '&lt;')} | ${r.baselineMs} | ${r.checksMs ?? '-'} | ${r.checksRatio ?? '-'} | ${r.readerMs} | ${r.readerRatio} |`)
  console.log('')
  console.log(`Median of ${runs} runs after 3 warm-up runs, in one process. Checks: the JSON scan (scanJsonText) or the XML markup check (checkMarkup); reader: the whole parser of the content type. JSON.parse reads the same bytes (the body itself for JSON, the body as one JSON string otherwise).`)
  console.log('')
  rows.growth = growth()
  return rows
}

/** The report's targets (bench/report.js), from `run`'s result. */
function targets (rows) {
  const out = []
  const checked = rows.filter((r) => r.checksRatio !== null)
  const worst = checked.reduce((m, r) => (r.checksRatio > m.checksRatio ? r : m))
  const over = checked.filter((r) => r.checksRatio > TARGET)
  out.push({
    section: 'bodies',
    target: `the suite's checks of a 1 MiB worst-case body <= ${TARGET}x JSON.parse of the same bytes, every case`,
    measured: `worst ${worst.checksRatio}x (${worst.path}: ${worst.name}, ${worst.checksMs} ms)`,
    status: over.length === 0 ? 'MET' : 'MISSED',
    why: over.map((r) => `${r.path}: ${r.name} ${r.checksRatio}x`).join(', ')
  })
  for (const p of [...new Set(rows.map((r) => r.path))]) {
    const mine = rows.filter((r) => r.path === p)
    const w = mine.reduce((m, r) => (r.readerRatio > m.readerRatio ? r : m))
    const ok = w.readerRatio <= TARGET
    out.push({
      section: 'bodies',
      target: `${p} reader, 1 MiB worst case <= ${TARGET}x JSON.parse of the same bytes`,
      measured: `worst ${w.readerRatio}x (${w.name}: ${w.readerMs} ms against ${w.baselineMs} ms)`,
      status: ok ? 'MET' : 'MISSED',
      why: ok ? '' : p === 'XML' ? `fast-xml-parser builds the tree after the suite's checks (${w.checksMs ?? '-'} ms of the ${w.readerMs} ms); linear, but a parser written in JavaScript` : `${w.readerMs} ms against ${w.baselineMs} ms`
    })
  }
  for (const g of rows.growth ?? []) {
    out.push({
      section: 'bodies',
      target: `${g.name}: CPU at 8n <= ${LINEAR_BOUND}x CPU at n (linear work: 8, quadratic: 64)`,
      measured: `${g.ratio}x (${g.small} -> ${g.large} bytes)`,
      status: g.ratio <= LINEAR_BOUND ? 'MET' : 'MISSED',
      why: g.ratio <= LINEAR_BOUND ? '' : 'a noisy machine, or work that grows faster than the body'
    })
  }
  return out
}

module.exports = { run, targets, CASES }

if (require.main === module) {
  run()
}
