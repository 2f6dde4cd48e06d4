/**
 * The state a convention keeps on a request between its steps (the conditional route's
 * validators and decision, the resource a PATCH route's loader read) lives in request
 * decorators the suite declares in the root: every request of the app is built with them,
 * null, in every context, so requests keep one object shape whatever route they take.
 */
import { test } from 'tap'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fc from 'fast-check'
import { buildApp } from '../helpers/app'
import { httpConventionsConditional } from '../../plugins/index'
import { kCurrent, kLoaded, kOutcome, REQUEST_SLOTS } from '../../plugins/services/symbols'

type Slots = Record<symbol, unknown>

/** For each slot: present on the request as built, and null (what an onRequest hook sees). */
function slotsAsBuilt (request: FastifyRequest): boolean[] {
  return REQUEST_SLOTS.map((slot) => Object.hasOwn(request, slot) && (request as unknown as Slots)[slot] === null)
}

test('Conditional requests, PATCH: the state kept between steps is a request decorator, null on every request as built', async (t) => {
  t.same([...REQUEST_SLOTS].sort((a, b) => String(a).localeCompare(String(b))), [kCurrent, kOutcome, kLoaded].sort((a, b) => String(a).localeCompare(String(b))))
  const app = await buildApp()
  t.teardown(() => app.close())
  const seen: boolean[][] = []
  const kept: unknown[] = []
  app.addHook('onRequest', function recordSlots (request, _reply, done) { seen.push(slotsAsBuilt(request)); done() })
  app.addHook('onResponse', function recordState (request, _reply, done) { kept.push((request as unknown as Slots)[kCurrent]); done() })
  let doc = { title: 'a' }
  app.get('/doc', { config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async () => doc)
  app.patch('/doc', {
    config: {
      patch: {
        schema: { type: 'object', properties: { title: { type: 'string' } } },
        load: () => ({ document: doc, etag: '"v1"' }),
        save: (_r, next) => { doc = next as typeof doc; return { document: doc, etag: '"v2"' } }
      }
    }
  }, async (request) => (request.patched as { document: unknown }).document)
  app.get('/plain', async () => 'plain')
  t.equal((await app.inject({ url: '/doc' })).statusCode, 200)
  t.equal((await app.inject({ url: '/doc', headers: { 'if-none-match': '"v1"' } })).statusCode, 412, 'conventions (Conditional requests): not modified is a 412')
  const patched = await app.inject({ method: 'PATCH', url: '/doc', headers: { 'content-type': 'application/merge-patch+json', 'if-match': '"v1"' }, payload: '{"title":"b"}' })
  t.equal(patched.statusCode, 200)
  t.equal(doc.title, 'b')
  t.equal((await app.inject({ url: '/plain' })).statusCode, 200)
  t.same(seen, [[true, true, true], [true, true, true], [true, true, true], [true, true, true]], 'every request, of every route, is built with the three slots, null')
  t.match(kept[0], { exists: true, etag: '"v1"' }, 'the provider route kept its validators in its slot')
  t.equal(kept[3], null, 'a route with no conventions leaves its slot null')
})

test('Conditional requests (RFC 9110 15.4.5): a convention registered again in a child context finds its slots on the requests of that context', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const seen: boolean[][] = []
  await app.register(async function child (child) {
    // A context with request decorators of its own: Fastify builds its requests with its own constructor.
    child.decorateRequest('mine', null)
    await child.register(httpConventionsConditional, { notModifiedStatus: 304 })
    child.get('/c', {
      config: { conditional: { validators: () => ({ etag: '"v1"' }) } },
      onRequest: function recordSlots (request, _reply, done) { seen.push(slotsAsBuilt(request)); done() }
    }, async () => ({ ok: true }))
  })
  const res = await app.inject({ url: '/c', headers: { 'if-none-match': '"v1"' } })
  t.equal(res.statusCode, 304, 'the decision kept in its slot turns the answer into a 304')
  t.equal(res.headers.etag, '"v1"')
  t.same(seen, [[true, true, true]])
})

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 15
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261128

type Kind = 'plain' | 'hashed' | 'provider' | 'patch'
type Where = 'root' | 'child' | 'decorated child' | 'child with its own conditional'

test('property: every request of a generated app, whatever its route and context, is built with the slots, null', async (t) => {
  const route = fc.record({ kind: fc.constantFrom<Kind>('plain', 'hashed', 'provider', 'patch'), where: fc.constantFrom<Where>('root', 'child', 'decorated child', 'child with its own conditional'), conditional: fc.boolean() })
  await t.resolves(fc.assert(fc.asyncProperty(fc.array(route, { minLength: 1, maxLength: 5 }), async (routes) => {
    const app = await buildApp()
    const seen: boolean[][] = []
    try {
      const record = function recordSlots (request: FastifyRequest, _reply: unknown, done: () => void): void { seen.push(slotsAsBuilt(request)); done() }
      const add = (scope: FastifyInstance, i: number, kind: Kind): void => {
        const url = `/r${i}`
        if (kind === 'plain') scope.get(url, { onRequest: record }, async () => ({ i }))
        else if (kind === 'hashed') scope.get(url, { onRequest: record, config: { conditional: true } }, async () => ({ i }))
        else if (kind === 'provider') scope.get(url, { onRequest: record, config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async () => ({ i }))
        else {
          scope.patch(url, {
            onRequest: record,
            config: { patch: { schema: { type: 'object' }, load: () => ({ document: { i }, etag: '"v1"' }), save: (_r, document) => ({ document, etag: '"v2"' }) } }
          }, async () => ({ i }))
        }
      }
      routes.forEach((r, i) => {
        if (r.where === 'root') return add(app, i, r.kind)
        app.register(async function child (child) {
          if (r.where === 'decorated child') child.decorateRequest('mine', null)
          if (r.where === 'child with its own conditional') await child.register(httpConventionsConditional, { notModifiedStatus: 304 })
          add(child, i, r.kind)
        })
      })
      await app.ready()
      for (let i = 0; i < routes.length; i++) {
        const headers = routes[i].conditional ? { 'if-none-match': '"v1"', 'if-match': '"v1"' } : {}
        const res = routes[i].kind === 'patch'
          ? await app.inject({ method: 'PATCH', url: `/r${i}`, headers: { ...headers, 'content-type': 'application/merge-patch+json' }, payload: '{}' })
          : await app.inject({ url: `/r${i}`, headers })
        if (res.statusCode >= 500) throw new Error(`route ${i} answered ${res.statusCode}: ${res.body}`)
      }
      return seen.length === routes.length && seen.every((s) => s.every(Boolean))
    } finally {
      await app.close()
    }
  }), { numRuns: RUNS, seed: SEED }), `${RUNS} generated apps`)
})
