/**
 * The package is usable from CommonJS `require`, ESM `import` and TypeScript: each is
 * proven against the built output through the package's own `exports` map.
 */
import { test } from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = join(__dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function run (args: string[], input?: string): string {
  return execFileSync(process.execPath, args, { cwd: root, input, encoding: 'utf8' })
}

const probe = `
  const app = FASTIFY({ ...m.serverOptions })
  app.register(m.default ?? m.httpConventions)
  // Routes are declared once the suite is loaded (after()), as with every onRoute-based plugin.
  app.after(() => app.post('/', async () => { throw m.unprocessable({ field: 'slug', message: 'taken' }) }))
  app.inject({ method: 'POST', url: '/', payload: {} }).then((res) => console.log(res.statusCode, res.body))
`

test('CommonJS: require("fastify-http-conventions") through the exports map', async (t) => {
  const out = run(['-e', `const m = require('${pkg.name}');` + probe.replace('FASTIFY', 'require("fastify")')])
  t.equal(out.trim(), '422 {"errors":[{"field":"slug","message":"taken"}]}')
})

test('ESM: import from "fastify-http-conventions", default and named exports', async (t) => {
  const out = run(['--input-type=module', '-e', `import * as m from '${pkg.name}'; import Fastify from 'fastify';` + probe.replace('FASTIFY', 'Fastify')])
  t.equal(out.trim(), '422 {"errors":[{"field":"slug","message":"taken"}]}')
  const same = run(['--input-type=module', '-e', `import def, { httpConventions } from '${pkg.name}'; console.log(def === httpConventions)`])
  t.equal(same.trim(), 'true')
})

test('package.json: exports, files, engines, peer dependency', async (t) => {
  t.equal(pkg.name, 'fastify-http-conventions')
  t.match(pkg.exports['.'], { types: './dist/plugins/index.d.ts', import: './dist/esm/index.mjs', require: './dist/plugins/index.js' })
  t.equal(pkg.engines.node, '>=20')
  t.equal(pkg.peerDependencies.fastify, '^5.0.0')
  t.ok(pkg.files.includes('dist/plugins'))
  const dts = readFileSync(join(root, 'dist', 'plugins', 'index.d.ts'), 'utf8')
  t.match(dts, /export declare const httpConventions/, 'types are generated from the sources')
})
