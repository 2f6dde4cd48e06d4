/**
 * The safety parts of the auditor one by one (docs/audit.md, Safety and Limits): what a
 * hostile document or answer can put in front of them, and what they make of it.
 */
import { test } from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { encode } from '../../vcdiff/src/index'
import { LIMITS, size, undoManipulations } from '../src/bounds'
import { schemaNotes, validInstance, violateOne, patchableProperty } from '../src/schema-body'
import { mergeTargets, resolveRefs, targetsFromOpenApi } from '../src/discovery'
import { ChunkDecoder, parseResponse, prefixTarget, withPrefix } from '../src/transport'
import { escapeControls, secretsOf, redactSecrets } from '../src/redact-output'
import { checkWritable } from '../src/output-files'

test('a schema a document may hold: a pattern that is no regular expression, values that are no schemas, deep nesting', async (t) => {
  t.equal(validInstance({ type: 'string', pattern: '(' }), 'audit-1', 'the pattern is ignored, no throw')
  t.same(schemaNotes({ type: 'string', pattern: '(' }), ['pattern "(" is not a regular expression: ignored'])
  t.same(validInstance({ type: 'object', required: ['a', 'b'], properties: { a: null, b: 'x', c: { type: 'string' } } }), { c: 'audit-1c' })
  t.same(validInstance({ type: 'array', minItems: 2, items: 5 }), [null, null], 'items that are no schema')
  t.equal(violateOne({ type: 'object', properties: 'nonsense' }), null)
  t.equal(patchableProperty({ properties: null }), undefined)
  t.equal((validInstance({ type: 'array', minItems: 1e9 }) as unknown[]).length, LIMITS.items)
  t.match(schemaNotes({ type: 'array', minItems: 1e9 }), [/minItems 1000000000 is over 64 \(limit\)/])
  let deep: Record<string, unknown> = { type: 'string' }
  for (let i = 0; i < 100; i++) deep = { type: 'object', required: ['n'], properties: { n: deep } }
  t.match(schemaNotes(deep), [/nested deeper than 32 levels/])
})

test('$refs: fan-out and depth are bounded, a pointer reads own properties only', async (t) => {
  // A refers 40 times to B, B 40 times to C, ...: without a count, 40^10 expansions
  const schemas: Record<string, unknown> = {}
  for (let i = 0; i < 10; i++) {
    const properties: Record<string, unknown> = {}
    for (let j = 0; j < 40; j++) properties[`p${j}`] = { $ref: `#/s/S${i + 1}` }
    schemas[`S${i}`] = { type: 'object', properties }
  }
  const notes: string[] = []
  resolveRefs({ $ref: '#/s/S0' }, { s: schemas }, notes)
  t.match(notes, [/more than 256 \$refs in one schema \(limit\)/])
  const chain: Record<string, unknown> = {}
  for (let i = 0; i < 40; i++) chain[`C${i}`] = { items: { $ref: `#/c/C${i + 1}` } }
  const deep: string[] = []
  resolveRefs({ $ref: '#/c/C0' }, { c: chain }, deep)
  t.match(deep, [/\$refs nested more than 16 deep \(limit\)/])
  let nested: unknown = {}
  for (let i = 0; i < 200; i++) nested = { a: [nested] }
  const wide: string[] = []
  resolveRefs(nested, {}, wide)
  t.match(wide, [/a schema over 10000 objects or 128 levels \(limit\)/])
  t.equal(resolveRefs({ $ref: '#/__proto__/x' }, {}), undefined, 'no walk into the prototype')
  t.same(resolveRefs({ $ref: 'other.json#/x' }, {}), { $ref: 'other.json#/x' }, 'a reference to another document is kept as it is')
})

test('a document whose paths are not path items; paths over the bound from the config too', async (t) => {
  const found = targetsFromOpenApi({ paths: { '/a': null, '/b': { get: 'x', post: { requestBody: { content: { 'application/json': { schema: { type: 'string', minLength: 1e7 } } } } } } } })
  t.same(found.paths, [], 'a GET that is no operation is no path')
  t.equal(found.collection, '/b')
  t.match(found.notes, [/minLength 10000000/])
  t.same(targetsFromOpenApi({ paths: [] }).paths, [])
  const config = { paths: Array.from({ length: 150 }, (_, i) => `/c${i}`), redirects: Array.from({ length: 101 }, (_, i) => `/r${i}`) }
  const merged = mergeTargets(undefined, config)
  t.equal(merged.paths.length, 100)
  t.equal(merged.redirects.length, 100)
  t.same(merged.notes, ['101 redirects to probe; the first 100 are probed, 1 are not (limit)', '150 paths to GET; the first 100 are probed, 50 are not (limit)'])
})

test('226 bodies decoded within the bound: gzip and VCDIFF past it are a note, a broken body a failure', async (t) => {
  const base = Buffer.from('base')
  t.same(undoManipulations(['gzip'], base, gzipSync(Buffer.alloc(2048)), 1024), { ok: false, limit: true, message: 'the gzip body decodes to more than 1 KiB (limit): not compared' })
  const delta = Buffer.from(encode(base, Buffer.alloc(4096, 1)))
  t.same(undoManipulations(['vcdiff'], base, delta, 1024), { ok: false, limit: true, message: 'the vcdiff body decodes to more than 1 KiB (limit): not compared' })
  t.match(undoManipulations(['gzip'], base, Buffer.from('not gzip')), { ok: false, limit: false, message: /the 226 body does not decode: / })
  t.same(undoManipulations(['identity'], base, base), { ok: true, body: base })
  t.equal(size(1000), '1000 bytes')
})

test('chunked and length-framed bodies: a chunk-size line over its bound, one that is no number, a close before the end', async (t) => {
  const long = new ChunkDecoder()
  long.push(Buffer.from('1' + ' '.repeat(LIMITS.chunkLine + 1)))
  t.equal(long.done, true)
  t.match(long.problem, /a chunk-size line over 4 KiB \(limit\)/)
  const split = new ChunkDecoder()
  split.push(Buffer.from('3\r'))
  split.push(Buffer.from('\nabc\r'))
  split.push(Buffer.from('\n0\r\n\r\n'))
  t.same([split.done, Buffer.concat(split.parts).toString()], [true, 'abc'], 'a line and a CRLF split across reads')
  t.match(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\nzz\r\n'), 'GET', false), { body: Buffer.from('ab'), cut: /a chunk-size that is not a number/ })
  t.match(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'), 'GET', true), { body: Buffer.from('abc'), cut: 'cut (closed) after 3 body bytes' })
})

test('the path prefix: origin-form targets below it, once; raw request lines too; `*` as it is', async (t) => {
  t.equal(prefixTarget('/x', '/api'), '/api/x')
  t.equal(prefixTarget('/api/x', '/api'), '/api/x')
  t.equal(prefixTarget('/api?q', '/api'), '/api?q')
  t.equal(prefixTarget('*', '/api'), '*')
  t.equal(withPrefix({ method: 'GET', target: '/', headers: [], raw: 'GET / HTTP/2.0\r\n\r\n' }, '/api').raw, 'GET /api/ HTTP/2.0\r\n\r\n')
})

test('secrets: every form a service could echo; control characters escaped, pairs kept', async (t) => {
  const secrets = secretsOf({ basic: { user: 'u', password: 'p w"' }, bearer: 't/k', insufficientBearer: 'read-tok', digest: { user: 'd', password: 'dpw' } })
  for (const s of ['u:p w"', Buffer.from('u:p w"').toString('base64').replace(/=+$/, ''), 'p%20w%22', 'p w\\"', 't%2Fk', 'read-tok', 'dpw']) t.ok(secrets.includes(s), s)
  t.equal(redactSecrets('a t/k b', secrets), 'a [redacted] b')
  const short = secretsOf({ basic: { user: 'u', password: 'p' }, bearer: 't', digest: { user: 'd', password: 'dp' } })
  t.same(short.filter((s) => s.length < 3), [], 'a secret of one or two characters only inside its credential forms')
  t.equal(redactSecrets('patch t p dp: Basic dTpw, Bearer t, ?access_token=t, u:p', short), 'patch t p dp: Basic [redacted], Bearer [redacted], ?access_token=[redacted], [redacted]')
  t.equal(escapeControls('\x1b[2J\u009b\ud83d\ude00\ud83d\t\n'), '\\x1b[2J\\x9b\ud83d\ude00\\u{d83d}\t\n')
})

test('an output file that exists is kept by the check; one the check created is removed', async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'audit-out-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const kept = join(dir, 'kept.xml')
  writeFileSync(kept, 'old')
  await checkWritable(kept, '--junit')
  t.equal(readFileSync(kept, 'utf8'), 'old')
  const fresh = join(dir, 'fresh.xml')
  await checkWritable(fresh, '--junit')
  t.notOk(existsSync(fresh))
})
