/**
 * The auditor against servers other people wrote, unchanged: a Fastify app serving files with
 * @fastify/static, and json-server (a REST server from npm, Express 4 underneath). Each gets
 * the exact list of the rules it misses; every failure listed here was sent again by hand
 * (curl, a raw socket) and answered as the auditor reports.
 */
import { test, teardown, type Test } from 'tap'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import fastifyStatic from '@fastify/static'
import { failing, runAudit } from './helpers'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-third-party-'))
teardown(() => rmSync(dir, { recursive: true, force: true }))

/** What these tests use of json-server 0.17 (the package ships no types). */
interface JsonServer {
  create: () => { use: (h: unknown) => void, listen: (port: number, host: string) => Server }
  defaults: (o: { logger: boolean, static: string }) => unknown
  router: (db: Record<string, unknown[]>) => { db: { getState: () => Record<string, unknown[]> } }
}
const jsonServer = require('json-server') as JsonServer

function configFile (name: string, config: Record<string, unknown>): string {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(config))
  return path
}

test('@fastify/static, read-only: no CORP, no 505, and Fastify\'s own 400 without Date or the envelope', async (t) => {
  const root = join(dir, 'files')
  mkdirSync(root)
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Files</title><p>files</p>\n')
  writeFileSync(join(root, 'data.json'), JSON.stringify({ name: 'data' }) + '\n')
  const app = Fastify()
  await app.register(fastifyStatic, { root })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  // read-only: a file server has nothing a write could create
  const run = await runAudit([url, '--rate', '0', '--config', configFile('static.json', { paths: ['/index.html', '/data.json'] })])
  // no CORP on any answer; HTTP/2.0 on the request line answered 200; Fastify's own 400 to a
  // request the parser refused has no Date and a body of its own shape
  t.same(failing(run), ['corp.every-answer', 'errors.envelope', 'rfc.date', 'rfc.version-505'])
  t.equal(run.code, 1)
})

/** json-server over one collection; its database, to see what the runs leave. */
async function startJsonServer (t: Test): Promise<{ url: string, posts: () => unknown[] }> {
  const server = jsonServer.create()
  server.use(jsonServer.defaults({ logger: false, static: join(dir, 'no-public-folder') }))
  const router = jsonServer.router({ posts: [{ id: 1, title: 'first', author: 'ann' }] })
  server.use(router)
  const listening = server.listen(0, '127.0.0.1')
  await once(listening, 'listening')
  // its router prints the stack of each error it answers 500 (a body that does not parse)
  const printError = console.error
  console.error = () => {}
  t.teardown(() => { console.error = printError; listening.close(); listening.closeAllConnections() })
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, posts: () => router.db.getState().posts }
}

const POSTS = { collection: '/posts', item: '/posts/{id}', itemMethods: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], sample: { title: 'audit', author: 'audit' } }

test('json-server, read-only: what a GET shows it misses, and nothing is changed', async (t) => {
  const svc = await startJsonServer(t)
  const run = await runAudit([svc.url, '--rate', '0', '--config', configFile('posts.json', POSTS)])
  t.same(failing(run), [
    // 304 where the document asks 412 (RFC 9110 13.1.2 allows 304: --profile rfc9110)
    'conditional.etag-list', 'conditional.if-none-match', 'conditional.if-none-match-star', 'conditional.weak-strong',
    // a GET with a chunked body answered 200
    'content-length.get-body',
    'corp.every-answer',
    // no Accept-Patch on GET and HEAD of an item that takes PATCH
    'patch.accept-patch',
    // Node's own 400 without Date; OPTIONS answered 204 by the CORS middleware, without Allow
    'rfc.date', 'rfc.options', 'rfc.version-505'
  ])
  t.equal(run.code, 1)
  t.same(svc.posts(), [{ id: 1, title: 'first', author: 'ann' }], 'the data is as it was')
})

test('json-server, --write: bodies taken in any form, framing left to Node, no preconditions; the run deletes what it created', async (t) => {
  const svc = await startJsonServer(t)
  const run = await runAudit([svc.url, '--write', '--rate', '0', '--config', configFile('posts.json', POSTS)])
  t.same(failing(run), [
    // If-Match ignored: a stale or weak tag does not stop a PUT
    'conditional.etag-list', 'conditional.if-match', 'conditional.if-none-match', 'conditional.if-none-match-star', 'conditional.weak-strong',
    // chunked and unframed bodies taken (201); Node's parser answers 400 where the document
    // asks 411; a declared 1 GiB body is waited for, never refused
    'content-length.chunked', 'content-length.duplicate', 'content-length.get-body', 'content-length.invalid', 'content-length.limit',
    'content-length.mismatch', 'content-length.missing', 'content-length.with-transfer-encoding',
    // JSON that does not parse and an unknown charset are 500; a body without Content-Type or in
    // an unknown type is taken; two Content-Type fields are taken
    'content-type.malformed-400', 'content-type.request-charset', 'content-type.request-required', 'content-type.unsupported-415',
    'corp.every-answer',
    // PATCH in text/plain is 200 (the body ignored); no Accept-Patch
    'patch.accept-patch', 'patch.unsupported-415',
    // POST to an item is 404, not 405 with Allow
    'rfc.405-allow', 'rfc.date', 'rfc.one-content-type', 'rfc.options', 'rfc.version-505'
  ])
  t.equal(run.code, 1)
  const report = run.report as unknown as { created: number, leftBehind: string[] }
  t.ok(report.created > 0, `${report.created} created`)
  t.same(report.leftBehind, [])
  t.same(svc.posts().filter((p) => (p as { id: number }).id !== 1), [], 'every post the run created is deleted')
})
