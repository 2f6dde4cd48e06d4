/**
 * Where the auditor sends what (docs/audit.md, Safety): an OpenAPI document of another origin
 * is fetched from there without the audit's credentials; the audited URL's path prefix is
 * kept for every probe; a --junit path that cannot be written fails before the first request;
 * a 226 gzip bomb is decoded only up to its bound.
 */
import { test, teardown } from 'tap'
import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { main } from '../src/cli'
import { CREDENTIALS, REFERENCE_CONFIG, runAudit, startReference } from './helpers'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-origin-'))
teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Seen { url: string, close: () => Promise<void>, requests: Array<{ target: string, headers: IncomingHttpHeaders }> }

/** A service that answers every request with `body` (JSON), and keeps what it was asked. */
async function service (body: unknown): Promise<Seen> {
  const requests: Seen['requests'] = []
  const server = http.createServer((req, res) => {
    requests.push({ target: req.url ?? '', headers: req.headers })
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

async function run (args: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await main(['audit', ...args], { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s } } })
  return { code, out, err }
}

test('--openapi of another origin: fetched there, without credentials; the audited service is not asked for it', async (t) => {
  const audited = await service({ ok: true })
  t.teardown(audited.close)
  const docs = await service({ openapi: '3.0.3', paths: { '/from-the-document': { get: {} } } })
  t.teardown(docs.close)
  const res = await run([audited.url, '--rate', '0', '--basic', 'demo:demo-password', '--bearer', 'demo-write-token', '--openapi', `${docs.url}/spec.json?token=docs-secret`])
  t.not(res.code, 2, res.err)
  t.same(docs.requests.map((r) => r.target), ['/spec.json?token=docs-secret'], 'the document is asked of its own origin')
  t.equal(docs.requests[0].headers.authorization, undefined, 'without the audit\'s credentials')
  t.notOk(audited.requests.some((r) => r.target.includes('spec.json') || r.target.includes('docs-secret')), 'the audited service never sees the document\'s path or token')
  t.ok(audited.requests.some((r) => r.target === '/from-the-document'), 'the document\'s paths are probed')
})

test('the audited URL\'s path prefix is kept for every probe, raw framing probes included', async (t) => {
  // every answer names an id: the created resource is /c/x1, and the write probes go on
  const audited = await service({ id: 'x1' })
  t.teardown(audited.close)
  const config = join(dir, 'prefix.json')
  writeFileSync(config, JSON.stringify({ collection: '/c', item: '/c/{id}', paths: ['/a'], sample: { a: 'b' } }))
  await run([`${audited.url}/api/v2/`, '--rate', '0', '--write', '--config', config])
  t.ok(audited.requests.length > 10)
  t.same(audited.requests.filter((r) => !r.target.startsWith('/api/v2/')).map((r) => r.target), [], 'no request outside the prefix')
  t.ok(audited.requests.some((r) => r.target === '/api/v2/openapi.json'), 'the default document below the prefix')
  t.ok(audited.requests.some((r) => r.target === '/api/v2/a'))
  t.ok(audited.requests.some((r) => r.target === '/api/v2/c' && r.headers['transfer-encoding'] === 'chunked'), 'a raw framing probe below the prefix')
  t.ok(audited.requests.some((r) => r.target === '/api/v2/c/x1'), 'the created resource below the prefix, once')
})

test('a --junit path that cannot be written fails before the first request, with its own exit status', async (t) => {
  const audited = await service({ ok: true })
  t.teardown(audited.close)
  const res = await run([audited.url, '--rate', '0', '--junit', join(dir, 'no', 'such', 'dir.xml')])
  t.equal(res.code, 5)
  t.match(res.err, /--junit .*dir\.xml cannot be written: ENOENT/)
  t.equal(audited.requests.length, 0, 'no request was sent')
  const into = await run([audited.url, '--rate', '0', '--junit', dir])
  t.equal(into.code, 5, 'a directory is no file')
  t.equal(audited.requests.length, 0)
})

test('a 226 gzip bomb: decoded up to 16 MiB, then a note on delta.226, not a verdict', async (t) => {
  // 64 MiB of zeros in about 64 KiB
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024))
  const svc = await startReference('spec', {
    when: (request, status) => status === 226 && /^A-IM: gzip$/im.test(request),
    change: (a) => { a.body = bomb }
  })
  t.teardown(svc.close)
  const config = join(dir, 'reference.json')
  writeFileSync(config, JSON.stringify(REFERENCE_CONFIG))
  const res = await runAudit([svc.url, '--write', ...CREDENTIALS, '--config', config, '--rate', '0'])
  const rule = res.report.rules.find((r) => r.id === 'delta.226') as { outcome: string, notes?: string[], failures: unknown[] }
  t.same(rule.notes, ['the gzip body decodes to more than 16 MiB (limit): not compared'])
  t.same(rule.failures, [], 'no false verdict')
})
