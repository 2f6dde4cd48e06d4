/**
 * The auditor's `bin` (docs/audit.md), shipped by the auditor's package (packages/audit):
 * `npx fastify-http-conventions audit <url>` runs from that package's packed tarball, with the
 * files it ships and nothing of the source tree. The root package ships no bin of its own.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT, childEnv } from '../helpers/paths'

const exec = promisify(execFile)
const AUDIT = join(ROOT, 'packages', 'audit')
const pkg = JSON.parse(readFileSync(join(AUDIT, 'package.json'), 'utf8')) as { bin: Record<string, string> }

test('the bin of the auditor\'s packed tarball prints its usage, and exits 2 on a usage error', async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'audit-pack-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const { stdout } = await exec(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: AUDIT, env: childEnv(), maxBuffer: 64 << 20 })
  const packed = (JSON.parse(stdout) as Array<{ filename: string, files: Array<{ path: string }> }>)[0]
  const bin = pkg.bin['fastify-http-conventions'].replace(/^\.\//, '')
  t.ok(packed.files.some((f) => f.path === bin), `${bin} is in the tarball`)
  await exec('tar', ['-xzf', join(dir, packed.filename), '-C', dir])
  // the dependencies an install would bring: the repository's own
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'package', 'node_modules'), 'dir')
  const script = join(dir, 'package', bin)
  t.match(readFileSync(script, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'a script npm can link as a command')
  const help = await exec(process.execPath, [script, '--help'], { env: childEnv() })
  t.match(help.stdout, /^Usage: fastify-http-conventions audit <url>/)
  const bad = await exec(process.execPath, [script, 'audit', 'ftp://x'], { env: childEnv() }).then(() => ({ code: 0, stderr: '' }), (err: { code: number, stderr: string }) => err)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /only http: URLs can be audited/)
})

test('the root package ships no bin: the command comes with its dependency, the auditor', async (t) => {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: unknown, dependencies: Record<string, string> }
  t.equal(root.bin, undefined)
  t.ok('@http-conventions/audit' in root.dependencies)
})
