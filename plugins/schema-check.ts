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
export interface SchemaChecker {
  validateSchema: (schema: unknown, throwOrLogError?: boolean) => unknown
}

/** How to build one Ajv instance. */
export interface InstancePlan {
  /** The options to build it with. */
  customOptions: Record<string, unknown>
  /** Checks a schema before the instance compiles it; null when the instance checks its own. */
  check: ((schema: unknown) => void) | null
  /** Call with the new instance: when it checks its own schemas, it becomes the checker. */
  created: (ajv: unknown) => void
}

// The Ajv options that change what the meta-schema check accepts or how it reports.
const CHECK_OPTIONS = ['$data', 'meta', 'defaultMeta', 'validateSchema', 'logger'] as const

const checkers = new Map<string, SchemaChecker>()
const nothing = (): void => {}

/** Plans an Ajv instance built with `customOptions`. */
export function planInstance (customOptions: Record<string, unknown>): InstancePlan {
  if (customOptions.validateSchema === false) return { customOptions, check: null, created: nothing }
  const relevant: Record<string, unknown> = {}
  for (const key of CHECK_OPTIONS) if (customOptions[key] !== undefined) relevant[key] = customOptions[key]
  const key = JSON.stringify(relevant)
  const checker = checkers.get(key)
  if (checker === undefined) {
    return { customOptions, check: null, created: (ajv) => { checkers.set(key, ajv as SchemaChecker) } }
  }
  return {
    customOptions: { ...customOptions, validateSchema: false },
    check: (schema) => { checker.validateSchema(schema, true) },
    created: nothing
  }
}
