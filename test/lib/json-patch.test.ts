import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { applyJsonPatch, applyMergePatch, readOnlyViolations } from '../../lib/json-patch'
import { ROOT } from '../helpers/paths'

interface Case { doc: unknown, patch: unknown, expected?: unknown, error?: string, comment?: string, disabled?: boolean }

// The json-patch-tests conformance suite, kept in test/fixtures (see SOURCE.md there: Apache License 2.0).
const dir = join(ROOT, 'test', 'fixtures', 'json-patch-tests')
const cases: Array<Case & { file: string, n: number }> = []
for (const file of ['tests.json', 'spec_tests.json']) {
  const list = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Case[]
  list.forEach((c, n) => { if (c.disabled !== true) cases.push({ ...c, file, n }) })
}

test('conformance: all 108 enabled json-patch-tests cases', async (t) => {
  t.equal(cases.length, 108)
  for (const c of cases) {
    const name = `${c.file}#${c.n} ${c.comment ?? c.error ?? ''}`
    const before = JSON.stringify(c.doc)
    const result = applyJsonPatch(c.doc, c.patch)
    t.equal(JSON.stringify(c.doc), before, `${name}: the input document is never mutated`)
    if (c.error !== undefined) {
      t.equal(result.ok, false, `${name}: refused`)
    } else if ('expected' in c) {
      t.same(result, { ok: true, document: c.expected }, `${name}: exactly the expected document`)
    } else {
      t.equal(result.ok, true, `${name}: applies`)
    }
  }
})

test('RFC 6902: every problem names the operation\'s path', async (t) => {
  const doc = { title: 'a', tags: ['x', 'y'], author: { name: 'n' } }
  const cases: Array<[unknown, string, RegExp]> = [
    [{ op: 'replace' }, 'body', /array of operations/],
    [[1], '0', /not an object/],
    [[{ op: 'jump', path: '/title' }], 'title', /"op" must be one of/],
    [[{ op: 'add' }], '0.path', /"path" must be a JSON Pointer string/],
    [[{ op: 'add', path: 'title', value: 1 }], 'title', /not a JSON Pointer/],
    [[{ op: 'add', path: '/a~2', value: 1 }], 'a~2', /not a JSON Pointer/],
    [[{ op: 'replace', path: '/title' }], 'title', /needs a "value"/],
    [[{ op: 'move', path: '/title' }], 'title', /needs a "from"/],
    [[{ op: 'copy', path: '/t', from: 'x' }], 't', /"from" is not a JSON Pointer/],
    [[{ op: 'move', path: '/author/name/x', from: '/author' }], 'author.name.x', /its own children/],
    [[{ op: 'test', path: '/title', value: 'b' }], 'title', /test failed/],
    [[{ op: 'replace', path: '/nope', value: 1 }], 'nope', /does not exist/],
    [[{ op: 'remove', path: '/tags/5' }], 'tags.5', /does not exist|out of bounds/],
    [[{ op: 'copy', path: '/t', from: '/missing' }], 't', /"from" does not exist/],
    [[{ op: 'add', path: '/a/b/c', value: 1 }], 'a.b.c', /parent of path does not exist/],
    [[{ op: 'replace', path: '', value: 1 }, { op: 'test', path: '', value: 2 }], 'body', /test failed/]
  ]
  for (const [patch, field, message] of cases) {
    const r = applyJsonPatch(doc, patch)
    t.equal(r.ok, false, JSON.stringify(patch))
    if (!r.ok) {
      t.equal(r.errors[0].field, field, JSON.stringify(patch))
      t.match(r.errors[0].message, message)
    }
  }
})

test('RFC 6901 4: array indexes with leading zeros are refused (fast-json-patch accepts some)', async (t) => {
  const doc = { tags: ['a', 'b', 'c'], map: { '01': 'kept' } }
  for (const patch of [
    [{ op: 'replace', path: '/tags/01', value: 'z' }],
    [{ op: 'add', path: '/tags/01', value: 'z' }],
    [{ op: 'remove', path: '/tags/00' }],
    [{ op: 'copy', from: '/tags/01', path: '/x' }],
    [{ op: 'test', path: '/tags/-', value: 'a' }],
    [{ op: 'replace', path: '/tags/1e0', value: 'z' }]
  ]) {
    const r = applyJsonPatch(doc, patch)
    t.equal(r.ok, false, JSON.stringify(patch))
  }
  t.same(applyJsonPatch(doc, [{ op: 'replace', path: '/map/01', value: 'z' }]), { ok: true, document: { tags: ['a', 'b', 'c'], map: { '01': 'z' } } }, 'object keys may look like numbers')
  t.same(applyJsonPatch(doc, [{ op: 'add', path: '/tags/-', value: 'd' }]), { ok: true, document: { tags: ['a', 'b', 'c', 'd'], map: { '01': 'kept' } } })
})

test('__proto__ and constructor/prototype paths are refused with a 4xx problem, never a throw', async (t) => {
  for (const patch of [
    [{ op: 'add', path: '/__proto__/polluted', value: true }],
    [{ op: 'add', path: '/constructor/prototype/polluted', value: true }],
    [{ op: 'copy', from: '/__proto__', path: '/x' }],
    [{ op: 'replace', path: '/a/__proto__', value: {} }]
  ]) {
    const r = applyJsonPatch({ a: {} }, patch)
    t.equal(r.ok, false, JSON.stringify(patch))
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

test('atomic: a failing operation leaves the document untouched', async (t) => {
  const doc = { a: 1, list: [1] }
  const r = applyJsonPatch(doc, [{ op: 'replace', path: '/a', value: 2 }, { op: 'add', path: '/list/0', value: 0 }, { op: 'test', path: '/a', value: 1 }])
  t.equal(r.ok, false)
  t.same(doc, { a: 1, list: [1] })
})

test('RFC 7396: merge patch semantics (null removes, arrays and scalars replace)', async (t) => {
  const target = { title: 'a', author: { name: 'n', mail: 'm' }, tags: ['x'] }
  t.same(applyMergePatch(target, { title: 'b', author: { mail: null }, tags: ['y', 'z'], extra: { deep: 1 } }),
    { title: 'b', author: { name: 'n' }, tags: ['y', 'z'], extra: { deep: 1 } })
  t.same(target, { title: 'a', author: { name: 'n', mail: 'm' }, tags: ['x'] }, 'the target is never mutated')
  t.same(applyMergePatch(target, ['whole']), ['whole'])
  t.same(applyMergePatch('scalar', { a: 1 }), { a: 1 })
  t.same(applyMergePatch({ a: 1 }, JSON.parse('{"__proto__":{"polluted":1}}')), { a: 1 })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

test('readOnly properties may not change, nested ones included', async (t) => {
  const schema = { properties: { id: { readOnly: true }, title: {}, meta: { properties: { createdAt: { readOnly: true } } } } }
  t.same(readOnlyViolations({ id: '1', title: 'a', meta: { createdAt: 't' } }, { id: '2', title: 'b', meta: { createdAt: 'u' } }, schema), [
    { field: 'id', message: 'is read-only' }, { field: 'meta.createdAt', message: 'is read-only' }
  ])
  t.same(readOnlyViolations({ id: '1', tags: [1, { a: 1 }] }, { id: '1', tags: [1, { a: 1 }] }, { properties: { id: { readOnly: true }, tags: { readOnly: true } } }), [])
  t.same(readOnlyViolations({ id: [1] }, { id: { 0: 1 } }, { properties: { id: { readOnly: true } } }).length, 1)
  t.same(readOnlyViolations({ id: { a: 1 } }, { id: { b: 1 } }, { properties: { id: { readOnly: true } } }).length, 1)
  t.same(readOnlyViolations({ id: { a: 1 } }, { id: { a: 1, b: 2 } }, { properties: { id: { readOnly: true } } }).length, 1)
  t.same(readOnlyViolations(1, 2, undefined), [])
})
