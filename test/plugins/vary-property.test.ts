/**
 * Property (RFC 9110 12.5.5): across the routes of an app that uses every convention choosing
 * an answer by a request field, two requests that differ only in one such field (Accept,
 * A-IM, Prefer) and get different answers (status, media type, ETag or body) both carry that
 * field in Vary, so no cache hands one of them the other's answer. Generated pairs, in both
 * profiles and both error formats.
 *
 * A 226 is an encoding of the instance its ETag names (RFC 3229 10.4.1), kept by no cache
 * (`Cache-Control: no-store, im`), and a 200 is a correct answer to a request with A-IM (the
 * server may always ignore it, RFC 3229 10.5.3): a 226 and a 200 of the same ETag and media
 * type are one answer here, and A-IM is not a Vary field of either.
 */
import { test } from 'tap'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { negotiatedApp, type NegotiatedApp } from '../helpers/negotiated-app'
import type { ErrorFormat, Profile } from '../../plugins/index'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 40
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 3112

const ACCEPTS = [undefined, 'application/json', 'application/xml', 'application/json;q=0.5, application/xml', 'application/problem+json', 'application/problem+json, application/json;q=0.5', 'text/html, */*;q=0.1']
const A_IMS = [undefined, 'vcdiff', 'gzip', 'vcdiff, gzip']
const PREFERS = [undefined, 'return=minimal', 'return=representation']
const FIELDS = { accept: ACCEPTS, 'a-im': A_IMS, prefer: PREFERS } as const
type Field = keyof typeof FIELDS

const ETAGS = [undefined, '"v1"', '"v2"', '"v2.xml"', '"v1.xml"', '*', 'not a tag']
const BODIES = [
  { type: 'application/json', payload: JSON.stringify({ title: 'new', body: 'b', tags: [] }) },
  { type: 'application/json', payload: '{}' },
  { type: 'application/json', payload: '{"title":' },
  { type: 'text/csv', payload: 'a,b' },
  { type: 'application/merge-patch+json', payload: '{"title":"merged"}' },
  { type: 'application/json-patch+json', payload: '[{"op":"replace","path":"/title","value":"patched"}]' },
  { type: 'application/json-patch+json', payload: '[{"op":"test","path":"/title","value":"nope"}]' }
]

/** Mostly absent: a request that meets no precondition reaches the answers that negotiate. */
const precondition = fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.constantFrom(...ETAGS), weight: 2 })
const base = fc.record({
  method: fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'),
  id: fc.oneof({ arbitrary: fc.constant('1'), weight: 4 }, { arbitrary: fc.constant('missing'), weight: 1 }),
  ifMatch: precondition,
  ifNoneMatch: precondition,
  // -1: the valid body of the method (a patch document for PATCH, an article otherwise).
  body: fc.oneof({ arbitrary: fc.constant(-1), weight: 3 }, { arbitrary: fc.constantFrom(...BODIES.keys()), weight: 1 }),
  accept: fc.constantFrom(...ACCEPTS),
  aIm: fc.constantFrom(...A_IMS),
  prefer: fc.constantFrom(...PREFERS)
})
const pair = fc.record({
  request: base,
  field: fc.constantFrom(...(Object.keys(FIELDS) as Field[])),
  one: fc.nat(),
  other: fc.nat()
})

type Base = typeof base extends fc.Arbitrary<infer T> ? T : never

function injectOptions (r: Base, field: Field, value: string | undefined): InjectOptions {
  const headers: Record<string, string> = {}
  const set = (name: string, v: string | undefined): void => { if (v !== undefined) headers[name] = v }
  set('accept', r.accept)
  set('a-im', r.aIm)
  set('prefer', r.prefer)
  set('if-match', r.ifMatch)
  set('if-none-match', r.ifNoneMatch)
  delete headers[field]
  set(field, value)
  const url = r.method === 'POST' ? '/articles' : `/articles/${r.id}`
  if (r.method === 'GET' || r.method === 'HEAD' || r.method === 'DELETE') return { method: r.method, url, headers }
  const body = BODIES[r.body === -1 ? (r.method === 'PATCH' ? 4 : 0) : r.body]
  return { method: r.method, url, headers: { ...headers, 'content-type': body.type }, payload: body.payload }
}

interface Answer { status: number, type: string, etag: string, body: string, vary: string[] }

function answerOf (res: LightMyRequestResponse): Answer {
  const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
  const vary = typeof res.headers.vary === 'string' ? res.headers.vary.split(',').map((n) => n.trim().toLowerCase()) : []
  return { status: res.statusCode, type, etag: String(res.headers.etag ?? ''), body: res.body, vary }
}

/** One answer for a cache: a 226 stands for the 200 of the instance its ETag names. */
function sameAnswer (a: Answer, b: Answer): boolean {
  if (a.status === 226 || b.status === 226) {
    const statuses = new Set([a.status, b.status])
    return [...statuses].every((s) => s === 200 || s === 226) && a.etag === b.etag && a.type === b.type
  }
  return a.status === b.status && a.type === b.type && a.etag === b.etag && a.body === b.body
}

/** The answers of two requests differing only in `field`, each from the same state of the app. */
async function answers (h: NegotiatedApp, r: Base, field: Field, one: string | undefined, other: string | undefined): Promise<[Answer, Answer]> {
  h.reset()
  const a = answerOf(await h.app.inject(injectOptions(r, field, one)))
  h.reset()
  const b = answerOf(await h.app.inject(injectOptions(r, field, other)))
  return [a, b]
}

/** The property: answers that differ both name the field in Vary (or say `Vary: *`). */
function holds (a: Answer, b: Answer, field: Field): boolean {
  if (sameAnswer(a, b)) return true
  const names = (x: Answer): boolean => x.vary.includes(field) || x.vary.includes('*')
  return names(a) && names(b)
}

const SETUPS: Array<[Profile, ErrorFormat | undefined]> = [['spec', undefined], ['rfc9110', undefined], ['spec', 'problem'], ['rfc9110', 'problem']]

test('RFC 9110 12.5.5: two requests differing only in Accept, A-IM or Prefer that get different answers both carry that field in Vary', async (t) => {
  for (const [profile, format] of SETUPS) {
    const h = await negotiatedApp(profile, format, ACCEPTS)
    const seen = { differ: 0, same: 0, im: 0 }
    await t.resolves(fc.assert(fc.asyncProperty(pair, async ({ request, field, one, other }) => {
      const values = FIELDS[field]
      const [a, b] = await answers(h, request, field, values[one % values.length], values[(one + 1 + (other % (values.length - 1))) % values.length])
      if (sameAnswer(a, b)) seen.same++
      else seen.differ++
      if (a.status === 226 || b.status === 226) seen.im++
      return holds(a, b, field)
    }), { numRuns: RUNS, seed: SEED }), `${profile} errorFormat=${String(format)}: ${RUNS} generated pairs`)
    t.ok(seen.differ > 0 && seen.same > 0, `${profile} ${String(format)}: both sides generated (${seen.differ} pairs differed, ${seen.same} did not; ${seen.im} with a 226)`)
    await h.app.close()
  }
})

test('the pairs the property needs: a 226 and a 200 of one instance are one answer; JSON and XML are two, each saying Vary: Accept', async (t) => {
  const h = await negotiatedApp('spec', undefined, ACCEPTS)
  t.teardown(() => h.app.close())
  const r: Base = { method: 'GET', id: '1', ifMatch: undefined, ifNoneMatch: '"v1"', body: 0, accept: undefined, aIm: undefined, prefer: undefined }
  const [plain, delta] = await answers(h, r, 'a-im', undefined, 'vcdiff')
  t.equal(plain.status, 200)
  t.equal(delta.status, 226, 'the instance of version 1 was kept: a delta')
  t.ok(holds(plain, delta, 'a-im'), 'one instance')
  const [json, xml] = await answers(h, r, 'accept', 'application/json', 'application/xml')
  t.not(json.type, xml.type)
  t.ok(holds(json, xml, 'accept'))
  t.same([json.vary, xml.vary], [['accept'], ['accept']])
})

test('shrunk counterexample: the spec profile\'s "not modified" 412 for XML and the 200 for JSON of one If-None-Match', async (t) => {
  const h = await negotiatedApp('spec')
  t.teardown(() => h.app.close())
  const r: Base = { method: 'GET', id: '1', ifMatch: undefined, ifNoneMatch: '"v2.xml"', body: 0, accept: undefined, aIm: undefined, prefer: undefined }
  const [json, xml] = await answers(h, r, 'accept', undefined, 'application/xml')
  t.equal(json.status, 200)
  t.equal(xml.status, 412)
  t.ok(holds(json, xml, 'accept'), `Vary: ${xml.vary.join(', ')}`)
})

test('shrunk counterexample: under rfc9110 an error in the envelope for one Accept and in problem details for another', async (t) => {
  const h = await negotiatedApp('rfc9110')
  t.teardown(() => h.app.close())
  const r: Base = { method: 'POST', id: '1', ifMatch: undefined, ifNoneMatch: undefined, body: 1, accept: undefined, aIm: undefined, prefer: undefined }
  const [json, problem] = await answers(h, r, 'accept', undefined, 'application/problem+json')
  t.equal(json.status, 422)
  t.equal(problem.type, 'application/problem+json')
  t.ok(holds(json, problem, 'accept'), `Vary: ${json.vary.join(', ')} / ${problem.vary.join(', ')}`)
})

test('shrunk counterexample: If-None-Match: * on an existing article, Accept absent or application/problem+json (GET, PUT, DELETE)', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const h = await negotiatedApp(profile)
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const r: Base = { method, id: '1', ifMatch: undefined, ifNoneMatch: '*', body: -1, accept: undefined, aIm: undefined, prefer: undefined }
      const [plain, problem] = await answers(h, r, 'accept', undefined, 'application/problem+json')
      // RFC 9110 13.1.2: under rfc9110 a GET's "not modified" is the 304, with no content to negotiate.
      const notModified = profile === 'rfc9110' && method === 'GET'
      t.equal(plain.status, notModified ? 304 : 412, `${profile} ${method}`)
      if (!notModified) t.equal(problem.type, profile === 'spec' ? 'application/json' : 'application/problem+json', `${profile} ${method}: the profile decides`)
      t.ok(holds(plain, problem, 'accept'), `${profile} ${method}: Vary ${plain.vary.join(', ')} / ${problem.vary.join(', ')}`)
    }
    await h.app.close()
  }
})
