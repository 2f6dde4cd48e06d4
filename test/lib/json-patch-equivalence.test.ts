/**
 * Property: for every generated resource, patch and set of bounds, the JSON Patch core gives
 * exactly the result (the same document, the same problems, the same bound) or the same thrown
 * error as the core before it was made cheaper (test/helpers/json-patch-previous.ts), and
 * leaves its inputs untouched.
 */
import { test } from 'tap'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { applyJsonPatch, type PatchLimits } from '../../lib/json-patch'
import { applyJsonPatch as previousApplyJsonPatch } from '../helpers/json-patch-previous'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 300
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261128

type Outcome = { value: unknown } | { threw: string }

function outcome (run: () => unknown): Outcome {
  try {
    return { value: run() }
  } catch (err) {
    return { threw: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }
  }
}

/**
 * Both cores on the same input, each with its own copy of the patch (fast-json-patch places
 * a patch's values into the document by reference, so a later operation may change them).
 */
function bothCores (doc: unknown, patch: unknown, limits?: PatchLimits): { now: Outcome, before: Outcome } {
  const now = outcome(() => applyJsonPatch(doc, structuredClone(patch), limits))
  const before = outcome(() => previousApplyJsonPatch(doc, structuredClone(patch), limits))
  return { now, before }
}

function sameAsBefore (doc: unknown, patch: unknown, limits?: PatchLimits): boolean {
  const { now, before } = bothCores(doc, patch, limits)
  return isDeepStrictEqual(now, before)
}

/** RFC 6901 3: a reference token as written in a pointer. */
function escapeToken (token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** Every location of a JSON value as a pointer, and the places an add may go (a new member, "-", one past the end). */
function pointersOf (value: unknown, base = '', out: string[] = []): string[] {
  out.push(base)
  if (Array.isArray(value)) {
    value.forEach((item, i) => pointersOf(item, `${base}/${i}`, out))
    out.push(`${base}/-`, `${base}/${value.length}`)
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) pointersOf((value as Record<string, unknown>)[key], `${base}/${escapeToken(key)}`, out)
    out.push(`${base}/new`)
  }
  return out
}

/** The value at an existing pointer of a JSON value, copied (undefined where there is none). */
function copyAt (value: unknown, pointer: string): unknown {
  let node = value
  for (const token of pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, token)) return undefined
    node = (node as Record<string, unknown>)[token]
  }
  return node === undefined ? undefined : JSON.parse(JSON.stringify(node))
}

// Strings JSON escapes (quotes, backslashes, control characters, lone surrogates), pairs, pointer characters, long ones.
const text = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  // Longer than 32 characters: measured by the other branch of jsonStringLength.
  fc.string({ unit: fc.constantFrom('a', '"', '\n', '\ud800'), minLength: 33, maxLength: 40 }),
  fc.constantFrom('"', '\\', '\n', '\u0001', '\u007f', '\ud800', '\udc00x', '😀', 'a~b', 'a/b', '~1', '01', '0', '-', 'constructor', 'prototype')
)
const scalar = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null))
const { json } = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: 'small', maxDepth: 4 }, scalar, fc.array(tie('json'), { maxLength: 4 }), fc.dictionary(text, tie('json'), { maxKeys: 4 }))
}))
const resource = fc.oneof({ weight: 4, arbitrary: fc.dictionary(text, json, { maxKeys: 5 }) }, { weight: 1, arbitrary: json })

/** Operations, mostly at locations of `doc`, valid or not. */
function operationsFor (doc: unknown): fc.Arbitrary<unknown[]> {
  const pointers = pointersOf(doc)
  const pointer = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...pointers) },
    { weight: 1, arbitrary: fc.constantFrom('/tags/01', '/a/00', '/x~2', 'no-slash', '/__proto__/x', '/constructor/prototype/x', '/-', '/-/a', '/1e0') },
    { weight: 1, arbitrary: fc.array(text, { maxLength: 3 }).map((parts) => parts.map((p) => '/' + escapeToken(p)).join('')) }
  )
  const existing = fc.constantFrom(...pointers)
  const operation = fc.oneof(
    fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value: json }),
    existing.map((path) => ({ op: 'test', path, value: copyAt(doc, path) ?? null })),
    fc.record({ op: fc.constant('remove'), path: pointer }),
    fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }),
    // Invalid operations: a missing or bad member, an op that is not one.
    fc.record({ op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', 7), path: fc.oneof(pointer, fc.constant(7)), from: fc.oneof(pointer, fc.constant(7)), value: json }, { requiredKeys: [] }),
    fc.constantFrom(null, 1, 'op', [])
  )
  return fc.array(operation, { maxLength: 8 })
}

/** Bounds around the resource's own size and depth, so that each is met, passed, or just reached. */
function limitsFor (doc: unknown): fc.Arbitrary<PatchLimits | undefined> {
  const size = JSON.stringify(doc ?? null).length
  return fc.option(fc.record({
    maxOperations: fc.integer({ min: 1, max: 9 }),
    maxDocumentBytes: fc.integer({ min: Math.max(1, size - 4), max: size + 40 }),
    maxDepth: fc.integer({ min: 1, max: 7 })
  }, { requiredKeys: [] }), { nil: undefined, freq: 3 })
}

/**
 * V8's JSON.parse on Node 24 can read an escaped member name as another one it saw before (a
 * key cache that matches the raw text: after a "\\\\" member, "\\"" is read as a backslash).
 * The previous core copied the resource with JSON.parse, so on such an engine it is no oracle
 * for resources with a member name JSON escapes; those are checked against written answers
 * below, and against the previous core on the other lines.
 */
function jsonParseMisreadsEscapedNames (): boolean {
  JSON.parse('{"h":[],"\\\\":0}')
  return Object.keys(JSON.parse('{"h":1,"\\"":2}'))[1] !== '"'
}
const MISREADS = jsonParseMisreadsEscapedNames()

/** True when a member name anywhere in `value` is written with an escape in JSON. */
function hasEscapedName (value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return value.some(hasEscapedName)
  return Object.keys(value).some((key) => JSON.stringify(key).length !== key.length + 2 || hasEscapedName((value as Record<string, unknown>)[key]))
}

const scenario = resource.chain((doc) => fc.tuple(fc.constant(doc), fc.oneof({ weight: 9, arbitrary: operationsFor(doc) }, { weight: 1, arbitrary: json }), limitsFor(doc)))

test('property: the core gives exactly the result or error the previous core gave (RFC 6902, RFC 6901, the bounds)', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(scenario, ([doc, patch, limits]) => {
    fc.pre(!MISREADS || (!hasEscapedName(doc) && !hasEscapedName(patch)))
    const before = JSON.stringify(doc)
    const same = sameAsBefore(doc, patch, limits)
    return same && JSON.stringify(doc) === before
  }), { numRuns: RUNS, seed: SEED }))
})

test('property: a resource\'s size is counted as the length of its JSON text (the bound passes on the same operation)', async (t) => {
  // The add of one small member passes the bound exactly when the resource is as long as its JSON text.
  t.doesNotThrow(() => fc.assert(fc.property(fc.dictionary(text, json, { maxKeys: 5 }), (doc) => {
    fc.pre(!MISREADS || !hasEscapedName(doc))
    const size = JSON.stringify(doc).length
    for (let bound = size + 1; bound <= size + 7; bound++) {
      if (!sameAsBefore(doc, [{ op: 'add', path: '/zz', value: 1 }], { maxDocumentBytes: bound })) return false
    }
    return true
  }), { numRuns: RUNS, seed: SEED }))
})

/** A resource `depth` levels deep, built without recursion. */
function nested (depth: number): unknown {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

class Article {
  title = 'a'
}

test('resources that are not plain JSON are copied as JSON copies them (toJSON, undefined, class instances, -0)', async (t) => {
  const patch = [{ op: 'add', path: '/added', value: 1 }]
  const tooDeep = nested(70)
  const cases: Array<[string, unknown]> = [
    ['a Date (toJSON)', { at: new Date(0) }],
    ['an own toJSON', { v: { toJSON: () => 'x' } }],
    ['an array with a toJSON', { list: Object.assign([1, 2], { toJSON: () => 'list' }) }],
    ['an undefined member', { gone: undefined, kept: 1 }],
    ['a hole in an array', { list: [1, , 3] }], // eslint-disable-line no-sparse-arrays
    ['NaN and Infinity', { n: NaN, i: -Infinity }],
    ['-0', { z: -0, list: [-0] }],
    ['a function and a symbol', { f: () => 1, s: Symbol('s') }],
    ['a class instance', { article: new Article() }],
    ['a Map', { m: new Map([[1, 2]]) }],
    ['a boxed string', { s: Object('x') }],
    ['a null-prototype object', { o: Object.assign(Object.create(null), { a: 1 }) }],
    ['a "__proto__" member', JSON.parse('{"a":{"__proto__":{"polluted":1}}}')],
    ['a BigInt', { n: 10n }],
    ['a resource deeper than maxDepth', tooDeep],
    ['an array resource', [1, 'two', { three: 3 }]],
    ['a member named constructor', { constructor: 1, a: { constructor: 'x' } }],
    ['a boxed number and boolean', { n: Object(1), b: Object(false) }]
  ]
  const rawJSON = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON
  if (rawJSON !== undefined) cases.push(['a raw JSON text', { r: rawJSON('"x"') }])
  for (const [name, doc] of cases) {
    const { now, before } = bothCores(doc, Array.isArray(doc) ? [{ op: 'add', path: '/-', value: 1 }] : patch)
    t.same(now, before, name)
    t.ok(isDeepStrictEqual(now, before), `${name}: strictly equal`)
  }
  t.match(applyJsonPatch({ z: -0 }, []), { ok: true, document: { z: 0 } })
  t.ok(Object.is((applyJsonPatch({ z: -0 }, []) as { document: { z: number } }).document.z, 0), 'JSON writes -0 as 0')
})

test('a resource nested deeper than the stack, under a large maxDepth, is refused as before (not a stack overflow)', async (t) => {
  const doc = nested(200_000)
  const limits = { maxDepth: 1_000_000 }
  const { now, before } = bothCores(doc, [{ op: 'remove', path: '/a' }], limits)
  t.same(now, before)
  t.ok('value' in now, 'a result, not a throw')
})

test('a resource whose accessor throws fails as before', async (t) => {
  const doc = { get a (): unknown { throw new Error('boom') } }
  const { now, before } = bothCores(doc, [])
  t.same(now, before)
  t.same(now, { threw: 'Error: boom' })
})

test('bounds that are not positive integers are refused as before, the first bad one named', async (t) => {
  for (const limits of [{ maxOperations: 0 }, { maxDocumentBytes: 1.5 }, { maxDepth: -1 }, { maxOperations: 0, maxDepth: 0 }, { maxDepth: 0, maxDocumentBytes: NaN }] as PatchLimits[]) {
    const { now, before } = bothCores({}, [], limits)
    t.same(now, before, JSON.stringify(limits))
    t.match(now, { threw: /^RangeError: \w+ must be a positive integer$/ })
  }
})

test('RFC 8259 7: member names JSON escapes are kept, even where the engine\'s JSON.parse misreads them', async (t) => {
  // A resource with a "\\" member first, then one whose name is a quote (or a control character).
  t.same(applyJsonPatch({ h: [], '\\': 0 }, []), { ok: true, document: { h: [], '\\': 0 } })
  for (const name of ['"', '\n', '\t', '\u0001', 'a"']) {
    const doc = { h: 1, [name]: 2 }
    const r = applyJsonPatch(doc, [{ op: 'test', path: `/${escapeToken(name)}`, value: 2 }, { op: 'add', path: '/n', value: 3 }])
    t.ok(isDeepStrictEqual(r, { ok: true, document: { h: 1, [name]: 2, n: 3 } }), JSON.stringify(name))
  }
  // Their size is their JSON text's, escapes included: the add of "a": 1 (3 more) passes the bound exactly there.
  for (const s of ['"', '\\', '\n', '\u0001', '\u001f', '\ud800', '\udc00', '😀', 'é', '\u007f', '"'.repeat(33), '\ud800'.repeat(33), 'x'.repeat(33), 'a"'.repeat(20) + '\n']) {
    for (const doc of [{ v: s }, { [s]: 1 }]) {
      const size = JSON.stringify(doc).length
      t.match(applyJsonPatch(doc, [{ op: 'add', path: '/a', value: 1 }], { maxDocumentBytes: size + 3 }), { ok: true }, `${JSON.stringify(doc)} fits in ${size + 3}`)
      t.match(applyJsonPatch(doc, [{ op: 'add', path: '/a', value: 1 }], { maxDocumentBytes: size + 2 }), { ok: false, limit: 'size' }, `${JSON.stringify(doc)} does not fit in ${size + 2}`)
    }
  }
})
