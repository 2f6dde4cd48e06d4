import { test } from 'tap'
import { ajvErrorsToEntries, pointerToPath } from '../../lib/validation-errors'

test('RFC 6901 pointers become dotted paths', async (t) => {
  t.equal(pointerToPath(''), '')
  t.equal(pointerToPath('/author/name'), 'author.name')
  t.equal(pointerToPath('/tags/2'), 'tags.2')
  t.equal(pointerToPath('/a~1b/c~0d'), 'a/b.c~d')
})

test('each keyword names the field at fault by its own path', async (t) => {
  const entries = ajvErrorsToEntries([
    { keyword: 'required', instancePath: '/author', params: { missingProperty: 'name' }, message: "must have required property 'name'" },
    { keyword: 'dependentRequired', instancePath: '', params: { missingProperty: 'b' } },
    { keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'zzz' } },
    { keyword: 'unevaluatedProperties', instancePath: '/x', params: { unevaluatedProperty: 'y' } },
    { keyword: 'pattern', instancePath: '/propname', params: { pattern: '^a', propertyName: 'bad' }, message: 'must match' },
    { keyword: 'propertyNames', instancePath: '/map', params: { propertyName: 'bad' }, message: 'property name is invalid' },
    { keyword: 'type', instancePath: '', params: {}, message: 'must be object' },
    { keyword: 'type', instancePath: '', params: {}, message: 'must be object' },
    { keyword: 'custom', instancePath: '/q', params: {} }
  ], 'body')
  t.same(entries, [
    { field: 'author.name', message: 'is required' },
    { field: 'b', message: 'is required' },
    { field: 'zzz', message: 'is not allowed' },
    { field: 'x.y', message: 'is not allowed' },
    { field: 'map.bad', message: 'is not an allowed property name' },
    { field: 'body', message: 'must be object' },
    { field: 'q', message: 'is invalid' }
  ])
  t.same(ajvErrorsToEntries([{ keyword: 'type', instancePath: '', params: {}, message: 'must be object' }], 'querystring'), [{ field: 'querystring', message: 'must be object' }])
})

test('bounded 422: at most maxEntries entries (default 100), then one saying how many more were not listed', async (t) => {
  // A 1 MB body of 500 000 invalid items: Ajv (allErrors) reports each one.
  const errors = Array.from({ length: 500_000 }, (_, i) => ({ keyword: 'type', instancePath: `/items/${i}`, params: { type: 'integer' }, message: 'must be integer' }))
  // Every error the mapping reads, counted: the work is the entries listed, not the errors reported.
  let read = 0
  const counted = new Proxy(errors, { get: (target, key, receiver) => { if (typeof key === 'string' && /^\d+$/.test(key)) read++; return Reflect.get(target, key, receiver) } })
  const entries = ajvErrorsToEntries(counted, 'body')
  t.equal(entries.length, 101)
  t.same(entries[0], { field: 'items.0', message: 'must be integer' })
  t.same(entries[99], { field: 'items.99', message: 'must be integer' })
  t.same(entries[100], { field: 'body', message: '499900 more problems were not listed' })
  t.ok(JSON.stringify(entries).length < 10_000, 'the envelope stays small')
  t.equal(read, 101, 'read the 100 entries listed and the one that ends the list')
  t.same(ajvErrorsToEntries(errors.slice(0, 3), 'querystring', { maxEntries: 2 }), [
    { field: 'items.0', message: 'must be integer' }, { field: 'items.1', message: 'must be integer' }, { field: 'querystring', message: '1 more problem was not listed' }
  ])
  t.equal(ajvErrorsToEntries(errors.slice(0, 100), 'body').length, 100, 'exactly maxEntries: no extra entry')
  const dup = { keyword: 'type', instancePath: '', params: {}, message: 'must be object' }
  t.same(ajvErrorsToEntries([dup, dup, dup], 'body', { maxEntries: 1 }), [{ field: 'body', message: 'must be object' }], 'duplicates of listed entries are merged, not counted')
  t.throws(() => ajvErrorsToEntries([], 'body', { maxEntries: 0 }), RangeError)
})
