/**
 * A mutation test of the auditor (docs/audit.md): the reference service broken in one way (a
 * proxy of its answers, packages/audit/test/helpers.ts) makes exactly the rule meant for that way fail,
 * and no other. Mutants are kept per statement of the conventions, several for a rule; the
 * mutants are keyed by rule id, so a rule added without one fails the first test.
 */
import { test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { RULE_IDS } from '../src/rules'
import { CREDENTIALS, REFERENCE_CONFIG, failing, runAudit, startReference, type Answer, type Mutation } from './helpers'

const has = (name: string, value?: RegExp) => (req: string): boolean => {
  const line = req.split('\r\n').find((l) => l.toLowerCase().startsWith(name + ':'))
  return line !== undefined && (value === undefined || value.test(line.slice(name.length + 1).trim()))
}
const count = (name: string) => (req: string): number => req.split('\r\n').filter((l) => l.toLowerCase().startsWith(name + ':')).length
const method = (m: string) => (req: string): boolean => req.startsWith(m + ' ')
const status = (s: number) => (a: Answer): void => { a.status = s }
const drop = (name: string) => (a: Answer): void => { delete a.headers[name] }
const said = (text: string) => (a: Answer): boolean => a.received?.toString('utf8').includes(text) === true
/** The user name of a Basic Authorization line. */
const basicUser = (req: string): string | undefined => {
  const m = /\r\nAuthorization: Basic ([A-Za-z0-9+/=]+)/i.exec(req)
  return m === null ? undefined : Buffer.from(m[1], 'base64').toString('utf8').split(':')[0]
}
const envelope = (field: string): Buffer => Buffer.from(JSON.stringify({ errors: [{ field, message: 'precondition failed' }] }))
/** A change applied only to answers whose body says `text`. */
const whenSaid = (text: string, change: (a: Answer) => void) => (a: Answer): void => { if (said(text)(a)) change(a) }
const chunkedWithoutLength = (q: string): boolean => has('transfer-encoding')(q) && !has('content-length')(q)
const noLength = (q: string): boolean => !has('content-length')(q) && !has('transfer-encoding')(q)

/** The last Last-Modified the service sent: the If-Modified-Since mutant compares with it. */
function ifModifiedSinceOnlyEqual (): Mutation {
  let last: string | undefined
  return {
    when: () => true,
    change: (a, q) => {
      if (typeof a.headers['last-modified'] === 'string') last = a.headers['last-modified']
      const ims = /\r\nIf-Modified-Since: ([^\r]+)/i.exec(q)?.[1]
      if (a.status === 412 && ims !== undefined && ims !== last) a.status = 200
    }
  }
}

/** The Digest Authorization line of the demo user, and its nonce and count (RFC 7616 3.4). */
const demoDigest = (q: string): { line: string, count: string } | undefined => {
  const line = /\r\nAuthorization: (Digest username="demo"[^\r]*)/i.exec(q)?.[1]
  return line === undefined ? undefined : { line, count: `${/nonce="([^"]*)"/.exec(line)?.[1] ?? ''} ${/, nc=([0-9a-f]+)/.exec(line)?.[1] ?? ''}` }
}

/**
 * Digest credentials judged by what was accepted before: `replayed` lets in a line accepted
 * before, byte for byte; else a line whose nonce and count were (a stale nonce under a new cnonce).
 */
function digestAcceptedAgain (replayed: boolean): Mutation {
  const lines = new Set<string>()
  const counts = new Set<string>()
  return {
    when: (q, s) => {
      const d = demoDigest(q)
      if (d === undefined) return false
      if (s >= 200 && s < 300) { lines.add(d.line); counts.add(d.count); return false }
      return s === 401 && (replayed ? lines.has(d.line) : !lines.has(d.line) && counts.has(d.count))
    },
    change: status(201)
  }
}

/** The mutants of each rule: the reference service broken in that rule's ways only. */
const MUTANTS: Record<string, Record<string, Mutation>> = {
  'content-type.response': { 'a 201 without Content-Type': { when: (q, s) => method('POST')(q) && s === 201, change: drop('content-type') } },
  'content-type.charset': { 'a text/plain 307 without charset': { when: (_q, s) => s === 307, change: (a) => { a.headers['content-type'] = 'text/plain' } } },
  'content-type.vary-accept': { 'XML by Accept without Vary': { when: (q, s) => s === 200 && method('GET')(q) && has('accept', /xml/)(q), change: drop('vary') } },
  'content-type.request-required': {
    'POST without Content-Type taken as JSON': { when: () => false, change: () => {}, request: (req) => { if (req.method === 'POST' && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json' } },
    'PUT without Content-Type taken as JSON': { when: () => false, change: () => {}, request: (req) => { if (req.method === 'PUT' && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json' } }
  },
  'content-type.request-charset': { 'charset=iso-8859-1 taken as UTF-8': { when: () => false, change: () => {}, request: (req) => { if (/iso-8859-1/.test(req.headers['content-type'] ?? '')) req.headers['content-type'] = 'application/json' } } },
  'content-type.unsupported-415': { 'an unknown media type taken as JSON': { when: () => false, change: () => {}, request: (req) => { if (req.headers['content-type'] === 'application/x-audit-unknown') req.headers['content-type'] = 'application/json' } } },
  'content-type.malformed-400': { 'a JSON label on a body that is not JSON accepted': { when: (q, s) => s === 400 && !method('GET')(q) && has('content-type', /json/)(q) && count('content-type')(q) === 1, change: status(200) } },
  'content-length.missing': {
    'POST without Content-Length is 400': { when: (q, s) => s === 411 && method('POST')(q) && noLength(q), change: status(400) },
    'PUT without Content-Length accepted': { when: (q, s) => s === 411 && method('PUT')(q) && noLength(q), change: status(200) },
    'PATCH without Content-Length accepted': { when: (q, s) => s === 411 && method('PATCH')(q) && noLength(q), change: status(200) }
  },
  'content-length.chunked': {
    'chunked POST is 400': { when: (q, s) => s === 411 && method('POST')(q) && chunkedWithoutLength(q), change: status(400) },
    'chunked PUT accepted': { when: (q, s) => s === 411 && method('PUT')(q) && chunkedWithoutLength(q), change: status(200) }
  },
  'content-length.invalid': { 'Content-Length: 93x is 400': { when: (q, s) => s === 411 && has('content-length', /x$/)(q), change: status(400) } },
  'content-length.duplicate': { 'two Content-Length values are 400': { when: (q, s) => s === 411 && count('content-length')(q) === 2, change: status(400) } },
  'content-length.with-transfer-encoding': { 'Content-Length with chunked is 400': { when: (q, s) => s === 411 && has('content-length', /^\d+$/)(q) && has('transfer-encoding')(q), change: status(400) } },
  'content-length.mismatch': { 'a body short of its Content-Length is 400': { when: (q, s) => s === 411 && has('content-length', /^\d{1,6}$/)(q) && !has('transfer-encoding')(q) && count('content-length')(q) === 1, change: status(400) } },
  'content-length.limit': { 'a body over the limit is 400': { when: (q, s) => s === 411 && has('content-length', /^1073741824$/)(q), change: status(400) } },
  'content-length.get-body': { 'a chunked GET accepted': { when: (q, s) => s === 411 && method('GET')(q), change: status(200) } },
  'content-length.411-text': {
    '411 in application/octet-stream': { when: (_q, s) => s === 411, change: (a) => { a.headers['content-type'] = 'application/octet-stream' } },
    '411 that does not say Length Required': { when: (_q, s) => s === 411, change: (a) => { a.body = Buffer.from('too long') } }
  },
  'validation.422': { 'a wrong type is 400': { when: (_q, s) => s === 422, change: whenSaid('must be ', status(400)) } },
  'validation.422-required': { 'a missing required property is 400': { when: (_q, s) => s === 422, change: whenSaid('required', status(400)) } },
  'validation.422-duplicate': { 'a duplicate is 409': { when: (_q, s) => s === 422, change: whenSaid('already used', status(409)) } },
  'validation.field-named': { 'errors[].field names the body, not the property': { when: (_q, s) => s === 422, change: (a) => { a.body = Buffer.from((a.received ?? Buffer.alloc(0)).toString('utf8').replace(/"field":"[^"]*"/g, '"field":"body"')) } } },
  'validation.errors-shape': { 'a 422 of another shape': { when: (_q, s) => s === 422, change: (a) => { a.body = Buffer.from('{"errors":[{"msg":"invalid"}]}') } } },
  'errors.envelope': {
    'a 412 labelled JSON that is not JSON': { when: (_q, s) => s === 412, change: (a) => { a.body = Buffer.from('Precondition Failed') } },
    'a 415 in JSON of another shape': { when: (_q, s) => s === 415, change: (a) => { a.body = Buffer.from('{"error":"unsupported"}') } }
  },
  'errors.json-media-type': { 'a 412 in text/plain': { when: (_q, s) => s === 412, change: (a) => { a.headers['content-type'] = 'text/plain; charset=utf-8' } } },
  'patch.accept-patch': {
    'GET and HEAD without Accept-Patch': { when: (q, s) => s === 200 && (method('GET')(q) || method('HEAD')(q)), change: drop('accept-patch') },
    'PATCH 2xx without Accept-Patch': { when: (q, s) => s === 200 && method('PATCH')(q), change: drop('accept-patch') }
  },
  'patch.unsupported-415': { 'a text/plain PATCH is 400': { when: (q, s) => s === 415 && method('PATCH')(q) && has('content-type', /text\/plain/)(q), change: status(400) } },
  'patch.accept-patch-415': { 'a 415 to PATCH without Accept-Patch': { when: (q, s) => s === 415 && method('PATCH')(q), change: drop('accept-patch') } },
  'patch.json-patch': { 'a JSON Patch is 409': { when: (q, s) => s === 200 && has('content-type', /json-patch/)(q), change: status(409) } },
  'patch.merge-patch': { 'a merge patch is 409': { when: (q, s) => s === 200 && has('content-type', /merge-patch/)(q), change: status(409) } },
  'patch.atomic-422': { 'a failed test is 200': { when: (q, s) => s === 422 && method('PATCH')(q), change: status(200) } },
  'conditional.etag': { 'an ETag without quotes': { when: (q, s) => s === 200 && (method('GET')(q) || method('HEAD')(q)), change: (a) => { if (typeof a.headers.etag === 'string') a.headers.etag = a.headers.etag.replace(/"/g, '') } } },
  'conditional.if-none-match': { 'a matching If-None-Match is 200': { when: (q, s) => s === 412 && has('if-none-match', /^"[^",]*"$/)(q) && !has('a-im')(q), change: status(200) } },
  'conditional.if-none-match-star': { 'If-None-Match: * is 200': { when: (q, s) => s === 412 && has('if-none-match', /^\*$/)(q), change: status(200) } },
  'conditional.if-modified-since': {
    'If-Modified-Since is ignored': { when: (q, s) => s === 412 && has('if-modified-since')(q), change: status(200) },
    'If-Modified-Since later than Last-Modified is 200': ifModifiedSinceOnlyEqual()
  },
  'conditional.if-unmodified-since': {
    'If-Unmodified-Since is ignored': { when: (q, s) => s === 412 && has('if-unmodified-since')(q), change: status(200) },
    'If-Unmodified-Since is always 412': { when: (q, s) => s === 200 && has('if-unmodified-since')(q), change: (a) => { a.status = 412; a.body = envelope('If-Unmodified-Since') } }
  },
  'conditional.etag-list': {
    'If-None-Match: only the first tag compared': { when: (q, s) => s === 412 && has('if-none-match', /,/)(q), change: status(200) },
    'If-Match: only the first tag compared': { when: (q, s) => s === 200 && has('if-match', /,/)(q), change: (a) => { a.status = 412; a.body = envelope('If-Match') } }
  },
  'conditional.weak-strong': {
    'If-None-Match compared strongly': { when: (q, s) => s === 412 && has('if-none-match', /^W\//)(q), change: status(200) },
    'If-Match compared weakly': { when: (q, s) => s === 412 && has('if-match', /^W\//)(q), change: status(200) }
  },
  'conditional.if-match': { 'a stale If-Match is 200': { when: (q, s) => s === 412 && has('if-match', /^"[^,]*$/)(q), change: status(200) } },
  'conditional.if-match-star-missing': { 'If-Match: * on a missing resource is 412': { when: (q, s) => s === 404 && has('if-match', /^\*$/)(q), change: (a) => { a.status = 412; a.body = envelope('If-Match') } } },
  'delta.226': { 'a gzip 226 that does not decode': { when: (q, s) => s === 226 && has('a-im', /^gzip$/)(q), change: (a) => { a.body = Buffer.from('not a delta') } } },
  'delta.226-headers': {
    'a 226 without Content-Length': { when: (_q, s) => s === 226, change: drop('content-length') },
    'a 226 without Delta-Base': { when: (_q, s) => s === 226, change: drop('delta-base') }
  },
  'delta.a-im-tokens': {
    'A-IM: VCDIFF refused': { when: (q, s) => s === 226 && has('a-im', /^VCDIFF$/)(q), change: status(406) },
    'A-IM: gzip, vcdiff refused': { when: (q, s) => s === 226 && has('a-im', /,/)(q), change: status(406) }
  },
  'delta.unknown-ignored': { 'an unknown A-IM named in IM': { when: (q) => has('a-im', /x-audit-unknown/)(q), change: (a) => { a.headers.im = 'x-audit-unknown' } } },
  'redirect.307': {
    'a GET redirected with 302': { when: (q, s) => s === 307 && method('GET')(q), change: status(302) },
    'a Location where nothing listens': { when: (q, s) => s === 307 && method('GET')(q), change: (a) => { a.headers.location = `http://127.0.0.1:1${String(a.headers.location)}` } }
  },
  'redirect.method-kept': {
    'a POST redirected with 303': { when: (q, s) => s === 307 && method('POST')(q), change: status(303) },
    'a POST redirected where POST is not taken': { when: (q, s) => s === 307 && method('POST')(q), change: (a) => { a.headers.location = '/public/logo.svg' } }
  },
  'redirect.query-kept': { 'the query string dropped': { when: (_q, s) => s === 307, change: (a) => { a.headers.location = String(a.headers.location).split('?')[0] } } },
  'corp.every-answer': {
    'a 404 without CORP': { when: (_q, s) => s === 404, change: drop('cross-origin-resource-policy') },
    'CORP written Same-Origin': { when: (q, s) => s === 200 && method('GET')(q), change: (a) => { a.headers['cross-origin-resource-policy'] = 'Same-Origin' } }
  },
  'auth.401-without-credentials': {
    'a POST without credentials is 403': { when: (q, s) => s === 401 && method('POST')(q) && !has('authorization')(q) && !/access_token=/.test(q.split('\r\n')[0]), change: status(403) },
    'PUT open without credentials': { when: (q, s) => s === 401 && method('PUT')(q) && !has('authorization')(q), change: status(200) },
    'PATCH open without credentials': { when: (q, s) => s === 401 && method('PATCH')(q) && !has('authorization')(q), change: status(200) },
    'DELETE open without credentials': { when: (q, s) => s === 401 && method('DELETE')(q) && !has('authorization')(q), change: status(204) }
  },
  'auth.401-invalid-basic': { 'an unknown Basic user is 403': { when: (q, s) => s === 401 && basicUser(q)?.startsWith('audit-') === true, change: status(403) } },
  'auth.401-invalid-bearer': { 'an unknown token is 403': { when: (q, s) => s === 401 && has('authorization', /^Bearer audit-invalid/)(q), change: status(403) } },
  'auth.401-invalid-digest': { 'an unknown Digest user is 403': { when: (q, s) => s === 401 && has('authorization', /^Digest username="audit-/)(q), change: status(403) } },
  'auth.wrong-password': {
    'a known user with any password let in': { when: (q, s) => s === 401 && basicUser(q) === 'demo', change: status(201) },
    'the 401 says the password was wrong': { when: (q, s) => s === 401 && basicUser(q) === 'demo', change: (a) => { a.body = Buffer.from('wrong password') } }
  },
  'auth.digest-replay': { 'a replayed Digest response accepted': digestAcceptedAgain(true) },
  'auth.digest-stale': {
    'a stale nonce accepted (a used count under a new cnonce)': digestAcceptedAgain(false),
    'a stale nonce refused without stale=true (the client asks the user again)': {
      when: (q, s) => s === 401 && has('authorization', /^Digest username="demo"/)(q),
      change: (a) => { const v = a.headers['www-authenticate']; a.headers['www-authenticate'] = (Array.isArray(v) ? v : [String(v)]).map((c) => c.replace(/, stale=true/i, '')) }
    }
  },
  'auth.insufficient-scope': { 'a token without the scope is 403': { when: (q, s) => s === 401 && has('authorization', /^Bearer demo-read-token/)(q), change: status(403) } },
  'auth.credentials-accepted': { 'valid Bearer credentials refused': { when: (q, s) => s === 201 && has('authorization', /^Bearer /)(q), change: (a) => { a.status = 401; a.headers['www-authenticate'] = 'Bearer realm="articles"'; a.headers['cache-control'] = 'no-store' } } },
  'auth.header-only': { 'a token in the query string let in': { when: (q, s) => s === 401 && /access_token=/.test(q.split('\r\n')[0]), change: status(201) } },
  'auth.www-authenticate': { 'a 401 without WWW-Authenticate': { when: (q, s) => s === 401 && has('authorization', /^Bearer audit-invalid/)(q), change: drop('www-authenticate') } },
  'auth.challenge-form': {
    'a challenge without realm': { when: (q, s) => s === 401 && !has('authorization')(q), change: (a) => { const v = a.headers['www-authenticate']; a.headers['www-authenticate'] = (Array.isArray(v) ? v : [String(v)]).map((c) => c.startsWith('Bearer') ? 'Bearer scope="write"' : c) } },
    'a challenge that does not parse': { when: (q, s) => s === 401 && !has('authorization')(q), change: (a) => { const v = a.headers['www-authenticate']; a.headers['www-authenticate'] = (Array.isArray(v) ? v : [String(v)]).map((c) => c.startsWith('Basic') ? 'Basic realm="articles' : c) } }
  },
  'auth.challenge-lines': { 'every challenge on one line': { when: (_q, s) => s === 401, change: (a) => { const v = a.headers['www-authenticate']; if (Array.isArray(v)) a.headers['www-authenticate'] = v.join(', ') } } },
  'auth.401-no-store': { 'a 401 a cache may keep': { when: (_q, s) => s === 401, change: drop('cache-control') } },
  'rfc.405-allow': { 'a 405 without Allow': { when: (_q, s) => s === 405, change: drop('allow') } },
  'rfc.options': { 'OPTIONS without Allow': { when: (q) => method('OPTIONS')(q), change: drop('allow') } },
  'rfc.head': {
    'HEAD without ETag': { when: (q, s) => s === 200 && method('HEAD')(q), change: drop('etag') },
    'HEAD with Content-Length: 0': { when: (q, s) => s === 200 && method('HEAD')(q), change: (a) => { a.headers['content-length'] = '0' } }
  },
  'rfc.date': {
    'a 404 without Date': { when: (_q, s) => s === 404, change: (a) => { a.noDate = true; delete a.headers.date } },
    'a malformed Date': { when: (q, s) => s === 200 && method('GET')(q), change: (a) => { a.headers.date = 'yesterday' } }
  },
  'rfc.version-505': { 'HTTP/2.0 is 400': { when: (q) => q.startsWith('GET / HTTP/2.0'), change: status(400) } },
  'rfc.one-content-type': { 'two Content-Type fields accepted': { when: (q, s) => s >= 400 && s < 500 && count('content-type')(q) === 2, change: status(201) } },
  'rfc.expect-417': { 'an unknown expectation is 500': { when: (_q, s) => s === 417, change: status(500) } }
}

const dir = mkdtempSync(join(os.tmpdir(), 'audit-mutants-'))
const config = join(dir, 'config.json')
writeFileSync(config, JSON.stringify(REFERENCE_CONFIG))
const args = (url: string): string[] => [url, '--write', ...CREDENTIALS, '--bearer-insufficient', 'demo-read-token', '--unique', 'slug', '--rate', '0', '--config', config]

test('every rule has a mutant, and every mutant names a rule', async (t) => {
  t.same(Object.keys(MUTANTS).sort(), [...RULE_IDS].sort())
  t.ok(Object.values(MUTANTS).flatMap((m) => Object.keys(m)).length >= 80, 'mutants per statement, not one a rule')
})

test('mutation: the reference service broken in one way fails exactly the rule meant for it (docs/audit.md)', async (t) => {
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const base = await startReference('spec')
  let baseline: string[]
  try { baseline = failing(await runAudit(args(base.url))) } finally { await base.close() }
  t.same(baseline, [], 'the reference service passes every rule')
  let caught = 0
  let total = 0
  for (const [id, mutants] of Object.entries(MUTANTS)) {
    for (const [name, mutant] of Object.entries(mutants)) {
      const svc = await startReference('spec', mutant)
      let got: string[]
      try { got = failing(await runAudit(args(svc.url))) } finally { await svc.close() }
      total++
      if (t.same(got, [id], `${id}: ${name}`)) caught++
    }
  }
  t.comment(`mutants caught by their own rule and no other: ${caught} of ${total}`)
})
