/**
 * Real clients against the auth plugin over real sockets: curl (--basic, --digest,
 * --oauth2-bearer), Python's urllib (Basic; Digest, which it answers only when the first
 * challenge is Digest MD5: it reads only the first WWW-Authenticate line and knows only MD5),
 * digest-fetch (every algorithm, several requests on one nonce) and Chromium through
 * playwright-core (Basic and Digest logins via httpCredentials). The reference service, with
 * its defaults, is logged in to by curl, urllib and Chromium with Digest. A test whose client
 * is not installed is skipped (failed under CI=true), see test/helpers/peers.ts.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { peer, peers } from '../helpers/peers'
import { startService, type RunningService } from '../helpers/service'
import type { DigestAlgorithm } from '../../plugins/index'

const run = promisify(execFile)
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run']
const USER = 'Mufasa'
const PASSWORD = 'Circle of Life'
const TOKEN = 'interop-token-0123456789'
const ALGORITHMS: DigestAlgorithm[] = ['SHA-512-256', 'SHA-512-256-sess', 'SHA-256', 'SHA-256-sess', 'MD5', 'MD5-sess']

let app: FastifyInstance
let base: string
/** The same users and algorithms, with `digestFirst: 'MD5'` (the reference service's setting). */
let md5First: FastifyInstance
let md5FirstBase: string

/** `{ scheme, subject, nc }`: who authenticated, and the nonce-count the client sent (Digest). */
function whoami (request: FastifyRequest): { scheme?: string, subject?: string, nc?: string } {
  const nc = /(?:^|[ ,])nc="?([0-9a-fA-F]{8})/.exec(request.headers.authorization ?? '')?.[1]
  return { scheme: request.principal?.scheme, subject: request.principal?.subject, nc }
}

test('start a protected app', async () => {
  app = await buildApp({
    auth: {
      realm: 'interop@example.org',
      basic: { users: { [USER]: PASSWORD } },
      bearer: { verify: (token) => token === TOKEN ? { subject: 'robot', scopes: ['write'] } : null },
      digest: { secret: 'interop-secret-interop-secret-interop!', algorithms: ALGORITHMS, users: { [USER]: PASSWORD } }
    }
  })
  app.get('/any', { config: { auth: true } }, async (req) => whoami(req))
  app.get('/basic', { config: { auth: { schemes: ['basic'] } } }, async (req) => whoami(req))
  app.get('/digest-sha256', { config: { auth: { schemes: ['digest'], algorithms: ['SHA-256'] } } }, async (req) => whoami(req))
  app.get('/digest-md5', { config: { auth: { schemes: ['digest'], algorithms: ['MD5'] } } }, async (req) => whoami(req))
  for (const algorithm of ALGORITHMS) {
    app.get(`/alg/${algorithm}`, { config: { auth: { schemes: ['digest'], algorithms: [algorithm] } } }, async (req) => whoami(req))
  }
  app.get('/both', { config: { auth: { schemes: ['digest', 'basic'], algorithms: ['SHA-256', 'MD5'] } } }, async (req) => whoami(req))
  base = `http://127.0.0.1:${await listen(app)}`
  md5First = await buildApp({ auth: { realm: 'interop@example.org', digestFirst: 'MD5', digest: { secret: 'interop-secret-interop-secret-interop!', algorithms: ['SHA-256', 'MD5'], users: { [USER]: PASSWORD } }, basic: { users: { [USER]: PASSWORD } } } })
  md5First.get('/both', { config: { auth: true } }, async (req) => whoami(req))
  md5FirstBase = `http://127.0.0.1:${await listen(md5First)}`
})

let curlPath = 'curl'
let pythonPath = 'python3'

async function curl (args: string[]): Promise<{ status: number, body: string }> {
  const { stdout } = await run(curlPath, ['-s', '-w', '\n%{http_code}', ...args])
  const i = stdout.lastIndexOf('\n')
  return { status: Number(stdout.slice(i + 1)), body: stdout.slice(0, i) }
}

test('curl --basic, --digest (MD5 and SHA-256 routes) and --oauth2-bearer', async (t) => {
  const path = peer(t, 'curl')
  if (path === undefined) return
  curlPath = path
  const basic = await curl(['--basic', '-u', `${USER}:${PASSWORD}`, `${base}/any`])
  t.same([basic.status, JSON.parse(basic.body)], [200, { scheme: 'basic', subject: USER }])
  t.equal((await curl(['--basic', '-u', `${USER}:wrong`, `${base}/any`])).status, 401)
  // Not /any: it offers SHA-512-256 first, which curl before 8.8 labels right but computes with SHA-256.
  for (const path of ['/digest-md5', '/digest-sha256', '/digest-sha256?q=a%20b']) {
    const digest = await curl(['--digest', '-u', `${USER}:${PASSWORD}`, `${base}${path}`])
    t.equal(digest.status, 200, `curl --digest ${path}`)
    t.match(JSON.parse(digest.body), { scheme: 'digest', subject: USER, nc: '00000001' })
  }
  t.equal((await curl(['--digest', '-u', `${USER}:wrong`, `${base}/digest-sha256`])).status, 401)
  const bearer = await curl(['--oauth2-bearer', TOKEN, `${base}/any`])
  t.same([bearer.status, JSON.parse(bearer.body)], [200, { scheme: 'bearer', subject: 'robot' }])
  const unknown = await curl(['--oauth2-bearer', 'nope', '-D', '-', `${base}/any`])
  t.equal(unknown.status, 401)
  t.match(unknown.body, /www-authenticate: Bearer realm="interop@example.org", error="invalid_token"/i)
})

const PYTHON = `
import sys, urllib.request, urllib.error
url, user, password, kind, method = sys.argv[1:6]
mgr = urllib.request.HTTPPasswordMgrWithDefaultRealm()
mgr.add_password(None, url, user, password)
handler = urllib.request.HTTPBasicAuthHandler(mgr) if kind == 'basic' else urllib.request.HTTPDigestAuthHandler(mgr)
try:
    r = urllib.request.build_opener(handler).open(urllib.request.Request(url, method=method), timeout=10)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, '')
except ValueError as e:
    print(0, str(e))
`

async function python (url: string, kind: 'basic' | 'digest', password = PASSWORD, method = 'GET', user = USER): Promise<{ status: number, body: string }> {
  const { stdout } = await run(pythonPath, ['-c', PYTHON, url.startsWith('http') ? url : `${base}${url}`, user, password, kind, method], { timeout: 60_000 })
  const i = stdout.indexOf(' ')
  return { status: Number(stdout.slice(0, i)), body: stdout.slice(i + 1).trim() }
}

test('Python urllib: Basic found among several challenge lines; Digest only when the first challenge is Digest MD5 (digestFirst: MD5)', async (t) => {
  const path = peer(t, 'python3')
  if (path === undefined) return
  pythonPath = path
  const basic = await python('/any', 'basic')
  t.same([basic.status, JSON.parse(basic.body)], [200, { scheme: 'basic', subject: USER }], 'HTTPBasicAuthHandler picks the Basic line')
  t.equal((await python('/any', 'basic', 'wrong')).status, 401)
  const digest = await python(`${md5FirstBase}/both`, 'digest')
  t.same([digest.status, JSON.parse(digest.body)], [200, { scheme: 'digest', subject: USER, nc: '00000001' }], 'HTTPDigestAuthHandler answers the first challenge, MD5')
  t.equal((await python(`${md5FirstBase}/both`, 'digest', 'wrong')).status, 401)
  // Strongest first (the plugin's default): urllib reads the SHA-256 challenge and gives up.
  const strongest = await python('/both', 'digest')
  t.match(strongest, { status: 0, body: /Unsupported digest authentication algorithm 'SHA-256'/ }, 'strongest first: urllib cannot log in')
})

test('digest-fetch: every algorithm, and repeated requests on one nonce (nc 2, 3)', async (t) => {
  const { default: DigestClient } = await import('digest-fetch') as unknown as { default: new (u: string, p: string, o: object) => { fetch: (url: string, o?: object) => Promise<Response> } }
  for (const algorithm of ALGORITHMS) {
    const client = new DigestClient(USER, PASSWORD, { algorithm })
    const counts: string[] = []
    for (const query of ['', '?a=1', '?b=2']) {
      const res = await client.fetch(`${base}/alg/${algorithm}${query}`)
      t.equal(res.status, 200, `${algorithm}${query}`)
      const body = await res.json() as { scheme: string, subject: string, nc: string }
      t.match(body, { scheme: 'digest', subject: USER })
      counts.push(body.nc)
    }
    t.same(counts, ['00000001', '00000002', '00000003'], `${algorithm}: one nonce, counts 1, 2, 3`)
  }
})

test('Chromium (playwright-core): Basic and Digest SHA-256 logins through httpCredentials', { timeout: 300_000 }, async (t) => {
  const executablePath = peer(t, 'chromium')
  if (executablePath === undefined) return
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath, headless: true, timeout: 60_000, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const login = async (path: string, password: string): Promise<{ status: number, body: string }> => {
    const context = await browser.newContext({ httpCredentials: { username: USER, password } })
    try {
      const page = await context.newPage()
      const res = await page.goto(`${base}${path}`, { timeout: 60_000 })
      return { status: res?.status() ?? 0, body: await page.innerText('body') }
    } finally {
      await context.close()
    }
  }
  const basic = await login('/basic', PASSWORD)
  t.same([basic.status, JSON.parse(basic.body)], [200, { scheme: 'basic', subject: USER }])
  const digest = await login('/digest-sha256', PASSWORD)
  t.equal(digest.status, 200)
  t.match(JSON.parse(digest.body), { scheme: 'digest', subject: USER })
  const wrong = await login('/digest-sha256', 'wrong')
  t.equal(wrong.status, 401, 'a wrong password ends at 401')
})

test('the reference service with its defaults: curl --digest, Python urllib and Chromium log in with Digest', { timeout: 300_000 }, async (t) => {
  // One check for the three: a skip is the test's plan of zero, which can be set only once.
  const found = peers(t, 'curl', 'python3', 'chromium')
  if (found === undefined) return
  const { curl: curlBin, python3, chromium: chromiumBin } = found
  pythonPath = python3
  const svc: RunningService = await startService()
  t.teardown(() => svc.stop())
  // An authenticated DELETE of an id that names no article is 404: credentials accepted, nothing written.
  const target = `${svc.url}/articles/00000000-0000-0000-0000-000000000000`
  const trace = await run(curlBin, ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-v', '--digest', '-u', 'demo:demo-password', '-X', 'DELETE', target])
  t.equal(trace.stdout, '404', 'curl --digest logs in')
  t.match(trace.stderr, /> Authorization: Digest [^\n]*algorithm=MD5/i, 'curl answers the first Digest challenge (MD5)')
  const wrong = await run(curlBin, ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--digest', '-u', 'demo:wrong', '-X', 'DELETE', target])
  t.equal(wrong.stdout, '401')
  t.equal((await python(target, 'digest', 'demo-password', 'DELETE', 'demo')).status, 404, 'urllib logs in with Digest MD5')
  t.equal((await python(target, 'digest', 'wrong', 'DELETE', 'demo')).status, 401)
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: chromiumBin, headless: true, timeout: 60_000, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  for (const [password, status] of [['demo-password', 404], ['wrong', 401]] as const) {
    const context = await browser.newContext({ httpCredentials: { username: 'demo', password } })
    const page = await context.newPage()
    await page.goto(`${svc.url}/`)
    // A page's own fetch() of a write: Chromium answers the Digest challenge with the credentials.
    const got = await page.evaluate(async (url) => (await fetch(url, { method: 'DELETE' })).status, target)
    t.equal(got, status, `Chromium fetch() with ${password === 'wrong' ? 'a wrong' : 'the right'} password`)
    await context.close()
  }
})

test('stop', async () => {
  await app.close()
  await md5First.close()
})
