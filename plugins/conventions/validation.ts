/**
 * Validation (docs/conventions.md (errors), 422): Ajv errors of body, querystring, params and headers
 * become one `errors[]` entry per problem (the error handler in errors.ts maps them).
 * This plugin checks at boot that the server's Ajv reports every problem (allErrors)
 * and refuses unknown properties instead of silently removing them.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { invalidOption } from '../../lib/errors'
import { MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { type Profile } from '../../lib/profile'
import { declareConvention } from '../host/suite'
import { isSuiteValidatorCompiler, serverOptionsProblem } from '../edge/server-options'
import { defineConvention } from '../host/suite'

/** Options of the Validation plugin (422 with every problem). */
export interface ValidationOptions {
  profile?: Profile
  /** What to do at boot when the server's Ajv options would lose problems: 'throw' (default), 'warn' or 'ignore'. */
  checkServerOptions?: 'throw' | 'warn' | 'ignore'
}

const PLUGIN = 'fastify-http-conventions-validation'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts): no step of its own (Fastify validates; the errors become 422). */
defineConvention({ key: 'validation', plugin: 'fastify-http-conventions-validation' })

const WHERE = 'http-conventions/validation'

/** The plugin's options as JSON Schema, checked at registration. */
export const validationOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    checkServerOptions: { enum: ['throw', 'warn', 'ignore'], [MESSAGE]: "must be 'throw', 'warn' or 'ignore'" }
  }
} as const

/**
 * A route's `config.validation` as JSON Schema: there is none. Fastify has no per-route switch
 * for validation, and the suite adds none: a route that says `config.validation` would
 * silently keep validating, so it is refused when the route is added.
 */
export const validationRouteConfigSchema = {
  not: {},
  [MESSAGE]: 'is not an option: a route with a schema is validated and its problems answered 422; to handle them yourself, set attachValidation: true on the route (request.validationError) or give the route an errorHandler'
} as const

const checkOptions = optionsChecker(WHERE, validationOptionsSchema)
const checkRouteConfig = routeConfigChecker('validation', validationRouteConfigSchema)

type Compile = (route: { schema: object, method: string, url: string, httpPart: string }) => (data: unknown) => unknown

/** Returns what is wrong with the server's validator, or null when it reports every problem. */
export function probeValidator (compile: Compile): string | null {
  const problems: string[] = []
  let twoRequired: ((d: unknown) => unknown) & { errors?: unknown[] }
  let answer: unknown
  try {
    twoRequired = compile({ schema: { type: 'object', required: ['a', 'b'] }, method: 'POST', url: '/', httpPart: 'body' }) as typeof twoRequired
    answer = twoRequired({})
  } catch {
    // A compiler for another schema language (a Zod type provider): nothing here to check.
    return null
  }
  // Only an Ajv-style validator (boolean, errors on the function) can be probed; another
  // compiler (TypeBox's, returning { value } or { error }) reports its errors its own way.
  if (typeof answer !== 'boolean') return null
  if ((twoRequired.errors?.length ?? 0) < 2) problems.push('ajv.customOptions.allErrors is not true (only the first problem would be reported; serverOptions.ajv sets it)')
  const closed = compile({ schema: { type: 'object', properties: {}, additionalProperties: false }, method: 'POST', url: '/', httpPart: 'body' }) as (d: unknown) => boolean
  if (closed({ unknown: 1 }) === true) problems.push('ajv.customOptions.removeAdditional is not false (unknown properties would be dropped instead of refused with 422; serverOptions.ajv sets it false)')
  const typed = compile({ schema: { type: 'object', properties: { a: { type: 'string' } } }, method: 'POST', url: '/', httpPart: 'body' }) as (d: unknown) => boolean
  if (typed({ a: 1 }) === true) problems.push('request bodies are type-coerced (a number would pass as a string; serverOptions.schemaController builds bodies\' validators without coercion)')
  return problems.length === 0 ? null : problems.join('; ')
}

const PASS = 'Pass the exported serverOptions to Fastify(): Fastify({ ...serverOptions })'
const MERGE = 'Merge your Ajv options into serverOptions.ajv rather than replacing it: ' +
  'Fastify({ ...serverOptions, ajv: { ...serverOptions.ajv, customOptions: { ...serverOptions.ajv.customOptions, ...yours }, plugins: [...] } })'

/**
 * What the boot check finds wrong with the server, with its fix, or null. With a route that
 * has a schema, the validator Fastify built is probed: when it is serverOptions' own, the
 * app's `ajv` option replaced theirs, and the fix is to merge it; otherwise serverOptions were
 * not passed. With none, Fastify built no validator, and the server is checked for
 * serverOptions themselves (docs/plugins.md (Validation (422)): the boot stops without them,
 * whatever the routes).
 */
function serverProblem (fastify: FastifyInstance): string | null {
  const compile = fastify.validatorCompiler as unknown as Compile | undefined
  if (compile === undefined) {
    const missing = serverOptionsProblem(fastify)
    return missing === null ? null : `${missing}. ${PASS}`
  }
  const lost = probeValidator(compile)
  if (lost === null) return null
  if (isSuiteValidatorCompiler(compile)) {
    return `the server was made with serverOptions, but the app's own ajv option replaced serverOptions.ajv, which loses validation problems: ${lost}. ${MERGE}`
  }
  return `the server's Ajv options lose validation problems: ${lost}. ${PASS}`
}

function validationPlugin (fastify: FastifyInstance, opts: ValidationOptions, done: (err?: Error) => void): void {
  const where = WHERE
  try { checkOptions(opts) } catch (err) { return done(err as Error) }
  const mode = opts.checkServerOptions ?? 'throw'
  try {
    declareConvention(fastify, {
      key: 'validation',
      plugin: PLUGIN,
      compile (c) {
        checkRouteConfig(c.where, c.config.validation)
        const schema = c.route.schema as Record<string, unknown> | undefined
        if (schema !== undefined && (schema.body !== undefined || schema.querystring !== undefined || schema.params !== undefined || schema.headers !== undefined)) {
          c.respond(422, { description: 'Unprocessable Entity: one errors[] entry per problem', body: 'envelope' })
        }
      }
    }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  if (mode === 'ignore') return done()

  fastify.addHook('onReady', function checkValidatorOptions (next) {
    const message = serverProblem(fastify)
    if (message === null) return next()
    if (mode === 'warn') {
      fastify.log.warn(message)
      return next()
    }
    next(invalidOption(where, message))
  })
  done()
}

/** The Validation plugin: a 422 that lists every problem of the request (path, query, headers, body) in the `errors[]` envelope. */
export const httpConventionsValidation = fp(validationPlugin, { fastify: '^5.10.0', name: PLUGIN })
