/**
 * Plugin options checked as data: each plugin describes its registration options with one
 * JSON Schema (beside the plugin), and `optionsChecker` turns the first problem Ajv finds
 * into the suite's boot error, `invalidOption(where, message)`, with a message that names
 * the option and the fix.
 *
 * A schema node may carry `x-message`: the text that follows the option's name when the
 * node fails (`{ type: 'boolean', 'x-message': 'must be a boolean' }` gives
 * `requireContentLength must be a boolean`), either one text for every keyword of the node
 * or a map by keyword. `{value}` in the text stands for the option's value as JSON. A node
 * without one defers to the nearest enclosing node that has one; a missing required
 * property is the property's own problem. Unknown keys (`additionalProperties: false`) read
 * `unknown option "bogus"`, or `unknown etag option "bogus"` for a nested object.
 *
 * `x-typeof: 'function'` says what JSON Schema has no type for: the value's `typeof` (a
 * verifier, a provider, a store's method). `x-where` on a node reports the problems found in
 * it with that `where`, the option names relative to it: the umbrella's schema holds each
 * plugin's, and a problem in a section reads as the plugin alone says it.
 *
 * A route's `config.<key>` is checked the same way (`routeConfigChecker`), once per route when
 * it is added: the message names the route, `config.<key>` and the option.
 *
 * The Ajv instance is strict, stops at the first problem, never coerces, never fills
 * defaults into the user's object, and holds no state of any app: every schema is
 * compiled once, the first time it checks a value.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import { invalidOption } from '../../lib/errors'

/** The keyword of a schema node's message (see above). */
export const MESSAGE = 'x-message'

/** The keyword of a value's `typeof`, for what JSON Schema has no type for: `{ [TYPEOF]: 'function' }`. */
export const TYPEOF = 'x-typeof'

/** The keyword of a node whose problems are reported with its own `where` (see above). */
export const WHERE_KEY = 'x-where'

/** A function: what a verifier, a provider or a store's method must be. */
export const FUNCTION_SCHEMA = Object.freeze({ [TYPEOF]: 'function' })

/** A JSON Schema of a plugin's options, with `x-message` texts. */
export type OptionsSchema = Readonly<Record<string, unknown>>

/** The Ajv options every options schema is compiled with (exported for tests). */
export const AJV_OPTIONS = Object.freeze({
  allErrors: false,
  strict: true,
  // `false` or an object (offload), a string or false (cacheControl): one node, one message.
  allowUnionTypes: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  keywords: [
    MESSAGE,
    WHERE_KEY,
    // typeof, as ajv-keywords' `typeof` (the schema's value is the type's name); the node's x-message says what is wrong.
    // eslint-disable-next-line valid-typeof
    { keyword: TYPEOF, schemaType: 'string', errors: false, validate: (type: string, data: unknown) => typeof data === type }
  ]
} as const)

/** `profile`, as every plugin with a profile takes it. */
export const PROFILE_SCHEMA = Object.freeze({ enum: ['spec', 'rfc9110'], [MESSAGE]: "must be 'spec' or 'rfc9110', got {value}" })

let shared: Ajv | undefined
/** Each schema's validator, compiled the first time it checks a value (the schemas are constants of the modules). */
const compiled = new WeakMap<object, ValidateFunction>()

function validatorOf (schema: OptionsSchema): ValidateFunction {
  let validate = compiled.get(schema)
  if (validate === undefined) {
    shared ??= new Ajv({ ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] })
    validate = shared.compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

type Node = Record<string, unknown>

function isNode (value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A JSON Pointer segment, unescaped (RFC 6901 4). */
function unescape (segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~')
}

interface Step {
  node: Node
  /** The option names leading to the node, from the nearest node with x-where (or the root). */
  names: string[]
  /** The same from the root: where the value is. */
  path: string[]
  where: string | undefined
}

/** The schema nodes from the root to the one holding the failing keyword, each with the option names leading to it. */
function nodesOf (schema: OptionsSchema, error: ErrorObject): Step[] {
  const segments = error.schemaPath.split('/').slice(1, -1).map(unescape)
  let names: string[] = []
  const path: string[] = []
  let where = typeof schema[WHERE_KEY] === 'string' ? schema[WHERE_KEY] as string : undefined
  const out: Step[] = [{ node: schema as Node, names: [], path: [], where }]
  let at: unknown = schema
  let nameNext = false
  for (const segment of segments) {
    at = (at as Node)[segment]
    if (nameNext) {
      names.push(segment)
      path.push(segment)
    }
    nameNext = !nameNext && segment === 'properties'
    if (isNode(at) && !nameNext) {
      if (typeof at[WHERE_KEY] === 'string') {
        where = at[WHERE_KEY] as string
        names = []
      }
      out.push({ node: at, names: [...names], path: [...path], where })
    }
  }
  // A missing property is the property's problem: its node (if described) comes last.
  const missing = error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : undefined
  const holder = out[out.length - 1].node
  if (missing !== undefined && isNode(holder.properties) && isNode(holder.properties[missing])) {
    out.push({ node: holder.properties[missing], names: [...names, missing], path: [...path, missing], where })
  }
  return out
}

function valueAt (data: unknown, names: readonly string[]): unknown {
  let at = data
  for (const name of names) at = isNode(at) ? at[name] : undefined
  return at
}

function withName (names: readonly string[], text: string): string {
  return names.length === 0 ? text : `${names.join('.')} ${text}`
}

/** Ajv's first problem: the `where` of the node that holds it (undefined: the checker's) and its message. */
function problemOf (schema: OptionsSchema, error: ErrorObject, data: unknown, base: readonly string[]): { where: string | undefined, message: string } {
  const nodes = nodesOf(schema, error)
  const last = nodes.length - 1
  const where = nodes[last].where
  // Names below a node with x-where are the plugin's own; the checker's base names the rest.
  const named = (names: readonly string[]): string[] => where === undefined ? [...base, ...names] : [...names]
  if (error.keyword === 'additionalProperties') {
    const key = (error.params as { additionalProperty: string }).additionalProperty
    const prefix = named(nodes[last].names).join('.')
    return { where, message: `unknown ${prefix === '' ? '' : prefix + ' '}option ${JSON.stringify(key)}` }
  }
  for (let i = last; i >= 0; i--) {
    const { node, names, path } = nodes[i]
    const m = node[MESSAGE]
    const text = typeof m === 'string' ? m : isNode(m) && i === last && typeof m[error.keyword] === 'string' ? m[error.keyword] as string : undefined
    if (text !== undefined) return { where: nodes[i].where, message: withName(nodes[i].where === undefined ? [...base, ...names] : names, text.replace('{value}', () => String(JSON.stringify(valueAt(data, path))))) }
  }
  // Every option of the suite's schemas has its message; Ajv's own says the rest.
  return { where, message: withName(named(error.instancePath.split('/').slice(1).map(unescape)), String(error.message)) }
}

/** The message of Ajv's first problem, naming the option. */
export function optionsMessage (schema: OptionsSchema, error: ErrorObject, data: unknown): string {
  return problemOf(schema, error, data, []).message
}

/** Throws `invalidOption(where, message)` for the first problem of `value`, its names after `base`. */
function check (where: string, schema: OptionsSchema, value: unknown, base: readonly string[]): void {
  const validate = validatorOf(schema)
  if (validate(value)) return
  const errors = validate.errors as ErrorObject[]
  // allErrors is off: one problem, after the problems of the branches a combinator tried.
  const problem = problemOf(schema, errors[errors.length - 1], value, base)
  throw invalidOption(problem.where ?? where, problem.message)
}

/**
 * The check of a plugin's options against its schema: throws `invalidOption(where, message)`
 * for the first problem. The schema is compiled the first time the check runs.
 */
export function optionsChecker (where: string, schema: OptionsSchema): (opts: unknown) => void {
  return function checkOptions (opts: unknown): void {
    check(where, schema, opts, [])
  }
}

/**
 * The check of a route's `config.<key>` against the plugin's route config schema, when the
 * route is added: throws `invalidOption(where, message)` (where: the route) for the first
 * problem, naming `config.<key>` and the option, or returns the value as the schema says it
 * is (`T`). A config without the key is not checked.
 */
export function routeConfigChecker<T> (key: string, schema: OptionsSchema): (where: string, value: unknown) => T | undefined {
  const base = ['config', key]
  return function checkRouteConfig (where: string, value: unknown): T | undefined {
    if (value !== undefined) check(where, schema, value, base)
    return value as T | undefined
  }
}
