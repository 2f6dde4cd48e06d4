/**
 * The manifest of conventions: one entry per convention, from which the kernel derives
 * everything else (the `ConventionKey` type, the order conventions compile a route in, the
 * order of every step within a phase, the config keys that ask for a convention and what
 * turns each off). Adding a convention is one entry here; docs/adding-a-convention.md walks
 * through one.
 *
 * Step ranks order the steps of one phase across conventions: lower runs first. The reason
 * for each position is beside it.
 */

/** A step of one phase: its name (the convention's key, or `key:part`) and its rank. */
interface StepRank { readonly name: string, readonly rank: number }

interface ManifestEntry {
  /** The convention's key (also the name of its main steps). */
  readonly key: string
  /** The route config key that asks for the convention (none: it applies by its options alone). */
  readonly configKey?: string
  /** The plugin that provides it, for messages. */
  readonly plugin: string
  /** Route steps, by phase. */
  readonly steps?: Partial<Record<'onRequest' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend', readonly StepRank[]>>
  /** Context steps (run for routes no onRoute hook of the suite compiled, and the not-found handler), by kind. */
  readonly context?: Partial<Record<'everyRequest' | 'onRequest' | 'everyResponse' | 'onSend', number>>
}

/**
 * Every convention, in the order it compiles a route: a convention may read what an
 * earlier one provided (the PATCH loader is the conditional convention's validators).
 */
export const MANIFEST = [
  {
    key: 'errors',
    plugin: 'fastify-http-conventions',
    // Errors in Fastify's shape (a 404, a 429 of a rate limiter) re-rendered first.
    context: { everyResponse: 10 }
  },
  {
    key: 'redirect',
    configKey: 'redirect',
    plugin: 'fastify-http-conventions-redirect',
    // RFC 9110 15.4.8: 307 before any body is read (the answer carries the resource policy).
    steps: { onRequest: [{ name: 'redirect', rank: 20 }] },
    context: { onRequest: 20 }
  },
  {
    key: 'content-length',
    configKey: 'contentLength',
    plugin: 'fastify-http-conventions-content-length',
    steps: {
      onRequest: [
        // RFC 9112 6: 411 before any byte of the body is read, before credentials are checked.
        { name: 'content-length', rank: 30 },
        // RFC 9110 10.1.1: 100 (Continue) only once every other check of the headers passed.
        { name: 'content-length:continue', rank: 90 }
      ],
      preValidation: [{ name: 'content-length:framing', rank: 10 }]
    },
    // Repeated Host lines (RFC 9112 3.2) on every request; unread bodies of GET/HEAD; a
    // connection that closes ends its pipeline.
    context: { everyRequest: 10, onRequest: 30, everyResponse: 20 }
  },
  {
    key: 'auth',
    configKey: 'auth',
    plugin: 'fastify-http-conventions-auth',
    // Conventions (Authentication): 401 before the body is parsed.
    steps: { onRequest: [{ name: 'auth', rank: 40 }] }
  },
  {
    key: 'content-type',
    configKey: 'contentType',
    plugin: 'fastify-http-conventions-content-type',
    steps: {
      // Conventions (Content-Type): 415 from the headers alone.
      onRequest: [{ name: 'content-type', rank: 50 }],
      preSerialization: [{ name: 'content-type:xml', rank: 10 }],
      // The charset is settled before the ETag is computed.
      onSend: [{ name: 'content-type:charset', rank: 20 }]
    },
    context: { onSend: 20 }
  },
  {
    key: 'validation',
    plugin: 'fastify-http-conventions-validation'
  },
  {
    key: 'patch',
    configKey: 'patch',
    plugin: 'fastify-http-conventions-patch',
    steps: {
      // Conventions (PATCH and Accept-Patch): 415 from the headers alone.
      onRequest: [{ name: 'patch:media-type', rank: 60 }],
      // After the preconditions: the write happens where the handler would run.
      preHandler: [{ name: 'patch', rank: 20 }],
      onSend: [{ name: 'patch:accept-patch', rank: 40 }]
    }
  },
  {
    key: 'conditional',
    configKey: 'conditional',
    plugin: 'fastify-http-conventions-conditional',
    steps: {
      // RFC 9110 13.2.1: preconditions after auth and validation, before the handler.
      preHandler: [{ name: 'conditional', rank: 10 }],
      onSend: [
        // A "not modified" another plugin wrote on an opted-in route becomes the convention's 412 first.
        { name: 'conditional:elsewhere', rank: 10 },
        // The ETag and the 412/304 decision are final before a 226 is made of the answer.
        { name: 'conditional', rank: 30 }
      ]
    }
  },
  {
    key: 'delta-encoding',
    configKey: 'deltaEncoding',
    plugin: 'fastify-http-conventions-delta-encoding',
    // RFC 3229 10.5.3: the delta is computed from the final payload and ETag.
    steps: { onSend: [{ name: 'delta-encoding', rank: 50 }] }
  },
  {
    key: 'prefer',
    configKey: 'prefer',
    plugin: 'fastify-http-conventions-prefer',
    // RFC 7240 4.2: the minimal answer is made of the final one (status, headers, ETag).
    steps: { onSend: [{ name: 'prefer', rank: 60 }] }
  },
  {
    key: 'resource-policy',
    configKey: 'resourcePolicy',
    plugin: 'fastify-http-conventions-resource-policy',
    // Fetch standard: the route's policy travels with every answer, errors included.
    steps: { onRequest: [{ name: 'resource-policy', rank: 10 }] },
    context: { onRequest: 10 }
  }
] as const satisfies readonly ManifestEntry[]

type Entry = (typeof MANIFEST)[number]
export type ConventionKey = Entry['key']
export type RoutePhase = 'onRequest' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend'
export type ContextKind = 'everyRequest' | 'onRequest' | 'everyResponse' | 'onSend'

type StepsOf<E, P extends RoutePhase> = E extends { steps: { [K in P]: ReadonlyArray<{ name: infer N }> } } ? N : never
/** The names of the steps of one phase, as the manifest declares them. */
export type StepName<P extends RoutePhase = RoutePhase> = StepsOf<Entry, P>

/** Conventions in the order they compile a route. */
export const COMPILE_ORDER: readonly ConventionKey[] = MANIFEST.map((e) => e.key)

function rankTable (phase: RoutePhase): ReadonlyMap<string, number> {
  const out = new Map<string, number>()
  for (const e of MANIFEST as readonly ManifestEntry[]) {
    for (const s of e.steps?.[phase] ?? []) out.set(s.name, s.rank)
  }
  return out
}

/** The rank of every step, by phase: the pipeline. */
export const STEP_RANKS: Readonly<Record<RoutePhase, ReadonlyMap<string, number>>> = {
  onRequest: rankTable('onRequest'),
  preValidation: rankTable('preValidation'),
  preHandler: rankTable('preHandler'),
  preSerialization: rankTable('preSerialization'),
  onSend: rankTable('onSend')
}

/** The rank of each convention's context step, by kind. */
export function contextRank (kind: ContextKind, key: ConventionKey): number | undefined {
  const e = MANIFEST.find((m) => m.key === key) as ManifestEntry | undefined
  return e?.context?.[kind]
}

/** Config keys that ask for a convention; `false` turns each off for the route. */
export const ASKS: ReadonlyArray<{ readonly configKey: string, readonly key: ConventionKey }> =
  (MANIFEST as readonly ManifestEntry[]).flatMap((e) => e.configKey === undefined ? [] : [{ configKey: e.configKey, key: e.key as ConventionKey }])

export function entryOf (key: ConventionKey): { readonly key: ConventionKey, readonly configKey?: string, readonly plugin: string } {
  return MANIFEST.find((m) => m.key === key) as ManifestEntry as { key: ConventionKey, configKey?: string, plugin: string }
}
