/**
 * Property (RFC 9110 12.5.1; docs/conventions.md (Content-Type)): a route that answers JSON
 * or XML by Accept answers XML exactly when the client prefers it, as the full negotiation
 * over every media range decides. The route parses Accept only when it can name XML (an
 * `xml` type or a parameter such as a weight); generated Accept values, with wildcards,
 * weights, other parameters and case, check that the shortcut never changes the answer.
 */
import { test } from 'tap'
import fc from 'fast-check'
import { buildApp } from '../helpers/app'
import { negotiateMediaType } from '../../packages/grammar/src/qlist'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 100
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 1251

const OFFERS = ['application/json', 'application/xml']
const RANGES = ['application/json', 'application/xml', 'Application/XML', 'APPLICATION/JSON', 'text/xml', 'application/*', 'Application/*', '*/*', 'text/*', 'text/html', 'application/problem+json', 'application/atom+xml', 'image/png', 'nonsense']
const PARAMS = ['', '', '', ';q=0', ';q=0.5', ';q=1', ';Q=0', ' ; q=0.001', ';charset=utf-8', ';level=1', ';q=2', ';q=']
const element = fc.tuple(fc.constantFrom(...RANGES), fc.constantFrom(...PARAMS)).map(([r, p]) => r + p)
const accept = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: fc.array(element, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(', ')), weight: 8 }
)

async function build (): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const app = await buildApp()
  app.get('/article', { config: { contentType: { xml: { root: 'article' } } } }, async () => ({ title: 'A' }))
  await app.ready()
  return app
}

function answersXml (type: unknown): boolean {
  return String(type).startsWith('application/xml')
}

test('RFC 9110 12.5.1: XML is answered exactly when the negotiation over every media range prefers it', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  await fc.assert(fc.asyncProperty(accept, async (value) => {
    const res = await app.inject({ url: '/article', headers: value === undefined ? {} : { accept: value } })
    const xml = negotiateMediaType(value, OFFERS) === 'application/xml'
    if (answersXml(res.headers['content-type']) !== xml) throw new Error(`Accept ${JSON.stringify(value)}: ${String(res.headers['content-type'])}, the negotiation says ${xml ? 'XML' : 'not XML'}`)
  }), { numRuns: RUNS, seed: SEED })
})

// Shrunk cases: XML reached only through a wildcard, once a weight refuses JSON.
test('RFC 9110 12.5.1: an Accept naming no XML type still prefers XML when it refuses JSON by weight', async (t) => {
  const app = await build()
  t.teardown(() => app.close())
  for (const value of ['application/json;q=0, */*', 'application/json;q=0.5, application/*']) {
    const res = await app.inject({ url: '/article', headers: { accept: value } })
    t.ok(answersXml(res.headers['content-type']), `Accept: ${value} -> ${String(res.headers['content-type'])}`)
  }
  for (const value of ['*/*', 'application/json', 'application/*, application/json', 'text/html']) {
    const res = await app.inject({ url: '/article', headers: { accept: value } })
    t.notOk(answersXml(res.headers['content-type']), `Accept: ${value} -> ${String(res.headers['content-type'])}`)
  }
})
