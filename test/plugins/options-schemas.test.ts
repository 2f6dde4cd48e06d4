/**
 * Every plugin's registration options are checked against one JSON Schema (plugins/infrastructure/options.ts):
 * the schemas compile under Ajv's strict mode, and each plugin refuses an unknown option and
 * an option of the wrong type at registration with FST_HTTP_CONVENTIONS_INVALID_OPTION and a
 * message naming the option.
 */
import { test } from 'tap'
import Fastify, { type FastifyPluginCallback } from 'fastify'
import Ajv from 'ajv'
import { boot } from '../helpers/app'
import { AJV_OPTIONS, MESSAGE, optionsChecker, optionsMessage, PROFILE_SCHEMA } from '../../plugins/infrastructure/options'
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
  for (const [name, { schema }] of Object.entries(PLUGINS)) {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, keywords: [MESSAGE] })
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
