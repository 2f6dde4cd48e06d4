/**
 * A mutation test of the auditor (docs/audit.md): for every rule, the reference service broken
 * in that one way makes exactly that rule fail, and no other. The mutants are keyed by rule id:
 * a rule added without a mutant fails the type check and the first test.
 */
import { test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { RULE_IDS, type RuleId } from '../../lib/audit/rules'
import type { Profile } from '../../lib/audit/run'
import { CREDENTIALS, REFERENCE_CONFIG, compose, failing, runAudit, startReference, type Answer, type Mutation } from './helpers'

const has = (name: string, value?: RegExp) => (req: string): boolean => {
  const line = req.split('\r\n').find((l) => l.toLowerCase().startsWith(name + ':'))
  return line !== undefined && (value === undefined || value.test(line.slice(name.length + 1).trim()))
}
const count = (name: string) => (req: string): number => req.split('\r\n').filter((l) => l.toLowerCase().startsWith(name + ':')).length
const method = (m: string) => (req: string): boolean => req.startsWith(m + ' ')
const status = (s: number) => (a: Answer): void => { a.status = s }
const drop = (name: string) => (a: Answer): void => { delete a.headers[name] }

/** One mutant a rule: the reference service broken in that rule's way only. */
const MUTANTS: Record<RuleId, Mutation> = {
  'content-type.response': { when: (q, s) => method('POST')(q) && s === 201, change: drop('content-type') },
  'content-type.charset': { when: (_q, s) => s === 307, change: (a) => { a.headers['content-type'] = 'text/plain' } },
  'content-type.request-required': { when: () => false, change: () => {}, request: (req) => { if (req.method === 'POST' && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json' } },
  'content-length.missing': { when: (q, s) => s === 411 && method('POST')(q) && !has('content-length')(q) && !has('transfer-encoding')(q), change: status(400) },
  'content-length.chunked': { when: (q, s) => s === 411 && has('transfer-encoding')(q) && !has('content-length')(q), change: status(400) },
  'content-length.invalid': { when: (q, s) => s === 411 && has('content-length', /x$/)(q), change: status(400) },
  'content-length.duplicate': { when: (q, s) => s === 411 && count('content-length')(q) === 2, change: status(400) },
  'content-length.with-transfer-encoding': { when: (q, s) => s === 411 && has('content-length', /^\d+$/)(q) && has('transfer-encoding')(q), change: status(400) },
  'content-length.limit': { when: (q, s) => s === 411 && has('content-length', /^1073741824$/)(q), change: status(400) },
  'content-length.411-text': { when: (_q, s) => s === 411, change: (a) => { a.headers['content-type'] = 'application/octet-stream' } },
  'validation.422': { when: (q, s) => s === 422 && method('POST')(q), change: status(400) },
  'validation.errors-shape': { when: (_q, s) => s === 422, change: (a) => { a.body = Buffer.from('{"errors":[{"msg":"invalid"}]}') } },
  'errors.json-media-type': { when: (_q, s) => s === 412, change: (a) => { a.headers['content-type'] = 'text/plain; charset=utf-8' } },
  'patch.accept-patch': { when: (q, s) => s === 200 && (method('GET')(q) || method('HEAD')(q)), change: drop('accept-patch') },
  'patch.unsupported-415': { when: (q, s) => s === 415 && method('PATCH')(q), change: status(400) },
  'patch.accept-patch-415': { when: (q, s) => s === 415 && method('PATCH')(q), change: drop('accept-patch') },
  'patch.json-patch': { when: (q, s) => s === 200 && has('content-type', /json-patch/)(q), change: status(409) },
  'patch.merge-patch': { when: (q, s) => s === 200 && has('content-type', /merge-patch/)(q), change: status(409) },
  'conditional.etag': { when: (q, s) => s === 200 && (method('GET')(q) || method('HEAD')(q)), change: (a) => { if (typeof a.headers.etag === 'string') a.headers.etag = a.headers.etag.replace(/"/g, '') } },
  'conditional.if-none-match': { when: (q, s) => s === 412 && has('if-none-match')(q) && !has('a-im')(q), change: status(200) },
  'conditional.if-modified-since': { when: (q, s) => s === 412 && has('if-modified-since')(q), change: status(200) },
  'conditional.if-match': { when: (q, s) => s === 412 && has('if-match', /^"/)(q), change: status(200) },
  'conditional.if-unmodified-since': { when: (q, s) => s === 412 && has('if-unmodified-since')(q), change: status(200) },
  'conditional.if-match-star-missing': { when: (q, s) => s === 404 && has('if-match', /^\*$/)(q), change: status(412) },
  'delta.226': { when: (_q, s) => s === 226, change: (a) => { a.body = Buffer.from('not a delta') } },
  'delta.unknown-ignored': { when: (q) => has('a-im', /x-audit-unknown/)(q), change: (a) => { a.headers.im = 'x-audit-unknown' } },
  'redirect.307': { when: (q, s) => s === 307 && method('GET')(q), change: status(302) },
  'redirect.method-kept': { when: (q, s) => s === 307 && method('POST')(q), change: status(303) },
  'corp.every-answer': { when: (_q, s) => s === 404, change: drop('cross-origin-resource-policy') },
  'auth.401-without-credentials': { when: (q, s) => s === 401 && !has('authorization')(q), change: status(403) },
  'auth.401-invalid-basic': { when: (q, s) => s === 401 && has('authorization', /^Basic /)(q), change: status(403) },
  'auth.401-invalid-bearer': { when: (q, s) => s === 401 && has('authorization', /^Bearer /)(q), change: status(403) },
  'auth.401-invalid-digest': { when: (q, s) => s === 401 && has('authorization', /^Digest /)(q), change: status(403) },
  'auth.credentials-accepted': { when: (q, s) => s === 201 && has('authorization', /^Bearer /)(q), change: (a) => { a.status = 401; a.headers['www-authenticate'] = 'Bearer realm="articles"' } },
  'auth.www-authenticate': { when: (q, s) => s === 401 && has('authorization', /^Bearer /)(q), change: drop('www-authenticate') },
  'auth.challenge-form': { when: (_q, s) => s === 401, change: (a) => { const v = a.headers['www-authenticate']; a.headers['www-authenticate'] = (Array.isArray(v) ? v : [String(v)]).map((c) => c.startsWith('Bearer') ? 'Bearer scope="write"' : c) } },
  'rfc.405-allow': { when: (_q, s) => s === 405, change: drop('allow') },
  'rfc.options': { when: (q) => method('OPTIONS')(q), change: drop('allow') },
  'rfc.vary-accept': { when: (q, s) => s === 200 && method('GET')(q) && has('accept', /xml/)(q), change: drop('vary') },
  'rfc.head': { when: (q, s) => s === 200 && method('HEAD')(q), change: drop('etag') },
  'rfc.date': { when: (_q, s) => s === 404, change: (a) => { a.noDate = true; delete a.headers.date } },
  'rfc.version-505': { when: (q) => q.startsWith('GET / HTTP/2.0'), change: status(400) },
  'rfc.one-content-type': { when: (q, s) => s >= 400 && s < 500 && count('content-type')(q) === 2, change: status(201) }
}

/**
 * The reference service as it answers once the gaps other work closes are merged (405 with
 * Allow and OPTIONS, Vary on negotiated errors, If-Match: * on a missing resource, CORP on
 * Node's own answers, 505 to HTTP/2.0, one Content-Type, application/json errors under spec):
 * a mutant of a rule the service still fails is proven against this, and says so. Once merged,
 * none of these picks an answer any more.
 */
const MERGED: Mutation[] = [
  { when: () => true, change: (a) => { if (a.headers['cross-origin-resource-policy'] === undefined) a.headers['cross-origin-resource-policy'] = 'same-origin' } },
  { when: () => true, change: (a) => { if (!/accept/i.test(String(a.headers.vary ?? ''))) a.headers.vary = a.headers.vary === undefined ? 'Accept' : `${String(a.headers.vary)}, Accept` } },
  { when: (q, s) => s === 404 && /^POST \/articles\/[^/ ]+ /.test(q), change: (a) => { a.status = 405; a.headers.allow = 'GET, HEAD, PUT, PATCH, DELETE' } },
  { when: (q, s) => s === 404 && method('OPTIONS')(q), change: (a) => { a.status = 204; a.headers.allow = 'GET, HEAD, PUT, PATCH, DELETE'; delete a.headers['content-type']; a.body = Buffer.alloc(0) } },
  { when: (q) => q.startsWith('GET / HTTP/2.0'), change: status(505) },
  { when: (q, s) => s === 201 && count('content-type')(q) === 2, change: status(415) },
  { when: (q, s) => s === 412 && has('if-match', /^\*$/)(q), change: status(404) },
  { when: (_q, s) => s === 412 || s === 422, change: (a) => { if (/problem\+json/.test(String(a.headers['content-type']))) a.headers['content-type'] = 'application/json; charset=utf-8' } }
]

const dir = mkdtempSync(join(os.tmpdir(), 'audit-mutants-'))
const config = join(dir, 'config.json')
writeFileSync(config, JSON.stringify(REFERENCE_CONFIG))
const args = (url: string, profile: Profile): string[] => [url, '--profile', profile, '--write', ...CREDENTIALS, '--rate', '0', '--config', config]

test('every rule has a mutant, and every mutant names a rule', async (t) => {
  t.same(Object.keys(MUTANTS).sort(), [...RULE_IDS].sort())
})

test('mutation: the reference service broken in one way fails exactly that rule (docs/audit.md)', async (t) => {
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const baseline: Record<Profile | 'merged', string[]> = { spec: [], rfc9110: [], merged: [] }
  for (const profile of ['spec', 'rfc9110', 'merged'] as const) {
    const base = await startReference(profile === 'merged' ? 'spec' : profile, profile === 'merged' ? compose(...MERGED) : undefined)
    try { baseline[profile] = failing(await runAudit(args(base.url, profile === 'merged' ? 'spec' : profile))) } finally { await base.close() }
  }
  t.same(baseline.merged, [], 'with the gaps closed, the reference service passes every rule')
  for (const id of RULE_IDS) {
    // the mutant runs where the unbroken service passes the rule: spec, rfc9110, or spec with the gaps closed
    const where = !baseline.spec.includes(id) ? 'spec' : !baseline.rfc9110.includes(id) ? 'rfc9110' : 'merged'
    const profile: Profile = where === 'rfc9110' ? 'rfc9110' : 'spec'
    const svc = await startReference(profile, where === 'merged' ? compose(...MERGED, MUTANTS[id]) : MUTANTS[id])
    let got: string[]
    try { got = failing(await runAudit(args(svc.url, profile))) } finally { await svc.close() }
    const added = got.filter((x) => !baseline[where].includes(x))
    const lost = baseline[where].filter((x) => !got.includes(x))
    t.same({ added, lost }, { added: [id], lost: [] }, `mutant of ${id} (${where === 'merged' ? 'spec, with the gaps the reference service still has closed' : profile})`)
  }
})
