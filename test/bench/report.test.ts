import { test } from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { XMLValidator, XMLParser } from 'fast-xml-parser'
import { ROOT } from '../helpers/paths'

// bench/ is plain CommonJS JavaScript (no declarations): the shapes this test relies on.
interface Row { benchmark: string, ratio: number, aP99ms: number, bP99ms: number, aPeakMB?: number, bPeakMB?: number }
interface Report {
  report: (opts: { only: string[], expressRoutes: string[], quick: boolean, seconds?: number, outDir: string, log: (line: string) => void }) => Promise<{
    results: Record<string, { value?: Row[], error?: string }>
    targets: Array<{ section: string, status: string, target: string }>
    bars: unknown[]
    files: { markdown: string, svg: string }
  }>
}

// The bench's servers and clients are child processes running the built package: they need
// none of the test runner's hooks (its coverage counts plugins/ and lib/ only).
delete process.env.NODE_OPTIONS

const { report } = require(join(ROOT, 'bench', 'report.js')) as Report

test('the report in quick mode, on the Express vs ours GET pair, writes RESULTS.md and an SVG chart', async (t) => {
  // The Express rows are CPU rows (wrk, a Debian package); under CI it must be there.
  if (spawnSync('wrk', ['-v']).error !== undefined) {
    if (process.env.CI === 'true') return t.fail('wrk is missing: apt-get install -y wrk')
    return t.plan(0, 'wrk is not installed: apt-get install -y wrk')
  }
  const outDir = mkdtempSync(join(tmpdir(), 'bench-report-'))
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }))

  const { results, targets, bars, files } = await report({ only: ['express'], expressRoutes: ['get'], quick: true, seconds: 0.5, outDir, log: () => {} })

  t.equal(files.markdown, join(outDir, 'RESULTS.md'))
  t.equal(files.svg, join(outDir, 'results.svg'))
  t.equal(results.express.error, undefined, 'the pair ran')
  const rows = results.express.value ?? []
  t.equal(rows.length, 1)
  t.equal(rows[0].benchmark, 'GET /articles/:id (2 KB article)')
  t.equal(typeof rows[0].ratio, 'number')
  t.ok(rows[0].ratio > 0, 'a ratio was measured (its value is not asserted)')
  t.equal(typeof rows[0].aPeakMB, 'number', 'peak memory of our server process')
  t.equal(typeof rows[0].bPeakMB, 'number', 'peak memory of the Express server process')
  t.same(targets.map((x) => x.section), ['express'], 'one target: ours >= 1.6x Express')
  t.match(targets[0].status, /^(MET|MISSED)$/)

  const md = readFileSync(files.markdown, 'utf8')
  t.match(md, /^# Benchmark results\n/)
  t.match(md, /Quick mode \(BENCH_QUICK=1\)/)
  for (const heading of ['## Machine', '## Targets', '## Ours vs Express 5, same articles service', '## Method']) {
    t.ok(md.includes(`\n${heading}\n`), `section ${heading}`)
  }
  t.match(md, /\| CPU \| .+ logical CPUs/)
  t.match(md, /\| load average \(1, 5, 15 min\) at start \| [\d.]+, [\d.]+, [\d.]+ \|/)
  t.match(md, /\| section \| target \| measured \| status \|\n\|---\|---\|---\|---\|\n\| express \| GET \/articles\/:id \(2 KB article\): >= 1\.6x \| [\d.]+x \| (MET|\*\*MISSED\*\*) \|/)
  t.match(md, /\| benchmark \| A \| B \| A req\/s \| B req\/s \| A p99 ms \| B p99 ms \| A CPU µs\/req \| B CPU µs\/req \| A peak RSS MB \| B peak RSS MB \| A\/B req\/s \| B\/A CPU \| B\/A CPU per process \| decided on \| target \|/)
  t.match(md, /\| GET \/articles\/:id \(2 KB article\) \| ours \(reference service\) \| Express 5 \| \d+ \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| CPU \| >= 1\.6 /)
  if (targets[0].status === 'MISSED') t.match(md, /Shortfalls, from the numbers of this run:\n\n- express, .+ short of 1\.6x/)
  else t.match(md, /Every target measured in this run is met\./)
  t.match(md, /!\[ratios against their targets\]\(results\.svg\)/)

  // targets.json beside it, and the table across Node.js lines made of such files.
  const saved = JSON.parse(readFileSync(join(outDir, 'targets.json'), 'utf8')) as { node: string, targets: Array<{ section: string, status: string }> }
  t.equal(saved.node, process.version)
  t.same(saved.targets.map((x) => [x.section, x.status]), targets.map((x) => [x.section, x.status]))
  const { lines } = require(join(ROOT, 'bench', 'lines.js')) as { lines: (dirs: string[]) => string }
  const table = lines([outDir, outDir]).split('\n')
  t.equal(table[0], `| section | target | Node ${process.version} | Node ${process.version} |`)
  t.match(table[2], /^\| express \| GET \/articles\/:id \(2 KB article\): >= 1\.6x \| [\d.]+x (MET|\*\*MISSED\*\*) \| [\d.]+x (MET|\*\*MISSED\*\*) \|$/)

  const svg = readFileSync(files.svg, 'utf8')
  t.equal(XMLValidator.validate(svg), true, 'the SVG is well-formed XML')
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'g' || name === 'line' || name === 'rect' || name === 'text' }).parse(svg) as {
    svg: { '@_xmlns': string, g: Array<{ '@_class': string, '@_data-value': string, '@_data-status': string, rect: Array<{ '@_class': string, '@_width': string }>, line: Array<{ '@_class': string }> }> }
  }
  t.equal(doc.svg['@_xmlns'], 'http://www.w3.org/2000/svg')
  const barGroups = doc.svg.g.filter((g) => g['@_class'] === 'bar')
  t.equal(barGroups.length, bars.length)
  t.equal(barGroups.length, 1, 'a bar per ratio')
  t.equal(Number(barGroups[0]['@_data-value']), rows[0].ratio)
  t.equal(barGroups[0]['@_data-status'], targets[0].status)
  t.equal(barGroups[0].rect.filter((r) => r['@_class'] === 'ratio').length, 1, 'the bar')
  t.ok(Number(barGroups[0].rect[0]['@_width']) > 0)
  t.equal(barGroups[0].line.filter((l) => l['@_class'] === 'target').length, 1, 'its target line')
})

test('CPU rows: the foundation section in quick mode measures CPU per request with wrk, per process, beside an A/A row', async (t) => {
  // wrk is the load generator of the CPU rows (a Debian package); under CI it must be there.
  if (spawnSync('wrk', ['-v']).error !== undefined) {
    if (process.env.CI === 'true') return t.fail('wrk is missing: apt-get install -y wrk')
    return t.plan(0, 'wrk is not installed: apt-get install -y wrk')
  }
  const outDir = mkdtempSync(join(tmpdir(), 'bench-report-'))
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }))
  // The rows' shape is checked here, not their values: 500 requests a round, after 50 ms of load.
  process.env.BENCH_REQUESTS = '500'
  process.env.BENCH_WARMUP_MS = '50'
  const { results, targets, files } = await report({ only: ['foundation'], expressRoutes: [], quick: true, outDir, log: () => {} })
  t.equal(results.foundation.error, undefined, 'the section ran')
  const rows = (results.foundation.value ?? []) as Array<Row & { method?: string, cpuRatio?: number, aCpuUs?: number, bCpuUs?: number, perProcess?: number[] }>
  t.same(rows.map((r) => r.benchmark), ['GET 2 KB JSON, every plugin registered', 'POST JSON + body schema, every plugin registered', 'GET 2 KB JSON, a route that uses no convention',
    'POST decomposition: the Content-Length plugin alone', 'POST decomposition: the Content-Type plugin alone (the suite\'s body reader)',
    'POST decomposition: the Validation plugin alone', 'POST decomposition: whole suite, route with every convention off',
    'A/A: bare Fastify against bare Fastify, GET 2 KB'])
  for (const r of rows) {
    t.equal(r.method, 'cpu', `${r.benchmark}: decided on CPU per request`)
    t.ok((r.aCpuUs ?? 0) > 0 && (r.bCpuUs ?? 0) > 0, 'both sides\' CPU per request measured')
    t.equal(r.ratio, r.cpuRatio, 'the ratio is the CPU ratio')
    t.equal(r.perProcess?.length, 1, 'one process per side in quick mode')
  }
  t.same(targets.map((x) => x.target), ['GET 2 KB JSON, every plugin registered: >= 0.95x', 'POST JSON + body schema, every plugin registered: >= 0.93x', 'GET 2 KB JSON, a route that uses no convention: >= 0.98x'], 'the decomposition and A/A rows are reported, not targets')
  const md = readFileSync(files.markdown, 'utf8')
  t.match(md, /\| A\/A: bare Fastify against bare Fastify, GET 2 KB \| bare Fastify \| bare Fastify \| \d+ \| \d+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| - \| - \| [\d.]+ \| [\d.]+ \| [\d.]+ \| CPU \| reported \|/)
})
