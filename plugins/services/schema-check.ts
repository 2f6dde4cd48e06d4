/**
 * One check of schemas against the JSON Schema meta-schema for each app's Ajv instances.
 *
 * Every Ajv instance that checks schemas compiles the meta-schema's validator, and each
 * further copy compiled in a process was measured to make every request of that process
 * slower, whatever its route (about 4 µs per request, in `process.nextTick`, on Node 20:
 * bench/RESULTS.md). An app needs several instances (strict bodies, coerced query strings,
 * again for each context with shared schemas). Within one app, the first instance built
 * for a set of options that change the check checks its own schemas as usual and becomes
 * that app's checker; the app's others are built with `validateSchema: false` and hand it
 * every schema before they compile it. A schema that breaks the meta-schema still fails the
 * boot, with Ajv's own message. Checkers are never shared between apps: each app's Ajv
 * options (its `plugins`, its `logger`, its meta-schemas) decide its own check, and an app
 * that is closed leaves no instance behind. (A checker that compiles nothing but the
 * meta-schema, in an instance of its own, was measured to cost requests as much as a
 * second copy did.)
 */

import AjvCompiler from '@fastify/ajv-compiler'
import { ajvStateKey } from '../infrastructure/adapter'

/** The part of an Ajv instance used to check a schema against its meta-schema. */
interface SchemaChecker {
  validateSchema: (schema: unknown, throwOrLogError?: boolean) => unknown
}

/** The checkers of one app, by the options that change the check. */
export type SchemaCheckers = Map<string, SchemaChecker>

// The Ajv options that change what the meta-schema check accepts or how it reports.
const CHECK_OPTIONS = ['$data', 'meta', 'defaultMeta', 'validateSchema', 'logger'] as const

const checkersByOwner = new WeakMap<object, SchemaCheckers>()
const poolsByOwner = new WeakMap<object, ReturnType<typeof AjvCompiler>>()

/**
 * The checkers of the app that `owner` stands for: one object per app, such as its server,
 * or the `ajv` server options object Fastify hands every context of the app
 * (plugins/infrastructure/adapter.ts, `ajvStateKey`). Held weakly: they go with the app.
 */
export function checkersOf (owner: object): SchemaCheckers {
  const key = ajvStateKey(owner)
  let checkers = checkersByOwner.get(key)
  if (checkers === undefined) {
    checkers = new Map()
    checkersByOwner.set(key, checkers)
  }
  return checkers
}

/**
 * The Ajv compilers of the app that `owner` stands for (as for checkersOf), reused by
 * @fastify/ajv-compiler for the same shared schemas and custom options: within the app
 * only, since another app's `ajv.plugins` (formats, keywords, meta-schemas) may differ.
 */
export function compilerPoolOf (owner: object): ReturnType<typeof AjvCompiler> {
  const key = ajvStateKey(owner)
  let pool = poolsByOwner.get(key)
  if (pool === undefined) {
    pool = AjvCompiler()
    poolsByOwner.set(key, pool)
  }
  return pool
}

/** The options of `customOptions` that change the check, as a key. */
function checkKey (customOptions: Record<string, unknown>): string {
  const relevant: Record<string, unknown> = {}
  for (const key of CHECK_OPTIONS) if (customOptions[key] !== undefined) relevant[key] = customOptions[key]
  return JSON.stringify(relevant)
}

/**
 * Builds one Ajv instance with `customOptions` through `build`, which must pass `created`
 * to Ajv's onCreate hook, and returns its compile function. The app's first instance for a
 * set of check options checks its own schemas and becomes the checker, kept in `checkers`
 * (the app's: checkersOf); a later one is built with `validateSchema: false`, and the
 * checker checks `shared` (the instance's shared schemas) now and each route's schema
 * before the instance compiles it.
 */
export function buildChecked<R extends { schema?: unknown }, V> (
  checkers: SchemaCheckers,
  customOptions: Record<string, unknown>,
  shared: readonly unknown[],
  build: (customOptions: Record<string, unknown>, created: (ajv: unknown) => void) => (route: R) => V
): (route: R) => V {
  if (customOptions.validateSchema === false) return build(customOptions, () => {})
  const key = checkKey(customOptions)
  const checker = checkers.get(key)
  if (checker === undefined) return build(customOptions, (ajv) => { checkers.set(key, ajv as SchemaChecker) })
  for (const schema of shared) checker.validateSchema(schema, true)
  const compile = build({ ...customOptions, validateSchema: false }, () => {})
  return function checkedCompile (route) {
    checker.validateSchema(route.schema, true)
    return compile(route)
  }
}
