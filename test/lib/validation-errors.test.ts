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
