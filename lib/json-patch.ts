/**
 * JSON Patch (RFC 6902) through fast-json-patch, made atomic and strict, and JSON Merge
 * Patch (RFC 7396). Framework-free: returns the patched document or the problems, each
 * named by the path it concerns, ready for the 422 `errors[]` envelope.
 */
import { applyOperation, deepClone, type Operation } from 'fast-json-patch'
import type { ErrorEntry } from './errors'
import { pointerToPath } from './validation-errors'

export type PatchResult = { ok: true, document: unknown } | { ok: false, errors: ErrorEntry[] }

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])
const NEEDS_VALUE = new Set(['add', 'replace', 'test'])
const NEEDS_FROM = new Set(['move', 'copy'])

const MESSAGES: Record<string, string> = {
  OPERATION_PATH_UNRESOLVABLE: 'path does not exist in the resource',
  OPERATION_FROM_UNRESOLVABLE: '"from" does not exist in the resource',
  OPERATION_PATH_CANNOT_ADD: 'cannot add here: the parent of path does not exist',
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: 'path is not a valid array index',
  OPERATION_VALUE_OUT_OF_BOUNDS: 'array index is out of bounds',
  OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED: 'value is not valid JSON',
  TEST_OPERATION_FAILED: 'test failed: the value at path is not the expected one'
}

function fieldOf (pointer: unknown, fallback: string): string {
  if (typeof pointer !== 'string') return fallback
  if (pointer === '') return 'body'
  return pointer[0] === '/' ? pointerToPath(pointer) : pointer
}

function fail (field: string, message: string): PatchResult {
  return { ok: false, errors: [{ field, message }] }
}

/** RFC 6901 4 / RFC 6902 4: the reference tokens of a pointer, or null when it is not a pointer. */
function tokens (pointer: string): string[] | null {
  if (pointer === '') return []
  if (pointer.charCodeAt(0) !== 47) return null
  const parts = pointer.slice(1).split('/')
  if (pointer.indexOf('~') === -1) return parts
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]
    // RFC 6901 3: "~" is only valid as "~0" or "~1".
    for (let j = part.indexOf('~'); j !== -1; j = part.indexOf('~', j + 1)) {
      const next = part.charCodeAt(j + 1)
      if (next !== 48 && next !== 49) return null
    }
    parts[i] = part.replace(/~1/g, '/').replace(/~0/g, '~')
  }
  return parts
}

/** RFC 6901 4: an array index is "0" or digits without a leading zero. */
function isArrayIndex (s: string): boolean {
  const n = s.length
  if (n === 0 || (n > 1 && s.charCodeAt(0) === 48)) return false
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

interface Target {
  /** The container the last token addresses (undefined when the path does not reach one). */
  parent: unknown
  /** The last token. */
  key: string
  /** True when the location itself exists. */
  exists: boolean
}

/**
 * Walks a pointer through the document as it stands. Returns a problem (array index with
 * a leading zero, "-" where it cannot be, a prototype key), or where it lands.
 */
function resolve (doc: unknown, parts: string[]): Target | string {
  if (parts.length === 0) return { parent: undefined, key: '', exists: true }
  let node: unknown = doc
  for (let i = 0; ; i++) {
    const part = parts[i]
    if (part === '__proto__' || (part === 'prototype' && i > 0 && parts[i - 1] === 'constructor')) return 'path names a forbidden prototype property'
    const last = i === parts.length - 1
    if (Array.isArray(node)) {
      if (part === '-' && last) return { parent: node, key: part, exists: false }
      if (!isArrayIndex(part)) return 'path is not a valid array index (RFC 6901 4: no leading zeros)'
      if (last) return { parent: node, key: part, exists: Number(part) < node.length }
      node = node[Number(part)]
    } else if (node !== null && typeof node === 'object') {
      const has = Object.prototype.hasOwnProperty.call(node, part)
      if (last) return { parent: node, key: part, exists: has }
      node = has ? (node as Record<string, unknown>)[part] : undefined
    } else {
      return { parent: undefined, key: part, exists: false }
    }
  }
}

/** RFC 6902 4.1: "add" needs an existing parent; in an array, an index up to its length or "-". */
function canAdd (t: Target): boolean {
  if (t.parent === undefined) return t.key === ''
  if (Array.isArray(t.parent)) return t.key === '-' || Number(t.key) <= t.parent.length
  return t.parent !== null && typeof t.parent === 'object'
}

/**
 * Applies a JSON Patch document atomically: on any failure the input is untouched and
 * the problems come back; on success the new document is returned (the input is never
 * mutated). RFC 6902 5: operations apply in order; an error stops the whole patch.
 * The document and patch are JSON values (as parsed from a request body).
 */
export function applyJsonPatch (document: unknown, patch: unknown): PatchResult {
  // RFC 6902 3: a JSON Patch document is a JSON array of objects.
  if (!Array.isArray(patch)) return fail('body', 'a JSON Patch document is an array of operations (RFC 6902 3)')
  let doc = deepClone(document)
  for (let i = 0; i < patch.length; i++) {
    const op = patch[i] as Record<string, unknown>
    if (op === null || typeof op !== 'object' || Array.isArray(op)) return fail(`${i}`, `operation ${i} is not an object`)
    const path = op.path
    // The field a problem is reported under: computed only when there is a problem.
    const field = (): string => fieldOf(path, `${i}.path`)
    const name = op.op
    if (typeof name !== 'string' || !OPS.has(name)) return fail(field(), `operation ${i}: "op" must be one of add, remove, replace, move, copy, test`)
    if (typeof path !== 'string') return fail(`${i}.path`, `operation ${i}: "path" must be a JSON Pointer string`)
    const parts = tokens(path)
    if (parts === null) return fail(field(), `operation ${i}: "path" is not a JSON Pointer`)
    if (NEEDS_VALUE.has(name) && (!Object.prototype.hasOwnProperty.call(op, 'value') || op.value === undefined)) return fail(field(), `operation ${i} (${name}) needs a "value"`)
    if (NEEDS_FROM.has(name)) {
      const from = op.from
      if (typeof from !== 'string') return fail(field(), `operation ${i} (${name}) needs a "from" JSON Pointer`)
      const fromParts = tokens(from)
      if (fromParts === null) return fail(field(), `operation ${i}: "from" is not a JSON Pointer`)
      // RFC 6902 4.4: a location cannot be moved into one of its children.
      if (name === 'move' && path.startsWith(from + '/')) return fail(field(), `operation ${i}: cannot move a value into one of its own children`)
      const source = resolve(doc, fromParts)
      if (typeof source === 'string') return fail(fieldOf(from, field()), `operation ${i}: ${source.replace('path', '"from"')}`)
      // RFC 6902 4.4 and 4.5: the "from" location MUST exist.
      if (!source.exists || source.key === '-') return fail(field(), `operation ${i} (${name}): ${MESSAGES.OPERATION_FROM_UNRESOLVABLE}`)
    }
    const target = resolve(doc, parts)
    if (typeof target === 'string') return fail(field(), `operation ${i}: ${target}`)
    if (name === 'add' || name === 'move' || name === 'copy') {
      if (!canAdd(target)) return fail(field(), `operation ${i} (${name}): ${target.parent === undefined || !Array.isArray(target.parent) ? MESSAGES.OPERATION_PATH_CANNOT_ADD : MESSAGES.OPERATION_VALUE_OUT_OF_BOUNDS}`)
    } else if (!target.exists) {
      // RFC 6902 4.2, 4.3, 4.6: the target location MUST exist.
      return fail(field(), `operation ${i} (${name}): ${MESSAGES.OPERATION_PATH_UNRESOLVABLE}`)
    }
    try {
      // Every check of fast-json-patch's own validator was made above, against the same document.
      doc = applyOperation(doc, op as unknown as Operation, false, true, true, i).newDocument
    } catch (err) {
      // A failed "test", or fast-json-patch's TypeError for a prototype path it bans: a 422, never a 500.
      const code = (err as { name?: string }).name ?? ''
      return fail(field(), `operation ${i} (${name}): ${MESSAGES[code] ?? 'cannot be applied to the resource'}`)
    }
  }
  return { ok: true, document: doc }
}

function isObject (v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** RFC 7396 2: MergePatch(Target, Patch). `null` removes a member; non-objects replace. Never mutates its inputs. */
export function applyMergePatch (target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return deepClone(patch)
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {}
  for (const key of Object.keys(patch)) {
    if (key === '__proto__') continue
    const value = patch[key]
    if (value === null) delete out[key]
    else out[key] = applyMergePatch(out[key], value)
  }
  return out
}

interface SchemaLike { properties?: Record<string, SchemaLike>, readOnly?: boolean, items?: SchemaLike }

function sameJson (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

/** JSON Schema `readOnly` properties (draft 7 10.3) whose value a patch changed, by dotted path. */
export function readOnlyViolations (before: unknown, after: unknown, schema: SchemaLike | undefined, base = ''): ErrorEntry[] {
  const out: ErrorEntry[] = []
  const props = schema?.properties
  if (props === undefined) return out
  const b = isObject(before) ? before : {}
  const a = isObject(after) ? after : {}
  for (const key of Object.keys(props)) {
    const sub = props[key]
    const path = base === '' ? key : `${base}.${key}`
    if (sub.readOnly === true) {
      if (!sameJson(b[key], a[key])) out.push({ field: path, message: 'is read-only' })
    } else if (sub.properties !== undefined) {
      out.push(...readOnlyViolations(b[key], a[key], sub, path))
    }
  }
  return out
}
