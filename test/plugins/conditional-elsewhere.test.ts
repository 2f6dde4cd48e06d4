/**
 * docs/conventions.md (Which answers the conditional convention governs): the convention's
 * 412 for "not modified" governs the API's resources, the routes that opt in with
 * `config.conditional`. Files another plugin serves (@fastify/static, swagger-ui's assets)
 * keep their 304, and a 304 gains no Content-Type (RFC 9110 15.4.5).
 */
import { test, type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import type { HttpConventionsOptions } from '../../plugins/index'

const CSS = 'p { color: rgb(1, 2, 3) }\n'

async function build (t: Test, opts: HttpConventionsOptions = {}): Promise<{ app: FastifyInstance, port: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'conditional-elsewhere-'))
  writeFileSync(join(dir, 'site.css'), CSS)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const app = await buildApp(opts)
  await app.register(fastifyStatic, { root: dir, prefix: '/assets/' })
  // A route of the app that serves a file itself and opts in to the convention.
  app.get('/opted-in.css', { config: { conditional: true } }, async (_request, reply) => reply.sendFile('site.css'))
  const port = await listen(app)
  t.teardown(() => app.close())
  return { app, port }
}

/** GETs `path` once, then again with the validators it gave, on one connection. */
async function revalidate (port: number, path: string): Promise<{ first: Awaited<ReturnType<typeof rawRequest>>, again: Awaited<ReturnType<typeof rawRequest>> }> {
  const first = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
  const again = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${first.headers.etag}\r\nIf-Modified-Since: ${first.headers['last-modified']}\r\n\r\nGET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { responses: 2 })
  return { first, again }
}

test('conventions (Which answers the conditional convention governs): @fastify/static keeps its 304 in the spec profile, without Content-Type or body', async (t) => {
  const { port } = await build(t)
  const { first, again } = await revalidate(port, '/assets/site.css')
  t.equal(first.status, 200)
  t.ok(first.headers.etag, 'the file has an ETag')
  t.equal(again.status, 304, 'a cache revalidating a file gets 304, not the API\'s 412')
  t.equal(again.headers['content-type'], undefined, 'RFC 9110 15.4.5: no Content-Type on a 304')
  t.equal(again.headers['content-length'], undefined)
  t.equal(again.headers.etag, first.headers.etag)
  t.match(again.raw, /\r\n\r\nHTTP\/1\.1 200 OK\r\n/, 'no body: the next response follows the 304 head directly')
})

test('conventions (Which answers the conditional convention governs): the rfc9110 profile keeps the 304 as well', async (t) => {
  const { port } = await build(t, { profile: 'rfc9110' })
  const { again } = await revalidate(port, '/assets/site.css')
  t.equal(again.status, 304)
  t.equal(again.headers['content-type'], undefined)
})

test('conventions (Which answers the conditional convention governs): a route that opts in with config.conditional answers "not modified" with the 412', async (t) => {
  const { port } = await build(t)
  const { first, again } = await revalidate(port, '/opted-in.css')
  t.equal(first.status, 200)
  t.equal(again.status, 412)
  t.equal(again.headers['content-type'], 'application/json')
  t.same(JSON.parse(again.body), { errors: [{ field: 'If-None-Match', message: 'not modified: the current representation matches If-None-Match' }] })
})
