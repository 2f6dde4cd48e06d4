/**
 * One check of schemas against the JSON Schema meta-schema for the suite's Ajv instances.
 *
 * Every Ajv instance that checks schemas compiles the meta-schema's validator, and a second
 * one compiled in the same process was measured to make every request of that process
 * slower, whatever its route (about 4 µs per request, in `process.nextTick`, on Node 20:
 * bench/RESULTS.md). The suite needs several instances (strict bodies, coerced query
 * strings, again for each context with shared schemas, PATCH resource schemas). The first
 * one built for a set of options that change the check checks its own schemas as usual and
 * becomes the checker; the others are built with `validateSchema: false` and hand it every
 * schema before they compile it. A schema that breaks the meta-schema still fails the boot,
 * with Ajv's own message. (A checker that compiles nothing but the meta-schema, in an
 * instance of its own, was measured to cost requests as much as the second copy did.)
 */

/** The part of an Ajv instance used to check a schema against its meta-schema. */
interface SchemaChecker {
  validateSchema: (schema: unknown, throwOrLogError?: boolean) => unknown
}

// The Ajv options that change what the meta-schema check accepts or how it reports.
const CHECK_OPTIONS = ['$data', 'meta', 'defaultMeta', 'validateSchema', 'logger'] as const

const checkers = new Map<string, SchemaChecker>()

/**
 * Builds one Ajv instance with `customOptions` through `build`, which must pass `created`
 * to Ajv's onCreate hook, and returns its compile function. The first instance for a set of
 * check options checks its own schemas and becomes the checker; a later one is built with
 * `validateSchema: false`, and the checker checks `shared` (the instance's shared schemas)
 * now and each route's schema before the instance compiles it.
 */
export function buildChecked<R extends { schema?: unknown }, V> (
  customOptions: Record<string, unknown>,
  shared: readonly unknown[],
  build: (customOptions: Record<string, unknown>, created: (ajv: unknown) => void) => (route: R) => V
): (route: R) => V {
  if (customOptions.validateSchema === false) return build(customOptions, () => {})
  const relevant: Record<string, unknown> = {}
  for (const key of CHECK_OPTIONS) if (customOptions[key] !== undefined) relevant[key] = customOptions[key]
  const key = JSON.stringify(relevant)
  const checker = checkers.get(key)
  if (checker === undefined) return build(customOptions, (ajv) => { checkers.set(key, ajv as SchemaChecker) })
  for (const schema of shared) checker.validateSchema(schema, true)
  const compile = build({ ...customOptions, validateSchema: false }, () => {})
  return function checkedCompile (route) {
    checker.validateSchema(route.schema, true)
    return compile(route)
  }
}
