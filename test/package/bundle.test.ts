/**
 * An app that uses the suite, bundled by esbuild into one file (ESM and CommonJS), runs where
 * no node_modules and no file of the package lie: large deltas are still encoded off the event
 * loop (docs/conventions.md (Delta encoding); RFC 3229 10.4.1), by the encoder worker the build
 * writes for bundles (packages/vcdiff: src/pool.ts, scripts/embed-worker.js).
 */
import { test, type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { buildSync } from 'esbuild'
import { decode } from '../../packages/vcdiff/src/index'
import { workerSource } from '../../packages/vcdiff/src/pool'
import { ROOT, childEnv } from '../helpers/paths'

const root = ROOT

/** The compiled pool of the VCDIFF package's dist/, as the package ships it. */
function builtPool (): { workerSource: typeof workerSource } {
  return require(join(root, 'packages', 'vcdiff', 'dist', 'pool.js')) as { workerSource: typeof workerSource }
}

test('the build writes the encoder worker for bundled apps beside the compiled pool; the sources hold no generated code', async (t) => {
  const embedded = builtPool().workerSource(null)
  t.ok('code' in embedded && embedded.code.startsWith('"use strict";') && embedded.code.length > 10_000, 'packages/vcdiff/dist/pool-worker-embedded.js: the worker and the encoder as one script')
  t.ok('code' in embedded && embedded.code.includes('node:worker_threads'), 'it is the worker: it takes its jobs from worker_threads')
  const long = readFileSync(join(root, 'packages', 'vcdiff', 'src', 'pool.ts'), 'utf8').split('\n').filter((line) => line.length > 200)
  t.same(long.map((line) => line.slice(0, 60)), [], 'packages/vcdiff/src/pool.ts holds source only')
})

test('the pool runs the worker file next to its module, and the embedded script where no module file is (a bundle)', async (t) => {
  t.same(workerSource(join(root, 'packages', 'vcdiff', 'src')), { file: join(root, 'packages', 'vcdiff', 'src', 'pool-worker.ts') })
  t.same(workerSource(), { file: require.resolve('../../packages/vcdiff/src/pool-worker') }, 'here: the worker beside pool\'s own module (its TypeScript source, or the compiled .js)')
  const embedded = builtPool().workerSource(null)
  t.ok('code' in embedded && embedded.code.length > 10_000, 'bundled: the embedded script')
})

// The app: a document of about 550 KB (above offload.minBytes, 256 KiB by default) whose
// version advances on every request, the suite with its default options but one: the
// offload deadline, which a busy machine (the worker's first start included) can pass, and
// then the answer is the plain 200 by design; this test is about where the worker runs.
const APP = `
import Fastify from 'fastify'
import httpConventions, { serverOptions } from 'fastify-http-conventions'

const doc = (v) => JSON.stringify({ version: v, items: Array.from({ length: 12000 }, (_, i) => ({ i, name: 'item ' + i + ' of the catalogue' })) })

async function main () {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { deltaEncoding: { offload: { deadlineMs: 120000 } } })
  let version = 0
  app.get('/doc', {
    config: { deltaEncoding: true, conditional: { validators: (request) => ({ etag: '"v' + request.docVersion + '"' }) } },
    onRequest (request, reply, done) { request.docVersion = ++version; done() }
  }, async (request, reply) => {
    reply.type('application/json')
    return doc(request.docVersion)
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  console.log(JSON.stringify({ port: app.server.address().port }))
}
main().catch((err) => { console.error(err); process.exit(1) })
`

/** Bundles APP in `format`; returns the bundle's path, in a directory of its own. */
function bundle (t: Test, format: 'esm' | 'cjs'): string {
  const dir = mkdtempSync(join(tmpdir(), `bundle-${format}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const src = join(dir, 'src')
  mkdirSync(join(src, 'node_modules'), { recursive: true })
  // The app imports the package by its name, as an installed dependency (the built dist/).
  symlinkSync(root, join(src, 'node_modules', 'fastify-http-conventions'), 'dir')
  writeFileSync(join(src, 'app.mjs'), APP)
  // The app's own tsconfig: the repository's maps the packages' names to their sources, which
  // an app that installed the package has not (esbuild reads a tsconfig.json above a file).
  writeFileSync(join(src, 'tsconfig.json'), '{}')
  const outfile = join(dir, 'out', format === 'esm' ? 'app.mjs' : 'app.cjs')
  buildSync({
    entryPoints: [join(src, 'app.mjs')],
    bundle: true,
    platform: 'node',
    format,
    target: 'node20',
    outfile,
    nodePaths: [join(root, 'node_modules')],
    tsconfig: join(src, 'tsconfig.json'),
    logLevel: 'silent',
    // esbuild's recipe for an ESM bundle of CommonJS packages (Fastify's require of Node's modules).
    banner: format === 'esm' ? { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" } : undefined
  })
  return outfile
}

/** Runs the bundle in a child process (from its own directory); resolves with its port. */
async function run (t: Test, file: string): Promise<number> {
  const child = spawn(process.execPath, [file], { cwd: join(file, '..'), stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ NODE_PATH: '' }) })
  t.teardown(() => { if (child.exitCode === null) child.kill() })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const lines = createInterface({ input: child.stdout })
  return await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bundle exited with ${String(code)}: ${stderr}`)))
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port))
  })
}

for (const format of ['esm', 'cjs'] as const) {
  test(`${format === 'esm' ? 'an ESM' : 'a CommonJS'} bundle of an app answers a 226 with a vcdiff delta for an instance over 256 KiB (RFC 3229 10.4.1), encoded by the worker pool`, async (t) => {
    const file = bundle(t, format)
    const port = await run(t, file)
    const url = `http://127.0.0.1:${port}/doc`
    // A delta client sends A-IM from its first GET: the route keeps bases once a client asked.
    const first = await fetch(url, { headers: { 'a-im': 'vcdiff' } })
    t.equal(first.status, 200)
    const base = Buffer.from(await first.arrayBuffer())
    t.ok(base.length >= 256 * 1024, `an instance of ${base.length} bytes, at least offload.minBytes`)
    const etag = first.headers.get('etag') as string
    const res = await fetch(url, { headers: { 'a-im': 'vcdiff', 'if-none-match': etag } })
    const body = Buffer.from(await res.arrayBuffer())
    t.equal(res.status, 226, `226 IM Used (got ${res.status}: ${res.status === 226 ? '' : body.subarray(0, 200).toString()})`)
    if (res.status !== 226) return
    t.equal(res.headers.get('im'), 'vcdiff')
    t.equal(res.headers.get('delta-base'), etag)
    t.ok(body.length < 1024, `a delta of ${body.length} bytes`)
    const instance = JSON.parse(Buffer.from(decode(base, body)).toString('utf8')) as { version: number }
    t.equal(`"v${instance.version}"`, res.headers.get('etag'), 'the delta decodes to the instance its ETag names')
  })
}
