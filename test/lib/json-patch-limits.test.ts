import { test } from 'tap'
import fc from 'fast-check'
import { applyJsonPatch, applyMergePatch, mergePatch, patchError, DEFAULT_PATCH_LIMITS, type PatchResult } from '../../lib/json-patch'
import { isConventionError } from '../../lib/errors'

/** `{"a":{"a":...}}` `depth` levels deep, built without recursion. */
function nested (depth: number, key = 'a'): unknown {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { [key]: v }
  return v
}

function nestedArrays (depth: number): unknown {
  let v: unknown = []
  for (let i = 1; i < depth; i++) v = [v]
  return v
}

/** 19 copies of the whole document into itself, then 60 copies of the largest: 2^19 * 60 times the document. */
function doublingPatch (): unknown[] {
  const ops: unknown[] = []
  for (let i = 0; i < 19; i++) ops.push({ op: 'copy', from: '', path: `/k${i}` })
  for (let i = 0; i < 60; i++) ops.push({ op: 'copy', from: '/k18', path: `/m${i}` })
  return ops
}

test('bounded cost: a few kilobytes of copies that double the document are refused before the memory is spent', async (t) => {
  const patch = doublingPatch()
  t.ok(JSON.stringify(patch).length < 4096, 'the attack fits in a small body')
  const r = applyJsonPatch({ title: 'a document of modest size', tags: ['x', 'y'] }, patch)
  t.equal(r.ok, false)
  if (!r.ok) {
    t.equal(r.limit, 'size')
    t.match(r.errors[0].message, /would exceed 8388608 bytes/)
    t.match(r.errors[0].field, /^k\d+$|^m\d+$/, 'named by the path of the operation that would pass the bound')
  }
  // With a small bound it is refused early, after a handful of copies.
  const small = applyJsonPatch({ a: 'x'.repeat(100) }, patch, { maxDocumentBytes: 10_000 })
  t.match(small, { ok: false, limit: 'size' })
})

test('bounded cost: the document budget counts what is added, replaced and copied, with no credit for removals', async (t) => {
  const doc = { big: 'x'.repeat(1000) }
  const limits = { maxDocumentBytes: 5000 }
  t.match(applyJsonPatch(doc, [{ op: 'copy', from: '/big', path: '/c1' }, { op: 'copy', from: '/big', path: '/c2' }, { op: 'copy', from: '/big', path: '/c3' }], limits), { ok: true })
  t.match(applyJsonPatch(doc, [{ op: 'copy', from: '/big', path: '/c1' }, { op: 'copy', from: '/big', path: '/c2' }, { op: 'copy', from: '/big', path: '/c3' }, { op: 'copy', from: '/big', path: '/c4' }, { op: 'copy', from: '/big', path: '/c5' }], limits), { ok: false, limit: 'size', errors: [{ field: 'c4' }] })
  // Copy then remove, over and over: the work is bounded even though the document is not growing.
  const churn: unknown[] = []
  for (let i = 0; i < 10; i++) churn.push({ op: 'copy', from: '/big', path: '/tmp' }, { op: 'remove', path: '/tmp' })
  t.match(applyJsonPatch(doc, churn, limits), { ok: false, limit: 'size' })
  t.match(applyJsonPatch(doc, [{ op: 'add', path: '/v', value: 'y'.repeat(5000) }], limits), { ok: false, limit: 'size', errors: [{ field: 'v' }] })
  t.match(applyJsonPatch(doc, [{ op: 'replace', path: '/big', value: ['y'.repeat(5000)] }], limits), { ok: false, limit: 'size', errors: [{ field: 'big' }] })
  t.match(applyJsonPatch(doc, [{ op: 'add', path: '/list', value: new Array(10_000).fill(0) }], limits), { ok: false, limit: 'size' }, 'a large array is refused by its length before its items are visited')
  // Moves do not grow the document: a large value moved many times is fine.
  const moves: unknown[] = []
  for (let i = 0; i < 500; i++) moves.push({ op: 'move', from: i === 0 ? '/big' : `/m${i - 1}`, path: `/m${i}` })
  const moved = applyJsonPatch(doc, moves, limits)
  t.same(moved, { ok: true, document: { m499: 'x'.repeat(1000) } })
})

test('bounded cost: a resource already over the bound may still be reduced, not grown', async (t) => {
  const doc = { big: 'x'.repeat(2000), small: 1 }
  const limits = { maxDocumentBytes: 1000 }
  t.same(applyJsonPatch(doc, [{ op: 'test', path: '/small', value: 1 }, { op: 'remove', path: '/small' }, { op: 'move', from: '/big', path: '/b' }], limits), { ok: true, document: { b: 'x'.repeat(2000) } })
  t.match(applyJsonPatch(doc, [{ op: 'add', path: '/n', value: 1 }], limits), { ok: false, limit: 'size' })
})

test('bounded cost: at most maxOperations operations (default 1000), refused before any is applied', async (t) => {
  t.equal(DEFAULT_PATCH_LIMITS.maxOperations, 1000)
  const ops = (n: number): unknown[] => Array.from({ length: n }, () => ({ op: 'test', path: '/a', value: 1 }))
  t.match(applyJsonPatch({ a: 1 }, ops(1000)), { ok: true })
  const r = applyJsonPatch({ a: 1 }, ops(1001))
  t.match(r, { ok: false, limit: 'operations', errors: [{ field: 'body', message: /at most 1000 operations; this one has 1001/ }] })
  t.match(applyJsonPatch({ a: 1 }, ops(11), { maxOperations: 10 }), { ok: false, limit: 'operations' })
  t.match(applyJsonPatch({}, [{ op: 'add', path: '/n', value: [1n, Symbol('s')] }]), { ok: true }, 'values that are not JSON are measured too, never thrown on')
  t.throws(() => applyJsonPatch({}, [], { maxOperations: 0 }), RangeError, 'a bound that makes no sense is a programming error')
})

test('bounded depth: values nested deeper than maxDepth (default 64), counted from the root, are refused', async (t) => {
  t.equal(DEFAULT_PATCH_LIMITS.maxDepth, 64)
  t.match(applyJsonPatch({}, [{ op: 'add', path: '/v', value: nested(63) }]), { ok: true }, '1 + 63 levels')
  t.match(applyJsonPatch({}, [{ op: 'add', path: '/v', value: nested(64) }]), { ok: false, limit: 'depth', errors: [{ field: 'v', message: /deeper than 64 levels/ }] })
  t.match(applyJsonPatch({ a: { b: {} } }, [{ op: 'add', path: '/a/b/c', value: nested(62) }]), { ok: false, limit: 'depth' }, 'the path counts')
  t.match(applyJsonPatch({}, [{ op: 'test', path: '', value: nested(65) }]), { ok: false, limit: 'depth' }, 'test values are compared recursively')
  t.match(applyJsonPatch({}, [{ op: 'replace', path: '', value: nestedArrays(65) }]), { ok: false, limit: 'depth' })
  t.match(applyJsonPatch({}, [{ op: 'replace', path: '', value: nestedArrays(64) }]), { ok: true })
  // A 100 000-deep value (one a body parser would refuse, but callers may build) never overflows the stack.
  const deep = nested(100_000)
  t.match(applyJsonPatch({}, [{ op: 'add', path: '/v', value: deep }]), { ok: false, limit: 'depth' })
  // Copies and moves deeper in the document are bounded by the same rule.
  const doc = { src: nested(40), x: { y: {} } }
  t.match(applyJsonPatch(doc, [{ op: 'copy', from: '/src', path: '/x/y/z' }], { maxDepth: 42 }), { ok: false, limit: 'depth', errors: [{ field: 'x.y.z' }] })
  t.match(applyJsonPatch(doc, [{ op: 'move', from: '/src', path: '/x/y/z' }], { maxDepth: 42 }), { ok: false, limit: 'depth' })
  t.match(applyJsonPatch(doc, [{ op: 'move', from: '/src', path: '/x/y/z' }], { maxDepth: 43 }), { ok: true })
  // Copying a value into itself, again and again, nests it one level deeper every time.
  const self: unknown[] = []
  for (let i = 0; i < 100; i++) self.push({ op: 'copy', from: '', path: '/a' })
  t.match(applyJsonPatch({}, self), { ok: false, limit: 'depth' })
  // A resource too deep to serialize is refused, not thrown on.
  t.match(applyJsonPatch(nested(200_000), [{ op: 'remove', path: '/a' }]), { ok: false, limit: 'depth' })
  t.match(applyJsonPatch(nested(65), [{ op: 'remove', path: '/a' }]), { ok: false, limit: 'depth' }, 'on every Node line, however deep its serializer can go')
  // A resource that is not JSON at all (a BigInt) is refused, not thrown on.
  t.match(applyJsonPatch({ n: 10n }, [{ op: 'remove', path: '/n' }]), { ok: false })
})

test('patchError: PATCH_TOO_COSTLY (422) for a bound, UNPROCESSABLE_ENTITY (422) for a patch that does not apply', async (t) => {
  const costly = applyJsonPatch({}, doublingPatch(), { maxDocumentBytes: 1000 })
  t.equal(costly.ok, false)
  if (!costly.ok) {
    const err = patchError(costly)
    t.ok(isConventionError(err))
    t.equal(err.statusCode, 422)
    t.equal(err.code, 'FST_HTTP_CONVENTIONS_PATCH_TOO_COSTLY')
    t.same(err.errors, costly.errors)
  }
  const failed = applyJsonPatch({}, [{ op: 'remove', path: '/nope' }])
  if (!failed.ok) {
    const err = patchError(failed)
    t.equal(err.statusCode, 422)
    t.equal(err.code, 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY')
  }
})

test('RFC 7396 bounded: a merge patch nested 100 000 levels deep is a 422 PATCH_TOO_COSTLY, not a stack overflow', async (t) => {
  const title = { title: nested(100_000) }
  const r = mergePatch({ title: 'x' }, title)
  t.match(r, { ok: false, limit: 'depth', errors: [{ field: 'body' }] })
  t.throws(() => applyMergePatch({ title: 'x' }, title), { code: 'FST_HTTP_CONVENTIONS_PATCH_TOO_COSTLY', statusCode: 422 })
  t.match(mergePatch({}, { a: nestedArrays(100_000) }), { ok: false, limit: 'depth' })
  t.match(mergePatch({}, { a: nested(63) }), { ok: true })
  t.match(mergePatch({}, { a: 'x'.repeat(2000) }, { maxDocumentBytes: 1000 }), { ok: false, limit: 'size' })
  t.same(applyMergePatch({ a: 1, b: 2 }, { b: null, c: [1] }), { a: 1, c: [1] }, 'within the bounds, RFC 7396 as before')
  const hostile = { get a (): unknown { throw new Error('boom') } }
  t.match(mergePatch({}, hostile), { ok: false, errors: [{ field: 'body' }] }, 'a value that is not plain JSON is refused, not thrown')
})

// Property: any patch (valid or not, amplifying or not) against any document returns a
// result, never throws, and builds a document bounded by the input and the limits, not by
// what the patch asks for (its time is measured in bench/patch.js, not here).
const pointer = fc.array(fc.oneof(fc.constantFrom('a', 'b', 'k', '0', '1', '-', ''), fc.string({ maxLength: 3 })), { maxLength: 4 })
  .map((parts) => parts.length === 0 ? '' : '/' + parts.join('/'))
const operation = fc.record({
  op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'),
  path: fc.oneof(pointer, fc.constant(7)),
  from: pointer,
  value: fc.jsonValue({ maxDepth: 4 })
}, { requiredKeys: ['op', 'path'] })
const copyBomb = fc.array(pointer, { minLength: 1, maxLength: 60 }).map((paths) => paths.map((p, i) => ({ op: 'copy', from: i % 3 === 0 ? '' : p, path: `/c${i}` })))

test('property: every patch returns a typed result, its document bounded by its input and the limits', async (t) => {
  const limits = { maxDocumentBytes: 64 * 1024, maxOperations: 200, maxDepth: 16 }
  t.doesNotThrow(() => fc.assert(fc.property(
    fc.jsonValue({ maxDepth: 5 }),
    fc.oneof(fc.array(operation, { maxLength: 40 }), copyBomb, fc.jsonValue({ maxDepth: 2 })),
    (doc, patch) => {
      const before = JSON.stringify(doc)
      const r: PatchResult = applyJsonPatch(doc, patch, limits)
      if (JSON.stringify(doc) !== before) return false
      if (r.ok) return JSON.stringify(r.document ?? null).length <= limits.maxDocumentBytes + before.length
      return Array.isArray(r.errors) && r.errors.length > 0 && r.errors.every((e) => typeof e.field === 'string' && typeof e.message === 'string')
    }
  ), { numRuns: 400 }))
})

test('property: every merge patch returns a typed result and never throws', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), fc.jsonValue({ maxDepth: 6 }), (target, patch) => {
    const r = mergePatch(target, patch, { maxDepth: 4, maxDocumentBytes: 4096 })
    return r.ok || (r.errors.length === 1 && r.limit !== undefined)
  }), { numRuns: 300 }))
})

test('bounded work: array insertions and removals are bounded by the elements they shift in all, not by operations x length', async (t) => {
  const n = 200_000
  const doc = { list: new Array(n).fill(0) }
  // A thousand operations at the front of a long array: each shifts every element.
  for (const [name, op] of [
    ['add at the front', { op: 'add', path: '/list/0', value: 1 }],
    ['remove at the front', { op: 'remove', path: '/list/0' }],
    ['move from the front to the end', { op: 'move', from: '/list/0', path: '/list/-' }],
    ['copy to the front', { op: 'copy', from: '/list/5', path: '/list/0' }]
  ] as const) {
    const r = applyJsonPatch(doc, new Array(1000).fill(op))
    t.match(r, { ok: false, limit: 'work', errors: [{ field: /^list\.(0|-)$/, message: /shift more than 8388608 array elements/ }] }, name)
    if (!r.ok) {
      const index = Number(/^operation (\d+)/.exec(r.errors[0].message)?.[1])
      t.ok(index > 0 && index <= 8388608 / (n - 1) + 1, `${name}: refused at operation ${index}, before the one that would pass the bound`)
    }
  }
  t.equal(doc.list.length, n, 'the resource is untouched')
  // Appends and edits at the end shift nothing: a thousand of them pass.
  const appends = applyJsonPatch(doc, new Array(1000).fill({ op: 'add', path: '/list/-', value: 1 }))
  t.equal(appends.ok && (appends.document as { list: unknown[] }).list.length, n + 1000)
  const popEnd = applyJsonPatch(doc, Array.from({ length: 1000 }, (_, i) => ({ op: 'remove', path: `/list/${n - 1 - i}` })))
  t.equal(popEnd.ok && (popEnd.document as { list: unknown[] }).list.length, n - 1000)
  // The bound is the sum: small arrays edited anywhere stay well within it.
  const small = applyJsonPatch({ list: [1, 2, 3] }, [{ op: 'add', path: '/list/0', value: 0 }, { op: 'remove', path: '/list/1' }, { op: 'move', from: '/list/0', path: '/list/2' }])
  t.same(small, { ok: true, document: { list: [2, 3, 0] } })
  // A small bound counts every shifted element.
  t.match(applyJsonPatch({ list: new Array(10).fill(0) }, [{ op: 'add', path: '/list/0', value: 1 }], { maxDocumentBytes: 1000 }), { ok: true })
  // Ten removals at the front of ten elements shift 9 + 8 + ... + 1 = 45 elements, the ninth passing 44.
  const drain = new Array(10).fill({ op: 'remove', path: '/list/0' })
  t.match(applyJsonPatch({ list: new Array(10).fill(0) }, drain, { maxDocumentBytes: 45 }), { ok: true, document: { list: [] } })
  t.match(applyJsonPatch({ list: new Array(10).fill(0) }, drain, { maxDocumentBytes: 44 }), { ok: false, limit: 'work', errors: [{ message: /^operation 8:/ }] })
  const err = patchError({ ok: false, errors: [{ field: 'list.0', message: 'x' }], limit: 'work' })
  t.equal(err.statusCode, 422)
})
