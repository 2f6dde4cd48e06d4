/**
 * docs/architecture.md (Errors: one renderer): every error answer of the suite, whichever path
 * gives it (the error handler, an error the app's handlers pass on, a step that answers
 * directly, the guard, Fastify's framework errors, the answers written before routing), is
 * made by one renderer. For every status of the catalogue, in each format and profile and
 * for a few Accept values, each path that can give the status gives the same status, media
 * type, Vary and shape of body (RFC 9457 3, RFC 9110 12.5.5).
 */
import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import fc from 'fast-check'
import {
  badFraming, badUrl, contentTooLarge, errorCodes, expectationFailed, forbidden, headersTooLarge, httpVersionNotSupported, lengthRequired, malformedBody,
  methodNotAllowed, misconfigured, notImplemented, patchTooCostly, preconditionFailed, preconditionRequired, requestTimeout, serviceUnavailable,
  unauthorized, unprocessable, unsupportedMediaType, uriTooLong, type ConventionError
} from '../../lib/errors'
import { prepareError, reasonPhrase, renderError } from '../../lib/render'
import { httpConventions, serverOptions, type ErrorFormat, type Profile } from '../../plugins/index'
import { buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'

const JSON_TYPE = 'application/json'
const PROBLEM = 'application/problem+json'
const TEXT = 'text/plain; charset=utf-8'
const HTML = 'text/html; charset=UTF-8'
const ACCEPTS = { none: undefined, problem: PROBLEM, 'json first': 'application/json, application/problem+json;q=0.5' } as const
type AcceptName = keyof typeof ACCEPTS

/** One error of each kind of the catalogue (INVALID_OPTION is a boot error, never an answer). */
const CATALOGUE: ReadonlyArray<[keyof typeof errorCodes, () => ConventionError]> = [
  ['LENGTH_REQUIRED', () => lengthRequired('send Content-Length', false)],
  ['CONTENT_TOO_LARGE', () => contentTooLarge('too big', false)],
  ['BAD_FRAMING', () => badFraming('bad framing', false)],
  ['MALFORMED_BODY', () => malformedBody('body is not well-formed JSON')],
  ['UNSUPPORTED_MEDIA_TYPE', () => unsupportedMediaType('Content-Type "x/y" is not accepted here')],
  ['UNPROCESSABLE_ENTITY', () => unprocessable({ field: 'body.title', message: 'must have required property \'title\'' })],
  ['PATCH_TOO_COSTLY', () => patchTooCostly('the patch is too costly')],
  ['PRECONDITION_FAILED', () => preconditionFailed('If-None-Match', 'not modified')],
  ['PRECONDITION_REQUIRED', () => preconditionRequired('send If-Match')],
  ['UNAUTHORIZED', () => unauthorized('credentials needed', ['Basic realm="r"'])],
  ['FORBIDDEN', () => forbidden('not yours')],
  ['METHOD_NOT_ALLOWED', () => methodNotAllowed('DELETE', 'GET, HEAD, PUT')],
  ['SERVICE_UNAVAILABLE', () => serviceUnavailable('later', 3)],
  ['NOT_IMPLEMENTED', () => notImplemented('no such transfer coding')],
  ['BAD_URL', () => badUrl('the path is not valid percent-encoded UTF-8 (RFC 3986 2.1)')],
  ['REQUEST_TIMEOUT', () => requestTimeout('too slow')],
  ['HEADERS_TOO_LARGE', () => headersTooLarge('too many headers')],
  ['URI_TOO_LONG', () => uriTooLong('a path parameter is too long')],
  ['EXPECTATION_FAILED', () => expectationFailed('100-continue only')],
  ['HTTP_VERSION_NOT_SUPPORTED', () => httpVersionNotSupported('HTTP/1.1 only')],
  ['MISCONFIGURED', () => misconfigured('the route asks for a convention it was not compiled with')]
]

interface Seen { status: number, type: string | undefined, vary: string | undefined, shape: string }

/** What a client sees of an error answer: status, media type, Vary and the shape of its body. */
function seen (status: number, type: string | undefined, vary: string | undefined, body: string): Seen {
  return { status, type, vary, shape: shapeOf(status, type, body) }
}

function shapeOf (status: number, type: string | undefined, body: string): string {
  if (type === TEXT) return `text: ${body.split('\n')[0]}`
  if (type === HTML) return `html: ${/<title>([^<]*)<\/title>/.exec(body)?.[1] ?? '?'}`
  const b = JSON.parse(body) as Record<string, unknown> & { errors: Array<Record<string, unknown>> }
  const entries = [...new Set(b.errors.map((e) => Object.keys(e).join('+')))].join(' ')
  if (type === PROBLEM) {
    const ok = b.type === 'about:blank' && b.title === reasonPhrase(status) && b.status === status && typeof b.detail === 'string'
    return `problem (${Object.keys(b).join(',')}) ${ok ? 'well-formed' : JSON.stringify(b)}: ${entries}`
  }
  return `envelope (${Object.keys(b).join(',')}): ${entries}`
}

/** What every path must give for `err`: its own media type, or for the envelope the format, profile and Accept's (docs/plugins.md, Errors). */
function expected (err: ConventionError, profile: Profile, format: ErrorFormat, accept: AcceptName): { type: string, vary: string | undefined } {
  if (err.rendering === 'text') return { type: TEXT, vary: undefined }
  // docs/conventions.md (Authentication): an HTML error is the route's JSON error body to a client that prefers JSON, chosen by Accept.
  if (err.rendering === 'html' && accept === 'none') return { type: HTML, vary: 'Accept' }
  if (err.rendering === 'html') return { ...expected({ ...err, rendering: 'envelope' } as ConventionError, profile, format, accept), vary: 'Accept' }
  if (format === 'problem') return { type: PROBLEM, vary: undefined }
  if (profile === 'spec') return { type: JSON_TYPE, vary: undefined }
  return { type: accept === 'problem' ? PROBLEM : JSON_TYPE, vary: 'Accept' }
}

const validators = () => ({ etag: '"v1"' })

/** An app with a route per path: each throws, passes on, or meets the error its own way. */
async function build (profile: Profile, format: ErrorFormat): Promise<FastifyInstance> {
  const app = await buildApp({ profile, errorFormat: format, conditional: { notModifiedStatus: 412 } })
  // A querystring schema: the route answers a passed-on error through its onSend step.
  const schema = { querystring: { type: 'object' } }
  app.get('/thrown/:code', { schema }, async (request) => { throw errorOf((request.params as { code: string }).code) })
  app.get('/passed-on/:code', { schema, errorHandler: (err) => { throw err } }, async (request) => { throw errorOf((request.params as { code: string }).code) })
  app.get('/doc', { config: { conditional: { validators } } }, async () => ({ doc: true }))
  app.put('/doc', { config: { conditional: { validators } } }, async () => ({ doc: true }))
  app.get('/elsewhere', { config: { conditional: true } }, async (_request, reply) => reply.code(304).send())
  app.post('/things', { schema: { body: { type: 'object', required: ['title'] } } }, async () => ({ ok: true }))
  app.get('/p/:id', async () => 'p')
  await app.ready()
  return app
}

function errorOf (code: string): ConventionError {
  const row = CATALOGUE.find(([name]) => name === code)
  if (row === undefined) throw new Error(`no ${code}`)
  return row[1]()
}

/** An app whose route was declared before the suite: the guard refuses it (500). */
async function buildGuarded (profile: Profile, format: ErrorFormat): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions })
  app.get('/early', { config: { conditional: true } }, async () => 'early')
  await app.register(httpConventions, { profile, errorFormat: format })
  await app.ready()
  return app
}

/** The paths that give a status besides the error handler's, with the request that meets each. */
const SPECIFIC: Partial<Record<keyof typeof errorCodes, ReadonlyArray<{ name: string, request: InjectOptions, guarded?: true }>>> = {
  BAD_URL: [{ name: 'Fastify\'s router refuses the path (frameworkErrors)', request: { url: '/p/%E0%A4%A' } }],
  MALFORMED_BODY: [{ name: 'the JSON parser refuses the body', request: { method: 'POST', url: '/things', payload: '{', headers: { 'content-type': 'application/json' } } }],
  METHOD_NOT_ALLOWED: [{ name: 'the methods convention: a method the path does not serve', request: { method: 'DELETE', url: '/doc' } }],
  PRECONDITION_FAILED: [
    { name: '"not modified", answered before the handler', request: { url: '/doc', headers: { 'if-none-match': '"v1"' } } },
    { name: '"not modified", made of the handler\'s 304', request: { url: '/elsewhere', headers: { 'if-none-match': '"zz"' } } },
    { name: 'a write\'s precondition', request: { method: 'PUT', url: '/doc', payload: '{}', headers: { 'content-type': 'application/json', 'if-match': '"v0"' } } }
  ],
  URI_TOO_LONG: [{ name: 'a path parameter over maxParamLength (frameworkErrors)', request: { url: `/p/${'x'.repeat(101)}` } }],
  UNSUPPORTED_MEDIA_TYPE: [{ name: 'a Content-Type the route does not read', request: { method: 'POST', url: '/things', payload: 'x', headers: { 'content-type': 'application/x-unknown' } } }],
  UNPROCESSABLE_ENTITY: [{ name: 'validation', request: { method: 'POST', url: '/things', payload: '{}', headers: { 'content-type': 'application/json' } } }],
  MISCONFIGURED: [{ name: 'the guard refuses a route it never compiled', request: { url: '/early' }, guarded: true }]
}

async function inject (app: FastifyInstance, request: InjectOptions, accept: string | undefined): Promise<Seen> {
  const headers: Record<string, string> = { ...(request.headers as Record<string, string> | undefined) }
  if (accept !== undefined) headers.accept = accept
  const res = await app.inject({ ...request, headers })
  const type = res.headers['content-type'] as string | undefined
  return seen(res.statusCode, type, res.headers.vary as string | undefined, res.body)
}

function covers (t: Test): void {
  const answers = Object.keys(errorCodes).filter((code) => code !== 'INVALID_OPTION')
  t.same(CATALOGUE.map(([code]) => code).sort(), answers.sort(), 'every answer of the catalogue has a row')
}

test('docs/architecture.md (Errors: one renderer): every status of the catalogue, in each format, profile and Accept, is the same answer on every path that gives it', async (t) => {
  covers(t)
  for (const profile of ['spec', 'rfc9110'] as const) {
    for (const format of ['envelope', 'problem'] as const) {
      const app = await build(profile, format)
      const guarded = await buildGuarded(profile, format)
      for (const [code, make] of CATALOGUE) {
        const err = make()
        for (const acceptName of Object.keys(ACCEPTS) as AcceptName[]) {
          const accept = ACCEPTS[acceptName]
          const label = `${profile} ${format} ${code} Accept: ${String(accept)}`
          const want = expected(err, profile, format, acceptName)
          const thrown = await inject(app, { url: `/thrown/${code}` }, accept)
          t.same({ status: thrown.status, type: thrown.type, vary: thrown.vary }, { status: err.statusCode, ...want }, `${label}: thrown by a handler`)
          const paths: Array<[string, Seen]> = [['passed on by the route\'s own error handler', await inject(app, { url: `/passed-on/${code}` }, accept)]]
          for (const p of SPECIFIC[code] ?? []) paths.push([p.name, await inject(p.guarded === true ? guarded : app, p.request, accept)])
          for (const [name, got] of paths) {
            // A specific path gives its own entries: their shape (field, message) is the same.
            t.same({ status: got.status, type: got.type, vary: got.vary }, { status: thrown.status, type: thrown.type, vary: thrown.vary }, `${label}: ${name}`)
            t.equal(got.shape, thrown.shape, `${label}: ${name}: the shape of the body`)
          }
        }
      }
      await app.close()
      await guarded.close()
    }
  }
})

/** Requests Node's parser or the server refuses before any route: each is answered on the socket. */
const AT_SERVER: ReadonlyArray<{ code: keyof typeof errorCodes | ((profile: Profile) => keyof typeof errorCodes), name: string, raw: (accept: string) => string }> = [
  { code: 'HTTP_VERSION_NOT_SUPPORTED', name: 'a request line of HTTP/2.0 (at the server)', raw: (a) => `GET /doc HTTP/2.0\r\nHost: x\r\n${a}\r\n` },
  { code: 'BAD_FRAMING', name: 'an HTTP/1.1 request without Host (at the server)', raw: (a) => `GET /doc HTTP/1.1\r\n${a}\r\n` },
  // docs/conventions.md (Content-Length): 411 under the spec profile, 400 under rfc9110 (RFC 9112 6.3).
  { code: (profile) => profile === 'spec' ? 'LENGTH_REQUIRED' : 'BAD_FRAMING', name: 'a Content-Length that is no number (on the socket)', raw: (a) => `POST /things HTTP/1.1\r\nHost: x\r\n${a}Content-Length: 1x\r\n\r\n` },
  { code: 'EXPECTATION_FAILED', name: 'an Expect other than 100-continue (at the server)', raw: (a) => `GET /doc HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n${a}\r\n` },
  { code: 'HEADERS_TOO_LARGE', name: 'a header section over the limit (on the socket)', raw: (a) => `GET /doc HTTP/1.1\r\nHost: x\r\n${a}X-Big: ${'a'.repeat(20000)}\r\n\r\n` }
]

test('docs/architecture.md (Errors: one renderer): the answers written before routing are the error handler\'s answers to the same errors', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    for (const format of ['envelope', 'problem'] as const) {
      const live = await buildApp({ profile, errorFormat: format })
      const schema = { querystring: { type: 'object' } }
      live.get('/thrown/:code', { schema }, async (request) => { throw errorOf((request.params as { code: string }).code) })
      live.get('/doc', async () => 'doc')
      live.post('/things', async () => 'ok')
      const port = await listen(live)
      for (const c of AT_SERVER) {
        const code = typeof c.code === 'function' ? c.code(profile) : c.code
        for (const accept of [undefined, PROBLEM]) {
          const line = accept === undefined ? '' : `Accept: ${accept}\r\n`
          const label = `${profile} ${format} ${code} Accept: ${String(accept)}: ${c.name}`
          const res = await rawRequest(port, c.raw(line))
          const got = seen(res.status, res.headers['content-type'], res.headers.vary, res.body)
          const thrown = await inject(live, { url: `/thrown/${code}` }, accept)
          t.same(got, thrown, label)
        }
      }
      await live.close()
    }
  }
})

test('RFC 9457 3.1.5: the renderer repeats a request\'s path as `instance` only up to 256 characters, never its query; a prepared error renders as the error itself', async (t) => {
  const runs = Number(process.env.FUZZ_RUNS ?? 0) || 50
  const entry = fc.record({ field: fc.string(), message: fc.string() })
  fc.assert(fc.property(fc.array(entry, { minLength: 1, maxLength: 3 }), fc.string({ maxLength: 300 }), fc.string({ maxLength: 20 }), fc.constantFrom<ErrorFormat>('envelope', 'problem'), (entries, path, query, format) => {
    const err = unprocessable(entries)
    const url = `/${path}${query === '' ? '' : `?${query}`}`
    const direct = renderError(err, format, url)
    const once = renderError(prepareError(err), format, url)
    if (direct.body !== once.body || direct.contentType !== once.contentType || direct.statusCode !== once.statusCode) return false
    if (format === 'envelope') return direct.contentType === JSON_TYPE
    const body = JSON.parse(direct.body.toString()) as { instance?: string, errors: unknown[] }
    const p = url.split('?')[0]
    return p.length > 256 ? body.instance === undefined : body.instance === p
  }), { seed: 9457, numRuns: runs })
  const prepared = prepareError(preconditionFailed('If-None-Match', 'not modified'))
  t.equal(renderError(prepared, 'envelope').body, prepared.rendered.body, 'the envelope of a prepared error is the body made once')
  t.equal(renderError(prepared, 'envelope', '/x').body, renderError(prepared, 'envelope', '/y').body, 'whatever the request')
  t.equal(JSON.parse(renderError(prepared, 'problem', `/${'a'.repeat(256)}`).body.toString()).instance, undefined, 'a path of 257 characters is left out')
  t.equal(JSON.parse(renderError(prepared, 'problem', `/${'a'.repeat(255)}?q`).body.toString()).instance, `/${'a'.repeat(255)}`, 'a path of 256 characters is kept, without its query')
  t.equal(renderError(lengthRequired('x'), 'problem', '/x').contentType, TEXT, 'a text error keeps its rendering in the problem format')
})
