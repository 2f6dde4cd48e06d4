/**
 * The reference service's OpenAPI document is valid by Redocly's `spec` ruleset (the rules of
 * the OpenAPI specification itself: path parameters defined, operation ids unique, schemas
 * well formed, ...), in both profiles: `redocly lint --extends spec` on the document
 * `GET /openapi.json` serves. @redocly/cli is a development dependency, run as a program.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { buildService } from '../../example/app'
import { ROOT } from '../helpers/paths'

const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`Redocly's spec ruleset finds no problem in the reference service's OpenAPI document (profile ${profile})`, async (t) => {
    const app = await buildService({ database: ':memory:', bodyLimit: 4096, profile })
    t.teardown(() => app.close())
    const res = await app.inject('/openapi.json')
    t.equal(res.statusCode, 200)
    const dir = mkdtempSync(join(tmpdir(), 'redocly-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'openapi.json')
    writeFileSync(file, res.body)
    const run = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', '--extends', 'spec', '--format', 'json', file], { cwd: dir, maxBuffer: 16 << 20, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }).catch((err: { stdout?: string, code?: number }) => ({ stdout: err.stdout ?? '', code: err.code }))
    const report = JSON.parse(run.stdout) as { totals: { errors: number, warnings: number }, problems: Array<{ ruleId: string, message: string }> }
    t.same(report.problems.map((p) => `${p.ruleId}: ${p.message}`), [], 'no problem reported')
    t.equal(report.totals.errors, 0, 'no error')
  })
}
