/**
 * How the auditor finds what to probe (docs/audit.md): a config without a schema (a sample
 * body), an id from the created body when there is no Location, a read-only run on a resource
 * the collection lists, an OpenAPI document from a file, and what it says when it can create
 * nothing.
 */
import { test, teardown } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { main } from '../src/cli'
import { validInstance, violateOne, patchableProperty } from '../src/schema-body'
import { targetsFromOpenApi } from '../src/discovery'
import { CREDENTIALS, failing, runAudit, startReference } from './helpers'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-discovery-'))
teardown(() => rmSync(dir, { recursive: true, force: true }))
function file (name: string, value: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value))
  return path
}

/** A resource whose 201 has no Location: the id comes from the body. No PUT. */
async function notes (): Promise<{ app: FastifyInstance, url: string, notes: Map<string, unknown> }> {
  const app = Fastify()
  const notes = new Map<string, unknown>([['n0', { id: 'n0', text: 'kept' }]])
  let next = 0
  app.get('/notes', async () => [...notes.values()])
  app.post('/notes', async (req, reply) => { const id = `n${++next}`; notes.set(id, { id, ...req.body as object }); return reply.code(201).send(notes.get(id)) })
  app.get('/notes/:id', async (req, reply) => notes.get((req.params as { id: string }).id) ?? reply.code(404).send({ error: 'nothing' }))
  app.delete('/notes/:id', async (req, reply) => { notes.delete((req.params as { id: string }).id); return reply.code(204).send() })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { app, url, notes }
}

const NOTES_CONFIG = { collection: '/notes', item: '/notes/{id}', itemMethods: ['GET', 'HEAD', 'DELETE'], sample: { text: 'hello-note', n: 1 } }

test('read-only: the first resource the collection lists is read (RFC 9110 9.3.1)', async (t) => {
  const { app, url } = await notes()
  t.teardown(() => app.close())
  const run = await runAudit([url, '--rate', '0', '--config', file('notes.json', NOTES_CONFIG)])
  const rule = (id: string): string | undefined => run.report.rules.find((r) => r.id === id)?.outcome
  t.equal(rule('conditional.etag'), 'fail', 'the listed resource n0 was read: it has no ETag')
  t.equal(rule('rfc.head'), 'pass')
})

test('write: a sample body without a schema, the id from the 201 body, no PUT', async (t) => {
  const { app, url, notes: stored } = await notes()
  t.teardown(() => app.close())
  const run = await runAudit([url, '--write', '--rate', '0', '--config', file('notes.json', NOTES_CONFIG)])
  const reason = (id: string): string | undefined => run.report.rules.find((r) => r.id === id)?.reason
  t.equal(reason('validation.422'), 'no JSON Schema of the body (give --openapi, or it in --config)')
  t.equal(reason('conditional.if-match'), 'the resource does not take PUT')
  t.equal(reason('auth.401-without-credentials'), 'writes are not protected (POST /notes without credentials: HTTP/1.1 201 Created)')
  t.same([...stored.keys()], ['n0'], 'every resource the run created was found by its id and deleted')
})

test('write: without a collection, and when nothing can be created, the rules say why', async (t) => {
  const app = Fastify()
  app.get('/', async () => 'hello')
  app.post('/things', async (_req, reply) => reply.code(500).send({ error: 'broken' }))
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const none = await runAudit([url, '--write', '--rate', '0', '--config', file('none.json', { paths: ['/'] })])
  t.equal(none.report.rules.find((r) => r.id === 'validation.422')?.reason, 'no collection known (give --openapi, or it in --config)')
  const broken = await runAudit([url, '--write', '--bearer', 'audit-token-7', '--rate', '0', '--config', file('broken.json', { collection: '/things', item: '/things/{id}', sample: { a: 1 } })])
  const accepted = broken.report.rules.find((r) => r.id === 'auth.credentials-accepted')
  t.equal(accepted?.outcome, 'fail')
  t.match(JSON.stringify(accepted?.failures), /POST with the given bearer credentials: expected 2xx, got HTTP\/1\.1 500 Internal Server Error/)
  t.match(broken.report.rules.find((r) => r.id === 'conditional.etag')?.reason, /^no resource could be created \(HTTP\/1\.1 500 Internal Server Error\)/)
})

test('--openapi from a file; a progress line on a terminal; a bad --openapi is a usage error', async (t) => {
  const { app, url } = await notes()
  t.teardown(() => app.close())
  const doc = { openapi: '3.0.3', paths: { '/notes': { get: {}, post: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { text: { type: 'string' } } } } } } } }, '/notes/{id}': { get: {}, delete: {} } } }
  let out = ''
  let err = ''
  const io = { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s }, isTTY: true } }
  t.equal(await main(['audit', url, '--rate', '0', '--openapi', file('openapi.json', doc)], io), 1)
  t.match(out, /^FAIL\s+conditional\.etag/m, 'the resource of the document was read')
  t.ok(err.includes('\r\u001b[K[1] GET /notes'), 'progress on a terminal')
  const usage = async (args: string[]): Promise<string> => {
    let e = ''
    t.equal(await main(['audit', url, '--rate', '0', ...args], { stdout: { write: () => true }, stderr: { write: (s: string) => { e += s } } }), 2, args.join(' '))
    return e
  }
  t.match(await usage(['--openapi', join(dir, 'missing.json')]), /--openapi .*missing\.json: ENOENT/)
  t.match(await usage(['--openapi', file('bad.json', '{')]), /--openapi .*bad\.json: not JSON/)
  t.match(await usage(['--openapi', `${url}/nothing.json`]), /--openapi .*nothing\.json: HTTP\/1\.1 404 Not Found/)
})

test('generator: schemas without a type keyword, a pattern no candidate fits, nothing to break or patch', async (t) => {
  t.same(validInstance({ properties: { a: { items: { type: 'string' }, minItems: 1 } }, required: ['a'] }, 't'), { a: ['audit-ta0'] })
  t.equal(validInstance({ type: 'string', pattern: '^[0-9]{3}$', minLength: 3 }), 'xxx', 'no candidate fits: a string of the minimum length')
  t.equal(violateOne({ type: 'object', properties: { free: {} } }), null, 'no typed property: nothing to break')
  t.equal(patchableProperty({ type: 'object', properties: { n: { type: 'integer' } } }), undefined)
})

test('a redirect under a templated path (/v1/{*}) is probed without a config, at a path derived from the template', async (t) => {
  const svc = await startReference('spec')
  t.teardown(() => svc.close())
  const run = await runAudit([svc.url, '--write', ...CREDENTIALS, '--rate', '0'])
  t.same(failing(run), [])
  const redirects = run.report.rules.filter((r) => r.id.startsWith('redirect.')).map((r) => [r.id, r.outcome])
  t.same(redirects, [['redirect.307', 'pass'], ['redirect.method-kept', 'pass'], ['redirect.query-kept', 'pass']])
  const found = targetsFromOpenApi({
    paths: {
      '/old/{rest}': { get: { responses: { 307: {} } } },
      '/a/{id}/b': { get: { responses: { 307: {} } } },
      '/notes': { get: { responses: { 200: {} } } }
    }
  })
  t.same(found.redirects, ['/old/notes'], 'the rest of another documented path; a parameter inside the path names no path to pick')
  t.same(targetsFromOpenApi({ paths: { '/v1/{*}': { get: { responses: { 307: {} } } } } }).redirects, [], 'no other path to send there')
})
