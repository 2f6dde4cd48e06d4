/**
 * The package carries its documentation: README.md links to docs/ by absolute URLs, and the
 * pages themselves ship in the tarball, so a user offline (or reading node_modules) has them;
 * the API reference (docs/api), generated and read on the repository's site, does not.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from '../helpers/paths'

test('npm pack ships every page of docs/ beside README.md', async (t) => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const { stdout } = await promisify(execFile)(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 64 << 20 })
  const files = new Set((JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path))
  t.ok(files.has('README.md'))
  for (const page of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) t.ok(files.has(`docs/${page}`), `docs/${page}`)
})

test('npm pack leaves out the generated API reference (docs/api)', async (t) => {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const { stdout } = await promisify(execFile)(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 64 << 20 })
  const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path)
  t.ok(readdirSync(join(ROOT, 'docs', 'api')).length > 0, 'the repository has the reference')
  t.same(files.filter((f) => f.startsWith('docs/api')), [], 'none of it in the tarball')
})
