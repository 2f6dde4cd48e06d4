/**
 * The seams with the plugins apps put beside the suite, over generated apps: @fastify/rate-limit,
 * @fastify/cors, @fastify/helmet, @fastify/compress, @fastify/multipart, @fastify/sensible,
 * @fastify/under-pressure, @fastify/formbody, @fastify/reply-from (a route that relays to an
 * upstream Fastify server, started once for the file) and @fastify/http-proxy (a prefix
 * proxied to it), each absent, registered before the suite or after it; the app's own hooks in every phase
 * that do nothing, read the body, reply or throw; `auth.protect` on or off; generated requests.
 * The invariants (docs/architecture.md, "Where the suite's checks sit"):
 * - no covered route runs its handler without a principal, and the upstream never sees a
 *   request to a covered route without credentials;
 * - no body the suite refuses (401, 411, 415) was read by anyone (the upstream included), and
 *   the app's reading hook never ran for it;
 * - every refusal of the suite was counted by the app's rate limiter;
 * - every answer carries Cross-Origin-Resource-Policy, whoever wrote it;
 * - a CORS preflight gets @fastify/cors's answer, never a 401.
 *
 * A fixed seed keeps CI repeatable; `FUZZ_RUNS` (npm run fuzz) asks for a longer search.
 */
import { test, type Test } from 'tap'
import fc from 'fast-check'
import { Readable } from 'node:stream'
import { request as httpRequest } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import compress from '@fastify/compress'
import multipart from '@fastify/multipart'
import sensible from '@fastify/sensible'
import underPressure from '@fastify/under-pressure'
import formbody from '@fastify/formbody'
import replyFrom from '@fastify/reply-from'
import httpProxy from '@fastify/http-proxy'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 60
// Over real sockets (Node's HTTP parser, a listening server): fewer apps, each one listening.
const SOCKET_RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 20
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261207
const ALICE = `Basic ${Buffer.from('alice:secret').toString('base64')}`
const ORIGIN = 'https://app.example'

const PLUGINS = { rateLimit, cors, helmet, compress, multipart, sensible, underPressure, formbody, replyFrom, httpProxy } as const
type PluginName = keyof typeof PLUGINS
type Place = 'absent' | 'before' | 'after'
type Phase = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler'
type Action = 'nothing' | 'read the body' | 'reply 418' | 'throw 409'
interface AppHook { phase: Phase, action: Action, when: 'always' | 'on x-hook' }
interface Layout { places: Record<PluginName, Place>, protect: boolean, hooks: AppHook[] }
type Kind = 'post secret' | 'post secret, credentials' | 'post secret, too long' | 'put doc, csv' | 'put doc, json' | 'get open' | 'get page' | 'get page, credentials' | 'preflight' | 'nowhere' |
  'post relay' | 'post relay, credentials' | 'get proxied' | 'get proxied, credentials' | 'post proxied, credentials' | 'post proxied, too long' | 'post form' | 'post form, credentials' | 'preflight proxied'
interface Req { kind: Kind, hooked: boolean }

const place = fc.constantFrom<Place>('absent', 'before', 'after')
const layout: fc.Arbitrary<Layout> = fc.record({
  places: fc.record({ rateLimit: place, cors: place, helmet: place, compress: place, multipart: place, sensible: place, underPressure: place, formbody: place, replyFrom: place, httpProxy: place }),
  protect: fc.boolean(),
  hooks: fc.array(fc.record({
    phase: fc.constantFrom<Phase>('onRequest', 'preParsing', 'preValidation', 'preHandler'),
    action: fc.constantFrom<Action>('nothing', 'read the body', 'reply 418', 'throw 409'),
    when: fc.constantFrom('always' as const, 'on x-hook' as const)
  }), { maxLength: 2 })
})
const KINDS: Kind[] = ['post secret', 'post secret, credentials', 'post secret, too long', 'put doc, csv', 'put doc, json', 'get open', 'get page', 'get page, credentials', 'preflight', 'nowhere',
  'post relay', 'post relay, credentials', 'get proxied', 'get proxied, credentials', 'post proxied, credentials', 'post proxied, too long', 'post form', 'post form, credentials', 'preflight proxied']
const requests = fc.array(fc.record({ kind: fc.constantFrom(...KINDS), hooked: fc.boolean() }), { minLength: 1, maxLength: 6 })

/** What the app saw of each request, by its x-n header; `upstream`: the requests the upstream got, with their credentials. */
interface Seen { readStarted: Set<string>, appReadBody: Set<string>, counted: Set<string>, handled: Map<string, { covered: boolean, principal: unknown }>, upstream: Map<string, { authorized: boolean }> }

/** The upstream of reply-from and http-proxy: answers every request, and records it in the current run's `seen`. */
async function startUpstream (current: () => Seen): Promise<{ url: string, close: () => Promise<void> }> {
  const up = Fastify()
  up.removeAllContentTypeParsers()
  up.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => { done(null, body) })
  up.all('/*', async (request) => {
    current().upstream.set(idOf(request), { authorized: request.headers.authorization !== undefined })
    return { upstream: true }
  })
  const port = await listen(up)
  return { url: `http://127.0.0.1:${port}`, close: async () => { await up.close() } }
}

function idOf (request: FastifyRequest): string {
  return String(request.headers['x-n'])
}

/** The app's own hook: registered after the suite, as the docs say. */
function addAppHook (app: FastifyInstance, hook: AppHook, seen: Seen): void {
  const applies = (request: FastifyRequest): boolean => hook.when === 'always' || request.headers['x-hook'] !== undefined
  if (hook.phase === 'preParsing') {
    app.addHook('preParsing', async (request, reply, payload) => {
      if (!applies(request)) return payload
      if (hook.action === 'read the body') {
        seen.appReadBody.add(idOf(request))
        const chunks: Buffer[] = []
        for await (const chunk of payload) chunks.push(chunk as Buffer)
        return Readable.from([Buffer.concat(chunks)]) as unknown as typeof payload
      }
      if (hook.action === 'reply 418') return reply.code(418).send('teapot') as unknown as typeof payload
      if (hook.action === 'throw 409') throw Object.assign(new Error('conflict'), { statusCode: 409 })
      return payload
    })
    return
  }
  app.addHook(hook.phase, async (request: FastifyRequest, reply) => {
    if (!applies(request) || hook.action === 'nothing' || hook.action === 'read the body') return
    if (hook.action === 'reply 418') return reply.code(418).send('teapot')
    throw Object.assign(new Error('conflict'), { statusCode: 409 })
  })
}

async function build (l: Layout, seen: Seen, upstream: string): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions, logger: false })
  app.addHook('onRequest', async (request) => {
    const id = idOf(request)
    request.raw.on('newListener', (event) => { if (event === 'data' || event === 'readable') seen.readStarted.add(id) })
  })
  const register = async (when: Place): Promise<void> => {
    for (const name of Object.keys(PLUGINS) as PluginName[]) {
      if (l.places[name] !== when) continue
      if (name === 'rateLimit') await app.register(rateLimit, { max: 10_000, timeWindow: 60_000, keyGenerator: (request) => { seen.counted.add(idOf(request)); return 'all' } })
      else if (name === 'cors') await app.register(cors, { origin: [ORIGIN], methods: ['GET', 'POST', 'PUT'] })
      else if (name === 'compress') await app.register(compress, { global: true })
      // A threshold never reached: its onRequest hook runs on every request.
      else if (name === 'underPressure') await app.register(underPressure, { maxEventLoopDelay: 60_000 })
      else if (name === 'replyFrom') await app.register(replyFrom, { base: upstream })
      else if (name === 'httpProxy') await app.register(httpProxy, { upstream, prefix: '/up' })
      else await app.register(PLUGINS[name] as never)
    }
  }
  await register('before')
  await app.register(httpConventions, {
    auth: { realm: 'r', basic: { users: { alice: 'secret' } }, protect: l.protect },
    contentLength: { bodyLimit: 4096 }
  })
  await register('after')
  for (const hook of l.hooks) addAppHook(app, hook, seen)
  const handler = (covered: boolean) => async (request: FastifyRequest) => {
    seen.handled.set(idOf(request), { covered, principal: request.principal })
    return { ok: true }
  }
  app.post('/secret', { config: { auth: true }, schema: { body: { type: 'object' } } }, handler(true))
  app.put('/doc', { config: { contentType: { accept: ['application/json'] }, auth: false } }, handler(false))
  app.get('/open', { config: { auth: false } }, handler(false))
  app.get('/page', handler(l.protect))
  app.post('/relay', { config: { auth: true } }, async (request, reply) => {
    seen.handled.set(idOf(request), { covered: true, principal: request.principal })
    return typeof reply.from === 'function' ? reply.from('/relayed') : { ok: true }
  })
  app.post('/form', { config: { auth: true, contentType: { accept: ['application/x-www-form-urlencoded'] } } }, handler(true))
  await app.ready()
  return app
}

function requestOf (r: Req, n: number): { method: 'GET' | 'POST' | 'PUT' | 'OPTIONS', url: string, headers: Record<string, string>, payload?: string } {
  const headers: Record<string, string> = { 'x-n': String(n), ...(r.hooked ? { 'x-hook': '1' } : {}) }
  const json = (auth: boolean, size = 20): Record<string, string> => ({ ...headers, 'content-type': 'application/json', ...(auth ? { authorization: ALICE } : {}), 'x-size': String(size) })
  switch (r.kind) {
    case 'post secret': return { method: 'POST', url: '/secret', headers: json(false), payload: JSON.stringify({ a: 'x'.repeat(20) }) }
    case 'post secret, credentials': return { method: 'POST', url: '/secret', headers: json(true), payload: JSON.stringify({ a: 'x'.repeat(20) }) }
    case 'post secret, too long': return { method: 'POST', url: '/secret', headers: json(true), payload: JSON.stringify({ a: 'x'.repeat(8000) }) }
    case 'put doc, csv': return { method: 'PUT', url: '/doc', headers: { ...headers, 'content-type': 'text/csv' }, payload: 'a,b\n1,2\n' }
    case 'put doc, json': return { method: 'PUT', url: '/doc', headers: json(false), payload: '{}' }
    case 'get open': return { method: 'GET', url: '/open', headers }
    case 'get page': return { method: 'GET', url: '/page', headers }
    case 'get page, credentials': return { method: 'GET', url: '/page', headers: { ...headers, authorization: ALICE } }
    case 'preflight': return { method: 'OPTIONS', url: '/secret', headers: { ...headers, origin: ORIGIN, 'access-control-request-method': 'POST' } }
    case 'nowhere': return { method: 'GET', url: '/nowhere', headers }
    case 'post relay': return { method: 'POST', url: '/relay', headers: json(false), payload: '{"a":1}' }
    case 'post relay, credentials': return { method: 'POST', url: '/relay', headers: json(true), payload: '{"a":1}' }
    case 'get proxied': return { method: 'GET', url: '/up/x', headers }
    case 'get proxied, credentials': return { method: 'GET', url: '/up/x', headers: { ...headers, authorization: ALICE } }
    case 'post proxied, credentials': return { method: 'POST', url: '/up/x', headers: json(true), payload: '{"a":1}' }
    case 'post proxied, too long': return { method: 'POST', url: '/up/x', headers: json(true), payload: JSON.stringify({ a: 'x'.repeat(8000) }) }
    case 'preflight proxied': return { method: 'OPTIONS', url: '/up/x', headers: { ...headers, origin: ORIGIN, 'access-control-request-method': 'POST' } }
    case 'post form': return { method: 'POST', url: '/form', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' }
    case 'post form, credentials': return { method: 'POST', url: '/form', headers: { ...headers, authorization: ALICE, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' }
  }
}

/** An answer the suite wrote as a refusal: its 401 (with a challenge), 411, or 415 with the errors[] envelope. */
function suiteRefusal (status: number, headers: Record<string, unknown>, body: string): boolean {
  if (status === 401) return typeof headers['www-authenticate'] === 'string'
  if (status === 411) return body.startsWith('Length Required')
  if (status === 415) return body.includes('"errors"')
  return false
}

interface Answer { statusCode: number, headers: Record<string, unknown>, body: string }
type Send = (app: FastifyInstance, port: number, r: ReturnType<typeof requestOf>) => Promise<Answer>

/** Through Fastify's inject(): no socket, no Node HTTP parser. */
const injected: Send = async (app, _port, r) => {
  const res = await app.inject(r)
  return { statusCode: res.statusCode, headers: res.headers, body: res.body }
}

/**
 * Over a real socket to the listening app, one connection a request. An answer the server
 * gives before it read the whole body (a 401, a 411) may end the connection while the body is
 * still being written: the write's error is then no failure of the request.
 */
const overSocket: Send = async (_app, port, r) => await new Promise<Answer>((resolve, reject) => {
  const body = r.payload === undefined ? undefined : Buffer.from(r.payload)
  const headers = body === undefined ? r.headers : { ...r.headers, 'content-length': String(body.length) }
  let answered = false
  const req = httpRequest({ host: '127.0.0.1', port, method: r.method, path: r.url, headers, agent: false }, (res) => {
    answered = true
    const chunks: Buffer[] = []
    res.on('data', (chunk: Buffer) => chunks.push(chunk))
    res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }))
    res.on('error', reject)
  })
  req.on('error', (err) => { if (!answered) reject(err) })
  req.end(body)
})

async function checkLayouts (t: Test, send: Send, runs: number): Promise<void> {
  const tally = { apps: 0, refusals: 0, served: 0, preflights: 0, upstream: 0 }
  let seen: Seen = { readStarted: new Set(), appReadBody: new Set(), counted: new Set(), handled: new Map(), upstream: new Map() }
  const upstream = await startUpstream(() => seen)
  t.teardown(upstream.close)
  await fc.assert(fc.asyncProperty(layout, requests, async (l, reqs) => {
    seen = { readStarted: new Set(), appReadBody: new Set(), counted: new Set(), handled: new Map(), upstream: new Map() }
    const app = await build(l, seen, upstream.url)
    const port = send === injected ? 0 : await listen(app)
    tally.apps++
    try {
      for (let n = 0; n < reqs.length; n++) {
        const r = reqs[n]
        const id = String(n)
        const sent = requestOf(r, n)
        const res = await send(app, port, sent)
        const where = `${r.kind}${r.hooked ? ' (x-hook)' : ''}: ${res.statusCode}`
        // The one answer nothing of the suite can dress (docs/architecture.md, "Answers the suite
        // does not write"): another plugin's onRequest hook replies or throws for a URL no route serves.
        const unrouted = r.kind === 'nowhere' || (r.kind.includes('proxied') && l.places.httpProxy === 'absent')
        const answeredBeforeNotFound = unrouted && l.hooks.some((h) => h.phase === 'onRequest' && (h.action === 'reply 418' || h.action === 'throw 409') && (h.when === 'always' || r.hooked))
        if (!answeredBeforeNotFound && typeof res.headers['cross-origin-resource-policy'] !== 'string') throw new Error(`${where}: an answer without Cross-Origin-Resource-Policy`)
        const ran = seen.handled.get(id)
        if (ran?.covered === true && (ran.principal === null || typeof ran.principal !== 'object')) throw new Error(`${where}: a covered route ran without a principal`)
        if (ran !== undefined) tally.served++
        const reached = seen.upstream.get(id)
        if (reached !== undefined) tally.upstream++
        // The prefix http-proxy serves is covered under auth.protect.
        if (reached?.authorized === false && l.protect && r.kind.includes('proxied')) throw new Error(`${where}: the upstream got a covered request without credentials`)
        // Without @fastify/formbody no parser takes the form /form accepts: Fastify's own 415
        // comes after preParsing (the app's hook read the body), not one of the suite's refusals.
        const noFormParser = r.kind.startsWith('post form') && l.places.formbody === 'absent'
        if (!noFormParser && suiteRefusal(res.statusCode, res.headers, res.body)) {
          tally.refusals++
          // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3): a
          // hook that starts reading it reads nothing.
          const hasBody = sent.payload !== undefined
          if (hasBody && seen.readStarted.has(id)) throw new Error(`${where}: the body of a refused request was read`)
          if (reached !== undefined) throw new Error(`${where}: a request the suite refused reached the upstream`)
          if (hasBody && seen.appReadBody.has(id)) throw new Error(`${where}: the app's preParsing hook read a body the suite refused`)
          if (l.places.rateLimit !== 'absent' && !seen.counted.has(id)) throw new Error(`${where}: the rate limiter did not count a request the suite refused`)
        }
        if (r.kind.startsWith('preflight') && l.places.cors !== 'absent') {
          tally.preflights++
          const repliedEarlier = r.hooked || l.hooks.some((h) => h.when === 'always' && h.phase === 'onRequest' && h.action !== 'nothing' && h.action !== 'read the body')
          // docs/plugins.md (Proxies): http-proxy's routes declared before the suite are refused
          // whole (500) where auth.protect covers them, their OPTIONS too, before cors's hook if
          // cors came after the suite.
          const refusedProxy = r.kind === 'preflight proxied' && l.places.httpProxy === 'before' && l.protect && res.statusCode === 500
          if (refusedProxy) continue
          if (res.statusCode === 401) throw new Error(`${where}: a CORS preflight got 401`)
          if (!repliedEarlier && res.statusCode !== 204 && !l.hooks.some((h) => h.action === 'reply 418' || h.action === 'throw 409')) throw new Error(`${where}: a CORS preflight was not answered by cors`)
        }
      }
      return true
    } finally {
      await app.close()
    }
  }), { numRuns: runs, seed: SEED, endOnFailure: false })
  t.ok(tally.refusals > 0, `the suite refused requests (${tally.refusals})`)
  t.ok(tally.served > 0, `handlers ran (${tally.served})`)
  t.ok(tally.preflights > 0, `preflights were sent beside cors (${tally.preflights})`)
  t.ok(tally.upstream > 0, `requests were relayed or proxied to the upstream (${tally.upstream})`)
}

test('the seams with the plugins apps use, over generated apps and requests: covered, unread, counted, dressed, preflights pass', async (t) => {
  await checkLayouts(t, injected, RUNS)
})

test('the same seams over real sockets: Node\'s HTTP parser, a listening app, answers given before the body was sent', async (t) => {
  await checkLayouts(t, overSocket, SOCKET_RUNS)
})
