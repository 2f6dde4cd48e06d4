/**
 * The README's @fastify/cors options, judged by a browser: a page on one origin
 * (http://127.0.0.1:P1) writes to an API on another (http://127.0.0.1:P2) with `fetch`,
 * sending `Authorization` and `If-Match` (non-safelisted request headers, so Chromium sends
 * a preflight first: Fetch standard, "CORS-preflight fetch"), and reads the answers' `ETag`,
 * `Location` and `Accept-Patch` (readable by a script only when exposed: "CORS-safelisted
 * response-header name"). The options are read out of README.md, so the example a user copies
 * is the one tested; @fastify/cors's default methods are shown to fail the same PUT.
 *
 * Skipped without Chromium (failed under CI=true), see test/helpers/peers.ts.
 */
import t from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import { chromium, type BrowserContext } from 'playwright-core'
import { httpConventions, serverOptions } from '../../plugins/index'
import { peer } from '../helpers/peers'
import { ROOT } from '../helpers/paths'

t.setTimeout(60000)

const executablePath = peer(t, 'chromium')
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run']
const TOKEN = 'browser-write-token'

/** The options object of the README's `app.register(cors, { ... })`, evaluated as written. */
export function readmeCorsOptions (): FastifyCorsOptions {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const m = /await app\.register\(cors, (\{\n[\s\S]*?\n\})\)/.exec(readme)
  if (m === null) throw new Error('README.md has no `await app.register(cors, { ... })` example')
  // eslint-disable-next-line no-new-func -- the README's object literal, written in plain JavaScript
  return new Function(`return (${m[1]})`)() as FastifyCorsOptions
}

interface Article { title: string }

/** An API with every write the browser makes: POST (Location), PUT and DELETE on If-Match, PATCH (merge patch). */
async function api (corsOptions: FastifyCorsOptions): Promise<FastifyInstance> {
  const app = Fastify(serverOptions)
  await app.register(cors, corsOptions)
  await app.register(httpConventions, { auth: { realm: 'api', bearer: { verify: (token) => token === TOKEN ? { subject: 'browser', scopes: ['write'] } : null } } })
  const articles = new Map<string, { doc: Article, version: number }>([['1', { doc: { title: 'first' }, version: 1 }]])
  let next = 2
  const etagOf = (id: string): string | undefined => { const a = articles.get(id); return a === undefined ? undefined : `"${id}-${a.version}"` }
  const idOf = (request: { params: unknown }): string => (request.params as { id: string }).id
  const validators = (request: { params: unknown }): { etag: string } | null => { const etag = etagOf(idOf(request)); return etag === undefined ? null : { etag } }
  const write = { scopes: ['write'] }
  app.get('/articles/:id', { config: { conditional: { validators } } }, async (request, reply) => {
    reply.header('accept-patch', 'application/merge-patch+json')
    return articles.get(idOf(request))?.doc ?? reply.callNotFound()
  })
  app.post('/articles', { config: { auth: write } }, async (request, reply) => {
    const id = String(next++)
    articles.set(id, { doc: request.body as Article, version: 1 })
    return reply.code(201).header('location', `/articles/${id}`).header('etag', etagOf(id)).send(request.body)
  })
  app.put('/articles/:id', { config: { auth: write, conditional: { validators, creates: false } } }, async (request, reply) => {
    const a = articles.get(idOf(request))
    if (a === undefined) return reply.callNotFound()
    articles.set(idOf(request), { doc: request.body as Article, version: a.version + 1 })
    return reply.header('etag', etagOf(idOf(request))).send(request.body)
  })
  app.patch('/articles/:id', {
    config: {
      auth: write,
      patch: {
        schema: { type: 'object', properties: { title: { type: 'string' } } },
        load: (request) => { const a = articles.get(idOf(request)); return a === undefined ? null : { document: a.doc, etag: etagOf(idOf(request)) } },
        save: (request, document) => {
          const a = articles.get(idOf(request)) as { version: number }
          articles.set(idOf(request), { doc: document as Article, version: a.version + 1 })
          return { document, etag: etagOf(idOf(request)) }
        },
        formats: ['merge-patch']
      }
    }
  }, async (request, reply) => reply.header('etag', request.patched?.etag).send(request.patched?.document))
  app.delete('/articles/:id', { config: { auth: write, conditional: { validators } } }, async (request, reply) => {
    articles.delete(idOf(request))
    return reply.code(204).send()
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

interface Seen { status: number, etag: string | null, location: string | null, acceptPatch: string | null, body: string }
type Outcome = Seen | { failed: string }

let browser: BrowserContext
let userDataDir: string
let pages: http.Server
let pageOrigin: string

/** Runs `fetch(url, init)` in a page of the other origin and reports what its script can read. */
async function fetchFromPage (url: string, init: { method: string, headers?: Record<string, string>, body?: string }): Promise<Outcome> {
  const page = await browser.newPage()
  try {
    await page.goto(`${pageOrigin}/`, { waitUntil: 'load', timeout: 60_000 })
    return await page.evaluate(async ([url, init]) => {
      try {
        const res = await fetch(url, init)
        return { status: res.status, etag: res.headers.get('etag'), location: res.headers.get('location'), acceptPatch: res.headers.get('accept-patch'), body: await res.text() }
      } catch (err) {
        return { failed: String(err) }
      }
    }, [url, init] as const)
  } finally {
    await page.close()
  }
}

if (executablePath !== undefined) defineTests(executablePath)

function defineTests (executablePath: string): void {
  t.before(async () => {
    pages = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!DOCTYPE html><html><head><meta charset="utf-8"><title>client</title></head><body>client</body></html>')
    })
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
    userDataDir = mkdtempSync(join(tmpdir(), 'cors-chromium-'))
    browser = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: ARGS, timeout: 60_000 })
  })

  t.teardown(async () => {
    await browser?.close().catch(() => {})
    if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
    await new Promise((resolve) => pages === undefined ? resolve(undefined) : pages.close(resolve))
  })

  const json = (etag?: string): Record<string, string> => ({
    'content-type': 'application/json',
    authorization: `Bearer ${TOKEN}`,
    ...(etag === undefined ? {} : { 'if-match': etag })
  })

  t.test('the README\'s options: a cross-origin PUT, PATCH and DELETE with Authorization and If-Match succeed, and the script reads ETag, Location and Accept-Patch', async (t) => {
    const app = await api({ ...readmeCorsOptions(), origin: pageOrigin })
    t.teardown(() => app.close())
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

    const read = await fetchFromPage(`${base}/articles/1`, { method: 'GET' })
    t.match(read, { status: 200, etag: '"1-1"', acceptPatch: 'application/merge-patch+json' }, 'GET: ETag and Accept-Patch are readable')

    const put = await fetchFromPage(`${base}/articles/1`, { method: 'PUT', headers: json('"1-1"'), body: '{"title":"second"}' })
    t.match(put, { status: 200, etag: '"1-2"', body: '{"title":"second"}' }, 'PUT with If-Match and Authorization: 200, the new ETag readable')

    const stale = await fetchFromPage(`${base}/articles/1`, { method: 'PUT', headers: json('"1-1"'), body: '{"title":"lost"}' })
    t.match(stale, { status: 412, etag: '"1-2"' }, 'a stale If-Match: the 412 and the current ETag reach the script')
    t.match(JSON.parse((stale as Seen).body), { errors: [{ field: 'If-Match' }] })

    const patch = await fetchFromPage(`${base}/articles/1`, {
      method: 'PATCH',
      headers: { ...json('"1-2"'), 'content-type': 'application/merge-patch+json' },
      body: '{"title":"third"}'
    })
    t.match(patch, { status: 200, etag: '"1-3"', body: '{"title":"third"}' }, 'PATCH (merge patch) with If-Match: 200, the new ETag readable')

    const post = await fetchFromPage(`${base}/articles`, { method: 'POST', headers: json(), body: '{"title":"new"}' })
    t.match(post, { status: 201, location: '/articles/2', etag: '"2-1"' }, 'POST: Location and ETag readable')

    const del = await fetchFromPage(`${base}/articles/1`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}`, 'if-match': '"1-3"' } })
    t.match(del, { status: 204 }, 'DELETE with If-Match and Authorization: 204')
    t.match(await fetchFromPage(`${base}/articles/1`, { method: 'GET' }), { status: 404 }, 'the article is gone')
  })

  t.test('@fastify/cors\'s default methods (GET, HEAD, POST): Chromium refuses the same cross-origin PUT after its preflight', async (t) => {
    const { methods: _methods, ...withoutMethods } = readmeCorsOptions()
    const app = await api({ ...withoutMethods, origin: pageOrigin })
    t.teardown(() => app.close())
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const put = await fetchFromPage(`${base}/articles/1`, { method: 'PUT', headers: json('"1-1"'), body: '{"title":"second"}' })
    t.match(put, { failed: /TypeError/ }, 'the fetch fails: PUT is not an allowed method')
    t.match(await fetchFromPage(`${base}/articles/1`, { method: 'GET' }), { status: 200, etag: '"1-1"' }, 'and nothing was written')
  })
}
