/**
 * RFC 9110 15.5.6 and 9.3.7, over generated route tables (static segments, parameters,
 * wildcards, method sets, prefixed contexts, host constraints) and generated requests (their
 * Host among them). The oracle is the same
 * app without the convention (`methods: false`): what it serves, the app with the convention
 * serves the same way; where it answers the app's 404, the app with the convention answers
 * 405 with exactly the methods the path serves in Allow (or 204 to OPTIONS), and where no
 * method serves the path, the same 404 from the app's not-found handler. The served methods
 * are found by asking the oracle app every method, so Fastify's own router is the judge.
 *
 * A fixed seed keeps CI repeatable; `FUZZ_RUNS` (npm run fuzz) asks for a longer search.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'
import { allowValue } from '../../lib/methods'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 60
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261127
const DECLARED = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const ASKED = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const

type Segment = { kind: 'static', name: string } | { kind: 'param' }
interface Route { prefix: '' | '/p' | '/q', segments: Segment[], wildcard: boolean, methods: string[], host: string | undefined }
const HOSTS = ['www.example', 'internal.example'] as const

const segment: fc.Arbitrary<Segment> = fc.oneof(
  fc.constantFrom('a', 'b', 'c').map((name): Segment => ({ kind: 'static', name })),
  fc.constant<Segment>({ kind: 'param' })
)
const route: fc.Arbitrary<Route> = fc.record({
  prefix: fc.constantFrom<Route['prefix']>('', '/p', '/q'),
  segments: fc.array(segment, { minLength: 0, maxLength: 3 }),
  wildcard: fc.boolean(),
  methods: fc.uniqueArray(fc.constantFrom(...DECLARED), { minLength: 1, maxLength: 3 }),
  // A route constrained to one host is no route of the path for a request to another host.
  host: fc.constantFrom(undefined, undefined, 'internal.example')
})
const requestPath: fc.Arbitrary<string> = fc.array(fc.constantFrom('p', 'q', 'a', 'b', 'c', 'v1', 'v2'), { minLength: 0, maxLength: 5 }).map((s) => '/' + s.join('/'))

function pattern (r: Route): string {
  const parts = r.segments.map((s, i) => s.kind === 'static' ? s.name : `:x${i}`)
  if (r.wildcard) parts.push('*')
  return '/' + parts.join('/')
}

/** A path the route serves: its parameters and wildcard filled in. */
function sample (r: Route): string {
  const parts = r.segments.map((s) => s.kind === 'static' ? s.name : 'v1')
  if (r.wildcard) parts.push('v2')
  return r.prefix + '/' + parts.join('/')
}

/**
 * The routes an app can declare: a method a route of the same pattern already declares (the
 * parameter names aside) is left out, as Fastify refuses it at boot.
 */
function declarable (routes: readonly Route[]): Route[] {
  const taken = new Set<string>()
  const out: Route[] = []
  for (const r of routes) {
    const key = `${r.prefix}${pattern(r).replace(/:x\d/g, ':')} ${r.host ?? ''}`
    const methods = r.methods.filter((m) => !taken.has(`${m} ${key}`))
    for (const m of methods) taken.add(`${m} ${key}`)
    if (methods.length > 0) out.push({ ...r, methods })
  }
  return out
}

/** The app of `routes`, with or without the convention. */
async function build (routes: readonly Route[], methods: boolean): Promise<FastifyInstance> {
  const app = Fastify(serverOptions)
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).header('x-not-found', 'yes').send('not found'))
  await app.register(httpConventions, methods ? {} : { methods: false })
  const declare = (c: FastifyInstance, r: Route): void => {
    c.route({ method: r.methods, url: pattern(r), ...(r.host === undefined ? {} : { constraints: { host: r.host } }), handler: async (request) => `${request.method} ${pattern(r)}` })
  }
  for (const prefix of ['', '/p', '/q']) {
    const mine = routes.filter((r) => r.prefix === prefix)
    if (prefix === '') for (const r of mine) declare(app, r)
    else await app.register(async (c) => { for (const r of mine) declare(c, r) }, { prefix })
  }
  await app.ready()
  return app
}

test('RFC 9110 15.5.6 and 9.3.7, over generated route tables: served as before, 405 or 204 with exactly the served methods, or the app\'s 404', async (t) => {
  const tally = { served: 0, refused: 0, options: 0, notFound: 0 }
  const input = fc.record({
    routes: fc.array(route, { minLength: 1, maxLength: 6 }),
    requests: fc.array(fc.record({ method: fc.constantFrom(...ASKED), path: fc.oneof(requestPath, fc.nat(5)), host: fc.constantFrom(...HOSTS) }), { minLength: 1, maxLength: 6 })
  })
  await fc.assert(fc.asyncProperty(input, async (generated) => {
    const routes = declarable(generated.routes)
    const requests = generated.requests
    const oracle = await build(routes, false)
    const app = await build(routes, true)
    try {
      for (const req of requests) {
        const url = typeof req.path === 'number' ? sample(routes[req.path % routes.length]) : req.path
        const headers = { host: req.host }
        const expected = await oracle.inject({ method: req.method, url, headers })
        const res = await app.inject({ method: req.method, url, headers })
        const where = `${req.method} ${url} (Host ${req.host}) with ${routes.map((r) => `${r.methods.join(',')} ${r.prefix}${pattern(r)}${r.host === undefined ? '' : ` on ${r.host}`}`).join('; ')}`
        if (expected.headers['x-not-found'] === undefined) {
          if (res.statusCode !== expected.statusCode || res.body !== expected.body) throw new Error(`${where}: served ${expected.statusCode} without the convention, ${res.statusCode} with it`)
          tally.served++
          continue
        }
        const served: string[] = []
        for (const m of ASKED) {
          const probe = await oracle.inject({ method: m, url, headers })
          if (probe.headers['x-not-found'] === undefined) served.push(m)
        }
        if (served.length === 0) {
          if (res.headers['x-not-found'] === undefined || res.headers.allow !== undefined) throw new Error(`${where}: no route matches, but the answer is ${res.statusCode} ${res.body}`)
          tally.notFound++
          continue
        }
        const status = req.method === 'OPTIONS' ? 204 : 405
        if (res.statusCode !== status) throw new Error(`${where}: ${res.statusCode}, not ${status} (served: ${served.join(', ')})`)
        if (res.headers.allow !== allowValue(served)) throw new Error(`${where}: Allow ${String(res.headers.allow)}, not ${allowValue(served)}`)
        if (status === 204) tally.options++
        else tally.refused++
      }
      return true
    } finally {
      await oracle.close()
      await app.close()
    }
  }), { numRuns: RUNS, seed: SEED, endOnFailure: false })
  t.ok(tally.served > 0, `requests served by their route (${tally.served})`)
  t.ok(tally.refused > 0, `405s (${tally.refused})`)
  t.ok(tally.options > 0, `OPTIONS answered by the convention (${tally.options})`)
  t.ok(tally.notFound > 0, `paths no route matches (${tally.notFound})`)
})
