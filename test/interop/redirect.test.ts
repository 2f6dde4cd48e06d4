/**
 * The 307 convention (docs/conventions.md#redirects-307) with real clients: `curl -L` and Node's fetch (undici)
 * follow the reference service's `/v1/...` rule and repeat the same method with the same
 * body (RFC 9110 15.4.8), against the compiled service that `npm start` runs. The curl
 * tests are skipped without curl (failed under CI=true), see test/helpers/peers.ts.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fetch, request } from 'undici'
import { startService, type RunningService } from '../helpers/service'
import { peer } from '../helpers/peers'

const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

let svc: RunningService

test('start the reference service', async (t) => {
  svc = await startService()
  t.match(svc.url, /^http:\/\/127\.0\.0\.1:\d+$/)
})

interface Curl { status: number, redirects: number, effective: string, method: string, heads: string[], body: string }

/** Runs curl -L; -D dumps the header block of every response to a file, -w reports where it ended. */
let curlPath = 'curl'

async function curl (args: string[]): Promise<Curl> {
  const dir = await mkdtemp(join(tmpdir(), 'curl-'))
  const dump = join(dir, 'headers')
  try {
    const marker = '\n--curl-info--'
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(curlPath, ['-sS', '-L', '--max-redirs', '3', '--max-time', '60', '-D', dump, '-w', `${marker}%{http_code} %{num_redirects} %{method} %{url_effective}`, ...args], { timeout: 60_000 }, (err, out, stderr) => {
        if (err !== null) reject(new Error(`${err.message}\n${stderr}`))
        else resolve(out)
      })
    })
    const at = stdout.lastIndexOf(marker)
    const [status, redirects, method, effective] = stdout.slice(at + marker.length).split(' ')
    const heads = (await readFile(dump, 'latin1')).split(/\r\n\r\n/).filter((h) => h.startsWith('HTTP/'))
    return { status: Number(status), redirects: Number(redirects), method, effective, heads, body: stdout.slice(0, at) }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function header (head: string, name: string): string | undefined {
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name}:`))
  return line?.slice(name.length + 1).trim()
}

async function create (slug: string): Promise<{ id: string, etag: string }> {
  const res = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug, title: 'T', body: 'B' }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  const article = await res.body.json() as { id: string }
  return { id: article.id, etag: res.headers.etag as string }
}

test('curl -L: POST /v1/articles with a body is repeated as POST /articles with the same body (307)', async (t) => {
  const path = peer(t, 'curl')
  if (path === undefined) return
  curlPath = path
  const body = JSON.stringify({ slug: 'curl-post', title: 'Via curl', body: 'posted through a 307' })
  const res = await curl(['-u', 'demo:demo-password', '-H', 'Content-Type: application/json', '--data-binary', body, `${svc.url}/v1/articles?from=curl`])
  t.equal(res.redirects, 1)
  t.equal(res.heads.length, 2)
  t.match(res.heads[0], /^HTTP\/1\.1 307 /)
  t.equal(header(res.heads[0], 'location'), '/articles?from=curl', 'same path without /v1, query kept')
  t.equal(header(res.heads[0], 'connection'), 'close', 'the body was not read')
  t.equal(res.method, 'POST', 'RFC 9110 15.4.8: the method is not changed')
  t.equal(new URL(res.effective).pathname + new URL(res.effective).search, '/articles?from=curl')
  t.equal(res.status, 201)
  t.match(JSON.parse(res.body), { slug: 'curl-post', title: 'Via curl', body: 'posted through a 307' }, 'the same body arrived at the new URI')
})

test('curl -L: PUT /v1/articles/{id} with a body and If-Match is repeated as PUT /articles/{id}', async (t) => {
  const path = peer(t, 'curl')
  if (path === undefined) return
  curlPath = path
  const { id, etag } = await create('curl-put')
  const body = JSON.stringify({ slug: 'curl-put', title: 'Replaced via curl', body: 'put through a 307' })
  const res = await curl(['-u', 'demo:demo-password', '-X', 'PUT', '-H', 'Content-Type: application/json', '-H', `If-Match: ${etag}`, '--data-binary', body, `${svc.url}/v1/articles/${id}`])
  t.match(res.heads[0], /^HTTP\/1\.1 307 /)
  t.equal(header(res.heads[0], 'location'), `/articles/${id}`)
  t.equal(res.method, 'PUT')
  t.equal(res.status, 200)
  t.match(JSON.parse(res.body), { id, title: 'Replaced via curl', body: 'put through a 307' })
  const now = await request(`${svc.url}/articles/${id}`)
  t.match(await now.body.json(), { title: 'Replaced via curl' }, 'the store has the replaced article')
})

test('curl -L: GET /v1/articles?limit=1 lands on /articles?limit=1', async (t) => {
  const path = peer(t, 'curl')
  if (path === undefined) return
  curlPath = path
  const res = await curl([`${svc.url}/v1/articles?limit=1`])
  t.equal(res.redirects, 1)
  t.equal(res.effective, `${svc.url}/articles?limit=1`)
  t.equal(res.status, 200)
  t.equal((JSON.parse(res.body) as unknown[]).length, 1)
})

test('fetch (undici): POST /v1/articles follows the 307 with the same method and body', async (t) => {
  const manual = await fetch(`${svc.url}/v1/articles?x=1`, { method: 'POST', redirect: 'manual', body: '{}', headers: { 'content-type': 'application/json', authorization: AUTH } })
  t.equal(manual.status, 307)
  t.equal(manual.headers.get('location'), '/articles?x=1')
  await manual.body?.cancel()

  const body = JSON.stringify({ slug: 'fetch-post', title: 'Via fetch', body: 'posted by undici' })
  const res = await fetch(`${svc.url}/v1/articles`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: AUTH } })
  t.ok(res.redirected)
  t.equal(res.url, `${svc.url}/articles`)
  t.equal(res.status, 201)
  t.match(await res.json(), { slug: 'fetch-post', body: 'posted by undici' })
})

test('fetch (undici): PUT /v1/articles/{id} follows the 307 with the same method and body', async (t) => {
  const { id, etag } = await create('fetch-put')
  const body = JSON.stringify({ slug: 'fetch-put', title: 'Replaced via fetch', body: 'put by undici' })
  const res = await fetch(`${svc.url}/v1/articles/${id}`, { method: 'PUT', body, headers: { 'content-type': 'application/json', authorization: AUTH, 'if-match': etag } })
  t.ok(res.redirected)
  t.equal(res.url, `${svc.url}/articles/${id}`)
  t.equal(res.status, 200)
  t.match(await res.json(), { id, title: 'Replaced via fetch', body: 'put by undici' })
})

test('fetch (undici): a /v1//host path stays on the service', async (t) => {
  const res = await fetch(`${svc.url}/v1//example.com/articles`, { redirect: 'manual' })
  t.equal(res.status, 307)
  t.equal(res.headers.get('location'), '/example.com/articles')
  t.equal(new URL(res.headers.get('location') as string, svc.url).origin, svc.url)
  await res.body?.cancel()
})

test('stop the reference service', async (t) => {
  t.equal(await svc.stop(), 0, 'it exits cleanly')
})
