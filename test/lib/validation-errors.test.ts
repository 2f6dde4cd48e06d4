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
  t.same(ajvErrorsToEntries([{ keyword: 'type', instancePath: '', params: {}, message: 'must be object' }], 'querystring'), [{ field: 'query:', message: 'must be object' }])
})

test('conventions (Validation errors): field names say the part (path:, query:, header:, none for the body) and stay unambiguous', async (t) => {
  const e = (instancePath: string, keyword = 'type', params: Record<string, unknown> = {}): { keyword: string, instancePath: string, params: Record<string, unknown>, message: string } => ({ keyword, instancePath, params, message: 'm' })
  t.same(ajvErrorsToEntries([e('/id')], 'params'), [{ field: 'path:id', message: 'm' }])
  t.same(ajvErrorsToEntries([e('/limit')], 'querystring'), [{ field: 'query:limit', message: 'm' }])
  t.same(ajvErrorsToEntries([e('', 'required', { missingProperty: 'x-api-version' })], 'headers'), [{ field: 'header:x-api-version', message: 'is required' }])
  t.same(ajvErrorsToEntries([e('/filter/tag')], 'querystring'), [{ field: 'query:filter.tag', message: 'm' }])
  t.same(ajvErrorsToEntries([e('/author/name'), e('/tags/2')], 'body'), [{ field: 'author.name', message: 'm' }, { field: 'tags.2', message: 'm' }], 'body fields keep their bare paths')
  // A key holding a separator (., [, ], :, ") or empty is bracketed as a JSON string.
  t.same(ajvErrorsToEntries([e('/meta/a.b'), e('/a.b'), e('/x:y/z'), e('/q/'), e('/k/say "hi"')], 'body').map((x) => x.field), ['meta["a.b"]', '["a.b"]', '["x:y"].z', 'q[""]', 'k["say \\"hi\\""]'])
  t.same(ajvErrorsToEntries([e('/a.b')], 'querystring'), [{ field: 'query:["a.b"]', message: 'm' }])
  t.same(ajvErrorsToEntries([e('/meta', 'required', { missingProperty: 'a.b' })], 'body'), [{ field: 'meta["a.b"]', message: 'is required' }])
  t.same(ajvErrorsToEntries([e('', 'additionalProperties', { additionalProperty: 'x.y' })], 'querystring'), [{ field: 'query:["x.y"]', message: 'is not allowed' }])
  t.same(ajvErrorsToEntries([e('/x')], 'cookies'), [{ field: 'cookies:x', message: 'm' }], 'a part Fastify does not name is prefixed as it is')
  t.equal(pointerToPath('/a~1b/c~0d'), 'a/b.c~d', 'RFC 6901 escapes decoded; / and ~ are no separators')
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
    { field: 'query:items.0', message: 'must be integer' }, { field: 'query:items.1', message: 'must be integer' }, { field: 'query:', message: '1 more problem was not listed' }
  ])
  t.equal(ajvErrorsToEntries(errors.slice(0, 100), 'body').length, 100, 'exactly maxEntries: no extra entry')
  const dup = { keyword: 'type', instancePath: '', params: {}, message: 'must be object' }
  t.same(ajvErrorsToEntries([dup, dup, dup], 'body', { maxEntries: 1 }), [{ field: 'body', message: 'must be object' }], 'duplicates of listed entries are merged, not counted')
  t.throws(() => ajvErrorsToEntries([], 'body', { maxEntries: 0 }), RangeError)
})

test('TypeBox and Zod error shapes: one entry per property at fault, named by its own path', async (t) => {
  // @fastify/type-provider-typebox's TypeBoxValidatorCompiler (typebox 1.x) lists the missing
  // properties, and reports an unknown property twice (its false schema, then additionalProperties).
  t.same(ajvErrorsToEntries([
    { keyword: 'required', instancePath: '', params: { requiredProperties: ['title', 'slug'] }, message: 'must have required properties title, slug' },
    { keyword: 'boolean', instancePath: '/bad', params: {}, message: 'schema is false' },
    { keyword: 'additionalProperties', instancePath: '', params: { additionalProperties: ['bad'] }, message: 'must not have additional properties' },
    { keyword: 'unevaluatedProperties', instancePath: '/author', params: { unevaluatedProperties: ['extra'] } },
    { keyword: 'propertyNames', instancePath: '/map', params: { propertyNames: ['Bad'] } },
    { keyword: 'dependentRequired', instancePath: '', params: { property: 'card', dependencies: ['billing', 'expiry'] } },
    { keyword: 'dependencies', instancePath: '/x', params: { property: 'card', dependencies: { type: 'object' } }, message: 'must match dependency schema' }
  ], 'body'), [
    { field: 'title', message: 'is required' },
    { field: 'slug', message: 'is required' },
    { field: 'bad', message: 'is not allowed' },
    { field: 'author.extra', message: 'is not allowed' },
    { field: 'map.Bad', message: 'is not an allowed property name' },
    { field: 'card', message: 'requires billing, expiry' },
    { field: 'x.card', message: 'must match dependency schema' }
  ])
  // fastify-type-provider-zod: a strict object's unknown keys, at the root its pointer is "/".
  t.same(ajvErrorsToEntries([
    { keyword: 'unrecognized_keys', instancePath: '/', params: { keys: ['bad', 'worse'] }, message: 'Unrecognized keys: "bad", "worse"' },
    { keyword: 'unrecognized_keys', instancePath: '/author', params: { keys: ['extra'] }, message: 'Unrecognized key: "extra"' },
    { keyword: 'invalid_type', instancePath: '/title', params: { expected: 'string' }, message: 'Invalid input: expected string, received undefined' }
  ], 'body'), [
    { field: 'bad', message: 'is not allowed' },
    { field: 'worse', message: 'is not allowed' },
    { field: 'author.extra', message: 'is not allowed' },
    { field: 'title', message: 'Invalid input: expected string, received undefined' }
  ])
  t.same(ajvErrorsToEntries([{ keyword: 'false schema', instancePath: '/x', params: {}, message: 'boolean schema is false' }], 'body'), [{ field: 'x', message: 'is not allowed' }], 'Ajv\'s false schema')
  t.same(ajvErrorsToEntries([{ keyword: 'required', instancePath: '/q', message: 'is missing' } as never], 'body'), [{ field: 'q', message: 'is missing' }], 'an error without params (a validator compiler of the app\'s own)')
  t.same(ajvErrorsToEntries([{ keyword: 'required', instancePath: '/a', params: {}, message: 'must have required property' }], 'body'), [{ field: 'a', message: 'must have required property' }], 'no property named: the error\'s own path and message')
  t.same(ajvErrorsToEntries([{ keyword: 'required', instancePath: '', params: { requiredProperties: ['a', 'b', 'c'] } }, { keyword: 'type', instancePath: '/d', params: {}, message: 'x' }], 'body', { maxEntries: 2 }), [
    { field: 'a', message: 'is required' }, { field: 'b', message: 'is required' }, { field: 'body', message: '2 more problems were not listed' }
  ], 'the count of the rest includes the unlisted properties of the error cut short')
})
