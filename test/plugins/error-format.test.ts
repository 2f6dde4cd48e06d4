/**
 * docs/plugins.md (Errors: one envelope, one catalogue): the profile decides the media type of
 * an error. Under `spec` every error body in the envelope is `application/json`, whatever the
 * client's Accept (the 412 and 422 bodies the conventions ask for); `errorFormat: 'problem'`
 * gives RFC 9457 problem details to every client; under `rfc9110` the envelope gives way to
 * problem details for a client that prefers them (RFC 9457 3), and such an answer says
 * `Vary: Accept` (RFC 9110 12.5.5). An answer whose media type Accept did not choose does not.
 */
import { test } from 'tap'
import Fastify, { type InjectOptions } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import {
  httpConventionsErrors, preconditionFailed, serverOptions, unprocessable, type ErrorFormat, type Profile
} from '../../plugins/index'

const JSON_TYPE = 'application/json'
const PROBLEM = 'application/problem+json'
const ACCEPTS = {
  none: undefined,
  json: 'application/json',
  problem: 'application/problem+json',
  'problem first': 'application/problem+json, application/json;q=0.5',
  'json first': 'application/json, application/problem+json;q=0.5',
  any: '*/*'
} as const
type AcceptName = keyof typeof ACCEPTS

/** What a client gets: the media type of the body and whether Accept is in Vary. */
function expected (profile: Profile, format: ErrorFormat | undefined, accept: AcceptName): { type: string, vary: boolean } {
  if (format === 'problem') return { type: PROBLEM, vary: false }
  if (profile === 'spec') return { type: JSON_TYPE, vary: false }
  const problem = accept === 'problem' || accept === 'problem first'
  return { type: problem ? PROBLEM : JSON_TYPE, vary: true }
}

async function build (profile: Profile, errorFormat: ErrorFormat | undefined) {
  const app = await buildApp({ profile, errorFormat, conditional: { notModifiedStatus: 412 } })
  const validators = () => ({ etag: '"v1"' })
  app.get('/thrown', async () => { throw unprocessable({ field: 'slug', message: 'taken' }) })
  app.get('/doc', { config: { conditional: { validators } } }, async () => ({ doc: true }))
  app.put('/doc', { config: { conditional: { validators } } }, async () => ({ doc: true }))
  app.post('/things', { schema: { body: { type: 'object', required: ['title'] } } }, async () => ({ ok: true }))
  await app.ready()
  return app
}

/** Each suite error a client can meet, and the request that meets it. */
const CASES = [
  { name: '422 thrown by a handler', status: 422, request: { url: '/thrown' } },
  { name: '422 from validation', status: 422, request: { method: 'POST', url: '/things', payload: '{}', headers: { 'content-type': 'application/json' } } },
  { name: '412 of a write (If-Match)', status: 412, request: { method: 'PUT', url: '/doc', payload: '{}', headers: { 'content-type': 'application/json', 'if-match': '"v0"' } } },
  { name: '412 "not modified" (If-None-Match)', status: 412, request: { url: '/doc', headers: { 'if-none-match': '"v1"' } } },
  { name: '415', status: 415, request: { method: 'POST', url: '/things', payload: 'x', headers: { 'content-type': 'application/x-unknown' } } }
] as const

test('docs/plugins.md (Errors): profile x errorFormat x Accept decides the media type of every error in the envelope, and Vary', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    for (const format of [undefined, 'envelope', 'problem'] as const) {
      const app = await build(profile, format)
      for (const c of CASES) {
        for (const accept of Object.keys(ACCEPTS) as AcceptName[]) {
          const headers: Record<string, string> = { ...(c.request as { headers?: Record<string, string> }).headers }
          const value = ACCEPTS[accept]
          if (value !== undefined) headers.accept = value
          const res = await app.inject({ ...c.request, headers } as InjectOptions)
          const want = expected(profile, format, accept)
          const label = `${profile} errorFormat=${String(format)} ${c.name} Accept: ${String(value)}`
          t.equal(res.statusCode, c.status, label)
          t.equal(res.headers['content-type'], want.type, label)
          t.equal(res.headers.vary, want.vary ? 'Accept' : undefined, `${label}: Vary`)
          const body = res.json() as { errors: unknown[], status?: number }
          t.ok(Array.isArray(body.errors), `${label}: the entries are in both formats`)
          if (want.type === PROBLEM) t.equal(body.status, c.status)
        }
      }
      await app.close()
    }
  }
})

test('RFC 9110 12.5.5: a text error (a 411) never varies with Accept; a 401, whose body Accept chooses, says Vary: Accept', async (t) => {
  const app = await buildApp({ profile: 'rfc9110', contentLength: { requireContentLength: true }, auth: { basic: { users: { u: 'p' } } } })
  app.get('/secret', { config: { auth: true } }, async () => ({ secret: true }))
  app.post('/things', async () => ({ ok: true }))
  t.teardown(() => app.close())
  const page = await app.inject({ url: '/secret', headers: { accept: 'text/html' } })
  t.equal(page.statusCode, 401)
  t.match(page.headers['content-type'], /^text\/html/)
  t.equal(page.headers.vary, 'Accept')
  const problem = await app.inject({ url: '/secret', headers: { accept: PROBLEM } })
  t.equal(problem.headers['content-type'], PROBLEM, 'a client that prefers problem details gets them (docs/conventions.md, Authentication)')
  t.equal(problem.headers.vary, 'Accept')
  // Over a real socket: a chunked body (refused with 411 under the spec profile's Content-Length rule).
  const port = await listen(app)
  const text = await rawRequest(port, `POST /things HTTP/1.1\r\nHost: x\r\nAccept: ${PROBLEM}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)
  t.equal(text.status, 411)
  t.match(text.headers['content-type'], /^text\/plain/)
  t.equal(text.headers.vary, undefined)
})

test('RFC 9110 12.5.5: Accept joins the Vary an app already set, once, and never beside Vary: *', async (t) => {
  const app = await buildApp({ profile: 'rfc9110' })
  app.get('/origin', { onRequest: async (_request, reply) => { reply.header('vary', 'Origin') } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/twice', { onRequest: async (_request, reply) => { reply.header('vary', 'origin, accept') } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/star', { onRequest: async (_request, reply) => { reply.header('vary', '*') } }, async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  t.teardown(() => app.close())
  t.equal((await app.inject('/origin')).headers.vary, 'Origin, Accept')
  t.equal((await app.inject('/twice')).headers.vary, 'origin, accept')
  t.equal((await app.inject('/star')).headers.vary, '*')
})

test('the errors plugin registered alone: its profile option decides, as the umbrella\'s does', async (t) => {
  for (const [profile, type, vary] of [['spec', JSON_TYPE, undefined], ['rfc9110', PROBLEM, 'Accept'], [undefined, JSON_TYPE, undefined]] as const) {
    const app = Fastify(serverOptions)
    await app.register(httpConventionsErrors, { profile })
    app.get('/x', async () => { throw preconditionFailed('If-Match', 'stale', '"v2"') })
    const res = await app.inject({ url: '/x', headers: { accept: PROBLEM } })
    t.equal(res.statusCode, 412)
    t.equal(res.headers['content-type'], type, String(profile))
    t.equal(res.headers.vary, vary, String(profile))
    t.equal(res.headers.etag, '"v2"')
    await app.close()
  }
})
