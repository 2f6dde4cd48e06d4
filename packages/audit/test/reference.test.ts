/**
 * The auditor against the reference service (docs/audit.md, docs/reference-service.md), started
 * as `npm start` runs it, over a real socket, in both profiles: every rule passes or is
 * skipped with its reason, within a bounded number of requests.
 */
import { test, teardown } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { startService } from '../../../test/helpers/service'
import { RULES } from '../src/rules'
import { CREDENTIALS, REFERENCE_CONFIG, failing, runAudit, startReference } from './helpers'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-reference-'))
const config = join(dir, 'config.json')
writeFileSync(config, JSON.stringify(REFERENCE_CONFIG))
teardown(() => rmSync(dir, { recursive: true, force: true }))

/** A run creates a handful of resources and probes each rule a few times: far below this. */
const MAX_REQUESTS = 200

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`reference service, ${profile} profile: every rule of the conventions passes`, async (t) => {
    const svc = await startService({ CONVENTIONS_PROFILE: profile, LOG_LEVEL: 'warn' })
    t.teardown(() => svc.stop())
    const started = process.hrtime.bigint()
    const run = await runAudit([svc.url, '--profile', profile, '--write', ...CREDENTIALS, '--bearer-insufficient', 'demo-read-token', '--unique', 'slug', '--rate', '0', '--config', config])
    t.comment(`audit of the reference service (${profile}): ${run.report.requests} requests in ${Number(process.hrtime.bigint() - started) / 1e6} ms`)
    t.same(failing(run), [], 'no rule fails')
    t.equal(run.code, 0)
    const skipped = run.report.rules.filter((r) => r.outcome === 'skipped').map((r) => `${r.id}: ${r.reason ?? ''}`)
    t.same(skipped, profile === 'spec'
      ? []
      : ['content-length.missing: rfc9110 profile: a body without Content-Length (chunked, or none) is accepted (RFC 9112 6.1, 6.3)', 'content-length.get-body: rfc9110 profile: a body without Content-Length (chunked, or none) is accepted (RFC 9112 6.1, 6.3)', 'content-length.411-text: nothing to check it on'],
    'nothing skipped but what the profile rules out (rfc9110 answers no 411)')
    t.ok(run.report.requests <= MAX_REQUESTS, `${run.report.requests} requests, at most ${MAX_REQUESTS}`)
  })
}

test('reference service, read-only run: only GET, HEAD and OPTIONS are sent, and writes are skipped', async (t) => {
  const methods = new Set<string>()
  const svc = await startReference('spec', { when: () => false, change: () => {}, request: (req) => { methods.add(req.method ?? '') } })
  t.teardown(() => svc.close())
  const run = await runAudit([svc.url, '--rate', '0', '--config', config])
  t.same([...methods].filter((m) => !['GET', 'HEAD', 'OPTIONS'].includes(m)), [], `methods sent: ${[...methods].join(', ')}`)
  const writes = run.report.rules.filter((r) => r.outcome === 'skipped' && r.reason === 'needs --write').map((r) => r.id)
  t.same(writes, RULES.filter((r) => r.needs.includes('write')).map((r) => r.id), 'every write rule is skipped, saying why')
})
