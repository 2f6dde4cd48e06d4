/**
 * JSON Patch (RFC 6902) through fast-json-patch, made atomic and strict, and JSON Merge
 * Patch (RFC 7396). Framework-free: returns the patched document or the problems, each
 * named by the path it concerns, ready for the 422 `errors[]` envelope.
 *
 * The cost of a patch is bounded before it is paid: a few kilobytes of `copy`
 * operations can otherwise double the document at every step. Every value the patch
 * adds, replaces, copies or tests is measured first by a walker that stops as soon as
 * the remaining budget or the depth bound is passed, so a refused patch costs no more
 * than the bound itself.
 */
import { applyOperation, deepClone, type Operation } from 'fast-json-patch'
import { patchTooCostly, unprocessable, type ConventionError, type ErrorEntry } from './errors'
import { pointerToPath } from './validation-errors'

/** The bound a patch went over. */
export type PatchLimit = 'operations' | 'size' | 'depth' | 'work'

/** The outcome of applying a patch: the new document, or the 422 entries (and the bound that was reached, if any). */
export type PatchResult =
  | { ok: true, document: unknown }
  /** `limit` is set when the patch was refused for its cost, not because it does not apply. */
  | { ok: false, errors: ErrorEntry[], limit?: PatchLimit }

/** Bounds of one patch: operations, size of the working document, depth. */
export interface PatchLimits {
  /** Most operations in one JSON Patch document (default 1000). */
  maxOperations?: number
  /**
   * Bound of the working document, as an estimate of its serialized size in UTF-16 code
   * units (about bytes), default 8 MiB. It starts at the size of the resource and grows
   * by the size of every value an operation adds, replaces or copies; nothing is credited
   * back for what is removed, so it also bounds the work of the whole patch. The same
   * number bounds the array elements the patch's insertions and removals shift, summed
   * over its operations (an add or remove at index k of an array of n shifts n - k or
   * n - k - 1 elements; a move does both): a thousand inserts at the front of a long
   * array is refused ('work') before the first that would pass the bound runs. For a
   * merge patch it bounds the patch document. Callers pass a multiple of their body limit.
   */
  maxDocumentBytes?: number
  /**
   * Deepest nesting of arrays and objects (default 64) of any value in the patch and of
   * any value the patch places in the document, counted from the document's root.
   */
  maxDepth?: number
}

export const DEFAULT_PATCH_LIMITS: Readonly<Required<PatchLimits>> = Object.freeze({
  maxOperations: 1000,
  maxDocumentBytes: 8 * 1024 * 1024,
  maxDepth: 64
})

/** One bound of `limits`, or its default; a bound that is not a positive integer is a programming error. */
function boundOf (limits: PatchLimits, key: keyof PatchLimits): number {
  const v = limits[key]
  if (v === undefined) return DEFAULT_PATCH_LIMITS[key]
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${key} must be a positive integer`)
  return v
}

function limitsOf (limits: PatchLimits | undefined): Readonly<Required<PatchLimits>> {
  if (limits === undefined) return DEFAULT_PATCH_LIMITS
  // In the order of DEFAULT_PATCH_LIMITS: the first bad bound is the one reported.
  const maxOperations = boundOf(limits, 'maxOperations')
  const maxDocumentBytes = boundOf(limits, 'maxDocumentBytes')
  return { maxOperations, maxDocumentBytes, maxDepth: boundOf(limits, 'maxDepth') }
}

/** The catalogue error for a failed patch: PATCH_TOO_COSTLY (422) for a bound, else UNPROCESSABLE_ENTITY (422). */
export function patchError (result: { ok: false, errors: ErrorEntry[], limit?: PatchLimit }): ConventionError {
  if (result.limit !== undefined) return patchTooCostly(result.errors[0].message, result.errors[0].field)
  return unprocessable(result.errors)
}

const SIZE_EXCEEDED = -1
const DEPTH_EXCEEDED = -2

/** The estimated serialized size of a value that is no container (see measure). */
function scalarSize (node: unknown): number {
  if (typeof node === 'string') return node.length + 2
  if (typeof node === 'number') return Number.isInteger(node) && node >= 0 && node < 10 ? 1 : String(node).length
  if (node === null || node === undefined || typeof node === 'boolean') return 5
  // Not a JSON value (a function, a symbol, a bigint): counted, and refused later by JSON itself.
  return 1
}

/**
 * Estimated serialized size (RFC 8259 2: structural characters, quotes, members) of a
 * JSON value, walked without recursion. Stops and returns SIZE_EXCEEDED as soon as the
 * estimate passes `budget`, DEPTH_EXCEEDED as soon as a container lies deeper than
 * `maxDepth` (the value itself, when a container, is depth 1). A container's own cost
 * (its brackets, commas and member names) is counted before its members are visited,
 * so the work done is at most about `budget` steps.
 */
function measure (value: unknown, budget: number, maxDepth: number): number {
  // A value that is no container (most values a patch adds, replaces or tests) needs no walk.
  if (value === null || typeof value !== 'object') {
    const size = scalarSize(value)
    return size > budget ? SIZE_EXCEEDED : size
  }
  let size = 0
  const nodes: unknown[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()
    const depth = depths.pop() as number
    if (node !== null && typeof node === 'object') {
      if (depth > maxDepth) return DEPTH_EXCEEDED
      if (Array.isArray(node)) {
        size += node.length + 2
        if (size > budget) return SIZE_EXCEEDED
        for (let i = node.length - 1; i >= 0; i--) {
          nodes.push(node[i])
          depths.push(depth + 1)
        }
      } else {
        const keys = Object.keys(node)
        size += keys.length + 2
        if (size > budget) return SIZE_EXCEEDED
        for (let i = keys.length - 1; i >= 0; i--) {
          size += keys[i].length + 3
          nodes.push((node as Record<string, unknown>)[keys[i]])
          depths.push(depth + 1)
        }
      }
    } else {
      size += scalarSize(node)
    }
    if (size > budget) return SIZE_EXCEEDED
  }
  return size
}

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
  // Cut at each "/" by hand: about a third of the time of slice(1).split('/').
  const parts: string[] = []
  for (let start = 1; ;) {
    const end = pointer.indexOf('/', start)
    if (end === -1) {
      parts.push(pointer.slice(start))
      break
    }
    parts.push(pointer.slice(start, end))
    start = end + 1
  }
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
  /* c8 ignore start */
  // Not reached: the last part returns in every branch above (the loop has no exit of its own).
}
/* c8 ignore stop */

/** RFC 6902 4.1: "add" needs an existing parent; in an array, an index up to its length or "-". */
function canAdd (t: Target): boolean {
  if (t.parent === undefined) return t.key === ''
  if (Array.isArray(t.parent)) return t.key === '-' || Number(t.key) <= t.parent.length
  return t.parent !== null && typeof t.parent === 'object'
}

function tooCostly (field: string, message: string, limit: PatchLimit): PatchResult {
  return { ok: false, errors: [{ field, message }], limit }
}

/** The field a problem of operation i is reported under (computed only when there is a problem). */
function opField (path: unknown, i: number): string {
  return fieldOf(path, `${i}.path`)
}

function overBudget (field: string, i: number, maxDocumentBytes: number): PatchResult {
  return tooCostly(field, `operation ${i}: the patched document would exceed ${maxDocumentBytes} bytes`, 'size')
}

function tooMuchShifting (field: string, i: number, maxShifts: number): PatchResult {
  return tooCostly(field, `operation ${i}: the patch would shift more than ${maxShifts} array elements in all`, 'work')
}

/** RFC 6902 4.1: an add at index k of an array shifts the elements from k on ("-" appends). */
function insertShifts (t: Target): number {
  return Array.isArray(t.parent) && t.key !== '-' ? t.parent.length - Number(t.key) : 0
}

/** RFC 6902 4.2: removing index k of an array shifts the elements after it. */
function removeShifts (t: Target): number {
  return Array.isArray(t.parent) ? t.parent.length - Number(t.key) - 1 : 0
}

function tooDeep (field: string, i: number, maxDepth: number): PatchResult {
  return tooCostly(field, `operation ${i}: the patched document would be nested deeper than ${maxDepth} levels`, 'depth')
}

/** RFC 8259 7: characters a JSON string escapes (lone surrogates too, as JSON.stringify does). */
// eslint-disable-next-line no-control-regex -- the control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/** RFC 8259 7: the length of a string written as JSON text, quotes and escapes included. */
function jsonStringLength (s: string): number {
  const n = s.length
  if (n > 32) return NEEDS_ESCAPE.test(s) ? JSON.stringify(s).length : n + 2
  // A short string (most names and values) is read here: cheaper than a call into the regexp engine.
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(s).length
  }
  return n + 2
}

/** The exact length of the resource's JSON text, summed while it is copied. */
interface CopyState { size: number }

/**
 * A copy of a plain JSON value (RFC 8259: objects whose constructor is Object, arrays,
 * strings, finite numbers, booleans, null), the length of its JSON text added to
 * `state.size`, as JSON.parse(JSON.stringify(value)) would build it and measure it. A
 * container may lie `room` levels deep at most. Anything else (a value JSON would convert:
 * toJSON, undefined, a class instance, a "__proto__" member; a container too deep) gives
 * undefined, and the caller takes JSON's own path.
 */
function copyJson (value: unknown, room: number, state: CopyState): unknown {
  switch (typeof value) {
    case 'string':
      state.size += jsonStringLength(value)
      return value
    case 'number':
      if (!Number.isFinite(value)) return undefined
      state.size += String(value).length
      // JSON writes -0 as 0.
      return value === 0 ? 0 : value
    case 'boolean':
      state.size += value ? 4 : 5
      return value
    case 'object':
      break
    default:
      return undefined
  }
  if (value === null) {
    state.size += 4
    return value
  }
  if (room === 0 || typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined
  if (Array.isArray(value)) {
    const n = value.length
    const out = new Array<unknown>(n)
    for (let i = 0; i < n; i++) {
      const item = copyJson(value[i], room - 1, state)
      if (item === undefined) return undefined
      out[i] = item
    }
    state.size += n === 0 ? 2 : n + 1
    return out
  }
  // A plain object; a boxed primitive, a raw JSON text, a null-prototype object take JSON's path.
  if ((value as { constructor?: unknown }).constructor !== Object) return undefined
  const keys = Object.keys(value)
  const out: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (key === '__proto__') return undefined
    const member = copyJson((value as Record<string, unknown>)[key], room - 1, state)
    if (member === undefined) return undefined
    out[key] = member
    state.size += jsonStringLength(key) + 1
  }
  state.size += keys.length === 0 ? 2 : keys.length + 1
  return out
}

/** The serialized form of the resource, its estimated size, and a private copy of it. */
function cloneMeasured (document: unknown, maxDepth: number): { doc: unknown, size: number } | null {
  if (document === undefined) return { doc: deepClone(document), size: 4 }
  if (document === null || typeof document !== 'object') return { doc: document, size: measure(document, Infinity, 1) }
  // One walk copies and measures a plain JSON resource (most are); any other takes JSON's path below.
  const state: CopyState = { size: 0 }
  let copy: unknown
  try {
    copy = copyJson(document, maxDepth, state)
  } catch {
    // A resource nested deeper than the stack (under a large maxDepth), or an accessor that throws.
    copy = undefined
  }
  if (copy !== undefined) return { doc: copy, size: state.size }
  // A resource already deeper than the bound is refused whatever the engine's stack could
  // serialize (Node 26's JSON.stringify takes 200,000 levels; earlier lines throw).
  if (measure(document, Infinity, maxDepth) === DEPTH_EXCEEDED) return null
  try {
    const text = JSON.stringify(document)
    return { doc: JSON.parse(text), size: text.length }
  } catch {
    // A resource nested too deeply for the serializer's stack (or not JSON at all).
    return null
  }
}

/** The working state of a JSON Patch as it applies: the document and the costs spent so far (see PatchLimits). */
interface PatchWork {
  doc: unknown
  /** Estimated size of the working document, never credited for removals. */
  used: number
  /** Work spent measuring values moved deeper into the document, bounded the same way. */
  walked: number
  /** Array elements shifted by insertions and removals, bounded the same way. */
  shifted: number
}

/** One operation, checked against RFC 6902 4 and resolved in the working document. */
interface ResolvedOperation {
  op: Record<string, unknown>
  name: string
  path: string
  parts: string[]
  /** Where "from" points (move, copy). */
  source: Target | undefined
  fromParts: string[] | undefined
  target: Target
}

/** RFC 6902 4.4 and 4.5: the "from" location of a move or copy, which MUST exist; or the failure. */
function resolveFrom (op: Record<string, unknown>, i: number, name: string, path: string, doc: unknown): { source: Target, fromParts: string[] } | PatchResult {
  const from = op.from
  if (typeof from !== 'string') return fail(opField(path, i), `operation ${i} (${name}) needs a "from" JSON Pointer`)
  const fromParts = tokens(from) ?? undefined
  if (fromParts === undefined) return fail(opField(path, i), `operation ${i}: "from" is not a JSON Pointer`)
  // RFC 6902 4.4: a location cannot be moved into one of its children.
  if (name === 'move' && path.startsWith(from + '/')) return fail(opField(path, i), `operation ${i}: cannot move a value into one of its own children`)
  const found = resolve(doc, fromParts)
  if (typeof found === 'string') return fail(fieldOf(from, opField(path, i)), `operation ${i}: ${found.replace('path', '"from"')}`)
  if (!found.exists || found.key === '-') return fail(opField(path, i), `operation ${i} (${name}): ${MESSAGES.OPERATION_FROM_UNRESOLVABLE}`)
  return { source: found, fromParts }
}

/** Operation `i` of the patch, checked and resolved in `doc`; or the failure. */
function resolveOperation (value: unknown, i: number, doc: unknown): ResolvedOperation | PatchResult {
  const op = value as Record<string, unknown>
  if (op === null || typeof op !== 'object' || Array.isArray(op)) return fail(`${i}`, `operation ${i} is not an object`)
  const path = op.path
  const name = op.op
  if (typeof name !== 'string' || !OPS.has(name)) return fail(opField(path, i), `operation ${i}: "op" must be one of add, remove, replace, move, copy, test`)
  if (typeof path !== 'string') return fail(`${i}.path`, `operation ${i}: "path" must be a JSON Pointer string`)
  // The field of a problem is computed only when there is one (opField): the success path builds no names.
  const parts = tokens(path)
  if (parts === null) return fail(opField(path, i), `operation ${i}: "path" is not a JSON Pointer`)
  if (NEEDS_VALUE.has(name) && (!Object.prototype.hasOwnProperty.call(op, 'value') || op.value === undefined)) return fail(opField(path, i), `operation ${i} (${name}) needs a "value"`)
  let source: Target | undefined
  let fromParts: string[] | undefined
  if (NEEDS_FROM.has(name)) {
    const resolved = resolveFrom(op, i, name, path, doc)
    if ('ok' in resolved) return resolved
    source = resolved.source
    fromParts = resolved.fromParts
  }
  const target = resolve(doc, parts)
  if (typeof target === 'string') return fail(opField(path, i), `operation ${i}: ${target}`)
  if (name === 'add' || name === 'move' || name === 'copy') {
    if (!canAdd(target)) return fail(opField(path, i), `operation ${i} (${name}): ${target.parent === undefined || !Array.isArray(target.parent) ? MESSAGES.OPERATION_PATH_CANNOT_ADD : MESSAGES.OPERATION_VALUE_OUT_OF_BOUNDS}`)
  } else if (!target.exists) {
    // RFC 6902 4.2, 4.3, 4.6: the target location MUST exist.
    return fail(opField(path, i), `operation ${i} (${name}): ${MESSAGES.OPERATION_PATH_UNRESOLVABLE}`)
  }
  return { op, name, path, parts, source, fromParts, target }
}

/**
 * Charges the cost of an operation to `work`, before it runs; a failure when a bound is
 * passed. A value placed at `path` lies inside parts.length containers, so it may itself be
 * maxDepth - parts.length deep.
 */
function chargeOperation (r: ResolvedOperation, i: number, work: PatchWork, limits: Readonly<Required<PatchLimits>>): PatchResult | null {
  const { maxDocumentBytes, maxDepth } = limits
  const { name, parts } = r
  const room = maxDepth - parts.length
  const before = work.used
  let size: number | undefined
  if (name === 'add' || name === 'replace' || name === 'test') {
    // RFC 6902 4.1, 4.3, 4.6: the value comes from the patch document. A "test" value
    // is compared recursively, so it is measured too (its depth bounded the same way).
    size = measure(r.op.value, name === 'test' ? maxDocumentBytes : maxDocumentBytes - work.used, room)
  } else if (name === 'copy' && parts.length > 0) {
    // RFC 6902 4.5: the value at "from" is duplicated: the document grows by its size.
    size = measure(valueAt(r.source as Target, work.doc), maxDocumentBytes - work.used, room)
  } else if (name === 'move' && parts.length > (r.fromParts as string[]).length) {
    // RFC 6902 4.4: a move does not grow the document, but a move deeper may nest it too
    // deeply; measuring the value is work, bounded by the same budget.
    size = measure(valueAt(r.source as Target, work.doc), maxDocumentBytes - work.walked, room)
  }
  if (size === DEPTH_EXCEEDED) return tooDeep(opField(r.path, i), i, maxDepth)
  if (size === SIZE_EXCEEDED) return overBudget(opField(r.path, i), i, maxDocumentBytes)
  if (size !== undefined) {
    if (name === 'add' || name === 'replace') work.used += size + parts.length + (parts.length > 0 ? parts[parts.length - 1].length : 0)
    else if (name === 'copy') work.used += size + parts[parts.length - 1].length + 4
    else if (name === 'move') work.walked += size
  }
  // A resource already over the bound (stored by other means) may still shrink or be tested.
  if (work.used > before && work.used > maxDocumentBytes) return overBudget(opField(r.path, i), i, maxDocumentBytes)
  // RFC 6902 4.4: a move is a remove and an add; copy adds.
  if (name === 'add' || name === 'copy' || name === 'move') work.shifted += insertShifts(r.target)
  if (name === 'remove') work.shifted += removeShifts(r.target)
  else if (name === 'move') work.shifted += removeShifts(r.source as Target)
  if (work.shifted > maxDocumentBytes) return tooMuchShifting(opField(r.path, i), i, maxDocumentBytes)
  return null
}

/** Runs a checked operation on the working document; a failed "test" or a banned path is a failure. */
function runOperation (r: ResolvedOperation, i: number, work: PatchWork): PatchResult | null {
  try {
    // Every check of fast-json-patch's own validator was made above, against the same document.
    work.doc = applyOperation(work.doc, r.op as unknown as Operation, false, true, true, i).newDocument
    return null
  } catch (err) {
    // A failed "test", or fast-json-patch's TypeError for a prototype path it bans: a 422, never a 500.
    const code = (err as { name?: string }).name ?? ''
    return fail(opField(r.path, i), `operation ${i} (${r.name}): ${MESSAGES[code] ?? 'cannot be applied to the resource'}`)
  }
}

/**
 * Applies a JSON Patch document atomically: on any failure the input is untouched and
 * the problems come back; on success the new document is returned (the input is never
 * mutated). RFC 6902 5: operations apply in order; an error stops the whole patch.
 * The document and patch are JSON values (as parsed from a request body).
 *
 * `limits` bound the cost (see PatchLimits); a patch over a bound is refused before the
 * operation that would pass it runs, with `limit` set on the result (patchError maps it
 * to PATCH_TOO_COSTLY). Never throws for any document or patch.
 */
export function applyJsonPatch (document: unknown, patch: unknown, limits?: PatchLimits): PatchResult {
  const bounds = limitsOf(limits)
  const { maxOperations, maxDepth } = bounds
  // RFC 6902 3: a JSON Patch document is a JSON array of objects.
  if (!Array.isArray(patch)) return fail('body', 'a JSON Patch document is an array of operations (RFC 6902 3)')
  if (patch.length > maxOperations) return tooCostly('body', `a JSON Patch document may hold at most ${maxOperations} operations; this one has ${patch.length}`, 'operations')
  const start = cloneMeasured(document, maxDepth)
  if (start === null) return tooCostly('body', 'the resource cannot be patched: it is nested too deeply', 'depth')
  const work: PatchWork = { doc: start.doc, used: start.size, walked: 0, shifted: 0 }
  for (let i = 0; i < patch.length; i++) {
    const r = resolveOperation(patch[i], i, work.doc)
    if ('ok' in r) return r
    const refused = chargeOperation(r, i, work, bounds) ?? runOperation(r, i, work)
    if (refused !== null) return refused
  }
  return { ok: true, document: work.doc }
}

/** The value a resolved, existing location holds. */
function valueAt (t: Target, doc: unknown): unknown {
  if (t.parent === undefined) return doc
  return Array.isArray(t.parent) ? t.parent[Number(t.key)] : (t.parent as Record<string, unknown>)[t.key]
}

function isObject (v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * RFC 7396 2: MergePatch(Target, Patch), bounded: the patch may be at most `maxDepth`
 * deep and about `maxDocumentBytes` in size (checked without recursion before anything
 * is merged; the result is then at most as deep as the target or the patch). Returns the
 * merged document, or the failure with `limit` set. Never mutates its inputs.
 */
export function mergePatch (target: unknown, patch: unknown, limits?: PatchLimits): PatchResult {
  const { maxDocumentBytes, maxDepth } = limitsOf(limits)
  try {
    const size = measure(patch, maxDocumentBytes, maxDepth)
    if (size === DEPTH_EXCEEDED) return tooCostly('body', `a merge patch may be nested at most ${maxDepth} levels deep`, 'depth')
    if (size === SIZE_EXCEEDED) return tooCostly('body', `a merge patch may be at most ${maxDocumentBytes} bytes`, 'size')
    return { ok: true, document: merge(target, patch) }
  } catch {
    // Values that are not plain JSON (an accessor that throws): a 422, never a throw.
    return fail('body', 'the merge patch cannot be applied to the resource')
  }
}

/**
 * RFC 7396 2: MergePatch(Target, Patch). `null` removes a member; non-objects replace.
 * Never mutates its inputs. Bounded as mergePatch; a patch over a bound throws the
 * catalogue's PATCH_TOO_COSTLY (422), which the suite's error handler renders.
 */
export function applyMergePatch (target: unknown, patch: unknown, limits?: PatchLimits): unknown {
  const result = mergePatch(target, patch, limits)
  if (!result.ok) throw patchError(result)
  return result.document
}

function merge (target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return deepClone(patch)
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {}
  for (const key of Object.keys(patch)) {
    if (key === '__proto__') continue
    const value = patch[key]
    if (value === null) delete out[key]
    else out[key] = merge(out[key], value)
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
