/**
 * The package is usable from CommonJS `require`, ESM `import` and TypeScript: each is
 * proven against the built output through the package's own `exports` map (a package can
 * import itself by name), for the root and for every subpath.
 */
import { test } from 'tap'
import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as rootSource from '../../plugins/index'
import * as vcdiffSource from '../../plugins/entries/vcdiff'
import * as clientSource from '../../plugins/entries/client'
import * as storesSource from '../../plugins/entries/stores'
import * as openapiSource from '../../plugins/entries/openapi'
import * as headersSource from '../../plugins/entries/headers'
import * as jsonPatchSource from '../../plugins/entries/json-patch'
import * as xmlSource from '../../plugins/entries/xml'
import * as authSource from '../../plugins/entries/auth'
import * as loggingSource from '../../plugins/entries/logging'
import * as optionsSource from '../../plugins/entries/options'
import { unprocessable } from '../../lib/errors'
import { encode } from '../../packages/vcdiff/src/index'
import { DeltaClient } from '../../packages/client/src/delta-client'
import { createConventionsClient } from '../../packages/client/src/client'
import { MemoryInstanceStore } from '../../lib/io/stores/instance-memory'
import { redactUrl } from '../../packages/grammar/src/redact'
import { ROOT as REPO, childEnv } from '../helpers/paths'

const root = REPO
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function run (args: string[], input?: string): string {
  return execFileSync(process.execPath, args, { cwd: root, input, encoding: 'utf8', env: childEnv() })
}

const cjs = (code: string): string => run(['-e', code])
const esm = (code: string): string => run(['--input-type=module', '-e', code])

/**
 * What the root exports at run time: the plugins, the error catalogue an app throws from and
 * its handler's helper (sendConventionError), the envelope schema's id, serverOptions, and
 * the public way to add a convention (defineConvention, declareConvention and their helpers).
 */
const ROOT = [
  'httpConventions', 'httpConventionsErrors', 'httpConventionsContentLength', 'httpConventionsContentType', 'httpConventionsValidation',
  'httpConventionsPatch', 'httpConventionsConditional', 'httpConventionsDeltaEncoding', 'httpConventionsAuth', 'httpConventionsRedirect',
  'httpConventionsResourcePolicy', 'httpConventionsPrefer', 'httpConventionsMethods',
  'errorCodes', 'isConventionError', 'unprocessable', 'preconditionFailed', 'preconditionRequired', 'unsupportedMediaType',
  'malformedBody', 'unauthorized', 'forbidden', 'serviceUnavailable', 'methodNotAllowed', 'sendConventionError', 'ERRORS_SCHEMA_ID',
  'serverOptions', 'defineConvention', 'declareConvention', 'headerClaims', 'stepOrder', 'capability', 'SENT'
]

/** What each subpath exports at run time. */
const SUBPATHS: Record<string, string[]> = {
  vcdiff: ['encode', 'decode', 'prepareSource', 'tryEncode', 'createEncoderPool', 'VcdiffError', 'DEFAULT_WINDOW_SIZE', 'DEFAULT_MAX_TARGET_SIZE'],
  client: [
    'DeltaClient', 'DeltaClientError', 'BODY_TOO_LARGE', 'authInterceptor', 'framingInterceptor', 'redirectInterceptor', 'deltaInterceptor',
    'ConventionsClient', 'createConventionsClient', 'ConventionsClientError', 'clientErrorCodes', 'isConventionsClientError'
  ],
  stores: ['MemoryInstanceStore', 'RedisInstanceStore', 'MemoryNonceStore', 'RedisNonceStore'],
  openapi: ['conventionsOpenApiTransform', 'withConventionResponses', 'conventionResponses', 'recordResponse', 'recordSecurity', 'conventionSecurity', 'conventionSecuritySchemes', 'conventionsOpenApiTransformObject', 'conventionSuccessHeaders', 'recordSuccessHeaders', 'conventionSecurityDefinitions', 'conventionAnswerHeaders', 'recordAnswerHeader'],
  headers: ['negotiateMediaType', 'parseMediaType'],
  'json-patch': ['applyJsonPatch', 'applyMergePatch'],
  xml: ['jsonToXml', 'xmlBodyToJson'],
  auth: ['createBearerKeyMatcher'],
  logging: ['redactUrl', 'createRedactingSerializers', 'SECRET_QUERY_NAMES'],
  options: ['httpConventionsOptionsSchema', ...['contentLength', 'contentType', 'validation', 'patch', 'conditional', 'deltaEncoding', 'auth', 'redirect', 'resourcePolicy', 'prefer', 'methods']
    .flatMap((name) => [`${name}OptionsSchema`, `${name}RouteConfigSchema`])]
}

const probe = `
  const app = FASTIFY({ ...m.serverOptions })
  app.register(m.default ?? m.httpConventions)
  // Routes are declared once the suite is loaded (after()), as with every onRoute-based plugin.
  app.after(() => app.post('/', async () => { throw m.unprocessable({ field: 'slug', message: 'taken' }) }))
  app.inject({ method: 'POST', url: '/', payload: {} }).then((res) => console.log(res.statusCode, res.body))
`

test('CommonJS: require("fastify-http-conventions") through the exports map', async (t) => {
  const out = cjs(`const m = require('${pkg.name}');` + probe.replace('FASTIFY', 'require("fastify")'))
  t.equal(out.trim(), '422 {"errors":[{"field":"slug","message":"taken"}]}')
})

test('CommonJS: the module is the plugin itself, with .default and every export as a property', async (t) => {
  const out = cjs(`
    const m = require('${pkg.name}')
    console.log(JSON.stringify({
      fn: typeof m, default: m.default === m, named: m.httpConventions === m,
      keys: Object.keys(m).filter((k) => k !== 'default' && k !== 'fastifyHttpConventions').sort()
    }))
  `)
  const r = JSON.parse(out)
  t.equal(r.fn, 'function')
  t.ok(r.default, 'require(...).default is the plugin')
  t.ok(r.named, 'require(...).httpConventions is the plugin')
  t.same(r.keys, [...ROOT].sort(), 'the root exports the plugins, the error catalogue and serverOptions, nothing else')
})

test('ESM: import from "fastify-http-conventions", default and named exports', async (t) => {
  const out = esm(`import * as m from '${pkg.name}'; import Fastify from 'fastify';` + probe.replace('FASTIFY', 'Fastify'))
  t.equal(out.trim(), '422 {"errors":[{"field":"slug","message":"taken"}]}')
  const same = esm(`import def, { httpConventions } from '${pkg.name}'; import * as ns from '${pkg.name}'; console.log(def === httpConventions, JSON.stringify(Object.keys(ns).filter((k) => k !== 'default').sort()))`)
  const [equal, keys] = same.trim().split(' ')
  t.equal(equal, 'true', 'the default export is httpConventions')
  t.same(JSON.parse(keys), [...ROOT].sort())
  const shared = esm(`import { createRequire } from 'node:module'; import { unprocessable } from '${pkg.name}'; console.log(createRequire(import.meta.url)('${pkg.name}').unprocessable === unprocessable)`)
  t.equal(shared.trim(), 'true', 'import and require share one instance')
})

test('subpaths: each is the same module from require and import, with its exports', async (t) => {
  // One child process for every require(), one for every import: each prints what it found per subpath.
  const ids = Object.keys(SUBPATHS).map((sub) => `${pkg.name}/${sub}`)
  const fromRequire = JSON.parse(cjs(`console.log(JSON.stringify(${JSON.stringify(ids)}.map((id) => Object.keys(require(id)).sort())))`)) as string[][]
  const fromImport = JSON.parse(esm(`import { createRequire } from 'node:module'
    const require = createRequire(import.meta.url)
    const names = ${JSON.stringify(Object.values(SUBPATHS))}
    const found = []
    for (const [i, id] of ${JSON.stringify(ids)}.entries()) {
      const ns = await import(id)
      const r = require(id)
      found.push(names[i].every((n) => ns[n] !== undefined && ns[n] === r[n]))
    }
    console.log(JSON.stringify(found))`)) as boolean[]
  for (const [i, [sub, names]] of Object.entries(SUBPATHS).entries()) {
    const id = `${pkg.name}/${sub}`
    t.same(fromRequire[i], [...names].sort(), `require('${id}')`)
    t.equal(fromImport[i], true, `import from '${id}': named exports, shared with require`)
    for (const name of names) t.notOk(ROOT.includes(name), `${name} is not at the root`)
  }
  const works = cjs(`
    const { encode, decode } = require('${pkg.name}/vcdiff')
    const { negotiateMediaType } = require('${pkg.name}/headers')
    const { redactUrl } = require('${pkg.name}/logging')
    const { MemoryInstanceStore } = require('${pkg.name}/stores')
    const a = Buffer.from('hello world'), b = Buffer.from('hello there world')
    console.log(Buffer.from(decode(a, encode(a, b))).toString(), negotiateMediaType('application/xml', ['application/json', 'application/xml']),
      redactUrl('/x?token=abc'), typeof new MemoryInstanceStore().get)
  `)
  t.equal(works.trim(), 'hello there world application/xml /x?token=[REDACTED] function')
})

/**
 * TypeScript consumers, written to a scratch directory inside the package (so that they
 * import it by name) at test time: .mts/.cts/.ts files in test/ would be run as tests.
 */
const CONSUMER: Record<string, string> = {
  'esm.mts': `// An ESM consumer (module: nodenext): default and named imports, and every subpath.
import Fastify from 'fastify'
import httpConventions, { httpConventions as named, serverOptions, unprocessable, type HttpConventionsOptions } from 'fastify-http-conventions'
import { encode, decode } from 'fastify-http-conventions/vcdiff'
import { DeltaClient, createConventionsClient, type ConventionsClientError } from 'fastify-http-conventions/client'
import { MemoryInstanceStore, type InstanceStore } from 'fastify-http-conventions/stores'
import { conventionsOpenApiTransform } from 'fastify-http-conventions/openapi'
import { negotiateMediaType } from 'fastify-http-conventions/headers'
import { redactUrl } from 'fastify-http-conventions/logging'
import { httpConventionsOptionsSchema } from 'fastify-http-conventions/options'

const options: HttpConventionsOptions = { profile: 'spec', deltaEncoding: { store: new MemoryInstanceStore() satisfies InstanceStore } }
const app = Fastify({ ...serverOptions, http2: true })
app.register(httpConventions, options)
app.register(named, options)
const delta: Uint8Array = encode(Buffer.from('a'), Buffer.from('ab'))
const back: Uint8Array = decode(Buffer.from('a'), delta)
const type: string | null = negotiateMediaType('application/json', ['application/json'])
const client = createConventionsClient({ credentials: [{ origin: 'http://127.0.0.1:3000', username: 'demo', password: 'demo-password' }] })
export const read: Promise<string | undefined> = client.get<{ title: string }>('http://127.0.0.1:3000/articles/1').then((r) => r.body.title, (err: ConventionsClientError) => err.code)
export const used = [unprocessable, DeltaClient, conventionsOpenApiTransform, back, type, redactUrl('/?token=x'), httpConventionsOptionsSchema.properties.patch]
`,
  'cjs.cts': `// A CommonJS consumer (module: nodenext): \`import x = require()\` and ES imports compiled to require.
import Fastify = require('fastify')
import conventions = require('fastify-http-conventions')
import httpConventions, { serverOptions } from 'fastify-http-conventions'
import { encode } from 'fastify-http-conventions/vcdiff'
import { DeltaClient, authInterceptor } from 'fastify-http-conventions/client'
import { MemoryNonceStore } from 'fastify-http-conventions/stores'
import { withConventionResponses } from 'fastify-http-conventions/openapi'
import { applyJsonPatch } from 'fastify-http-conventions/json-patch'

const app = Fastify.fastify({ ...conventions.serverOptions, loggerInstance: Fastify.fastify().log })
app.register(conventions.default, { auth: { basic: { users: { a: 'b' } }, digest: { secret: 'x'.repeat(32), users: { a: 'b' }, store: new MemoryNonceStore() } } })
app.register(conventions.httpConventions)
app.register(httpConventions)
export const used = [serverOptions, encode, DeltaClient, withConventionResponses, applyJsonPatch, authInterceptor({ credentials: [] })]
`,
  'bundler.ts': `// A consumer resolved as bundlers do (moduleResolution: bundler).
import Fastify from 'fastify'
import httpConventions, { httpConventionsAuth, serverOptions, errorCodes } from 'fastify-http-conventions'
import { createEncoderPool } from 'fastify-http-conventions/vcdiff'
import { DeltaClientError, framingInterceptor, redirectInterceptor, deltaInterceptor } from 'fastify-http-conventions/client'
import { Agent } from 'undici'
import { RedisInstanceStore } from 'fastify-http-conventions/stores'
import { conventionResponses } from 'fastify-http-conventions/openapi'
import { jsonToXml } from 'fastify-http-conventions/xml'

const app = Fastify({ ...serverOptions, logger: true })
app.register(httpConventions)
app.register(httpConventionsAuth, { bearer: { verify: () => null } })
export const agent = new Agent().compose(deltaInterceptor(), redirectInterceptor(), framingInterceptor())
export const used = [errorCodes.LENGTH_REQUIRED, createEncoderPool, DeltaClientError, RedisInstanceStore, conventionResponses, jsonToXml('x', 'a')]
`,
}

test('sources: each entry module exports exactly the listed values, each the object of the module it comes from', async (t) => {
  const sources: Record<string, Record<string, unknown>> = {
    root: rootSource,
    vcdiff: vcdiffSource,
    client: clientSource,
    stores: storesSource,
    openapi: openapiSource,
    headers: headersSource,
    'json-patch': jsonPatchSource,
    xml: xmlSource,
    auth: authSource,
    logging: loggingSource,
    options: optionsSource
  }
  const origins: Record<string, unknown> = {
    'root.unprocessable': unprocessable,
    'vcdiff.encode': encode,
    'client.DeltaClient': DeltaClient,
    'client.createConventionsClient': createConventionsClient,
    'stores.MemoryInstanceStore': MemoryInstanceStore,
    'logging.redactUrl': redactUrl
  }
  for (const [name, names] of Object.entries({ root: ROOT, ...SUBPATHS })) {
    const m = sources[name]
    const listed = Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule')
    t.same(listed.sort(), [...names].sort(), `${name}: the listed exports and no other`)
    for (const n of names) t.not(m[n], undefined, `${name}.${n} is defined`)
  }
  for (const [key, value] of Object.entries(origins)) {
    const [name, n] = key.split('.')
    t.equal(sources[name][n], value, `${key} is the object of its own module`)
  }
})

test('TypeScript: the root and every subpath type-check under nodenext (ESM and CJS) and bundler resolution', async (t) => {
  const scratch = join(root, '.tap')
  mkdirSync(scratch, { recursive: true })
  const dir = mkdtempSync(join(scratch, 'consumer-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(CONSUMER)) writeFileSync(join(dir, name), text)
  const compilerOptions = { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')] }
  const projects = {
    'tsconfig.nodenext.json': { compilerOptions: { ...compilerOptions, module: 'nodenext', moduleResolution: 'nodenext' }, files: ['esm.mts', 'cjs.cts'] },
    'tsconfig.bundler.json': { compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler' }, files: ['bundler.ts'] }
  }
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const exec = promisify(execFile)
  for (const [config, project] of Object.entries(projects)) {
    writeFileSync(join(dir, config), JSON.stringify(project))
    const res = await exec(process.execPath, [tsc, '-p', join(dir, config)], { cwd: root, encoding: 'utf8', env: childEnv() })
      .then(() => ({ code: 0, out: '' }), (err) => ({ code: err.code, out: String(err.stdout) + String(err.stderr) }))
    t.equal(res.code, 0, `${config}: ${res.out}`)
  }
})

test('package.json: exports, files, engines, peer dependency', async (t) => {
  t.equal(pkg.name, 'fastify-http-conventions')
  t.same(pkg.exports['.'], {
    import: { types: './dist/esm/index.d.mts', default: './dist/esm/index.mjs' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' }
  })
  for (const sub of Object.keys(SUBPATHS)) {
    t.same(pkg.exports[`./${sub}`], { types: `./dist/plugins/entries/${sub}.d.ts`, default: `./dist/plugins/entries/${sub}.js` })
    // Resolvers that ignore `exports` (TypeScript's node10) find the types through typesVersions.
    t.same(pkg.typesVersions['*'][sub], [`./dist/plugins/entries/${sub}.d.ts`])
  }
  t.equal(pkg.main, './dist/cjs/index.js')
  t.equal(pkg.types, './dist/cjs/index.d.ts')
  t.equal(pkg.engines.node, '>=22.13', 'the supported lines, 22, 24 and 26; the reference service\'s store needs node:sqlite (22.13)')
  t.equal(pkg.peerDependencies.fastify, '^5.10.0', 'the first Fastify that exports LogController (serverOptions.logController)')
  t.equal(pkg.peerDependencies.undici, '^7.0.0', 'the client\'s interceptors take undici 7 handlers')
  t.same(pkg.peerDependenciesMeta, { undici: { optional: true } }, 'undici only for the client: a service never needs it')
  for (const dir of ['dist/cjs', 'dist/esm', 'dist/plugins', 'dist/lib']) t.ok(pkg.files.includes(dir), dir)
  t.match(pkg.scripts['test:all'], /\btest:package\b/, 'npm test checks the package with attw and publint')
  t.match(pkg.scripts.test, /node-line\.js npm run test:all$/, 'npm test runs on a supported Node line')
  const dts = readFileSync(join(root, 'dist', 'plugins', 'index.d.ts'), 'utf8')
  t.match(dts, /export declare const httpConventions/, 'types are generated from the sources')
  const dmts = readFileSync(join(root, 'dist', 'esm', 'index.d.mts'), 'utf8')
  t.match(dmts, /export default httpConventions/, 'ESM has its own types, whose default is the plugin')
})
