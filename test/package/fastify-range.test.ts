/**
 * README.md (Compatibility): the Fastify the suite needs. The peer range of package.json is
 * the range each plugin of the suite declares to Fastify (fastify-plugin's `fastify`
 * metadata, which Fastify checks when the plugin is registered), and the Fastify these tests
 * load is within it. CI runs the tests a second time with the range's lowest Fastify
 * installed (.ci/run), where this file proves the suite loads, registers and serves there.
 */
import { test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify, { LogController } from 'fastify'
import * as suite from '../../plugins/index'
import { ROOT } from '../helpers/paths'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
const RANGE = pkg.peerDependencies.fastify
/** `^5.10.0` as [5, 10, 0]: the lowest Fastify of the range; within the major version. */
const LOWEST = (/^\^(\d+)\.(\d+)\.(\d+)$/.exec(RANGE) ?? []).slice(1).map(Number)

function version (v: string): number[] {
  return v.split(/[.-]/).slice(0, 3).map(Number)
}

/** True when `v` is within `^LOWEST`: the same major version, not below the lowest. */
function inRange (v: string): boolean {
  const [major, minor, patch] = version(v)
  if (major !== LOWEST[0]) return false
  return minor !== LOWEST[1] ? minor > LOWEST[1] : patch >= LOWEST[2]
}

/** Every `fp(plugin, { fastify: '...' })` of plugins/, by file. */
function declaredRanges (): Array<{ file: string, range: string | undefined }> {
  const dir = join(ROOT, 'plugins')
  const out: Array<{ file: string, range: string | undefined }> = []
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(dir, file), 'utf8')
    for (const call of text.matchAll(/\bfp\(\w+,\s*\{([^}]*)\}/g)) out.push({ file, range: /fastify:\s*'([^']*)'/.exec(call[1])?.[1] })
  }
  return out
}

/** The plugins the package exports (the umbrella also as the default export), with the metadata fastify-plugin gave them. */
function exportedPlugins (): Array<{ name: string, fastify: string }> {
  return [...new Set(Object.values(suite))].flatMap((value) => {
    const meta = typeof value === 'function' ? (value as unknown as Record<symbol, { name: string, fastify: string } | undefined>)[Symbol.for('plugin-meta')] : undefined
    return meta === undefined ? [] : [meta]
  })
}

test('README.md (Compatibility): the peer range of fastify is ^<lowest> within 5, and every plugin of the suite declares that same range to Fastify', async (t) => {
  t.equal(LOWEST.length, 3, `the peer range ${RANGE} reads ^major.minor.patch`)
  t.equal(LOWEST[0], 5, 'Fastify 5')
  const declared = declaredRanges()
  t.ok(declared.length >= 13, `${declared.length} fp() calls in plugins/`)
  for (const { file, range } of declared) t.equal(range, RANGE, `plugins/${file}: fp() metadata fastify`)
  const exported = exportedPlugins()
  t.equal(exported.length, declared.length, 'each plugin the package exports is one of them')
  for (const meta of exported) t.equal(meta.fastify, RANGE, meta.name)
})

test('README.md (Compatibility): the Fastify loaded is within the peer range, exports LogController, and serves the suite', async (t) => {
  const app = Fastify({ ...suite.serverOptions })
  t.teardown(() => app.close())
  t.ok(inRange(app.version), `Fastify ${app.version} is within ${RANGE}`)
  t.equal(typeof LogController, 'function', 'LogController, which serverOptions.logController extends')
  await app.register(suite.httpConventions)
  app.post('/echo', { schema: { body: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } } }, async (request) => request.body)
  const ok = await app.inject({ method: 'POST', url: '/echo', payload: { a: 'x' } })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { a: 'x' })
  const refused = await app.inject({ method: 'POST', url: '/echo', payload: {} })
  t.equal(refused.statusCode, 422, 'the suite\'s validation answer')
})

test('README.md (Compatibility): registering the suite on a Fastify below the range fails with Fastify\'s plugin version error, naming the range', async (t) => {
  const below = `${LOWEST[0]}.${LOWEST[1] - 1}.0`
  t.equal(inRange(below), false, `${below} is below ${RANGE}`)
  const app = Fastify()
  t.teardown(() => app.close())
  // The version Fastify's register() checks against the plugin's range (its own `version` getter).
  Object.defineProperty(app, 'version', { value: below })
  app.register(suite.httpConventions)
  await t.rejects(Promise.resolve(app.ready()), { code: 'FST_ERR_PLUGIN_VERSION_MISMATCH', message: new RegExp(`expected '\\${RANGE}' fastify version, '${below}' is installed`) })
})
