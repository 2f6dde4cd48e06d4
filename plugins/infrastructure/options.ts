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
 * The Ajv instance is strict, stops at the first problem, never coerces, never fills
 * defaults into the user's object, and holds no state of any app: every validator is
 * compiled once, the first time a plugin is registered.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import { invalidOption } from '../../lib/errors'

/** The keyword of a schema node's message (see above). */
export const MESSAGE = 'x-message'

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
  keywords: [MESSAGE]
} as const)

/** `profile`, as every plugin with a profile takes it. */
export const PROFILE_SCHEMA = Object.freeze({ enum: ['spec', 'rfc9110'], [MESSAGE]: "must be 'spec' or 'rfc9110', got {value}" })

let shared: Ajv | undefined

function ajv (): Ajv {
  shared ??= new Ajv({ ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] })
  return shared
}

type Node = Record<string, unknown>

function isNode (value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A JSON Pointer segment, unescaped (RFC 6901 4). */
function unescape (segment: string): string {
  return decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~')
}

/** The schema nodes from the root to the one holding the failing keyword, each with the option names leading to it. */
function nodesOf (schema: OptionsSchema, error: ErrorObject): Array<{ node: Node, names: string[] }> {
  const segments = error.schemaPath.split('/').slice(1, -1).map(unescape)
  const names: string[] = []
  const out = [{ node: schema as Node, names: [] as string[] }]
  let at: unknown = schema
  let nameNext = false
  for (const segment of segments) {
    at = (at as Node)[segment]
    if (nameNext) names.push(segment)
    nameNext = !nameNext && segment === 'properties'
    if (isNode(at) && !nameNext) out.push({ node: at, names: [...names] })
  }
  // A missing property is the property's problem: its node (if described) comes last.
  const missing = error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : undefined
  const holder = out[out.length - 1].node
  if (missing !== undefined && isNode(holder.properties) && isNode(holder.properties[missing])) {
    out.push({ node: holder.properties[missing], names: [...names, missing] })
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

/** The message of Ajv's first problem, naming the option. */
export function optionsMessage (schema: OptionsSchema, error: ErrorObject, data: unknown): string {
  const nodes = nodesOf(schema, error)
  const last = nodes.length - 1
  if (error.keyword === 'additionalProperties') {
    const key = (error.params as { additionalProperty: string }).additionalProperty
    const prefix = nodes[last].names.join('.')
    return `unknown ${prefix === '' ? '' : prefix + ' '}option ${JSON.stringify(key)}`
  }
  for (let i = last; i >= 0; i--) {
    const { node, names } = nodes[i]
    const m = node[MESSAGE]
    const text = typeof m === 'string' ? m : isNode(m) && i === last && typeof m[error.keyword] === 'string' ? m[error.keyword] as string : undefined
    if (text !== undefined) return withName(names, text.replace('{value}', () => String(JSON.stringify(valueAt(data, names)))))
  }
  // Every option of the suite's schemas has its message; Ajv's own says the rest.
  return withName(error.instancePath.split('/').slice(1).map(unescape), String(error.message))
}

/**
 * The check of a plugin's options against its schema: throws `invalidOption(where, message)`
 * for the first problem. The schema is compiled the first time the check runs.
 */
export function optionsChecker (where: string, schema: OptionsSchema): (opts: unknown) => void {
  let validate: ValidateFunction | undefined
  return function checkOptions (opts: unknown): void {
    validate ??= ajv().compile(schema)
    if (validate(opts)) return
    const errors = validate.errors as ErrorObject[]
    // allErrors is off: one problem, after the problems of the branches a combinator tried.
    throw invalidOption(where, optionsMessage(schema, errors[errors.length - 1], opts))
  }
}
