'use strict'
/**
 * One table of every target across Node.js lines, from the `targets.json` that
 * bench/report.js writes beside each RESULTS.md:
 *
 *   BENCH_OUT=bench/results/node-22 NODE_LINE=22 node scripts/node-line.js node bench/report.js
 *   ... the same for 24 and 26, then:
 *   node bench/lines.js bench/results/node-22 bench/results/node-24 bench/results/node-26
 *
 * Prints a Markdown table: one row per target, one column per line (its measure and status).
 */
const fs = require('node:fs')
const path = require('node:path')

function lines (dirs) {
  const runs = dirs.map((dir) => JSON.parse(fs.readFileSync(path.join(dir, 'targets.json'), 'utf8')))
  const keys = []
  const cells = new Map()
  runs.forEach((run, i) => {
    for (const t of run.targets) {
      const key = `${t.section} | ${t.target}`
      if (!cells.has(key)) { keys.push(key); cells.set(key, []) }
      cells.get(key)[i] = `${t.measured} ${t.status === 'MET' ? 'MET' : `**${t.status}**`}`
    }
  })
  const head = `| section | target | ${runs.map((r) => `Node ${r.node}`).join(' | ')} |`
  const out = [head, `|---|---|${runs.map(() => '---').join('|')}|`]
  for (const key of keys) out.push(`| ${key} | ${runs.map((_, i) => cells.get(key)[i] ?? '-').join(' | ')} |`)
  out.push('', `Runs: ${runs.map((r) => `Node ${r.node} on ${r.started} in ${r.elapsedS} s, load ${r.load.start.map((x) => x.toFixed(1)).join('/')} -> ${r.load.end.map((x) => x.toFixed(1)).join('/')}`).join('; ')}.`)
  return out.join('\n')
}

module.exports = { lines }

if (require.main === module) {
  const dirs = process.argv.slice(2)
  if (dirs.length === 0) {
    console.error('usage: node bench/lines.js <dir with targets.json>...')
    process.exit(1)
  }
  console.log(lines(dirs))
}
