/**
 * The pipeline, open: every convention, the suite's and a third party's alike, declares
 * itself with `defineConvention` (docs/adding-a-convention.md): its key and config key, its
 * steps (each in a phase, with the steps it must run after or before), the capabilities it
 * provides to other conventions and those it needs or uses, and what it claims of response
 * headers several conventions write (one owner; the others say what they need it to say).
 * The kernel derives from the declarations the order conventions compile a route in
 * (providers before the conventions that use what they provide) and the order of the steps
 * of each phase; it names no convention. A declaration that would make a cycle, that claims
 * what another claims, or (when its plugin is registered) that needs what no convention
 * provides, is a boot error naming both sides.
 */
import { invalidOption } from '../../lib/errors'
import type { Convention } from './types'
import type { Profile } from '../../lib/profile'

/** The phases of a route's lifecycle a convention's step may run in (none in onRequest: every onRequest hook of the app sees a request first). */
export type RoutePhase = 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend'
/** A route phase, or `unrouted`: the steps for requests no route serves (unrouted.ts). */
export type Phase = RoutePhase | 'unrouted'
export const ROUTE_PHASES: readonly RoutePhase[] = ['preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend']
const PHASES: readonly Phase[] = [...ROUTE_PHASES, 'unrouted']

/** A convention's key (`conditional`, `cache-control`). */
export type ConventionKey = string
/** A step's name, unique in its phase (`patch:media-type`). */
export type StepName = string
export type UnroutedStepName = string

/** One step of a convention: where it runs, and what it must run after or before (steps of the same phase, by name). */
export interface StepDeclaration {
  readonly name: StepName
  readonly phase: Phase
  /** Steps of the phase that run before this one, where they are declared. */
  readonly after?: readonly StepName[]
  /** Steps of the phase that run after this one, where they are declared. */
  readonly before?: readonly StepName[]
}

/**
 * What a convention claims of a response header several conventions write: `owns` (the one
 * writer of its final value), or `says`: what the convention needs it to say on the answers
 * it names (by status, `226`, `401`), which the owner honours.
 */
export interface HeaderDeclaration {
  readonly owns?: boolean
  readonly says?: Readonly<Record<string, string>>
}

/** A convention as the kernel's pipeline knows it (`defineConvention`). */
export interface ConventionDeclaration {
  readonly key: ConventionKey
  /** The plugin's name, for messages. */
  readonly plugin: string
  /** The route config key that asks for the convention (`false` turns it off for the route). */
  readonly configKey?: string
  readonly steps?: readonly StepDeclaration[]
  /** Capabilities it gives other conventions (`c.provide` while compiling a route, or a request property). */
  readonly provides?: readonly string[]
  /** Capabilities it reads while compiling a route when another convention provides them: it compiles after their providers. */
  readonly uses?: readonly string[]
  /** Capabilities it cannot work without: registering its plugin where no declared convention provides one is a boot error. */
  readonly needs?: readonly string[]
  /** The convention with its defaults, brought to a route whose conventions need a capability it provides where it is not registered. */
  readonly byDefault?: (profile: Profile | undefined) => Convention
  /** Response headers it writes that others may write too, by lower-case name. */
  readonly headers?: Readonly<Record<string, HeaderDeclaration>>
}

const declared = new Map<ConventionKey, ConventionDeclaration>()

interface Order {
  readonly conventions: readonly ConventionKey[]
  readonly steps: Readonly<Record<Phase, readonly StepName[]>>
  /** Each declared step, by `phase name`: the convention that declared it. */
  readonly stepOwners: ReadonlyMap<string, ConventionKey>
  readonly configKeys: ReadonlyArray<{ readonly configKey: string, readonly key: ConventionKey, readonly plugin: string }>
}
let order: Order | undefined

function fail (plugin: string, message: string): never {
  throw invalidOption(plugin, message)
}

/**
 * Declares a convention to the pipeline (once per process, where its module is loaded). The
 * same declaration again is a no-op; another with a key, a config key, a step or an owned
 * header another convention declared, or that makes a cycle, throws naming both.
 */
export function defineConvention<D extends ConventionDeclaration> (d: D): D {
  if (declared.get(d.key) === d) return d
  checkShape(d)
  for (const other of declared.values()) checkAgainst(d, other)
  declared.set(d.key, d)
  order = undefined
  try {
    pipelineOrder()
  } catch (err) {
    declared.delete(d.key)
    order = undefined
    throw err
  }
  return d
}

function checkShape (d: ConventionDeclaration): void {
  const plugin = typeof d.plugin === 'string' && d.plugin !== '' ? d.plugin : 'fastify-http-conventions'
  if (typeof d.key !== 'string' || d.key === '') fail(plugin, 'a convention declares its key, a non-empty string')
  if (plugin !== d.plugin) fail(plugin, `the ${d.key} convention declares its plugin's name, a non-empty string`)
  const seen = new Set<string>()
  for (const s of d.steps ?? []) {
    if (!PHASES.includes(s.phase)) fail(plugin, `step ${String(s.name)} of the ${d.key} convention has phase ${String(s.phase)}: one of ${PHASES.join(', ')}`)
    if (seen.has(`${s.phase} ${s.name}`)) fail(plugin, `the ${d.key} convention declares its ${s.phase} step ${s.name} twice`)
    seen.add(`${s.phase} ${s.name}`)
  }
}

/** A key, config key, step or owned header that two conventions claim. */
function checkAgainst (d: ConventionDeclaration, other: ConventionDeclaration): void {
  const both = `${d.plugin} (${d.key}) and ${other.plugin} (${other.key})`
  if (other.key === d.key) fail(d.plugin, `the ${d.key} convention is already declared, by ${other.plugin}: give a new convention a key of its own`)
  if (d.configKey !== undefined && other.configKey === d.configKey) fail(d.plugin, `config.${d.configKey} is claimed by both ${both}`)
  for (const s of d.steps ?? []) {
    if ((other.steps ?? []).some((o) => o.phase === s.phase && o.name === s.name)) fail(d.plugin, `the ${s.phase} step ${s.name} is declared by both ${both}`)
  }
  for (const [name, claim] of Object.entries(d.headers ?? {})) {
    const theirs = other.headers?.[name]
    if (theirs === undefined) continue
    if (claim.owns === true && theirs.owns === true) fail(d.plugin, `${name} has two owners, ${both}: one convention owns a header; the others declare what they need it to say (headers.${name}.says)`)
    for (const [answer, value] of Object.entries(claim.says ?? {})) {
      const said = theirs.says?.[answer]
      if (said !== undefined && said !== value) fail(d.plugin, `${name} on a ${answer} answer: ${d.key} needs it to say "${value}", ${other.key} "${said}" (${both}); settle it in one of them`)
    }
  }
}

/** The order of everything declared so far (computed once per set of declarations). */
export function pipelineOrder (): Order {
  if (order !== undefined) return order
  const all = [...declared.values()]
  const conventions = sortAll(all.map((d) => d.key), (key) => {
    const d = declared.get(key) as ConventionDeclaration
    // A convention compiles after every convention that provides what it uses.
    return all.filter((p) => p.key !== key && (p.provides ?? []).some((cap) => (d.uses ?? []).includes(cap))).map((p) => p.key)
  }, 'conventions', (a, b) => `${b} provides what ${a} uses`)
  const steps = {} as Record<Phase, readonly StepName[]>
  const stepOwners = new Map<string, ConventionKey>()
  for (const phase of PHASES) {
    const mine = all.flatMap((d) => (d.steps ?? []).filter((s) => s.phase === phase).map((s) => ({ key: d.key, s })))
    for (const { key, s } of mine) stepOwners.set(`${phase} ${s.name}`, key)
    const names = mine.map(({ s }) => s.name)
    steps[phase] = sortAll(names, (name) => {
      const before: StepName[] = []
      for (const { s } of mine) {
        if (s.name === name) before.push(...(s.after ?? []).filter((n) => names.includes(n)))
        else if ((s.before ?? []).includes(name)) before.push(s.name)
      }
      return before
    }, `${phase} steps`, (a, b) => `${a} runs after ${b}`)
  }
  const configKeys = conventions.flatMap((key) => {
    const d = declared.get(key) as ConventionDeclaration
    return d.configKey === undefined ? [] : [{ configKey: d.configKey, key, plugin: d.plugin }]
  })
  order = { conventions, steps, stepOwners, configKeys }
  return order
}

/**
 * Orders `names` so each comes after those `before(name)` returns; among names free to go,
 * the alphabetical first (the order never depends on the order modules were loaded in).
 * A cycle throws, naming it.
 */
function sortAll (names: readonly string[], before: (name: string) => string[], what: string, edge: (a: string, b: string) => string): string[] {
  const waits = new Map(names.map((n) => [n, new Set(before(n))]))
  const out: string[] = []
  while (waits.size > 0) {
    const free = [...waits.keys()].filter((n) => waits.get(n)?.size === 0).sort()
    if (free.length === 0) {
      const cycle = cycleIn(waits)
      fail('fastify-http-conventions', `the ${what} make a cycle: ${cycle.slice(0, -1).map((a, i) => edge(a, cycle[i + 1])).join(', ')}`)
    }
    const next = free[0]
    out.push(next)
    waits.delete(next)
    for (const w of waits.values()) w.delete(next)
  }
  return out
}

/** A cycle among names that each wait for another: `[a, b, ..., a]`. */
function cycleIn (waits: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const path: string[] = []
  let at = [...waits.keys()].sort()[0]
  while (!path.includes(at)) {
    path.push(at)
    at = [...(waits.get(at) as ReadonlySet<string>)].sort()[0]
  }
  return [...path.slice(path.indexOf(at)), at]
}

/**
 * When a convention's plugin is registered: what it needs is provided by a declared
 * convention, and each step it must run after or before is declared (a typo, or a
 * convention whose module is not loaded, is a boot error naming it).
 */
export function checkDependencies (key: ConventionKey, plugin: string): ConventionDeclaration {
  const d = declared.get(key)
  if (d === undefined) fail(plugin, `the ${key} convention is not declared: declare it with defineConvention({ key: '${key}', ... }) before its plugin registers it`)
  const all = [...declared.values()]
  for (const cap of d.needs ?? []) {
    if (!all.some((p) => (p.provides ?? []).includes(cap))) fail(d.plugin, `the ${key} convention needs ${cap}, which no declared convention provides: load the plugin that provides it (its declaration), or drop the need`)
  }
  for (const s of d.steps ?? []) {
    for (const other of [...(s.after ?? []), ...(s.before ?? [])]) {
      if (!pipelineOrder().stepOwners.has(`${s.phase} ${other}`)) fail(d.plugin, `the ${s.phase} step ${s.name} of the ${key} convention is ordered against ${other}, which no declared convention has in ${s.phase}`)
    }
  }
  return d
}

/** The declaration of `key` (undefined: none). */
export function declarationOf (key: ConventionKey): ConventionDeclaration | undefined {
  return declared.get(key)
}

/** Every declaration that provides `capability`, in compile order. */
export function providersOf (capability: string): ConventionDeclaration[] {
  return pipelineOrder().conventions.map((k) => declared.get(k) as ConventionDeclaration).filter((d) => (d.provides ?? []).includes(capability))
}

/** What the declared conventions say of a header: its owner, and each need by answer (`226` -> { by, value }). */
export function headerClaims (name: string): { owner: ConventionKey | undefined, says: Record<string, { by: ConventionKey, value: string }> } {
  const lower = name.toLowerCase()
  let owner: ConventionKey | undefined
  const says: Record<string, { by: ConventionKey, value: string }> = {}
  for (const key of pipelineOrder().conventions) {
    const claim = declared.get(key)?.headers?.[lower]
    if (claim === undefined) continue
    if (claim.owns === true) owner = key
    for (const [answer, value] of Object.entries(claim.says ?? {})) says[answer] = { by: key, value }
  }
  return { owner, says }
}

/** The steps of `phase`, first to last. */
export function stepOrder (phase: Phase): readonly StepName[] {
  return pipelineOrder().steps[phase]
}

/** The convention that declared the step `name` of `phase` (undefined: none did). */
export function stepOwner (phase: Phase, name: StepName): ConventionKey | undefined {
  return pipelineOrder().stepOwners.get(`${phase} ${name}`)
}

/** Config keys that ask for a convention, in compile order; `false` turns each off for the route. */
export function configKeys (): Order['configKeys'] {
  return pipelineOrder().configKeys
}

export function pluginOf (key: ConventionKey): string {
  return declared.get(key)?.plugin ?? key
}
