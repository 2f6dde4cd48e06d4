import { test } from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../helpers/paths'

// bench/ is plain CommonJS JavaScript (no declarations): the shapes this test relies on.
interface Side { bigPerS: number, tinyP99Ms: number, eldP99Ms: number, answers: number, s200: number, s226: number }
interface DeltaScale {
  docBytes: number
  A: Side
  B: Side
  deltasPerS: number
  share226: number
  share200: number
  otherA: number
  deltaVsFull: number
  tinyP99Ratio: number
  check: { baseBytes: number, deltaBytes: number }
  afterLoad: { loadGets: number, answers: number, s226: number, s200: number, s412: number, share226: number }
}
interface Report {
  report: (opts: { only: string[], quick: boolean, outDir: string, log: (line: string) => void }) => Promise<{
    results: Record<string, { value?: DeltaScale, output?: string, error?: string }>
    targets: Array<{ section: string, target: string, measured: string, status: string }>
    bars: unknown[]
    files: { markdown: string }
  }>
  SECTIONS: string[]
}

// The bench's servers and clients are child processes running the built package: they need
// none of the test runner's hooks (its coverage counts plugins/ and lib/ only).
delete process.env.NODE_OPTIONS

const { report, SECTIONS } = require(join(ROOT, 'bench', 'report.js')) as Report

test('delta-scale in quick mode: both modes run, B receives 226s, deltas flow after load, the report carries its table and four targets', async (t) => {
  t.ok(SECTIONS.includes('delta-scale'), 'a section of the report')
  const outDir = mkdtempSync(join(tmpdir(), 'bench-delta-scale-'))
  t.teardown(() => rmSync(outDir, { recursive: true, force: true }))

  const { results, targets, bars, files } = await report({ only: ['delta-scale'], quick: true, outDir, log: () => {} })

  const r = results['delta-scale']
  t.equal(r.error, undefined, 'the benchmark ran')
  const v = r.value as DeltaScale
  t.ok(v.docBytes > 6 * 1024 * 1024 - 1024, 'a 6 MiB document')
  t.ok(v.check.deltaBytes > 0 && v.check.deltaBytes < v.check.baseBytes, 'a 226 was decoded in the warm-up, smaller than its base')
  t.ok(v.A.answers > 0 && v.A.s200 === v.A.answers, 'A: only 200s')
  t.equal(v.otherA, 0)
  t.ok(v.B.s226 > 0, 'B: deltas were received')
  t.ok(v.B.s226 + v.B.s200 <= v.B.answers)
  t.ok(v.share226 > 0 && v.share226 <= 1)
  t.ok(v.share226 + v.share200 <= 1 + 1e-9, '226 and 200 shares within the answers')
  // Figures exist; their values are not asserted (a shared, noisy machine).
  for (const x of [v.A.bigPerS, v.deltasPerS, v.A.tinyP99Ms, v.B.tinyP99Ms, v.A.eldP99Ms, v.B.eldP99Ms, v.deltaVsFull, v.tinyP99Ratio]) {
    t.equal(typeof x, 'number')
    t.ok(Number.isFinite(x))
  }

  // After load: full GETs first, then deltas against the one instance fetched (docs/conventions.md (Delta encoding)).
  const L = v.afterLoad
  t.ok(L.loadGets > 0, 'after load: full GETs ran first')
  t.ok(L.answers > 0 && L.s226 + L.s200 + L.s412 <= L.answers)
  t.ok(L.s226 > 0, 'after load: the client that fetched once received deltas')
  t.ok(L.share226 > 0 && L.share226 <= 1)

  t.same(targets.map((x) => x.section), ['delta-scale', 'delta-scale', 'delta-scale', 'delta-scale'])
  for (const x of targets) t.match(x.status, /^(MET|MISSED)$/)
  t.match(targets[0].target, /deltas\/s >= full GETs\/s/)
  t.match(targets[1].target, /\/tiny p99/)
  t.match(targets[2].target, /event-loop delay p99 <= 20 ms/)
  t.match(targets[3].target, /after [\d.]+ s of full GETs .* >= 95% of delta requests get a 226/)
  t.equal(bars.length, 0, 'no ratio bars: its targets are in the Targets table')

  const md = readFileSync(files.markdown, 'utf8')
  t.ok(md.includes('\n## Delta encoding of a 6 MiB document under load, beside a tiny route\n'), 'its section')
  t.match(md, /\| metric \| A: no A-IM \(200s\) \| B: A-IM vcdiff \+ If-None-Match \| B\/A \| target \|/)
  t.match(md, /\| \/tiny p99 ms \| [\d.]+ \| [\d.]+ \| [\d.]+ \| <= 1\.3x: (MET|MISSED) \|/)
  t.match(md, /B's answers: \d+, of which 226: \d+ \([\d.]+%\), 200: \d+ \([\d.]+%\)/)
  t.match(md, /After load \(a new version every 20 ms\): \d+ full GETs in [\d.]+ s, one fetch, then \d+ requests .* 226 share \(412s aside\) [\d.]+%/)
})
