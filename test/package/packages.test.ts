/**
 * Each package of packages/ installs from its tarball alone, in an empty directory, and works
 * there without Fastify: the VCDIFF codec round-trips (in the event loop and in its worker
 * pool), the client fetches a local server's instance and applies its vcdiff delta (RFC 3229),
 * and the auditor's bin prints its usage and audits a tiny local server. A package that
 * imported a file outside its own, or needed a dependency it does not declare, fails here.
 */
import { test, type Test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { encode } from '../../packages/vcdiff/src/index'
import { ROOT, childEnv } from '../helpers/paths'

const exec = promisify(execFile)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const WORKSPACES = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces

interface Packed { name: string, filename: string, files: Array<{ path: string }> }

/** A directory of its own, removed after the test. */
function tempDir (t: Test, prefix: string): string {
  const dir = mkdtempSync(join(os.tmpdir(), prefix))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** `npm pack` of every package of packages/ into `dir`: the tarballs by package name. */
async function packAll (dir: string): Promise<Map<string, Packed>> {
  const args = ['pack', '--json', '--ignore-scripts', '--pack-destination', dir, ...WORKSPACES.flatMap((w) => ['-w', w])]
  const { stdout } = await exec(npm, args, { cwd: ROOT, env: childEnv(), maxBuffer: 64 << 20 })
  return new Map((JSON.parse(stdout) as Packed[]).map((p) => [p.name, p]))
}

/**
 * Installs `name` from its tarball into an empty directory, with the tarballs of the
 * packages of packages/ it depends on (they are not in a registry yet); the directory.
 */
async function installAlone (t: Test, name: string): Promise<string> {
  const dir = tempDir(t, 'pack-alone-')
  const packed = await packAll(dir)
  const wanted = [name]
  for (let i = 0; i < wanted.length; i++) {
    const deps = (JSON.parse(readFileSync(join(ROOT, 'packages', wanted[i].split('/')[1], 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {}
    for (const dep of Object.keys(deps)) if (packed.has(dep) && !wanted.includes(dep)) wanted.push(dep)
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'install-alone', version: '1.0.0', private: true }))
  const tarballs = wanted.map((n) => `./${(packed.get(n) as Packed).filename}`)
  await exec(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: dir, env: childEnv(), maxBuffer: 64 << 20 })
  return dir
}

/** Every package installed below `dir`'s node_modules, by name (nested ones too). */
function installed (dir: string): string[] {
  const names: string[] = []
  const walk = (modules: string): void => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue
      const scoped = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((e) => `${entry}/${e}`) : [entry]
      for (const name of scoped) {
        names.push(name)
        walk(join(modules, name, 'node_modules'))
      }
    }
  }
  walk(join(dir, 'node_modules'))
  return names
}

function noFastify (t: Test, dir: string): void {
  const names = installed(dir)
  t.ok(names.length > 0, `installed: ${names.join(', ')}`)
  t.same(names.filter((n) => n === 'fastify' || n.startsWith('@fastify/')), [], 'no Fastify in the install')
}

/** Runs `code` with node in `dir` (its modules resolved from there); stdout. */
async function node (dir: string, code: string): Promise<string> {
  const { stdout } = await exec(process.execPath, ['-e', code], { cwd: dir, env: childEnv() })
  return stdout
}

async function listen (t: Test, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

test('every package ships its built output, types, package.json and README, and no source, test or API page', async (t) => {
  const dir = tempDir(t, 'pack-files-')
  const packed = await packAll(dir)
  t.same([...packed.keys()].sort(), ['@http-conventions/audit', '@http-conventions/client', '@http-conventions/grammar', '@http-conventions/vcdiff'])
  for (const [name, p] of packed) {
    const files = p.files.map((f) => f.path)
    for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts']) t.ok(files.includes(file), `${name}: ${file}`)
    t.same(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md' && f !== 'LICENSE'), [], `${name}: nothing but dist/, package.json, README.md`)
    t.same(files.filter((f) => f.includes('docs/api')), [], `${name}: no API page`)
  }
})

test('the VCDIFF codec installed alone round-trips (RFC 3284), in the event loop and in its worker pool, without Fastify', async (t) => {
  const dir = await installAlone(t, '@http-conventions/vcdiff')
  noFastify(t, dir)
  t.same(installed(dir).sort(), ['@http-conventions/vcdiff'], 'no dependency')
  const out = await node(dir, `
    const { encode, decode, createEncoderPool } = require('@http-conventions/vcdiff')
    const source = Buffer.from('the quick brown fox jumps over the lazy dog. '.repeat(200))
    const target = Buffer.concat([source.subarray(0, 4000), Buffer.from('a change'), source.subarray(4000)])
    const delta = encode(source, target)
    const pool = createEncoderPool({ threads: 1, deadlineMs: 30000 })
    pool.encode('base', source, target).then((pooled) => {
      console.log(JSON.stringify({ same: Buffer.from(decode(source, delta)).equals(target), small: delta.length < 200, pooled: Buffer.from(decode(source, pooled)).equals(target) }))
      return pool.close()
    })`)
  t.same(JSON.parse(out), { same: true, small: true, pooled: true })
})

test('the client installed alone fetches an instance, then applies the vcdiff delta of the next (RFC 3229 10.5), without Fastify', async (t) => {
  const dir = await installAlone(t, '@http-conventions/client')
  noFastify(t, dir)
  const v1 = Buffer.from(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) }))
  const v2 = Buffer.from(v1.toString().replace('"item 100"', '"item one hundred"'))
  const url = await listen(t, (req, res) => {
    const aim = String(req.headers['a-im'] ?? '')
    if (req.headers['if-none-match'] === '"1"' && aim.includes('vcdiff')) {
      // RFC 3229 10.5.1-10.5.3: 226 IM Used, the manipulation, the base it applies to
      res.writeHead(226, { etag: '"2"', im: 'vcdiff', 'delta-base': '"1"', 'content-type': 'application/json' })
      res.end(Buffer.from(encode(v1, v2)))
      return
    }
    res.writeHead(200, { etag: '"1"', 'content-type': 'application/json' })
    res.end(v1)
  })
  const out = await node(dir, `
    const { DeltaClient } = require('@http-conventions/client')
    const client = new DeltaClient()
    ;(async () => {
      const first = await client.get(${JSON.stringify(url)})
      const second = await client.get(${JSON.stringify(url)})
      console.log(JSON.stringify([first.wireStatus, first.status, second.wireStatus, second.status, second.etag, second.body.toString()]))
    })()`)
  t.same(JSON.parse(out), [200, 200, 226, 200, '"2"', v2.toString()])
})

test('the auditor installed alone: its bin prints its usage, and audits a tiny local server, without Fastify', async (t) => {
  const dir = await installAlone(t, '@http-conventions/audit')
  noFastify(t, dir)
  const bin = join(dir, 'node_modules', '.bin', 'fastify-http-conventions')
  t.ok(existsSync(bin), 'npm linked the bin')
  const help = await exec(bin, ['--help'], { cwd: dir, env: childEnv() })
  t.match(help.stdout, /^Usage: fastify-http-conventions audit <url>/)
  let requests = 0
  const url = await listen(t, (req, res) => {
    requests++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(req.method === 'HEAD' ? undefined : '{"ok":true}')
  })
  const run = await exec(bin, ['audit', url, '--json', '--rate', '0', '--timeout', '2000'], { cwd: dir, env: childEnv(), maxBuffer: 16 << 20 })
    .then((r) => ({ code: 0, stdout: r.stdout }), (err: { code: number, stdout: string }) => ({ code: err.code, stdout: err.stdout }))
  const report = JSON.parse(run.stdout) as { url: string, rules: Array<{ id: string, outcome: string }> }
  t.equal(report.url, url)
  t.ok(report.rules.length > 10, `${report.rules.length} rules reported`)
  t.ok(requests > 0, `the server was asked ${requests} times`)
  t.ok([0, 1, 3].includes(run.code), `an audit's exit status (0 hold, 1 a rule failed, 3 too little checked): ${run.code}`)
})

test('the suite installed from its tarball, with the packages: its subpaths are the packages, and the command comes with the auditor', async (t) => {
  const dir = tempDir(t, 'pack-suite-')
  const packed = [...(await packAll(dir)).values()]
  const { stdout } = await exec(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, env: childEnv(), maxBuffer: 64 << 20 })
  const suite = (JSON.parse(stdout) as Packed[])[0]
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'install-suite', version: '1.0.0', private: true }))
  const tarballs = [suite, ...packed].map((p) => `./${p.filename}`)
  await exec(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], { cwd: dir, env: childEnv(), maxBuffer: 64 << 20 })
  const out = await node(dir, `
    const same = (a, b, name) => require(a)[name] === require(b)[name]
    console.log(JSON.stringify([
      same('fastify-http-conventions/client', '@http-conventions/client', 'DeltaClient'),
      same('fastify-http-conventions/vcdiff', '@http-conventions/vcdiff', 'encode'),
      same('fastify-http-conventions/headers', '@http-conventions/grammar', 'negotiateMediaType'),
      typeof require('fastify-http-conventions').httpConventions
    ]))`)
  t.same(JSON.parse(out), [true, true, true, 'function'])
  const help = await exec(join(dir, 'node_modules', '.bin', 'fastify-http-conventions'), ['--help'], { cwd: dir, env: childEnv() })
  t.match(help.stdout, /^Usage: fastify-http-conventions audit <url>/, 'npx fastify-http-conventions audit works where the suite is installed')
})
