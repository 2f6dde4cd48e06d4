/** What a convention declares to the kernel, and what it sees of a route while compiling it. */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RequestPayload, RouteOptions } from 'fastify'
import type { ConventionError } from '../../lib/errors'
import type { ErrorFormat } from '../../lib/render'
import type { Profile } from '../../lib/profile'
import type { ConventionKey, RoutePhase, StepName } from './pipeline'

/** How a callback step goes on: with an error, the request takes the error path. */
export type Next = (err?: Error) => void
/** How a callback payload step goes on: an error, or the (new) payload. */
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
/** What a synchronous step returns when it answered the request itself (the joined hook ends there). */
export const SENT = 'sent'
export type ErrorFallback = (this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown

/** The kinds of body a documented response has (OpenAPI). */
export type ResponseBody = 'envelope' | 'text' | 'html' | 'none'

/** A response a convention documents for a route (`c.respond`). */
export interface ConventionResponse { description: string, body: ResponseBody, headers?: string[] }

/** A response header's schema, as a document lists it: a string, or one of a few values. */
export interface HeaderSchema { type: 'string', enum?: string[], description?: string }

/** An answer with a JSON body, as a document describes it. */
export interface JsonAnswer { readonly description: string, readonly schema: Record<string, unknown> }

/** The OPTIONS operation of a path, as a document describes it: its summary, its 204's description and headers (what each means, by name). */
export interface PathOptionsDescription {
  readonly summary: string
  readonly description: string
  readonly headers: Readonly<Record<string, string>>
}

/**
 * What a convention documents of a route besides its responses (`c.describe`): the kernel
 * hands it to its extensions (the OpenAPI records), which know no convention.
 */
export interface RouteDescription {
  /** Headers every 2xx answer of the route carries (ETag, Last-Modified, Cache-Control). */
  readonly successHeaders?: readonly string[]
  /**
   * The route's success answer, where it documents none: a JSON body (a PATCH route's: the
   * patched resource), and headers its 2xx answers carry after the others' (Accept-Patch).
   */
  readonly success?: { readonly body?: JsonAnswer, readonly headers?: readonly string[] }
  /** Answers of the route another part of the app writes with a JSON body, by status (the app's not-found handler's 404): where the route documents none. */
  readonly jsonAnswers?: Readonly<Record<string, JsonAnswer>>
  /** The media types the route takes (as its config lists them), and how it writes XML (the root element, array item names): a document lists its bodies in each. */
  readonly media?: { readonly accept?: readonly string[], readonly xml?: { readonly root: string, readonly itemNames?: Readonly<Record<string, string>> } }
  /** What each header the convention names (in its responses, its success headers) means, by name: a document's description of it. */
  readonly headerTexts?: Readonly<Record<string, string>>
  /** Headers every answer of the route carries, errors included, by name (Cross-Origin-Resource-Policy). */
  readonly answerHeaders?: Readonly<Record<string, HeaderSchema>>
  /** The authentication schemes that protect the route (any one is enough), and the scopes it needs. */
  readonly security?: { readonly schemes: ReadonlyArray<'basic' | 'bearer' | 'digest'>, readonly scopes?: readonly string[] }
  /** The server answers OPTIONS on the route's path (RFC 9110 9.3.7): how a document describes that operation. */
  readonly pathOptions?: PathOptionsDescription
  /** The request body in each media type the route takes, by media type (a JSON schema each), and one sentence for a document with one body schema. */
  readonly requestBody?: { readonly content: Readonly<Record<string, Record<string, unknown>>>, readonly summary: string }
}

/** How a route's error handler maps Fastify's framing and size errors (from its Content-Length convention). */
export interface ErrorPolicy {
  limitStatus: 411 | 413
  mismatchStatus: 411 | 400
  format: ErrorFormat
  /** The profile of a context the kernel does not know (the errors plugin registered alone); otherwise the route's context decides. */
  profile?: Profile
}

/**
 * `weak`: the step rides along with the phase's other steps and adds no hook of its own (each
 * Fastify hook phase costs a request about 280 bytes of allocation, docs/architecture.md); a
 * phase of weak steps only is left out.
 */
export interface StepOptions { readonly weak?: boolean }

/** A typed key for a capability one convention provides to later ones while compiling a route (`capability<T>(name)`). */
export interface Provision<T> { readonly name: string, readonly type?: T }

/** A typed key for the capability `name`: conventions that share it import the key, never each other. */
export function capability<T> (name: string): Provision<T> { return { name } }

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
  /** Adds a step the convention declared in `phase` (`defineConvention`); its position comes from the declarations. */
  step: <P extends RoutePhase>(phase: P, name: StepName, fn: P extends 'preSerialization' | 'onSend' ? PayloadStep : HookStep) => void
  /** Adds a synchronous step (cheaper: no callback); its position comes from the declarations. */
  check: <P extends RoutePhase>(phase: P, name: StepName, fn: P extends 'preSerialization' | 'onSend' ? PayloadCheck : CheckStep, opts?: StepOptions) => void
  /** Hands Fastify another stream of the body, in preParsing once every check passed (one such step per route). */
  body: (name: StepName, fn: BodyStep) => void
  /** A value a convention compiled before this one provided for this route (a capability it declares in `uses`). */
  use: <T>(key: Provision<T>) => T | undefined
  /** Provides a value to the conventions compiled after this one (a capability it declares in `provides`). */
  provide: <T>(key: Provision<T>, value: T) => void
  /** The key of the convention in effect for the route that owns response header `name` (`headers: { name: { owns: true } }`), if any. */
  headerOwner: (name: string) => ConventionKey | undefined
  /** Documents a response this route can give (OpenAPI). */
  respond: (status: number, response: ConventionResponse) => void
  /** Documents the route's headers, security, OPTIONS and request bodies (OpenAPI). */
  describe: (description: RouteDescription) => void
  /** Sets how the route's error handler renders framing and size errors. */
  errorPolicy: (policy: Partial<ErrorPolicy>) => void
  /** The route's error format; a convention that answers directly renders in it. */
  readonly errorFormat: ErrorFormat
}

/** A convention as its plugin registers it in a context (`declareConvention`): its key, and how it compiles a route. */
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
  /** Headers every answer of the context carries, also those written where no route runs (framework and framing errors). */
  headers?: Readonly<Record<string, string>>
  /**
   * The convention refuses requests before their body is read (a 307, 411, 401 or 415 from
   * preParsing): the kernel then gives the root its first preParsing hook, which runs a
   * route's refusals before any other preParsing hook can read the body (unrouted.ts).
   */
  refusesBodies?: boolean
}

/** How a route's errors are answered, once every convention compiled it (what a kernel extension reads). */
export interface RouteErrors {
  /** The route's error policy, as the conventions set it (`c.errorPolicy`). */
  readonly policy: Readonly<ErrorPolicy>
  /** Under the route's profile, a client's Accept chooses the media type of its errors (rfc9110). */
  readonly problemByAccept: boolean
  /** The handler of errors the suite does not own, for the route's context. */
  readonly fallback: ErrorFallback | undefined
}

/**
 * A part of the suite that consumes what the kernel compiles, given to the kernel when it is
 * installed (the error handling, the OpenAPI records): the kernel calls it and knows nothing
 * else of it.
 */
export interface KernelExtension {
  /** Once per app, in its root, when the kernel is installed there. */
  install?: (root: FastifyInstance) => void
  /** Each route, after every convention in effect compiled it. */
  compile?: (c: RouteCompiler, errors: RouteErrors) => void
  /** A response a convention documents for the route (`c.respond`). */
  respond?: (route: RouteOptions, status: number, response: ConventionResponse) => void
  /** What a convention documents of the route besides its responses (`c.describe`). */
  describe?: (route: RouteOptions, description: RouteDescription) => void
}

/**
 * What the kernel is given when it is installed: how to read what Fastify has no public API
 * for (plugins/infrastructure/adapter.ts), how to answer a request it refuses, and its
 * extensions, in order.
 */
export interface KernelHost {
  /** The root context, found by what it is. */
  isRootContext: (instance: FastifyInstance) => boolean
  /** Every context made so far below `instance`; undefined where they cannot be seen. */
  contextsBelow: (instance: FastifyInstance) => FastifyInstance[] | undefined
  /** Whether any route was declared in the app before now. */
  routesDeclared: (instance: FastifyInstance) => boolean
  /** Every route declared in the app before now, where Fastify lists them; undefined where it does not. */
  declaredRoutes: (instance: FastifyInstance) => ReadonlyArray<{ readonly method: unknown, readonly url: string, readonly config?: unknown }> | undefined
  /** Answers a request the kernel refuses (a route it never compiled that asks for a convention). */
  refuse: (reply: FastifyReply, err: ConventionError) => void
  /** The request slots (state a convention keeps on a request between its steps): each becomes a request decorator, null, in the root. */
  readonly requestSlots: readonly symbol[]
  readonly extensions: readonly KernelExtension[]
}
