/**
 * A small generator of request bodies from a JSON Schema (the subset OpenAPI documents use:
 * type, properties, required, items, enum, const, default, min/max lengths and values,
 * pattern, readOnly): a valid instance, and one that violates exactly one property.
 */

import { LIMITS } from './bounds'

export type JsonSchema = Record<string, unknown>

/** Where a generation is: its nesting, and the bounds it met (each said once). */
interface Gen { depth: number, notes?: Set<string> }

function note (g: Gen, text: string): void { g.notes?.add(text) }

/** The schema's pattern as a RegExp, or undefined when it has none or it does not compile. */
function patternOf (schema: JsonSchema, g: Gen): RegExp | undefined {
  if (typeof schema.pattern !== 'string') return undefined
  try { return new RegExp(schema.pattern, 'u') } catch {
    note(g, `pattern ${JSON.stringify(schema.pattern.slice(0, 80))} is not a regular expression: ignored`)
    return undefined
  }
}

export interface Violation {
  /** the body, valid but for one property */
  body: Record<string, unknown>
  /** the property at fault (a top-level name) */
  field: string
}

function typeOf (schema: JsonSchema): string | undefined {
  const t = schema.type
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined
  if (typeof t === 'string') return t
  if (schema.properties !== undefined) return 'object'
  if (schema.items !== undefined) return 'array'
  return undefined
}

/** The schema's properties that are schemas (a document may put anything there). */
function props (schema: JsonSchema): Record<string, JsonSchema> {
  const p = schema.properties
  if (p === null || typeof p !== 'object') return {}
  return Object.fromEntries(Object.entries(p).filter(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v))) as Record<string, JsonSchema>
}

/** Strings tried, in order, against a `pattern` and the length bounds; `tag` makes them unique. */
function stringFor (schema: JsonSchema, tag: string, g: Gen): string {
  if (schema.format === 'date-time') return new Date(0).toISOString()
  if (schema.format === 'email') return `audit-${tag}@example.com`
  if (schema.format === 'uri') return `https://example.com/${tag}`
  const asked = typeof schema.minLength === 'number' ? schema.minLength : 0
  // a schema may ask for any length: generated strings stop at the bound
  if (asked > LIMITS.string) note(g, `minLength ${asked} is over ${LIMITS.string} characters (limit): generated strings stop there, and bodies built from this schema may be refused`)
  const min = Math.min(asked, LIMITS.string)
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity
  const pattern = patternOf(schema, g)
  const letters = tag.toLowerCase().replace(/[^a-z0-9]/g, '')
  const candidates = [`audit-${letters}`, `audit${letters}`, `a${letters}`, letters, `Audit ${tag}`, 'a', 'A', '0', 'x@example.com']
  for (const base of candidates) {
    const s = base.length < min ? base + 'x'.repeat(min - base.length) : base.slice(0, max)
    if (s.length >= min && (pattern === undefined || pattern.test(s))) return s
  }
  return 'x'.repeat(min)
}

function numberFor (schema: JsonSchema, integer: boolean): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined
  let n = min ?? (max !== undefined && max < 1 ? max : 1)
  if (integer) n = Math.ceil(n)
  return n
}

/** A value valid against `schema`; `tag` varies strings so that two instances differ. */
export function validInstance (schema: JsonSchema, tag = '1'): unknown {
  return generate(schema, tag, { depth: 0 })
}

/** The bounds a body generated from `schema` meets (docs/audit.md, Limits), each said once. */
export function schemaNotes (schema: JsonSchema): string[] {
  const notes = new Set<string>()
  generate(schema, 'notes', { depth: 0, notes })
  return [...notes]
}

function objectFor (schema: JsonSchema, tag: string, g: Gen): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
  for (const [name, sub] of Object.entries(props(schema))) {
    if (sub.readOnly === true) continue
    if (required.has(name) || typeOf(sub) === 'string') out[name] = generate(sub, `${tag}${name}`, { ...g, depth: g.depth + 1 })
  }
  return out
}

function arrayFor (schema: JsonSchema, tag: string, g: Gen): unknown[] {
  const asked = typeof schema.minItems === 'number' ? schema.minItems : 0
  if (asked > LIMITS.items) note(g, `minItems ${asked} is over ${LIMITS.items} (limit): generated arrays stop there`)
  const items = (schema.items ?? {}) as JsonSchema
  return Array.from({ length: Math.min(asked, LIMITS.items) }, (_, i) => generate(items, `${tag}${i}`, { ...g, depth: g.depth + 1 }))
}

function generate (schema: JsonSchema, tag: string, g: Gen): unknown {
  // a document may put anything where a schema goes
  if (schema === null || typeof schema !== 'object') return null
  if (g.depth > LIMITS.depth) { note(g, `a schema nested deeper than ${LIMITS.depth} levels (limit): null below`); return null }
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if ('default' in schema) return schema.default
  switch (typeOf(schema)) {
    case 'object': return objectFor(schema, tag, g)
    case 'array': return arrayFor(schema, tag, g)
    case 'string': return stringFor(schema, tag, g)
    case 'integer': return numberFor(schema, true)
    case 'number': return numberFor(schema, false)
    case 'boolean': return false
    case 'null': return null
    default: return {}
  }
}

/** A value of a JSON type the schema does not allow. */
export function wrongTypeValue (schema: JsonSchema): unknown {
  const t = typeOf(schema)
  return t === 'string' ? 12345 : 'not-a-' + (t ?? 'value')
}

/**
 * A valid instance of an object schema with one property replaced by a value of the wrong
 * type (the first written property the schema types), or null when no property is typed.
 */
export function violateOne (schema: JsonSchema, tag = '1'): Violation | null {
  const body = validInstance(schema, tag)
  if (typeOf(schema) !== 'object' || body === null || typeof body !== 'object') return null
  for (const [name, sub] of Object.entries(props(schema))) {
    if (sub.readOnly === true || typeOf(sub) === undefined) continue
    return { body: { ...body as Record<string, unknown>, [name]: wrongTypeValue(sub) }, field: name }
  }
  return null
}

/** A writable string property without a pattern or format (what a patch can safely replace). */
export function patchableProperty (schema: JsonSchema): string | undefined {
  for (const [name, sub] of Object.entries(props(schema))) {
    if (sub.readOnly === true || typeOf(sub) !== 'string' || sub.pattern !== undefined || sub.format !== undefined || sub.enum !== undefined) continue
    return name
  }
  return undefined
}
