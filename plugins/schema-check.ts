/**
 * One check of schemas against the JSON Schema meta-schema for the suite's Ajv instances.
 *
 * Every Ajv instance that checks schemas compiles the meta-schema's validator, and a second
 * one compiled in the same process makes every request of that process slower, whatever its
 * route (about 4 µs per request in `process.nextTick` on Node 20: bench/RESULTS.md). The
 * suite needs several instances (strict bodies, coerced query strings, one per context with
 * shared schemas, PATCH resource schemas), so they are built with `validateSchema: false` and
 * hand the check to one checker per set of options that change it. A schema that breaks the
 * meta-schema still fails the boot, with Ajv's own message.
 */
import AjvCompiler from '@fastify/ajv-compiler'

/** The part of an Ajv instance used to check a schema against its meta-schema. */
export interface SchemaChecker {
  validateSchema: (schema: unknown, throwOrLogError?: boolean) => unknown
}

// The Ajv options that change what the meta-schema check accepts or how it reports.
const CHECK_OPTIONS = ['$data', 'meta', 'defaultMeta', 'validateSchema', 'logger'] as const

const factory = AjvCompiler()
const checkers = new Map<string, SchemaChecker>()

/**
 * The checker for instances built with `customOptions`, or null when they check nothing
 * (`validateSchema: false`). The instances themselves are then built with the options
 * `withoutCheck` returns.
 */
export function schemaCheckerFor (customOptions: Record<string, unknown>): SchemaChecker | null {
  if (customOptions.validateSchema === false) return null
  const options: Record<string, unknown> = {}
  for (const key of CHECK_OPTIONS) if (customOptions[key] !== undefined) options[key] = customOptions[key]
  const key = JSON.stringify(options)
  let checker = checkers.get(key)
  if (checker === undefined) {
    let created: SchemaChecker | undefined
    factory({}, { customOptions: options, onCreate (ajv: unknown) { created = ajv as SchemaChecker } })
    checker = created as SchemaChecker
    checkers.set(key, checker)
  }
  return checker
}

/** Options for an instance whose schemas `schemaCheckerFor` checks. */
export function withoutCheck (customOptions: Record<string, unknown>): Record<string, unknown> {
  return { ...customOptions, validateSchema: false }
}
