/**
 * The Cross-Origin-Resource-Policy convention (docs/conventions.md) in a real browser:
 * headless Chromium (Debian's `chromium`, driven by playwright-core) loads pages from one origin that embed images and scripts from
 * another, and blocks or loads each one exactly as its Cross-Origin-Resource-Policy says
 * (Fetch standard, "cross-origin resource policy check").
 *
 * Origins and sites (Fetch/HTML "same site": same scheme and registrable domain; ports
 * do not count). Chromium resolves `localhost` and every `*.localhost` name to loopback:
 * - same origin:  the page is served by the server of the resources;
 * - same site:    page `a.site.localhost:P1`, resources `b.site.localhost:P2` (the
 *                 registrable domain of both is `site.localhost`);
 * - cross site:   page `localhost:P1`, resources `127.0.0.1:P2`; and page
 *                 `other.localhost:P1`, resources `b.site.localhost:P2`.
 * Chromium reports each block through the DevTools protocol (`Network.loadingFailed`,
 * `blockedReason` `corp-not-same-origin` / `corp-not-same-site`), so a block is told apart
 * from any other failure.
 *
 * Skipped without Chromium (failed under CI=true), see test/helpers/peers.ts.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { chromium, type BrowserContext } from 'playwright-core'
import { httpConventions, serverOptions, type ResourcePolicy } from '../../plugins/index'
import { startService, type RunningService } from '../helpers/service'
import { peer } from '../helpers/peers'

t.setTimeout(60000)

const executablePath = peer(t, 'chromium')

const POLICIES: ResourcePolicy[] = ['same-origin', 'same-site', 'cross-origin']
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run']

let svc: RunningService
let resources: FastifyInstance
let pages: http.Server
let browser: BrowserContext
let userDataDir: string
let resourcesPort: number
let pagesPort: number
const pageHtml = new Map<string, string>()

/** A page that embeds an image and a script under each policy, and the reference service's logo and a same-origin resource of it. */
function embedding (resourceBase: string, serviceBase: string): string {
  const items = POLICIES.map((p) => `<img id="img-${p}" src="${resourceBase}/img/${p}.svg" onload="imgs['${p}']='load'" onerror="imgs['${p}']='error'">` +
    `<script src="${resourceBase}/js/${p}.js" onerror="scriptErrors.push('${p}')"></script>`).join('\n')
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>embedder</title>
<script>window.imgs = {}; window.loaded = []; window.scriptErrors = []</script></head><body>
${items}
<img id="logo" src="${serviceBase}/public/logo.svg" onload="imgs.logo='load'" onerror="imgs.logo='error'">
<img id="missing" src="${serviceBase}/public/missing.svg" onload="imgs.missing='load'" onerror="imgs.missing='error'">
</body></html>`
}

interface Seen { imgs: Record<string, string>, loaded: string[], scriptErrors: string[], blocked: Record<string, string> }

/** Opens a page, waits for its load event (every image and script settled) and reports what loaded and what Chromium blocked. */
async function visit (url: string): Promise<Seen> {
  const page = await browser.newPage()
  try {
    const cdp = await browser.newCDPSession(page)
    await cdp.send('Network.enable')
    const urls = new Map<string, string>()
    const blocked: Record<string, string> = {}
    cdp.on('Network.requestWillBeSent', (e) => { urls.set(e.requestId, e.request.url) })
    cdp.on('Network.loadingFailed', (e) => { blocked[new URL(urls.get(e.requestId) as string).pathname] = e.blockedReason ?? e.errorText })
    await page.goto(url, { waitUntil: 'load', timeout: 60_000 })
    const inPage = await page.evaluate(() => {
      const w = globalThis as unknown as { imgs: Record<string, string>, loaded: string[], scriptErrors: string[] }
      return { imgs: w.imgs, loaded: w.loaded, scriptErrors: w.scriptErrors }
    })
    return { ...inPage, blocked }
  } finally {
    await page.close()
  }
}

if (executablePath !== undefined) defineTests(executablePath)

function defineTests (executablePath: string): void {
  t.before(async () => {
    svc = await startService()
    // The resources, served by the plugin from source: an image and a script under each policy.
    resources = Fastify(serverOptions)
    await resources.register(httpConventions)
    for (const p of POLICIES) {
      resources.get(`/img/${p}.svg`, { config: { resourcePolicy: p } }, async (_req, reply) => reply.type('image/svg+xml').send(SVG))
      resources.get(`/js/${p}.js`, { config: { resourcePolicy: p } }, async (_req, reply) => reply.type('text/javascript').send(`window.loaded.push('${p}')`))
    }
    resources.get('/page', async (_req, reply) => reply.type('text/html').send(embedding('', svc.url)))
    await resources.listen({ port: 0, host: '127.0.0.1' })
    resourcesPort = (resources.server.address() as AddressInfo).port

    // The embedding pages, on another port: another origin.
    pages = http.createServer((req, res) => {
      const html = pageHtml.get(req.url ?? '')
      res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(html ?? 'not found')
    })
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
    pagesPort = (pages.address() as AddressInfo).port

    userDataDir = mkdtempSync(join(tmpdir(), 'corp-chromium-'))
    browser = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: ARGS, timeout: 60_000 })
  })

  t.teardown(async () => {
  // Always close the browser, then the servers.
    await browser?.close().catch(() => {})
    if (userDataDir !== undefined) rmSync(userDataDir, { recursive: true, force: true })
    await resources?.close()
    await new Promise((resolve) => pages === undefined ? resolve(undefined) : pages.close(resolve))
    await svc?.stop()
  })

  t.test('same origin: every policy lets the page of the same origin load its images and scripts', async (t) => {
    const seen = await visit(`http://127.0.0.1:${resourcesPort}/page`)
    t.same(seen.imgs, { 'same-origin': 'load', 'same-site': 'load', 'cross-origin': 'load', logo: 'load', missing: 'error' })
    t.same(seen.loaded, POLICIES, 'every script ran')
    t.equal(seen.blocked['/public/logo.svg'], undefined, 'the service\'s cross-origin logo loads')
    t.equal(seen.blocked['/public/missing.svg'], 'corp-not-same-origin', 'the service\'s 404 carries same-origin too')

    const home = await browser.newPage()
    try {
      await home.goto(`${svc.url}/`, { waitUntil: 'load', timeout: 60_000 })
      const width = await home.evaluate(() => (globalThis as unknown as { document: { querySelector: (s: string) => { naturalWidth: number } } }).document.querySelector('img[src="/public/logo.svg"]').naturalWidth)
      t.equal(width, 120, 'the reference service\'s GET / page shows its logo')
    } finally {
      await home.close()
    }
  })

  t.test('same site, cross origin (a.site.localhost -> b.site.localhost): same-origin is blocked, same-site and cross-origin load', async (t) => {
    pageHtml.set('/same-site', embedding(`http://b.site.localhost:${resourcesPort}`, `http://b.site.localhost:${svc.port}`))
    const seen = await visit(`http://a.site.localhost:${pagesPort}/same-site`)
    t.same(seen.imgs, { 'same-origin': 'error', 'same-site': 'load', 'cross-origin': 'load', logo: 'load', missing: 'error' })
    t.same(seen.loaded, ['same-site', 'cross-origin'])
    t.same(seen.scriptErrors, ['same-origin'])
    t.same(seen.blocked, {
      '/img/same-origin.svg': 'corp-not-same-origin',
      '/js/same-origin.js': 'corp-not-same-origin',
      '/public/missing.svg': 'corp-not-same-origin'
    }, 'exactly the same-origin resources are blocked, by CORP')
  })

  for (const [name, pageHost, resourceHost] of [
    ['localhost -> 127.0.0.1', 'localhost', '127.0.0.1'],
    ['other.localhost -> b.site.localhost', 'other.localhost', 'b.site.localhost']
  ]) {
    t.test(`cross site (${name}): same-origin and same-site are blocked, the cross-origin logo and resources load`, async (t) => {
      const path = `/cross-site-${pageHost}`
      pageHtml.set(path, embedding(`http://${resourceHost}:${resourcesPort}`, `http://${resourceHost}:${svc.port}`))
      const seen = await visit(`http://${pageHost}:${pagesPort}${path}`)
      t.same(seen.imgs, { 'same-origin': 'error', 'same-site': 'error', 'cross-origin': 'load', logo: 'load', missing: 'error' })
      t.same(seen.loaded, ['cross-origin'])
      t.same(seen.scriptErrors, ['same-origin', 'same-site'])
      t.same(seen.blocked, {
        '/img/same-origin.svg': 'corp-not-same-origin',
        '/js/same-origin.js': 'corp-not-same-origin',
        '/img/same-site.svg': 'corp-not-same-site',
        '/js/same-site.js': 'corp-not-same-site',
        '/public/missing.svg': 'corp-not-same-origin'
      }, 'exactly the same-origin and same-site resources are blocked, by CORP')
    })
  }
}
