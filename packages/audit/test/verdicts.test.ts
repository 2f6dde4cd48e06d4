/**
 * Verdicts a CI job can trust (docs/audit.md, "Exit status"): a rule passes only when something
 * was checked, a run that checked too little is not green, an unreachable service says so, a
 * challenge that does not parse fails, RFC advice does not fail a run unless asked, and what
 * the service does to protect itself (429 and 503, a Host allow-list, 428 to unconditional
 * writes, a 201 without Location) is never blamed on a rule.
 */
import { test, teardown } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { main } from '../src/cli'
import { CREDENTIALS, REFERENCE_CONFIG, failing, runAudit, startReference } from './helpers'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-verdicts-'))
const config = join(dir, 'config.json')
writeFileSync(config, JSON.stringify(REFERENCE_CONFIG))
teardown(() => rmSync(dir, { recursive: true, force: true }))
const write = (url: string, ...more: string[]): string[] => [url, '--write', ...CREDENTIALS, '--rate', '0', '--config', config, ...more]

/** An answer written in front of the service, as a gateway would: it passes every per-answer rule. */
function answerFront (res: ServerResponse, status: number, headers: Record<string, string>, field: string): true {
  const body = JSON.stringify({ errors: [{ field, message: 'answered in front of the service' }] })
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cross-origin-resource-policy': 'same-origin', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(body)), ...headers })
  res.end(body)
  return true
}

const none = { when: () => false, change: () => {} }

test('a service that answers 200 "ok" to everything is not green: too little checked, exit 3', async (t) => {
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cross-origin-resource-policy': 'same-origin' }); res.end('ok') })
  server.on('checkExpectation', (_req, res) => { res.writeHead(417, { 'cross-origin-resource-policy': 'same-origin' }); res.end() })
  server.on('clientError', (_err, socket) => { socket.end(`HTTP/1.1 400 Bad Request\r\nDate: ${new Date().toUTCString()}\r\nCross-Origin-Resource-Policy: same-origin\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const run = await runAudit([`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--write', '--rate', '0'])
  t.equal(run.code, 3)
  t.match(run.stderr, /too little checked: \d+ of the \d+ rules this run could check/)
  t.same(failing(run).filter((id) => !id.startsWith('rfc.')), [], 'no rule of the conventions fails')
})

test('a port where nothing listens: exit 4 and a message, not a rule failure', async (t) => {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const run = await runAudit([`http://127.0.0.1:${port}`, '--rate', '0'])
  t.equal(run.code, 4)
  t.match(run.stderr, /cannot audit: http:\/\/127\.0\.0\.1:\d+ does not answer \(.*ECONNREFUSED/)
  t.same(failing(run), [], 'no rule is blamed')
})

test('a challenge that does not parse is a failure of auth.challenge-form, also with --basic only', async (t) => {
  const svc = await startReference('spec', { when: (_q, s) => s === 401, change: (a) => { const v = a.headers['www-authenticate']; a.headers['www-authenticate'] = (Array.isArray(v) ? v : [String(v)]).map((c) => c.startsWith('Basic') ? 'Basic realm="articles' : c) } })
  t.teardown(() => svc.close())
  const run = await runAudit([svc.url, '--write', '--basic', 'demo:demo-password', '--rate', '0', '--config', config])
  t.same(failing(run), ['auth.challenge-form'])
  t.equal(run.code, 1)
})

test('auth.credentials-accepted does not pass when no credentials were given', async (t) => {
  const app = Fastify()
  app.post('/things', async (_req, reply) => reply.code(201).header('location', '/things/1').send({ id: '1' }))
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const file = join(dir, 'open.json')
  writeFileSync(file, JSON.stringify({ collection: '/things', item: '/things/{id}', sample: { name: 'one' } }))
  const run = await runAudit([url, '--write', '--rate', '0', '--config', file])
  const rule = run.report.rules.find((r) => r.id === 'auth.credentials-accepted')
  t.equal(rule?.outcome, 'skipped')
  t.equal(rule?.reason, 'needs credentials (--basic, --bearer or --digest)')
})

test('RFC advice is reported, and fails the run only with --strict-rfc', async (t) => {
  const svc = await startReference('spec', { when: (q) => q.startsWith('GET / HTTP/2.0'), change: (a) => { a.status = 400 } })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  t.same(failing(run), ['rfc.version-505'], 'the advice is in the report')
  t.equal(run.code, 0, 'and does not set the exit status')
  const strict = await runAudit(write(svc.url, '--strict-rfc'))
  t.equal(strict.code, 1, '--strict-rfc: it does')
})

test('a service that requires If-Match (428) is audited with it, and the run deletes what it created', async (t) => {
  const unconditional = (req: IncomingMessage): boolean => ['PUT', 'PATCH', 'DELETE'].includes(req.method ?? '') && req.headers['if-match'] === undefined && req.headers['if-unmodified-since'] === undefined
  // as requirePrecondition answers: after authentication and framing, before the handler
  const framed = (req: IncomingMessage): boolean => req.method === 'DELETE' || (req.headers['content-length'] !== undefined && req.headers['transfer-encoding'] === undefined && /^\d+$/.test(req.headers['content-length']))
  const authenticated = (req: IncomingMessage): boolean => /^(Basic ZGVtbzpkZW1vLXBhc3N3b3Jk|Bearer demo-write-token|Digest username="demo")/.test(req.headers.authorization ?? '')
  const svc = await startReference('spec', { ...none, front: (req, res) => unconditional(req) && framed(req) && authenticated(req) && answerFront(res, 428, {}, 'If-Match') })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  t.same(failing(run), [])
  const json = run.report as unknown as { leftBehind: string[], created: number }
  t.same(json.leftBehind, [], 'nothing left behind')
  t.ok(json.created > 0, `${json.created} resources created and deleted`)
})

test('429 and 503 are waited for (Retry-After) and sent again, never blamed on a rule', async (t) => {
  let n = 0
  const svc = await startReference('spec', { ...none, front: (_req, res) => { n++; return n % 7 === 0 ? answerFront(res, 429, { 'retry-after': '0' }, 'request') : n % 11 === 0 ? answerFront(res, 503, { 'retry-after': '0' }, 'request') : false } })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  t.same(failing(run), [])
  t.equal(run.code, 0)
})

test('a 429 that asks to wait too long: the rule is skipped, saying why', async (t) => {
  const svc = await startReference('spec', { ...none, front: (req, res) => req.method === 'OPTIONS' && answerFront(res, 429, { 'retry-after': '3600' }, 'request') })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  t.same(failing(run), [])
  t.match(run.report.rules.find((r) => r.id === 'rfc.options')?.reason, /answered HTTP\/1\.1 429 .* to OPTIONS/)
})

test('requests written by hand name the Host of the URL (a service with a Host allow-list)', async (t) => {
  let host = ''
  const svc = await startReference('spec', { ...none, front: (req, res) => req.headers.host !== host && answerFront(res, 421, {}, 'Host') })
  t.teardown(() => svc.close())
  host = new URL(svc.url).host
  const run = await runAudit(write(svc.url))
  t.same(failing(run), [])
})

test('a 201 without Location and without an id: the resource is found in the listing, and nothing is skipped for it', async (t) => {
  const svc = await startReference('spec', {
    when: (q, s) => s === 201 && q.startsWith('POST /articles '),
    change: (a) => { delete a.headers.location; a.body = Buffer.from((a.received ?? Buffer.alloc(0)).toString('utf8').replace(/"id":/, '"key":')) }
  })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  t.same(failing(run), [])
  t.same(run.report.rules.filter((r) => /resource/.test(r.reason ?? '')).map((r) => r.id), [], 'no rule skipped for want of a resource')
  t.same((run.report as unknown as { leftBehind: string[] }).leftBehind, [])
})

test('without a schema (a config, an OpenAPI document without paths), PATCH changes a string property the resource has', async (t) => {
  const svc = await startReference('spec')
  t.teardown(() => svc.close())
  const noSchema = join(dir, 'no-schema.json')
  writeFileSync(noSchema, JSON.stringify({ collection: '/articles', item: '/articles/{id}', itemMethods: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], sample: { slug: 'audit', title: 'Audit', body: 'Text' } }))
  const empty = join(dir, 'empty-openapi.json')
  writeFileSync(empty, JSON.stringify({ openapi: '3.0.3', paths: {} }))
  const run = await runAudit([svc.url, '--write', ...CREDENTIALS, '--rate', '0', '--config', noSchema, '--openapi', empty])
  t.same(failing(run), [])
  const patches = run.report.rules.filter((r) => r.id === 'patch.json-patch' || r.id === 'patch.merge-patch').map((r) => [r.id, r.outcome])
  t.same(patches, [['patch.json-patch', 'pass'], ['patch.merge-patch', 'pass']])
})

test('resources the service will not delete are listed as left behind, in the report and the table', async (t) => {
  const svc = await startReference('spec', { ...none, front: (req, res) => req.method === 'DELETE' && req.headers.authorization !== undefined && answerFront(res, 403, {}, 'id') })
  t.teardown(() => svc.close())
  const run = await runAudit(write(svc.url))
  const left = (run.report as unknown as { leftBehind: string[], created: number }).leftBehind
  t.ok(left.length > 0 && left.every((p) => /^\/articles\/[^/]+$/.test(p)), `${left.length} resources left behind`)
  let out = ''
  await main(['audit', ...write(svc.url, '--rule', 'patch.merge-patch')], { stdout: { write: (s: string) => { out += s } }, stderr: { write: () => {} } })
  t.match(out, /^Could not delete: \/articles\/\S+/m)
})

test('rfc.head: a Last-Modified sent as the Date, then later on HEAD, is one version (RFC 9110 8.8.2.1); an earlier one is not', async (t) => {
  const answers = async (headLastModified: string): Promise<string> => {
    const server = createServer((req, res) => {
      const at = req.method === 'HEAD' ? 'Mon, 07 Dec 2026 12:00:01 GMT' : 'Mon, 07 Dec 2026 12:00:00 GMT'
      if (req.url !== '/doc') { res.writeHead(404, { date: at, 'content-length': '0' }); res.end(); return }
      res.sendDate = false
      res.writeHead(200, { date: at, 'last-modified': req.method === 'HEAD' ? headLastModified : 'Mon, 07 Dec 2026 12:00:00 GMT', 'content-type': 'text/plain; charset=utf-8', 'content-length': '3' })
      res.end(req.method === 'HEAD' ? undefined : 'doc')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => { server.close() })
    const paths = join(dir, 'doc.json')
    writeFileSync(paths, JSON.stringify({ paths: ['/doc'] }))
    const run = await runAudit([`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--rate', '0', '--config', paths, '--rule', 'rfc.head'])
    return run.report.rules.find((r) => r.id === 'rfc.head')?.outcome ?? 'absent'
  }
  t.equal(await answers('Mon, 07 Dec 2026 12:00:01 GMT'), 'pass', 'a change dated in the next second, sent as the Date until then')
  t.equal(await answers('Sun, 06 Dec 2026 12:00:00 GMT'), 'fail', 'a HEAD that says an earlier version')
})
