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
  if (pointer[0] !== '/') return null
  const parts = pointer.slice(1).split('/')
  for (let i = 0; i < parts.length; i++) {
    // RFC 6901 3: "~" is only valid as "~0" or "~1".
    if (/~[^01]|~$/.test(parts[i])) return null
    parts[i] = parts[i].replace(/~1/g, '/').replace(/~0/g, '~')
  }
  return parts
}

/**
 * Checks a pointer against the document as it stands: array indexes are "0" or digits
 * without a leading zero (RFC 6901 4; fast-json-patch accepts "01"), or "-" as the last
 * token when `allowDash`; prototype keys are refused.
 */
function checkPointer (doc: unknown, parts: string[], allowDash: boolean): string | null {
  let node: unknown = doc
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]
    if (part === '__proto__' || (part === 'prototype' && i > 0 && parts[i - 1] === 'constructor')) return 'path names a forbidden prototype property'
    if (Array.isArray(node)) {
      const last = i === parts.length - 1
      if (part === '-' && last && allowDash) return null
      if (!/^(0|[1-9][0-9]*)$/.test(part)) return 'path is not a valid array index (RFC 6901 4: no leading zeros)'
      node = node[Number(part)]
    } else if (node !== null && typeof node === 'object') {
      node = Object.prototype.hasOwnProperty.call(node, part) ? (node as Record<string, unknown>)[part] : undefined
    } else {
      return null
    }
  }
  return null
}

/**
 * Applies a JSON Patch document atomically: on any failure the input is untouched and
 * the problems come back; on success the new document is returned (the input is never
 * mutated). RFC 6902 5: operations apply in order; an error stops the whole patch.
 */
export function applyJsonPatch (document: unknown, patch: unknown): PatchResult {
  // RFC 6902 3: a JSON Patch document is a JSON array of objects.
  if (!Array.isArray(patch)) return fail('body', 'a JSON Patch document is an array of operations (RFC 6902 3)')
  let doc = deepClone(document)
  for (let i = 0; i < patch.length; i++) {
    const op = patch[i] as Record<string, unknown>
    const at = `${i}`
    if (op === null || typeof op !== 'object' || Array.isArray(op)) return fail(at, `operation ${i} is not an object`)
    const path = op.path
    const field = fieldOf(path, `${at}.path`)
    if (typeof op.op !== 'string' || !OPS.has(op.op)) return fail(field, `operation ${i}: "op" must be one of add, remove, replace, move, copy, test`)
    if (typeof path !== 'string') return fail(`${at}.path`, `operation ${i}: "path" must be a JSON Pointer string`)
    const parts = tokens(path)
    if (parts === null) return fail(field, `operation ${i}: "path" is not a JSON Pointer`)
    if (NEEDS_VALUE.has(op.op) && !Object.prototype.hasOwnProperty.call(op, 'value')) return fail(field, `operation ${i} (${op.op}) needs a "value"`)
    let fromParts: string[] | null = null
    if (NEEDS_FROM.has(op.op)) {
      if (typeof op.from !== 'string') return fail(field, `operation ${i} (${op.op}) needs a "from" JSON Pointer`)
      fromParts = tokens(op.from)
      if (fromParts === null) return fail(field, `operation ${i}: "from" is not a JSON Pointer`)
      // RFC 6902 4.4: a location cannot be moved into one of its children.
      if (op.op === 'move' && path.startsWith(op.from + '/')) return fail(field, `operation ${i}: cannot move a value into one of its own children`)
      const fromProblem = checkPointer(doc, fromParts, false)
      if (fromProblem !== null) return fail(fieldOf(op.from, field), `operation ${i}: ${fromProblem.replace('path', '"from"')}`)
    }
    const problem = checkPointer(doc, parts, op.op === 'add' || op.op === 'move' || op.op === 'copy')
    if (problem !== null) return fail(field, `operation ${i}: ${problem}`)
    try {
      doc = applyOperation(doc, op as unknown as Operation, true, true, true, i).newDocument
    } catch (err) {
      // Every failure of one operation is the patch's fault (fast-json-patch throws a plain
      // TypeError for prototype paths it bans): a 422 naming the path, never a 500.
      const name = (err as { name?: string }).name ?? ''
      return fail(field, `operation ${i} (${op.op}): ${MESSAGES[name] ?? 'cannot be applied to the resource'}`)
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
