/**
 * Property: whatever JSON Patch document a client sends against whatever resource, the PATCH
 * route answers 2xx or 4xx (never 5xx), with work bounded by the body size.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'

const json = fc.jsonValue({ maxDepth: 4 })
const pointer = fc.array(fc.oneof(fc.constantFrom('a', 'b', '0', '1', '-', '~0', '~1'), fc.string({ maxLength: 3 })), { maxLength: 4 }).map((parts) => parts.length === 0 ? '' : '/' + parts.join('/'))
const operation = fc.oneof(
  fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value: json }),
  fc.record({ op: fc.constant('remove'), path: pointer }),
  fc.record({ op: fc.constantFrom('copy', 'move'), from: pointer, path: pointer }),
  fc.record({ op: fc.string({ maxLength: 5 }), path: fc.anything() })
)

test('random JSON Patch documents against random resources: never a 5xx', async (t) => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  let doc: unknown = {}
  app.patch('/r', {
    config: { patch: { schema: {}, load: () => ({ document: doc, etag: '"1"' }), save: (_r, d) => ({ document: d, etag: '"2"' }) } }
  }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  let slowest = 0
  await t.resolves(fc.assert(fc.asyncProperty(json, fc.array(operation, { maxLength: 30 }), async (target, ops) => {
    doc = target
    const payload = JSON.stringify(ops)
    const started = performance.now()
    const res = await app.inject({ method: 'PATCH', url: '/r', headers: { 'content-type': 'application/json-patch+json' }, payload })
    slowest = Math.max(slowest, (performance.now() - started) / Math.max(1, payload.length))
    return res.statusCode < 500
  }), { numRuns: 300 }), '300 random patches, none answered 5xx')
  t.comment(`slowest: ${slowest.toFixed(3)} ms per body byte`)
})
