/**
 * scripts/largest-functions.js (`npm run size`) reports a function by name, file:line and
 * line count, and `--over N` fails when a function is longer than N lines.
 */
import { test } from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, childEnv } from '../helpers/paths'

const SCRIPT = join(ROOT, 'scripts', 'largest-functions.js')

function run (...args: string[]): { status: number | null, stdout: string } {
  const child = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', env: childEnv() })
  return { status: child.status, stdout: child.stdout }
}

/** Where `function name (` starts in `file` and how many lines it spans, up to its `}` in column 0. */
function measure (file: string, name: string): { line: number, lines: number } {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
  const start = lines.findIndex((l) => l.startsWith(`function ${name} (`) || l.startsWith(`export function ${name} (`))
  const end = lines.findIndex((l, i) => i > start && l === '}')
  return { line: start + 1, lines: end - start + 1 }
}

test('a known function is listed with its file, line and line count', async (t) => {
  const { status, stdout } = run('--top', '100000')
  t.equal(status, 0)
  const expected = measure('lib/xml.ts', 'characterReferenceAt')
  t.ok(expected.lines > 5, 'the function measured is found in the source')
  const row = stdout.split('\n').find((l) => l.includes(' characterReferenceAt '))
  t.ok(row, 'the function is listed')
  t.match(row, new RegExp(`^\\s*${expected.lines}  characterReferenceAt  lib/xml\\.ts:${expected.line}$`))
})

test('the list is largest first, 20 rows by default', async (t) => {
  const { stdout } = run()
  const counts = stdout.split('\n').filter((l) => /^\s*\d+ {2}\S/.test(l) && !l.endsWith('total')).map((l) => Number(l.trim().split(' ')[0]))
  const functions = counts.slice(0, 20)
  t.equal(functions.length, 20)
  t.same(functions, [...functions].sort((a, b) => b - a))
})

test('--over N lists only longer functions and exits 1 if there are any', async (t) => {
  const none = run('--over', '100000')
  t.equal(none.status, 0)
  t.match(none.stdout, /over 100000 lines: 0/)
  const all = run('--over', '0')
  t.equal(all.status, 1)
  t.match(all.stdout, / characterReferenceAt {2}lib\/xml\.ts:\d+/)
})

test('an unknown argument is refused', async (t) => {
  const child = spawnSync(process.execPath, [SCRIPT, '--bogus'], { cwd: ROOT, encoding: 'utf8', env: childEnv() })
  t.not(child.status, 0)
  t.match(child.stderr, /unknown argument --bogus/)
})
