/** What a convention declares to the kernel, and what it sees of a route while compiling it. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RequestPayload, RouteOptions } from 'fastify'
import type { ConventionResponse } from '../infrastructure/openapi'
import type { ErrorFormat, ErrorPolicy } from '../infrastructure/errors'
import type { Profile } from '../../lib/profile'
import type { ConventionKey, RoutePhase, StepName } from './pipeline'

export type Next = (err?: Error) => void
export type PayloadNext = (err: Error | null, payload?: unknown) => void
/** A step of onRequest, preParsing, preValidation or preHandler. */
export type HookStep = (request: FastifyRequest, reply: FastifyReply, next: Next) => void
/** The last step of preParsing: it may hand Fastify another stream of the body to read. */
export type BodyStep = (request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (err: Error | null, body?: RequestPayload) => void) => void
/** A step of preSerialization or onSend. */
export type PayloadStep = (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: PayloadNext) => void
/** A synchronous step of onRequest, preParsing, preValidation or preHandler: an error refuses the request, SENT means it answered it. */
export type CheckStep = (request: FastifyRequest, reply: FastifyReply) => Error | typeof SENT | undefined
/** A synchronous step of preSerialization or onSend: it sets or removes headers, and may return a new payload. */
export type PayloadCheck = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown
export const SENT = 'sent'
export type ErrorFallback = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

/**
 * `weak`: the step rides along with the phase's other steps and adds no hook of its own (each
 * Fastify hook costs a request about 300 bytes); a phase of weak steps only is left out.
 */
export interface StepOptions { readonly weak?: boolean }

/** A typed key for what one convention provides to later ones while compiling a route. */
export interface Provision<T> { readonly name: string, readonly type?: T }

/** What a convention sees of a route while compiling it. */
export interface RouteCompiler {
  /** The route's options: `bodyLimit` may be set here; hooks are the compiler's. */
  readonly route: RouteOptions
  /** The route's config (the user's object, never written to). */
  readonly config: Record<string, unknown>
  /** Upper-case methods of the route. */
  readonly methods: readonly string[]
  /** `route GET /x`, for boot errors. */
  readonly where: string
  /** Adds a step; its position comes from the pipeline. */
  step: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadStep : HookStep) => void
  /** Adds a synchronous step (cheaper: no callback); its position comes from the pipeline. */
  check: <P extends RoutePhase>(phase: P, name: StepName<P>, fn: P extends 'preSerialization' | 'onSend' ? PayloadCheck : CheckStep, opts?: StepOptions) => void
  /** Hands Fastify another stream of the body, in preParsing once every check passed (one such step per route). */
  body: (name: StepName<'preParsing'>, fn: BodyStep) => void
  /** A value an earlier convention provided for this route. */
  use: <T>(key: Provision<T>) => T | undefined
  provide: <T>(key: Provision<T>, value: T) => void
  /** Documents a response this route can give (OpenAPI). */
  respond: (status: number, response: ConventionResponse) => void
  /** Sets how the route's error handler renders framing and size errors. */
  errorPolicy: (policy: Partial<ErrorPolicy>) => void
  /** The route's error format; a convention that answers directly renders in it. */
  readonly errorFormat: ErrorFormat
}

export interface Convention {
  key: ConventionKey
  /** The plugin's name, for messages. */
  plugin: string
  /** The config key a route asks with; must be the pipeline's (kept for readability at the call site). */
  configKey?: string
  /**
   * Compiles a route of a context where the convention is in effect. It applies the
   * convention's context-wide policies (`auth.protect`, `requirePrecondition`) to the routes
   * they cover; a route that cannot satisfy one throws a boot error naming the fix.
   */
  compile?: (c: RouteCompiler) => void
  /** A context-wide policy: true when it covers a route of these methods that does not ask for the convention (`auth.protect`). */
  policy?: (methods: readonly string[]) => boolean
  /** Conventions this one brings, with their defaults, to a route it provided something for where they are not registered. */
  needs?: ReadonlyArray<{ key: ConventionKey, make: (profile: Profile | undefined) => Convention }>
  /** Headers every answer of the context carries, also those written where no route runs (framework and framing errors). */
  headers?: Readonly<Record<string, string>>
}
