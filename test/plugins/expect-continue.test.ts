/**
 * docs/plugins.md (Content-Length, "Expect: 100-continue"); RFC 9110 10.1.1, over real
 * sockets: a client sends its headers with `Expect: 100-continue` and waits for `100
 * (Continue)` before it sends the body. Every such request gets the 100 before its body is
 * read, as Node would send it, but on a route with the Content-Length convention's step,
 * which sends it only once the request will be accepted (and refuses with 411 or 413 and no
 * 100). The client here waits for the 100 with a deadline (a safety net): a server that never
 * sends it fails the test instead of having the body sent after a timeout.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { httpConventions, httpConventionsContentLength, httpConventionsContentType, serverOptions } from '../../plugins/index'
import { postExpecting } from '../helpers/expect-continue'
import { listen } from '../helpers/app'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 30
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261128
const echo = async (request: { body: unknown }): Promise<string> => `read ${String(request.body).length}`

test('docs/plugins.md (Expect: 100-continue): a route with config.contentLength: false gets 100 (Continue) before its body is read (RFC 9110 10.1.1)', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions)
  app.post('/free', { config: { contentLength: false } }, echo)
  const port = await listen(app)
  t.teardown(() => app.close())
  t.same(await postExpecting(port, '/free', 5), { statuses: [100, 200], body: 'read 5', sentBody: true })
})

test('docs/plugins.md (Expect: 100-continue): a route of a context without the Content-Length convention gets 100 (Continue); the convention\'s routes still decide theirs', async (t) => {
  const app = Fastify({ ...serverOptions, bodyLimit: 1000 })
  await app.register(httpConventionsContentType)
  await app.register(async (api) => {
    await api.register(httpConventionsContentLength)
    api.post('/api/echo', echo)
  })
  await app.register(async (other) => { other.post('/other', echo) })
  const port = await listen(app)
  t.teardown(() => app.close())
  t.same(await postExpecting(port, '/other', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, 'no convention: the 100 as Node sends it')
  t.same(await postExpecting(port, '/api/echo', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, 'the convention: the 100 after its checks')
  t.same((await postExpecting(port, '/api/echo', 5000)).statuses, [411], 'the convention: a refusal and no 100')
})

test('docs/plugins.md (Expect: 100-continue): a route declared before the suite, and the not-found handler, get 100 (Continue) before the body is read', async (t) => {
  const app = Fastify({ ...serverOptions })
  app.post('/before', echo)
  await app.register(httpConventions)
  const port = await listen(app)
  t.teardown(() => app.close())
  t.same(await postExpecting(port, '/before', 5), { statuses: [100, 200], body: 'read 5', sentBody: true }, 'a route no convention compiled')
  const missing = await postExpecting(port, '/nowhere', 5)
  t.same(missing.statuses, [100, 404], 'Fastify reads a body before its 404')
  t.equal(missing.sentBody, true)
})

test('RFC 9110 10.1.1: the Content-Length convention\'s route sends 100 (Continue) only for a request it accepts; a refused one gets 411 (spec) or 413 (rfc9110) and no 100', async (t) => {
  for (const [profile, status] of [['spec', 411], ['rfc9110', 413]] as const) {
    const app = Fastify({ ...serverOptions, bodyLimit: 1000 })
    await app.register(httpConventions, { profile })
    const seen: number[] = []
    app.post('/echo', async (request) => { seen.push(String(request.body).length); return 'ok' })
    const port = await listen(app)
    t.teardown(() => app.close())
    t.same(await postExpecting(port, '/echo', 5), { statuses: [100, 200], body: 'ok', sentBody: true }, `${profile}: accepted`)
    const refused = await postExpecting(port, '/echo', 5000)
    t.same(refused.statuses, [status], `${profile}: over the limit, refused without a 100`)
    t.equal(refused.sentBody, false)
    t.same(seen, [5], `${profile}: only the accepted body reached the handler`)
  }
})

/** An app whose own 'checkContinue' listener writes the 100 itself and hands the request to Fastify, counting its calls. */
function ownListener (app: FastifyInstance, calls: string[]): void {
  const server = app.server
  server.on('checkContinue', function appContinue (request, response) {
    calls.push(String(request.url))
    response.writeContinue()
    server.emit('request', request, response)
  })
}

test('docs/plugins.md (Expect: 100-continue): an app\'s own checkContinue listener, set before or after the suite, answers alone: one 100 per request', async (t) => {
  for (const when of ['before', 'after'] as const) {
    const app = Fastify({ ...serverOptions })
    const calls: string[] = []
    if (when === 'before') ownListener(app, calls)
    await app.register(httpConventions)
    if (when === 'after') ownListener(app, calls)
    const handled: string[] = []
    app.post('/echo', async (request) => { handled.push(String(request.body)); return 'ok' })
    app.post('/free', { config: { contentLength: false } }, async (request) => { handled.push(String(request.body)); return 'ok' })
    const port = await listen(app)
    t.teardown(() => app.close())
    if (when === 'before') t.equal(app.server.listenerCount('checkContinue'), 1, 'the suite adds no listener of its own')
    t.same(await postExpecting(port, '/echo', 5), { statuses: [100, 200], body: 'ok', sentBody: true }, `${when}: the suite's route sends no second 100`)
    t.same(await postExpecting(port, '/free', 5), { statuses: [100, 200], body: 'ok', sentBody: true }, `${when}: an opted-out route`)
    t.same(calls, ['/echo', '/free'], `${when}: the app's listener saw each request once`)
    t.same(handled, ['xxxxx', 'xxxxx'], `${when}: each handler ran once`)
  }
})

type Kind = 'suite' | 'free' | 'before' | 'other-context' | 'not-found'
const PATHS: Record<Kind, string> = { suite: '/suite', free: '/free', before: '/before', 'other-context': '/other', 'not-found': '/nowhere' }

test('RFC 9110 10.1.1, over generated requests: every upload that expects 100-continue is answered without waiting; a 100 only before a body that is read, at most one', async (t) => {
  const app = Fastify({ ...serverOptions, bodyLimit: 1000 })
  app.post('/before', echo)
  await app.register(httpConventionsContentType)
  await app.register(async (api) => {
    await api.register(httpConventionsContentLength)
    api.post('/suite', echo)
    api.post('/free', { config: { contentLength: false } }, echo)
  })
  await app.register(async (other) => { other.post('/other', echo) })
  const port = await listen(app)
  t.teardown(() => app.close())
  await t.resolves(fc.assert(fc.asyncProperty(
    fc.constantFrom<Kind>('suite', 'free', 'before', 'other-context', 'not-found'),
    fc.integer({ min: 1, max: 1500 }),
    async (kind, length) => {
      const { statuses, body, sentBody } = await postExpecting(port, PATHS[kind], length)
      const final = statuses.at(-1) ?? 0
      if (length > 1000) {
        // Over the limit: the convention's 411, or Fastify's refusal before it reads a byte; never a 100.
        return statuses.length === 1 && final >= 400 && !sentBody && (kind !== 'suite' || final === 411)
      }
      return sentBody && statuses.length === 2 && statuses[0] === 100 && (kind === 'not-found' ? final === 404 : final === 200 && body === `read ${length}`)
    }
  ), { seed: SEED, numRuns: RUNS }), `${RUNS} generated uploads, each answered as the property says`)
})

test('RFC 9110 10.1.1: no 100 (Continue) before a 401, a 411 or a 415, whether the suite or Fastify\'s parser refuses', async (t) => {
  const app = Fastify({ ...serverOptions })
  await app.register(httpConventions, { auth: { realm: 'r', basic: { users: { a: 'b' } } }, contentLength: { bodyLimit: 100 } })
  app.post('/json', echo)
  app.post('/free', { config: { contentType: false } }, echo)
  app.post('/secret', { config: { auth: true } }, echo)
  const port = await listen(app)
  t.teardown(() => app.close())
  const csv = await postExpecting(port, '/json', 5, 'text/csv')
  t.same([csv.statuses, csv.sentBody], [[415], false], 'text/csv to a JSON route: the suite\'s 415, no 100')
  const parserless = await postExpecting(port, '/free', 5, 'text/csv')
  t.same([parserless.statuses, parserless.sentBody], [[415], false], 'config.contentType: false: Fastify\'s own 415 (no parser for text/csv), no 100')
  const anonymous = await postExpecting(port, '/secret', 5, 'application/json')
  t.same([anonymous.statuses, anonymous.sentBody], [[401], false], 'no credentials: 401, no 100')
  const over = await postExpecting(port, '/json', 500, 'application/json')
  t.same([over.statuses, over.sentBody], [[411], false], 'over the limit: 411, no 100')
  const fine = await postExpecting(port, '/secret', 2, 'application/json', `Authorization: Basic ${Buffer.from('a:b').toString('base64')}\r\n`)
  t.same([fine.statuses.filter((s) => s === 100).length, fine.sentBody], [1, true], 'accepted: one 100, then the body is sent and judged')
})
