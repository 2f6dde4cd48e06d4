/**
 * docs/plugins.md: a plugin's options are checked at registration against its JSON Schema,
 * and a route's config against the plugin's route config schema, when the route is added.
 * Generated from the schemas' shapes with fast-check: an option or a config key given a value
 * of a type its schema does not allow, an unknown key, or an integer out of its range fails
 * with FST_HTTP_CONVENTIONS_INVALID_OPTION naming the key; a valid one boots; and the
 * umbrella accepts exactly what each plugin accepts for its section, with the same message.
 *
 * A fixed seed keeps CI repeatable; `FUZZ_RUNS` (npm run fuzz) asks for a longer search.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyPluginCallback } from 'fastify'
import { boot, buildApp } from '../helpers/app'
import {
  httpConventions, httpConventionsAuth, httpConventionsConditional, httpConventionsContentLength, httpConventionsContentType,
  httpConventionsDeltaEncoding, httpConventionsMethods, httpConventionsPatch, httpConventionsPrefer, httpConventionsRedirect,
  httpConventionsResourcePolicy, httpConventionsValidation, serverOptions
} from '../../plugins/index'
import {
  authOptionsSchema, conditionalOptionsSchema, contentLengthOptionsSchema, contentTypeOptionsSchema, deltaEncodingOptionsSchema,
  methodsOptionsSchema, patchOptionsSchema, preferOptionsSchema, redirectOptionsSchema, resourcePolicyOptionsSchema, validationOptionsSchema,
  authRouteConfigSchema, conditionalRouteConfigSchema, contentLengthRouteConfigSchema, contentTypeRouteConfigSchema,
  deltaEncodingRouteConfigSchema, methodsRouteConfigSchema, patchRouteConfigSchema, preferRouteConfigSchema,
  redirectRouteConfigSchema, resourcePolicyRouteConfigSchema, validationRouteConfigSchema
} from '../../plugins/entries/options'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 15
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261128
const CODE = 'FST_HTTP_CONVENTIONS_INVALID_OPTION'
const SECRET = 'property-secret-property-secret-property!'

type Node = Record<string, unknown>
type Opts = Record<string, unknown>

interface Section {
  /** The umbrella's key. */
  key: string
  plugin: FastifyPluginCallback<any>
  schema: Node
  /** Options that register (each key of the schema given at least once). */
  valid: Opts[]
}

const SECTIONS: Section[] = [
  { key: 'contentLength', plugin: httpConventionsContentLength, schema: contentLengthOptionsSchema, valid: [{}, { bodyLimit: 10, methods: ['POST'], requireContentLength: false, limitStatus: 413, mismatchStatus: 400 }] },
  { key: 'contentType', plugin: httpConventionsContentType, schema: contentTypeOptionsSchema, valid: [{}, { xml: false, maxDepth: 10, xmlMaxElements: 100 }] },
  { key: 'validation', plugin: httpConventionsValidation, schema: validationOptionsSchema, valid: [{}, { checkServerOptions: 'warn' }] },
  { key: 'conditional', plugin: httpConventionsConditional, schema: conditionalOptionsSchema, valid: [{}, { notModifiedStatus: 304, requirePrecondition: false, requirePreconditionMethods: ['PUT'], etag: { algorithm: 'sha256', weak: true, maxStreamBytes: 4096 }, cacheControl: false }] },
  { key: 'patch', plugin: httpConventionsPatch, schema: patchOptionsSchema, valid: [{}, { maxRetries: 0, maxOperations: 5, maxDepth: 5, maxDocumentGrowth: 3 }] },
  { key: 'deltaEncoding', plugin: httpConventionsDeltaEncoding, schema: deltaEncodingOptionsSchema, valid: [{ offload: false }, { offload: false, store: { get: () => undefined, set: () => undefined }, manipulations: ['gzip'], ttl: 1000, maxInstanceBytes: 100, gzipLevel: 9, maxBaseLookups: 2, maxInsertsPerClient: 5, storeTimeoutMs: 10, vcdiff: { level: 'fast' } }] },
  {
    key: 'auth',
    plugin: httpConventionsAuth,
    schema: authOptionsSchema,
    valid: [
      { basic: { users: { alice: 'wonderland' } } },
      {
        realm: 'api',
        basic: { verify: () => true, scopes: 'a b' },
        bearer: { verify: () => null, now: () => 0 },
        digest: { secret: SECRET, users: { bob: { password: 'p', scopes: ['a'] } }, algorithms: ['SHA-256', 'MD5'], store: { seen: async () => false }, userhash: true, now: () => 0 },
        app: { verify: () => null },
        digestFirst: 'MD5',
        protect: { scopes: ['a'] },
        challengeLines: 'single',
        insufficientScopeStatus: 403,
        storeFailureStatus: 503
      }
    ]
  },
  { key: 'redirect', plugin: httpConventionsRedirect, schema: redirectOptionsSchema, valid: [{}, { rules: [{ from: '/old', to: '/new' }] }] },
  { key: 'resourcePolicy', plugin: httpConventionsResourcePolicy, schema: resourcePolicyOptionsSchema, valid: [{}, { policy: false }, { policy: 'cross-origin' }] },
  { key: 'prefer', plugin: httpConventionsPrefer, schema: preferOptionsSchema, valid: [{}] },
  { key: 'methods', plugin: httpConventionsMethods, schema: methodsOptionsSchema, valid: [{}] }
]

interface RouteCase {
  key: string
  schema: Node
  method: 'GET' | 'PATCH'
  valid: unknown[]
}

const PATCH = { schema: { type: 'object' }, load: () => null, save: () => false }

const ROUTES: RouteCase[] = [
  { key: 'contentLength', schema: contentLengthRouteConfigSchema, method: 'GET', valid: [false, { bodyLimit: 0 }] },
  { key: 'contentType', schema: contentTypeRouteConfigSchema, method: 'GET', valid: [false, { accept: ['application/json'], xml: { root: 'a', itemNames: { tags: 'tag' } } }] },
  { key: 'conditional', schema: conditionalRouteConfigSchema, method: 'GET', valid: [true, false, { validators: () => null, requirePrecondition: true, creates: false }] },
  { key: 'patch', schema: patchRouteConfigSchema, method: 'PATCH', valid: [false, PATCH, { ...PATCH, formats: ['merge-patch'] }] },
  { key: 'deltaEncoding', schema: deltaEncodingRouteConfigSchema, method: 'GET', valid: [true, false, { manipulations: ['gzip'], ttl: 5 }] },
  { key: 'auth', schema: authRouteConfigSchema, method: 'GET', valid: [true, false, { scopes: 'a', schemes: ['basic', 'digest'], algorithms: ['MD5'] }] },
  { key: 'redirect', schema: redirectRouteConfigSchema, method: 'GET', valid: [false] },
  { key: 'resourcePolicy', schema: resourcePolicyRouteConfigSchema, method: 'GET', valid: [false, 'same-site'] },
  { key: 'prefer', schema: preferRouteConfigSchema, method: 'GET', valid: [true, false] },
  { key: 'methods', schema: methodsRouteConfigSchema, method: 'GET', valid: [false] },
  { key: 'validation', schema: validationRouteConfigSchema, method: 'GET', valid: [] }
]

/** Every convention registered, auth with Basic and Digest (MD5 too): any route config can be tried. */
const UMBRELLA = { deltaEncoding: { offload: false as const }, auth: { basic: { users: { a: 'b' } }, digest: { secret: SECRET, users: { a: 'b' }, algorithms: ['SHA-256' as const, 'MD5' as const] } } }

function isNode (v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Values of every JSON type, and a function. */
const SAMPLES: unknown[] = ['x', 'same-origin', 1.5, -7, 0, 3, true, false, null, ['x'], [], { x: 1 }, {}, () => {}]

function jsonType (v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

/**
 * Whether a schema node may accept `v` judging by its type alone (type, enum, const, x-typeof):
 * a value it cannot accept is invalid whatever the other keywords say. Read here from the
 * JSON Schema keywords themselves, not through Ajv.
 */
function mayAccept (node: Node, v: unknown): boolean {
  if (isNode(node.not) && Object.keys(node.not).length === 0) return false
  if (Array.isArray(node.enum)) return node.enum.some((e) => e === v)
  if ('const' in node) return node.const === v
  if (node['x-typeof'] !== undefined) return node['x-typeof'] === 'function' ? typeof v === 'function' : typeof v !== 'function'
  if (node.type === undefined) return jsonType(v) !== 'function'
  const types = Array.isArray(node.type) ? node.type as string[] : [node.type as string]
  const t = jsonType(v)
  if (t === 'function') return false
  if (types.includes(t)) return !(node.not !== undefined && (node.not as Node).const === v)
  return t === 'integer' && types.includes('number')
}

/** A property node's values of the wrong type (none when the node accepts any type). */
function wrongValues (node: Node): unknown[] {
  return SAMPLES.filter((v) => !mayAccept(node, v))
}

/** [key, node, a value it refuses]: wrong types, and integers just out of their range. */
function mutations (schema: Node): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = []
  for (const [key, node] of Object.entries((schema.properties ?? {}) as Record<string, Node>)) {
    if (node.type === undefined && node.enum === undefined && node.const === undefined && node['x-typeof'] === undefined && node.not === undefined) continue
    for (const v of wrongValues(node)) out.push([key, v])
    if (node.type === 'integer') {
      if (typeof node.minimum === 'number') out.push([key, node.minimum - 1])
      if (typeof node.maximum === 'number' && node.maximum < Number.MAX_SAFE_INTEGER) out.push([key, node.maximum + 1])
    }
  }
  return out
}

/** How `register(opts)` ends: 'ok', or the error's code and message. */
async function outcome (register: (app: ReturnType<typeof Fastify>) => void): Promise<string> {
  const app = Fastify(serverOptions)
  try {
    register(app)
    await boot(app.ready())
    return 'ok'
  } catch (err) {
    const e = err as { code?: string, message: string }
    return `${String(e.code)} ${e.message}`
  } finally {
    await app.close()
  }
}

const UNKNOWN_KEY = fc.stringMatching(/^[a-z][a-zA-Z]{0,7}$/)

/** Options for the plugin: valid, or with one mutation. `profile` is the umbrella's own, not its sections'. */
function sectionCase (s: Section, profile = true): fc.Arbitrary<{ opts: Opts, bad: string | null }> {
  const base = fc.constantFrom(...s.valid)
  const wrong = mutations(s.schema).filter(([k]) => profile || k !== 'profile')
  const arbs: Array<fc.Arbitrary<{ opts: Opts, bad: string | null }>> = [
    base.map((opts) => ({ opts, bad: null })),
    fc.tuple(base, UNKNOWN_KEY.filter((k) => !(k in ((s.schema.properties ?? {}) as object)))).map(([opts, k]) => ({ opts: { ...opts, [k]: 1 }, bad: `unknown option "${k}"` }))
  ]
  if (wrong.length > 0) arbs.push(fc.tuple(base, fc.constantFrom(...wrong)).map(([opts, [k, v]]) => ({ opts: { ...opts, [k]: v }, bad: k })))
  // One level down: an option of an object option (etag.weak, offload.threads, bearer.now, digest.store, ...).
  const nested: Array<[Opts, string, string, unknown]> = []
  for (const opts of s.valid) {
    for (const [k, value] of Object.entries(opts)) {
      const node = ((s.schema.properties ?? {}) as Record<string, Node>)[k]
      if (isNode(value) && node.properties !== undefined) for (const [nk, v] of mutations(node)) nested.push([opts, k, nk, v])
    }
  }
  if (nested.length > 0) arbs.push(fc.constantFrom(...nested).map(([opts, k, nk, v]) => ({ opts: { ...opts, [k]: { ...(opts[k] as Opts), [nk]: v } }, bad: k })))
  return fc.oneof(...arbs)
}

test('docs/plugins.md (options checked at registration): an invalid option fails the boot naming it, a valid one boots, whichever plugin', async (t) => {
  for (const s of SECTIONS) {
    await t.resolves(fc.assert(fc.asyncProperty(sectionCase(s), async ({ opts, bad }) => {
      const alone = await outcome((app) => app.register(s.plugin, opts))
      if (bad === null) return alone === 'ok'
      return alone.startsWith(CODE + ' ') && alone.includes(bad)
    }), { seed: SEED, numRuns: RUNS }), `${s.key}: every generated case as the property says`)
  }
})

test('docs/plugins.md (the umbrella): each section accepts exactly what its plugin accepts, refused with the plugin\'s message', async (t) => {
  for (const s of SECTIONS) {
    await t.resolves(fc.assert(fc.asyncProperty(sectionCase(s, false), async ({ opts }) => {
      const alone = await outcome((app) => app.register(s.plugin, opts))
      const umbrella = await outcome((app) => app.register(httpConventions, { [s.key]: opts }))
      return alone === umbrella
    }), { seed: SEED, numRuns: RUNS }), `${s.key}: the umbrella's section gives the plugin's outcome`)
  }
})

test('docs/plugins.md (route config): an invalid config.<key> throws when the route is added, naming the route and the key; a valid one is added', async (t) => {
  const app = await buildApp(UMBRELLA)
  t.teardown(() => app.close())
  let n = 0
  for (const r of ROUTES) {
    const wrong = mutations({ properties: { [r.key]: r.schema } }).map(([, v]) => v)
    const nested = r.schema.properties === undefined ? [] : mutations(r.schema)
    const cases = fc.oneof(
      ...(r.valid.length > 0 ? [fc.constantFrom(...r.valid).map((value) => ({ value, bad: null as string | null }))] : []),
      fc.constantFrom(...wrong).map((value) => ({ value, bad: `config.${r.key}` })),
      ...(nested.length > 0 ? [fc.constantFrom(...nested).map(([k, v]) => ({ value: { ...(r.key === 'patch' ? PATCH : {}), [k]: v }, bad: `config.${r.key}.${k}` }))] : []),
      ...(r.schema.properties !== undefined ? [UNKNOWN_KEY.filter((k) => !(k in (r.schema.properties as object))).map((k) => ({ value: { ...(r.key === 'patch' ? PATCH : {}), [k]: 1 }, bad: `unknown config.${r.key} option "${k}"` }))] : [])
    )
    t.doesNotThrow(() => fc.assert(fc.property(cases, ({ value, bad }) => {
      const url = `/r${n++}`
      try {
        app.route({ method: r.method, url, config: { [r.key]: value } as never, handler: async () => 'x' })
      } catch (err) {
        const e = err as { code?: string, message: string }
        return bad !== null && e.code === CODE && e.message.startsWith(`route ${r.method} ${url}: `) && e.message.includes(bad)
      }
      return bad === null
    }), { seed: SEED, numRuns: RUNS }), `config.${r.key}: every generated config as the property says`)
  }
  await t.resolves(boot(app.ready()), 'the valid routes boot')
})
