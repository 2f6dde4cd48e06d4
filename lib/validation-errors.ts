/**
 * Maps validation errors to `errors[]` entries (docs/conventions.md (Validation errors): dotted
 * paths, a missing required property and an unknown property named by their own path).
 *
 * Field names say which part of the request is at fault and stay unambiguous: body fields
 * are bare paths (`author.name`, `tags.2`); a path parameter, a query parameter and a header
 * are prefixed with their part (`path:id`, `query:limit`, `header:x-api-version`); a key that
 * holds `.`, `[`, `]`, `:` or `"`, or is empty, is written bracketed as a JSON string
 * (`meta["a.b"]`, `["x:y"]`), so a bare segment never holds a separator.
 * Framework-free: takes the plain error objects Fastify attaches to its error. They come
 * in Ajv's shape from every validator compiler Fastify supports (Ajv, TypeBox's
 * `TypeBoxValidatorCompiler`, fastify-type-provider-zod), each naming the properties at
 * fault in its own params: Ajv one per error (`missingProperty`), TypeBox a list
 * (`requiredProperties`), Zod a list of `keys`.
 */
import type { ErrorEntry } from './errors'

/** The subset of an Ajv `ErrorObject` this module reads. */
export interface AjvErrorLike {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

export type ValidationContext = 'body' | 'querystring' | 'params' | 'headers' | string

/** A key written bare: no separator of field names in it, and not empty. */
const BARE = /^[^.[\]:"]+$/

/** One more segment of a field name: `.name`, or `["a.b"]` for a key that holds a separator. */
function join (base: string, name: string): string {
  if (!BARE.test(name)) return `${base}[${JSON.stringify(name)}]`
  // After nothing, or after a part's prefix (`query:`), the first key takes no dot.
  return base === '' || base.endsWith(':') ? base + name : `${base}.${name}`
}

/** `/author/name` -> `author.name`; `/tags/2` -> `tags.2`; `/meta/a.b` -> `meta["a.b"]` (RFC 6901 escapes decoded). */
export function pointerToPath (pointer: string): string {
  // fastify-type-provider-zod names the root `/` (RFC 6901: the empty key); taken as the root.
  if (pointer === '' || pointer === '/') return ''
  const parts = pointer.split('/')
  let out = ''
  for (let i = 1; i < parts.length; i++) out = join(out, parts[i].replace(/~1/g, '/').replace(/~0/g, '~'))
  return out
}

/** The prefix of a part's field names: none for the body, `path:`, `query:`, `header:` for the others. */
const PREFIXES: Record<string, string> = { body: '', params: 'path:', querystring: 'query:', headers: 'header:' }

/** The field-name prefix of a validation context (Fastify's httpPart name); an unknown part is named as it is. */
function partPrefix (context: ValidationContext): string {
  return PREFIXES[context] ?? `${context}:`
}

/** The field of a problem with the whole part: `body`, or the part's prefix (`query:`). */
export function partField (context: ValidationContext): string {
  const prefix = partPrefix(context)
  return prefix === '' ? 'body' : prefix
}

/** The property names of a param: Ajv gives one string, TypeBox and Zod a list; none when absent. */
function names (value: unknown): string[] {
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.map(String) : []
}

/** One entry per property the params name, each at its own path; `none` when they name none. */
function each (base: string, props: string[], message: string, none: ErrorEntry): ErrorEntry[] {
  if (props.length === 0) return [none]
  return props.map((name) => ({ field: join(base, name), message }))
}

function entriesFor (error: AjvErrorLike, context: ValidationContext, prefix: string): ErrorEntry[] {
  const path = pointerToPath(error.instancePath)
  const base = prefix + path
  const p = error.params ?? {}
  const own: ErrorEntry = { field: path === '' ? partField(context) : base, message: error.message ?? 'is invalid' }
  switch (error.keyword) {
    case 'required':
      // Ajv: missingProperty; TypeBox: requiredProperties (every missing one).
      return each(base, names(p.missingProperty ?? p.requiredProperties), 'is required', own)
    case 'dependentRequired':
    case 'dependencies':
    {
      // Ajv names the missing property; TypeBox the property that needs the others (or a schema).
      if (p.missingProperty !== undefined) return each(base, names(p.missingProperty), 'is required', own)
      const needs = names(p.dependencies)
      return each(base, names(p.property), needs.length > 0 ? `requires ${needs.join(', ')}` : own.message, own)
    }
    case 'additionalProperties':
      return each(base, names(p.additionalProperty ?? p.additionalProperties), 'is not allowed', own)
    case 'unevaluatedProperties':
      return each(base, names(p.unevaluatedProperty ?? p.unevaluatedProperties), 'is not allowed', own)
    case 'unrecognized_keys':
      // Zod: an unknown key of a strict object.
      return each(base, names(p.keys), 'is not allowed', own)
    case 'propertyNames':
      return each(base, names(p.propertyName ?? p.propertyNames), 'is not an allowed property name', own)
    case 'false schema':
    case 'boolean':
      // A `false` schema (Ajv's keyword, TypeBox's): nothing is allowed here. TypeBox reports an
      // unknown property this way as well as by additionalProperties: the two merge into one entry.
      return [{ field: own.field, message: 'is not allowed' }]
  }
  return [own]
}

export interface EntriesOptions {
  /**
   * Most entries listed (default 100). Past it, one last entry (field: the context, e.g.
   * `body`) says how many more problems were not listed, so that a body with half a
   * million invalid items does not get a 422 ten times its size.
   */
  maxEntries?: number
}

const DEFAULT_MAX_ENTRIES = 100

/**
 * One entry per distinct problem, in Ajv's order, at most `maxEntries` of them plus
 * the entry counting the rest. The work is proportional to the entries listed: the rest
 * are counted, not mapped (duplicates among them, which would have been merged, are
 * counted too).
 */
export function ajvErrorsToEntries (errors: readonly AjvErrorLike[], context: ValidationContext, options?: EntriesOptions): ErrorEntry[] {
  const max = options?.maxEntries ?? DEFAULT_MAX_ENTRIES
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxEntries must be a positive integer')
  const prefix = partPrefix(context)
  const seen = new Set<string>()
  const out: ErrorEntry[] = []
  for (let i = 0; i < errors.length; i++) {
    const error = errors[i]
    // propertyNames reports the property name's own failure first; the summary entry says it better.
    if (error.keyword !== 'propertyNames' && error.params?.propertyName !== undefined) continue
    const entries = entriesFor(error, context, prefix)
    for (let j = 0; j < entries.length; j++) {
      const entry = entries[j]
      const key = entry.field + '\u0000' + entry.message
      if (seen.has(key)) continue
      if (out.length === max) {
        const more = entries.length - j + errors.length - i - 1
        out.push({ field: partField(context), message: `${more} more ${more === 1 ? 'problem was' : 'problems were'} not listed` })
        return out
      }
      seen.add(key)
      out.push(entry)
    }
  }
  return out
}
