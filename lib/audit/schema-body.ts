/**
 * A small generator of request bodies from a JSON Schema (the subset OpenAPI documents use:
 * type, properties, required, items, enum, const, default, min/max lengths and values,
 * pattern, readOnly): a valid instance, and one that violates exactly one property.
 */

export type JsonSchema = Record<string, unknown>

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

function props (schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties ?? {}) as Record<string, JsonSchema>
}

/** Strings tried, in order, against a `pattern` and the length bounds; `tag` makes them unique. */
function stringFor (schema: JsonSchema, tag: string): string {
  if (schema.format === 'date-time') return new Date(0).toISOString()
  if (schema.format === 'email') return `audit-${tag}@example.com`
  if (schema.format === 'uri') return `https://example.com/${tag}`
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined
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
  if ('const' in schema) return schema.const
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if ('default' in schema) return schema.default
  switch (typeOf(schema)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
      for (const [name, sub] of Object.entries(props(schema))) {
        if (sub.readOnly === true) continue
        if (required.has(name) || typeOf(sub) === 'string') out[name] = validInstance(sub, `${tag}${name}`)
      }
      return out
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0
      const items = (schema.items ?? {}) as JsonSchema
      return Array.from({ length: min }, (_, i) => validInstance(items, `${tag}${i}`))
    }
    case 'string': return stringFor(schema, tag)
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
