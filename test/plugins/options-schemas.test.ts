/**
 * Every plugin's registration options are checked against one JSON Schema (plugins/services/options.ts):
 * the schemas compile under Ajv's strict mode, and each plugin refuses an unknown option and
 * an option of the wrong type at registration with FST_HTTP_CONVENTIONS_INVALID_OPTION and a
 * message naming the option.
 */
import { test } from 'tap'
import Fastify, { type FastifyPluginCallback } from 'fastify'
import Ajv from 'ajv'
import { boot, buildApp } from '../helpers/app'
import { AJV_OPTIONS, MESSAGE, optionsChecker, optionsMessage, PROFILE_SCHEMA } from '../../plugins/services/options'
import { httpConventions } from '../../plugins/index'
import {
  authRouteConfigSchema, conditionalRouteConfigSchema, contentLengthRouteConfigSchema, contentTypeRouteConfigSchema, deltaEncodingRouteConfigSchema,
  httpConventionsOptionsSchema, methodsRouteConfigSchema, patchRouteConfigSchema, preferRouteConfigSchema, redirectRouteConfigSchema,
  resourcePolicyRouteConfigSchema, validationRouteConfigSchema
} from '../../plugins/entries/options'
import { authOptionsSchema, httpConventionsAuth } from '../../plugins/conventions/auth/index'
import { conditionalOptionsSchema, httpConventionsConditional } from '../../plugins/conventions/conditional'
import { contentLengthOptionsSchema, httpConventionsContentLength } from '../../plugins/conventions/content-length'
import { contentTypeOptionsSchema, httpConventionsContentType } from '../../plugins/conventions/content-type'
import { deltaEncodingOptionsSchema, httpConventionsDeltaEncoding } from '../../plugins/conventions/delta-encoding'
import { httpConventionsPatch, patchOptionsSchema } from '../../plugins/conventions/patch'
import { httpConventionsPrefer, preferOptionsSchema } from '../../plugins/conventions/prefer'
import { httpConventionsRedirect, redirectOptionsSchema } from '../../plugins/conventions/redirect'
import { httpConventionsResourcePolicy, resourcePolicyOptionsSchema } from '../../plugins/conventions/resource-policy'
import { httpConventionsValidation, validationOptionsSchema } from '../../plugins/conventions/validation'

const CODE = 'FST_HTTP_CONVENTIONS_INVALID_OPTION'

const ROUTE_SCHEMAS: Record<string, object> = {
  auth: authRouteConfigSchema,
  conditional: conditionalRouteConfigSchema,
  contentLength: contentLengthRouteConfigSchema,
  contentType: contentTypeRouteConfigSchema,
  deltaEncoding: deltaEncodingRouteConfigSchema,
  methods: methodsRouteConfigSchema,
  patch: patchRouteConfigSchema,
  prefer: preferRouteConfigSchema,
  redirect: redirectRouteConfigSchema,
  resourcePolicy: resourcePolicyRouteConfigSchema,
  validation: validationRouteConfigSchema
}
const BASIC = { basic: { users: { alice: 'wonderland' } } }

interface Case {
  plugin: FastifyPluginCallback<any>
  schema: object
  /** Options that register: the bad ones below are added to them. */
  base: Record<string, unknown>
  /** An option of the wrong type, and the message it gets. */
  wrongType: [Record<string, unknown>, string] | null
}

const PLUGINS: Record<string, Case> = {
  auth: { plugin: httpConventionsAuth, schema: authOptionsSchema, base: BASIC, wrongType: [{ realm: 5 }, 'realm must be a string'] },
  conditional: { plugin: httpConventionsConditional, schema: conditionalOptionsSchema, base: {}, wrongType: [{ requirePrecondition: 'yes' }, 'requirePrecondition must be a boolean'] },
  'content-length': { plugin: httpConventionsContentLength, schema: contentLengthOptionsSchema, base: {}, wrongType: [{ bodyLimit: '1mb' }, 'bodyLimit must be a non-negative integer'] },
  'content-type': { plugin: httpConventionsContentType, schema: contentTypeOptionsSchema, base: {}, wrongType: [{ maxDepth: '64' }, 'maxDepth must be an integer from 1 to 10000'] },
  'delta-encoding': { plugin: httpConventionsDeltaEncoding, schema: deltaEncodingOptionsSchema, base: {}, wrongType: [{ gzipLevel: 'best' }, 'gzipLevel must be an integer from 1 to 9'] },
  patch: { plugin: httpConventionsPatch, schema: patchOptionsSchema, base: {}, wrongType: [{ maxRetries: '5' }, 'maxRetries must be a non-negative integer'] },
  // No options yet: every key is unknown.
  prefer: { plugin: httpConventionsPrefer, schema: preferOptionsSchema, base: {}, wrongType: null },
  redirect: { plugin: httpConventionsRedirect, schema: redirectOptionsSchema, base: {}, wrongType: [{ rules: { from: '/a', to: '/b' } }, 'rules must be an array of { from, to, methods? }'] },
  'resource-policy': { plugin: httpConventionsResourcePolicy, schema: resourcePolicyOptionsSchema, base: {}, wrongType: [{ policy: true }, "policy must be 'same-origin', 'same-site', 'cross-origin' or false, got true"] },
  validation: { plugin: httpConventionsValidation, schema: validationOptionsSchema, base: {}, wrongType: [{ checkServerOptions: false }, "checkServerOptions must be 'throw', 'warn' or 'ignore'"] }
}

/** The message of the error `opts` fail with (the part after `where: `). */
async function refusal (plugin: FastifyPluginCallback<any>, opts: object): Promise<{ code?: string, message: string }> {
  const app = Fastify()
  app.register(plugin, opts)
  try {
    await boot(app.ready())
  } catch (err) {
    return err as { code?: string, message: string }
  } finally {
    await app.close()
  }
  return { message: 'registered' }
}

test('every schema compiles under Ajv strict mode, on an instance of its own', async (t) => {
  const schemas: Array<[string, object]> = [
    ...Object.entries(PLUGINS).map(([name, { schema }]): [string, object] => [name, schema]),
    ...Object.entries(ROUTE_SCHEMAS),
    ['umbrella', httpConventionsOptionsSchema]
  ]
  for (const [name, schema] of schemas) {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, keywords: [...AJV_OPTIONS.keywords] })
    t.doesNotThrow(() => ajv.compile(schema), name)
  }
  t.equal(AJV_OPTIONS.strict, true)
  t.equal(AJV_OPTIONS.allErrors, false)
  t.equal(AJV_OPTIONS.coerceTypes, false)
  t.equal(AJV_OPTIONS.useDefaults, false)
  // strictRequired, strictTypes: a required property declared nowhere or a keyword of another type fails to compile.
  t.throws(() => new Ajv({ ...AJV_OPTIONS, keywords: [MESSAGE] }).compile({ type: 'object', required: ['a'] }), /strict mode/)
  t.throws(() => new Ajv({ ...AJV_OPTIONS, keywords: [MESSAGE] }).compile({ type: 'string', minimum: 1 }), /strict mode/)
})

test('every plugin refuses an unknown option and an option of the wrong type, naming it', async (t) => {
  for (const [name, { plugin, base, wrongType }] of Object.entries(PLUGINS)) {
    const unknown = await refusal(plugin, { ...base, bogus: 1 })
    t.equal(unknown.code, CODE, `${name}: unknown option`)
    t.match(unknown.message, /: unknown option "bogus"$/, name)
    if (wrongType === null) continue
    const [bad, message] = wrongType
    const wrong = await refusal(plugin, { ...base, ...bad })
    t.equal(wrong.code, CODE, `${name}: wrong type`)
    t.equal(wrong.message.slice(wrong.message.indexOf(': ') + 2), message, name)
  }
})

test('nested objects name their options with a dot, a missing property is its own problem', async (t) => {
  t.match((await refusal(httpConventionsConditional, { etag: { weak: 'yes' } })).message, /: etag\.weak must be a boolean$/)
  t.match((await refusal(httpConventionsConditional, { etag: { algo: 'sha1' } })).message, /: unknown etag option "algo"$/)
  for (const bad of [-1, 1.5, '1mb', 2 ** 30 + 1]) {
    t.match((await refusal(httpConventionsConditional, { etag: { maxStreamBytes: bad } })).message, /: etag\.maxStreamBytes must be a whole number of bytes from 0 to 1073741824$/, String(bad))
  }
  t.match((await refusal(httpConventionsDeltaEncoding, { offload: { threads: 65 } })).message, /: offload\.threads must be an integer from 1 to 64$/)
  t.match((await refusal(httpConventionsDeltaEncoding, { offload: true })).message, /: offload must be false or \{/)
  t.match((await refusal(httpConventionsAuth, { digest: { users: {} } })).message, /: digest\.secret is required: /)
  t.match((await refusal(httpConventionsAuth, { bearer: {} })).message, /: bearer must be \{ verify\(token\)/)
  t.match((await refusal(httpConventionsAuth, { basic: {} })).message, /: basic needs exactly one of users and verify$/)
  t.match((await refusal(httpConventionsAuth, {})).message, /: enable at least one of basic, bearer and digest$/)
  t.match((await refusal(httpConventionsContentLength, { profile: 'RFC9110' })).message, /: profile must be 'spec' or 'rfc9110', got "RFC9110"$/)
})

test('the user\'s options object is left as it was: no default filled in, nothing coerced or removed', async (t) => {
  const opts = { maxRetries: 2 }
  const app = Fastify()
  app.register(httpConventionsPatch, opts)
  await boot(app.ready())
  t.same(opts, { maxRetries: 2 })
  await app.close()
  t.match((await refusal(httpConventionsPatch, { maxRetries: '2' })).message, /maxRetries must be a non-negative integer/, 'no coercion')
})

test('optionsChecker: Ajv\'s own message where a schema gives none; option names as JSON Pointer segments', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      'a/b~c': { type: 'object', properties: { n: { type: 'integer' } } },
      profile: PROFILE_SCHEMA,
      levels: { type: 'array', items: { type: 'integer', [MESSAGE]: { minimum: 'are at least 1' }, minimum: 1 } }
    }
  }
  const check = optionsChecker('where', schema)
  t.throws(() => check({ 'a/b~c': { n: 'x' } }), { code: CODE, message: 'where: a/b~c.n must be integer' })
  t.throws(() => check({ levels: ['x'] }), { code: CODE, message: 'where: levels.0 must be integer' }, 'a message by keyword is for that keyword only')
  t.throws(() => check({ profile: 'x' }), { code: CODE, message: 'where: profile must be \'spec\' or \'rfc9110\', got "x"' })
  t.doesNotThrow(() => check({ levels: [1, 2] }))
  t.equal(optionsMessage(schema, { keyword: 'type', schemaPath: '#/type', instancePath: '', params: {}, message: 'must be object' }, 5), 'must be object')
})

test('the umbrella checks its own options with its schema: one message style, named fastify-http-conventions', async (t) => {
  t.equal((await refusal(httpConventions, { bogus: 1 })).message, 'fastify-http-conventions: unknown option "bogus"')
  t.equal((await refusal(httpConventions, { errorHandler: 'x' })).message, 'fastify-http-conventions: errorHandler must be a function')
  t.equal((await refusal(httpConventions, { errorFormat: 'xml' })).message, "fastify-http-conventions: errorFormat must be 'envelope' or 'problem'")
  t.equal((await refusal(httpConventions, { profile: 'x' })).message, 'fastify-http-conventions: profile must be \'spec\' or \'rfc9110\', got "x"')
  t.equal((await refusal(httpConventions, { patch: true })).message, 'fastify-http-conventions: patch must be an options object or false')
  t.equal((await refusal(httpConventions, { patch: null })).message, 'fastify-http-conventions: patch must be an options object or false')
  // A problem inside a section reads as the plugin alone says it.
  t.equal((await refusal(httpConventions, { patch: { maxRetries: -1 } })).message, 'fastify-http-conventions-patch: maxRetries must be a non-negative integer')
  t.equal((await refusal(httpConventions, { auth: {} })).message, 'fastify-http-conventions-auth: enable at least one of basic, bearer and digest')
  // profile is the umbrella's: a section does not take one.
  t.equal((await refusal(httpConventions, { patch: { profile: 'spec' } })).message, 'fastify-http-conventions-patch: unknown option "profile"')
})

test('functions are checked with the options (x-typeof): each names the option and what it must be', async (t) => {
  const cases: Array<[FastifyPluginCallback<any>, object, string]> = [
    [httpConventionsAuth, { basic: { verify: 'x' } }, 'basic.verify must be a function'],
    [httpConventionsAuth, { bearer: { verify: 'x' } }, 'bearer must be { verify(token) => { subject, scopes, expiresAt } | null }'],
    [httpConventionsAuth, { bearer: { verify: () => null, now: 5 } }, 'bearer.now must be a function'],
    [httpConventionsAuth, { ...BASIC, app: { verify: 'x' } }, 'app must be { verify(request) }'],
    [httpConventionsAuth, { digest: { secret: 's'.repeat(32), lookup: 'x' } }, 'digest.lookup must be a function'],
    [httpConventionsAuth, { digest: { secret: 's'.repeat(32), users: {}, store: {} } }, 'digest.store must have a seen(nonce, nc, ttlMs) method'],
    [httpConventionsAuth, { digest: { secret: 's'.repeat(32), users: {}, store: { seen: () => false, generation: 1 } } }, 'digest.store.generation must be a method (the store generation new nonces carry)'],
    [httpConventionsAuth, { basic: { users: {}, scopes: ['a b'] } }, 'basic.scopes must be an array of scope tokens'],
    [httpConventionsDeltaEncoding, { store: { get: () => undefined } }, 'store must be an instance store: { get(key), set(key, value, ttl?) }'],
    [httpConventionsDeltaEncoding, { store: { get: () => undefined, set: 'x' } }, 'store must be an instance store: { get(key), set(key, value, ttl?) }']
  ]
  for (const [plugin, opts, message] of cases) {
    const err = await refusal(plugin, opts)
    t.equal(err.code, CODE, message)
    t.equal(err.message.slice(err.message.indexOf(': ') + 2), message)
  }
  // A store's methods may live on its prototype (a class instance).
  class Store { get (): undefined { return undefined } set (): void {} }
  t.equal((await refusal(httpConventionsDeltaEncoding, { store: new Store(), offload: false })).message, 'registered')
})

test('options JSON Schema now says what was left to code or unchecked: digest.now, digest.userhash', async (t) => {
  const digest = { secret: 's'.repeat(32), users: { a: 'b' } }
  t.match((await refusal(httpConventionsAuth, { digest: { ...digest, now: 5 } })).message, /: digest\.now must be a function$/)
  t.match((await refusal(httpConventionsAuth, { digest: { ...digest, userhash: 'yes' } })).message, /: digest\.userhash must be a boolean$/)
})

test('each route config is checked against its schema when the route is added: the message names the route, config.<key> and the fix', async (t) => {
  const app = await buildApp({ auth: { basic: { users: { a: 'b' } } }, deltaEncoding: { offload: false } })
  t.teardown(() => app.close())
  const cases: Array<[string, 'GET' | 'PATCH', object, string]> = [
    ['/a', 'GET', { contentLength: true }, 'config.contentLength must be false or { bodyLimit }'],
    ['/b', 'GET', { contentLength: { bodyLimit: -1 } }, 'config.contentLength.bodyLimit must be a non-negative integer'],
    ['/c', 'GET', { contentType: { accept: ['not a type'] } }, 'config.contentType.accept must be an array of media types'],
    ['/d', 'GET', { contentType: { xml: {} } }, 'config.contentType.xml needs a root element name: { root: "article" }'],
    ['/e', 'GET', { contentType: { xml: { root: 'a', itemNames: { tags: 5 } } } }, 'config.contentType.xml.itemNames must be an object of element name: item element name'],
    ['/f', 'GET', { conditional: 'yes' }, 'config.conditional must be true, false or { validators?, requirePrecondition?, creates? }'],
    ['/g', 'GET', { conditional: { validators: 'etag' } }, 'config.conditional.validators must be a function (request) => { etag?, lastModified? } | null'],
    ['/h', 'PATCH', { patch: { schema: {}, save: () => false } }, 'config.patch.load must be a function (request) => { document, etag } | null'],
    ['/i', 'PATCH', { patch: { schema: {}, load: () => null, save: () => false, formats: [] } }, "config.patch.formats must list 'json-patch' and/or 'merge-patch'"],
    ['/j', 'GET', { deltaEncoding: { ttl: 0 } }, 'config.deltaEncoding.ttl must be a positive number of milliseconds'],
    ['/k', 'GET', { auth: { schemes: 'basic' } }, 'config.auth.schemes must be a non-empty list of app, basic, bearer and digest'],
    ['/l', 'GET', { auth: { scopes: ['a b'] } }, 'config.auth.scopes must be an array of scope tokens'],
    ['/m', 'GET', { auth: { schemes: ['bearer'] } }, 'config.auth.schemes must list enabled schemes (basic)'],
    ['/n', 'GET', { resourcePolicy: 'none' }, 'config.resourcePolicy must be \'same-origin\', \'same-site\', \'cross-origin\' or false, got "none"'],
    ['/o', 'GET', { prefer: 1 }, 'config.prefer must be true or false'],
    ['/p', 'GET', { redirect: true }, 'config.redirect can only be false (exempt from the rules)'],
    ['/q', 'GET', { methods: true }, 'config.methods can only be false (the path is left out of 405 and OPTIONS)'],
    ['/r', 'GET', { validation: false }, 'config.validation is not an option: a route with a schema is validated and its problems answered 422; to handle them yourself, set attachValidation: true on the route (request.validationError) or give the route an errorHandler']
  ]
  for (const [url, method, config, message] of cases) {
    t.throws(() => app.route({ method, url, config: config as never, handler: async () => 'x' }), { code: CODE, message: `route ${method} ${url}: ${message}` }, message)
  }
  // Against the plugin's options, in code: a Digest algorithm the schema knows but the plugin does not offer.
  const digest = await buildApp({ auth: { digest: { secret: 's'.repeat(32), users: { a: 'b' } } } })
  t.teardown(() => digest.close())
  t.throws(() => digest.get('/s', { config: { auth: { algorithms: ['MD5'] } } }, async () => 'x'),
    { code: CODE, message: 'route GET /s: config.auth.algorithms must list enabled Digest algorithms (SHA-256)' })
})
