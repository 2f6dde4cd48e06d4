/**
 * The audit: runs each rule of the registry (rules.ts) whose needs are met, over one connection
 * at a time, then checks every answer against the rules that hold for all of them. A write run
 * creates its own resources and deletes them at the end, whatever happened.
 */
import { parseHttpDate } from '@http-conventions/grammar'
import { Context, Throttled, answer, statusOf, throttled } from './context'
import type { Targets } from './discovery'
import { checkGlobal, verdictOf } from './global'
import { Results, type RuleResult } from './results'
import { OPTION_NEEDS, type Need, type Rule } from './rule'
import { RULES, selected } from './rules'
import type { JsonSchema } from './schema-body'
import { createTransport, header, type Exchange, type Transport, type WireRequest } from './transport'

export type Profile = 'spec' | 'rfc9110'

export interface Credentials {
  basic?: { user: string, password: string }
  bearer?: string
  digest?: { user: string, password: string }
  /** a valid Bearer token that lacks the scope the writes need */
  insufficientBearer?: string
}

export interface AuditOptions {
  /** `http://host:port`, or `http://host:port/prefix`: every probe is sent below the prefix */
  url: string
  profile: Profile
  targets: Targets
  write: boolean
  credentials: Credentials
  /** requests a second at most (0: no limit) */
  rate: number
  timeoutMs: number
  /** called after each request */
  onRequest?: (exchange: Exchange) => void
  /** a transport already created (the OpenAPI document was fetched with it) */
  transport?: Transport
  /** `--rule`: ids or sections of the rules to run (none: every rule) */
  only?: string[]
  /** `--skip`: ids or sections of the rules not to run */
  skip?: string[]
  /** `--unique`: a property two resources may not share */
  unique?: string
  /** waits before a retry (replaceable in tests) */
  wait?: (ms: number) => Promise<void>
}

export interface AuditReport {
  url: string
  profile: Profile
  write: boolean
  rules: RuleResult[]
  requests: number
  /** resources created and deleted */
  created: number
  /** resources the run could not delete (their paths) */
  leftBehind: string[]
  /** why the service could not be reached (nothing was checked) */
  unreachable?: string
  /** the rules of the conventions the run could check (selected, given what they need on the command line), and how many it did */
  coverage: { applicable: number, checked: number }
}

export function transportFor (url: string, rate: number, timeoutMs: number, onRequest?: (ex: Exchange) => void): Transport {
  const u = new URL(url)
  const t = createTransport({ host: u.hostname, port: Number(u.port === '' ? 80 : u.port), rate, timeoutMs, prefix: u.pathname })
  if (onRequest === undefined) return t
  return { exchanges: t.exchanges, send: async (req) => { const ex = await t.send(req); onRequest(ex); return ex } }
}

/** A 429 or 503 is sent again at most this many times, */
const MAX_RETRIES = 3
/** and only when its Retry-After asks for no longer than this. */
const MAX_RETRY_WAIT_MS = 30_000

/** How long a 429 or 503 asks to wait (RFC 9110 10.2.3): seconds or a date; 1 s without the field. */
export function retryAfterMs (ex: Exchange, now = Date.now()): number | null {
  const value = header(ex.response, 'retry-after')
  if (value === undefined) return 1000
  if (/^\d+$/.test(value)) return Number(value) * 1000
  const at = parseHttpDate(value)
  return at === null ? null : Math.max(0, at - now)
}

/** Sends, and sends again a request the service throttled (429, 503) after its Retry-After, within bounds. */
function retrying (t: Transport, wait: (ms: number) => Promise<void>): (req: WireRequest) => Promise<Exchange> {
  return async (req) => {
    let ex = await t.send(req)
    for (let i = 0; i < MAX_RETRIES && throttled(ex); i++) {
      const ms = retryAfterMs(ex)
      if (ms === null || ms > MAX_RETRY_WAIT_MS) break
      await wait(ms)
      ex = await t.send(req)
    }
    return ex
  }
}

type NeedCheck = (c: Context) => string | undefined | Promise<string | undefined>

const GIVE_TARGETS = 'give --openapi, or it in --config'

/** Why a need is not met, or undefined. */
const NEEDS: Record<Need, NeedCheck> = {
  write: (c) => c.o.write ? undefined : 'needs --write',
  credentials: (c) => c.primaryScheme() !== undefined ? undefined : 'needs credentials (--basic, --bearer or --digest)',
  basic: (c) => c.o.credentials.basic !== undefined ? undefined : 'needs --basic',
  bearer: (c) => c.o.credentials.bearer !== undefined ? undefined : 'needs --bearer',
  digest: (c) => c.o.credentials.digest !== undefined ? undefined : 'needs --digest',
  'insufficient-token': (c) => c.o.credentials.insufficientBearer !== undefined ? undefined : 'needs --bearer-insufficient <token>',
  'unique-field': (c) => c.o.unique !== undefined ? undefined : 'needs --unique <property>',
  'spec-profile': (c) => c.spec ? undefined : 'rfc9110 profile: a body without Content-Length (chunked, or none) is accepted (RFC 9112 6.1, 6.3)',
  collection: (c) => c.targets.collection !== undefined ? undefined : `no collection known (${GIVE_TARGETS})`,
  schema: (c) => c.targets.schema !== undefined ? undefined : `no JSON Schema of the body (${GIVE_TARGETS})`,
  resource: async (c) => await c.resource() !== undefined ? undefined : c.o.write ? `no resource could be created${c.createProblem === undefined ? '' : ` (${c.createProblem})`}` : 'no resource to read: none listed at the collection (or run with --write to create one)',
  redirect: (c) => c.targets.redirects.length > 0 ? undefined : 'no redirect known (a 307 in the OpenAPI document, or redirects in --config)',
  protected: async (c) => {
    const ex = await c.challenge()
    return ex === undefined || statusOf(ex) === 401 || c.targets.protected || c.primaryScheme() !== undefined ? undefined : `writes are not protected (POST ${c.targets.collection as string} without credentials: ${answer(ex)})`
  },
  patch: async (c) => await c.takesPatch(await c.resource() as string) ? undefined : 'the resource does not take PATCH',
  put: (c) => c.takesPut() ? undefined : 'the resource does not take PUT'
}

async function unmet (c: Context, needs: readonly Need[]): Promise<string | undefined> {
  for (const need of needs) {
    const reason = await NEEDS[need](c)
    if (reason !== undefined) return reason
  }
  return undefined
}

/** Runs one rule's probe when its needs are met; a throttled service skips the rule, saying so. */
async function runRule (c: Context, results: Results, rule: Rule): Promise<void> {
  const v = verdictOf(results, rule.id)
  try {
    const reason = await unmet(c, rule.needs)
    if (reason !== undefined) { v.skip(reason); return }
    await (rule.probe as NonNullable<Rule['probe']>)(c, v)
  } catch (err) {
    if (!(err instanceof Throttled)) throw err
    v.skip(err.message)
  }
}

/** The first request: a service that does not answer it is unreachable, and nothing is judged. */
async function reach (c: Context): Promise<string | undefined> {
  const target = c.targets.paths[0] ?? '/'
  let ex: Exchange
  try { ex = await c.get(target) } catch { return undefined }
  return ex.response === null ? `${c.o.url} does not answer (${ex.error ?? 'closed'})` : undefined
}

/** The rules of the conventions the run could check, given the command line: and how many it did. */
function coverage (rules: readonly Rule[], list: readonly RuleResult[], c: Context): { applicable: number, checked: number } {
  const applicable = rules.filter((r) => r.advice !== true && r.probe !== undefined && r.needs.every((n) => !OPTION_NEEDS.includes(n) || NEEDS[n](c) === undefined))
  const ids = new Set(applicable.map((r) => r.id))
  return { applicable: applicable.length, checked: list.filter((r) => ids.has(r.id) && r.outcome !== 'skipped').length }
}

/** Runs the audit; never throws for what the service answers. */
export async function audit (options: AuditOptions): Promise<AuditReport> {
  const t = options.transport ?? transportFor(options.url, options.rate, options.timeoutMs, options.onRequest)
  const wait = options.wait ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const c = new Context(options, retrying(t, wait))
  const results = new Results()
  const rules = RULES.filter((r) => selected(r, options.only ?? [], options.skip ?? []))
  for (const r of RULES) if (!rules.includes(r)) results.skipped(r.id, 'not selected (--rule, --skip)')
  const unreachable = await reach(c)
  if (unreachable !== undefined) for (const r of rules) results.skipped(r.id, 'the service does not answer')
  else {
    try {
      for (const rule of rules) if (rule.probe !== undefined) await runRule(c, results, rule)
    } finally {
      await c.cleanup()
    }
    checkGlobal(results, t.exchanges, options.profile, rules)
  }
  const list = results.list()
  return {
    url: options.url,
    profile: options.profile,
    write: options.write,
    rules: list,
    requests: t.exchanges.length,
    created: c.deleted.length,
    leftBehind: c.leftBehind,
    ...(unreachable === undefined ? {} : { unreachable }),
    coverage: coverage(rules, list, c)
  }
}

export type { JsonSchema }
