/**
 * Fail closed, over generated apps (docs/architecture.md, "Fail closed"): whatever way an app
 * is put together (the suite registered with or without await, before or after contexts,
 * fastify-plugin or encapsulated plugins, prefixes, contexts kept and used later, other
 * plugins' onRoute hooks that add, change or remove config, methods and hooks), a route
 * that its final config or a context-wide policy covers is refused at boot or answered with
 * its convention: its handler never runs without a principal, and every 401 challenges.
 *
 * A fixed seed keeps CI repeatable; `FUZZ_RUNS` (npm run fuzz) asks for a longer search.
 * The shrunk counterexamples it found are the named rows of fail-closed.test.ts.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { boot } from '../helpers/app'
import { httpConventions, serverOptions } from '../../plugins/index'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 300
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261127
const ALICE = 'Basic ' + Buffer.from('alice:secret').toString('base64')
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const

type AuthConfig = true | false | undefined | { scopes: string[] }
interface Route { method: 'GET' | 'POST' | 'DELETE' | Array<'POST' | 'DELETE'>, auth: AuthConfig }
interface Ctx { awaited: boolean, encapsulated: boolean, prefix: boolean, routes: Route[], children: Ctx[], late: Route[] }
type HookAction = 'spread auth' | 'assign auth' | 'delete auth' | 'auth false' | 'method to PUT' | 'clear preParsing' | 'clear onRequest' |
  'push admin scope' | 'replace first scope' | 'narrow schemes' | 'scopes to a new array' | 'rename url'
type Item =
  | { kind: 'route', route: Route }
  | { kind: 'ctx', ctx: Ctx }
  | { kind: 'hook', awaited: boolean, action: HookAction, odd: boolean }
interface Plan { suite: { awaited: boolean, protect: boolean, at: number }, items: Item[] }

const auth: fc.Arbitrary<AuthConfig> = fc.constantFrom<AuthConfig>(true, false, undefined, { scopes: ['read'] })
const route: fc.Arbitrary<Route> = fc.record({
  method: fc.constantFrom<Route['method']>('GET', 'POST', 'DELETE', ['POST', 'DELETE']),
  auth
})
const { ctx } = fc.letrec<{ ctx: Ctx }>((tie) => ({
  ctx: fc.record({
    awaited: fc.boolean(),
    encapsulated: fc.boolean(),
    prefix: fc.boolean(),
    routes: fc.array(route, { maxLength: 2 }),
    children: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant<Ctx[]>([]), fc.array(tie('ctx') as fc.Arbitrary<Ctx>, { maxLength: 2 })),
    late: fc.array(route, { maxLength: 2 })
  })
}))
const item: fc.Arbitrary<Item> = fc.oneof(
  fc.record({ kind: fc.constant('route' as const), route }),
  fc.record({ kind: fc.constant('ctx' as const), ctx }),
  fc.record({
    kind: fc.constant('hook' as const),
    awaited: fc.boolean(),
    action: fc.constantFrom<HookAction>('spread auth', 'assign auth', 'delete auth', 'auth false', 'method to PUT', 'clear preParsing', 'clear onRequest',
      'push admin scope', 'replace first scope', 'narrow schemes', 'scopes to a new array', 'rename url'),
    odd: fc.boolean()
  })
)
const plan: fc.Arbitrary<Plan> = fc.record({
  suite: fc.record({ awaited: fc.boolean(), protect: fc.boolean(), at: fc.nat(6) }),
  items: fc.array(item, { maxLength: 6 })
})

/** What one handler saw: its route's final config and the request's principal. */
interface Seen { config: Record<string, unknown>, principal: unknown, url: string }

/** Builds the app the plan describes; every handler records what it saw. */
async function build (p: Plan, seen: Seen[], made: (app: FastifyInstance) => void): Promise<{ app: FastifyInstance, urls: string[] }> {
  const app = Fastify({ ...serverOptions, logger: false })
  made(app)
  const urls: string[] = []
  const later: Array<() => void> = []
  let n = 0
  const declare = (on: FastifyInstance, r: Route, base: string): void => {
    const url = `/r${n++}`
    urls.push(base + url)
    on.route({
      method: r.method,
      url,
      // A copy per route: a hook that edits config.auth in place edits this route's only.
      config: r.auth === undefined ? {} : { auth: structuredClone(r.auth) },
      handler: async (request) => {
        seen.push({ config: request.routeOptions.config as unknown as Record<string, unknown>, principal: request.principal, url: request.url })
        return 'ran'
      }
    } as RouteOptions)
  }
  const context = async (on: FastifyInstance, c: Ctx, base: string): Promise<void> => {
    const prefix = c.prefix ? `/p${n++}` : ''
    const full = base + (c.encapsulated ? prefix : '')
    const body = async (inner: FastifyInstance): Promise<void> => {
      for (const r of c.routes) declare(inner, r, full)
      for (const child of c.children) await context(inner, child, full)
      later.push(() => { for (const r of c.late) declare(inner, r, full) })
    }
    const plugin = c.encapsulated ? body : fp(body)
    const done = on.register(plugin, c.encapsulated && c.prefix ? { prefix } : {})
    if (c.awaited) await done
  }
  const hook = (action: HookAction, odd: boolean) => fp(async (other: FastifyInstance) => {
    other.addHook('onRoute', (r: RouteOptions) => {
      const id = Number(/\/r(\d+)$/.exec(r.url)?.[1])
      if (Number.isNaN(id) || (id % 2 === 1) !== odd) return
      if (action === 'spread auth') r.config = { ...(r.config ?? {}), auth: true } as RouteOptions['config']
      else if (action === 'assign auth') Object.assign((r.config ?? (r.config = {} as RouteOptions['config'])) as object, { auth: true })
      else if (action === 'delete auth') r.config = Object.fromEntries(Object.entries(r.config ?? {}).filter(([k]) => k !== 'auth')) as RouteOptions['config']
      else if (action === 'auth false') r.config = { ...(r.config ?? {}), auth: false } as RouteOptions['config']
      else if (action === 'method to PUT') r.method = r.method === 'GET' || r.method === 'HEAD' ? r.method : 'PUT'
      else if (action === 'clear preParsing') r.preParsing = []
      else if (action === 'clear onRequest') r.onRequest = []
      else if (action === 'rename url') r.url = `${r.url}/renamed`
      else editNested(action, (r.config as { auth?: unknown } | undefined)?.auth)
    })
  })
  const suite = async (): Promise<void> => {
    const done = app.register(httpConventions, { auth: { realm: 'r', basic: { users: { alice: { password: 'secret', scopes: ['read'] } } }, protect: p.suite.protect } })
    if (p.suite.awaited) await done
  }
  for (let i = 0; i <= p.items.length; i++) {
    if (i === Math.min(p.suite.at, p.items.length)) await suite()
    const it = p.items[i]
    if (it === undefined) continue
    if (it.kind === 'route') declare(app, it.route, '')
    else if (it.kind === 'ctx') await context(app, it.ctx, '')
    else {
      const done = app.register(hook(it.action, it.odd))
      if (it.awaited) await done
    }
  }
  for (const f of later) f()
  return { app, urls }
}

/** An edit in place of a route's `config.auth` object, at some depth (a boolean or missing auth is left as it is). */
function editNested (action: HookAction, a: unknown): void {
  if (a === null || typeof a !== 'object') return
  const o = a as { scopes?: string[], schemes?: string[] }
  if (action === 'push admin scope') (o.scopes ??= []).push('admin')
  else if (action === 'replace first scope' && o.scopes !== undefined) o.scopes[0] = 'admin'
  else if (action === 'narrow schemes') o.schemes = ['digest']
  else if (action === 'scopes to a new array') o.scopes = ['read', 'admin']
}

/** A principal the suite set: an object naming its subject (never null, never undefined). */
function isPrincipal (value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { subject?: unknown }).subject === 'string'
}

/** The principal meets what the route's final config.auth asks for: every scope, one of the schemes. */
function meets (config: Record<string, unknown>, principal: unknown): boolean {
  const a = config.auth as { scopes?: string[], schemes?: string[] } | undefined
  if (a === null || typeof a !== 'object') return true
  const p = principal as { scheme: string, scopes: readonly string[] }
  return (a.scopes ?? []).every((s) => p.scopes.includes(s)) && (a.schemes === undefined || a.schemes.includes(p.scheme))
}

/** The route's final config asks for auth, or the suite's `protect` covers it. */
function covered (config: Record<string, unknown>, protect: boolean): boolean {
  const a = config.auth
  return (a !== undefined && a !== false) || (protect && a !== false)
}

test('fail closed, over generated apps: a covered route is refused at boot or answered with its convention, never run without it', async (t) => {
  const tally = { booted: 0, refused: 0, coveredServed: 0, coveredRefused: 0 }
  await fc.assert(fc.asyncProperty(plan, async (p) => {
    const seen: Seen[] = []
    let app: FastifyInstance | undefined
    try {
      let built: Awaited<ReturnType<typeof build>>
      try {
        // A route whose edited config the suite cannot serve (the HEAD route Fastify adds
        // shares the GET route's config object) is a boot error while it is declared.
        built = await build(p, seen, (a) => { app = a })
        app = built.app
        await boot(app.ready())
      } catch {
        tally.refused++
        return true // refused at boot: nothing is served
      }
      tally.booted++
      for (const url of built.urls) {
        for (const method of METHODS) {
          for (const authorization of [undefined, ALICE]) {
            const before = seen.length
            const res = await app.inject({ method, url, headers: authorization === undefined ? {} : { authorization } })
            if (res.statusCode === 401 && res.headers['www-authenticate'] === undefined) throw new Error(`${method} ${url}: a 401 without WWW-Authenticate`)
            const ran = seen.slice(before)
            for (const s of ran) {
              if (covered(s.config, p.suite.protect) && !isPrincipal(s.principal)) throw new Error(`${method} ${url}: the handler ran without a principal on a covered route (config.auth = ${JSON.stringify(s.config.auth)})`)
              if (covered(s.config, p.suite.protect) && !meets(s.config, s.principal)) throw new Error(`${method} ${url}: the handler ran for ${JSON.stringify(s.principal)}, whom the route's final config.auth (${JSON.stringify(s.config.auth)}) does not admit`)
              if (covered(s.config, p.suite.protect)) tally.coveredServed++
            }
            if (ran.length === 0 && (res.statusCode === 401 || res.statusCode === 500)) tally.coveredRefused++
          }
        }
      }
      return true
    } finally {
      await app?.close().catch(() => {})
    }
  }), { numRuns: RUNS, seed: SEED, endOnFailure: false })
  t.ok(tally.booted > RUNS / 4, `most generated apps boot (${tally.booted} of ${RUNS}), so the property is not vacuous`)
  t.ok(tally.refused > 0, `some are refused at boot (${tally.refused})`)
  t.ok(tally.coveredServed > 0, `covered routes were served with a principal (${tally.coveredServed} requests)`)
  t.ok(tally.coveredRefused > 0, `covered routes refused requests (${tally.coveredRefused})`)
})
