/**
 * Maps Ajv validation errors to `errors[]` entries (docs/architecture.md: dotted paths,
 * a missing required property and an unknown property named by their own path).
 * Framework-free: takes the plain Ajv error objects Fastify attaches to its error.
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

/** `/author/name` -> `author.name`; `/tags/2` -> `tags.2` (RFC 6901 escapes decoded). */
export function pointerToPath (pointer: string): string {
  if (pointer === '') return ''
  const parts = pointer.split('/')
  let out = ''
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i].replace(/~1/g, '/').replace(/~0/g, '~')
    out += i === 1 ? part : '.' + part
  }
  return out
}

function join (base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`
}

function entryFor (error: AjvErrorLike, context: ValidationContext): ErrorEntry {
  const base = pointerToPath(error.instancePath)
  const p = error.params
  let field = base
  let message = error.message ?? 'is invalid'
  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
    case 'dependencies':
      field = join(base, String(p.missingProperty))
      message = 'is required'
      break
    case 'additionalProperties':
      field = join(base, String(p.additionalProperty))
      message = 'is not allowed'
      break
    case 'unevaluatedProperties':
      field = join(base, String(p.unevaluatedProperty))
      message = 'is not allowed'
      break
    case 'propertyNames':
      field = join(base, String(p.propertyName))
      message = 'is not an allowed property name'
      break
  }
  if (field === '') field = context
  return { field, message }
}

export interface EntriesOptions {
  /**
   * Most entries listed (default 100). Past it, one last entry (field: the context, e.g.
   * `body`) says how many more problems were not listed, so that a body with half a
   * million invalid items does not get a 422 ten times its size.
   */
  maxEntries?: number
}

export const DEFAULT_MAX_ENTRIES = 100

/**
 * One entry per distinct problem, in Ajv's order, at most `maxEntries` of them plus
 * the entry counting the rest. The work is proportional to the entries listed: the rest
 * are counted, not mapped (duplicates among them, which would have been merged, are
 * counted too).
 */
export function ajvErrorsToEntries (errors: readonly AjvErrorLike[], context: ValidationContext, options?: EntriesOptions): ErrorEntry[] {
  const max = options?.maxEntries ?? DEFAULT_MAX_ENTRIES
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxEntries must be a positive integer')
  const seen = new Set<string>()
  const out: ErrorEntry[] = []
  for (let i = 0; i < errors.length; i++) {
    const error = errors[i]
    // propertyNames reports the property name's own failure first; the summary entry says it better.
    if (error.keyword !== 'propertyNames' && error.params?.propertyName !== undefined) continue
    const entry = entryFor(error, context)
    const key = entry.field + '\u0000' + entry.message
    if (seen.has(key)) continue
    if (out.length === max) {
      const more = errors.length - i
      out.push({ field: context, message: `${more} more ${more === 1 ? 'problem was' : 'problems were'} not listed` })
      break
    }
    seen.add(key)
    out.push(entry)
  }
  return out
}
