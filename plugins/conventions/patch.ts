/**
 * PATCH (docs/conventions.md (PATCH), the error table, rows 415 and 422; RFC 5789): JSON Patch (RFC 6902) and JSON
 * Merge Patch (RFC 7396), applied atomically to the resource a route loads, validated
 * against the resource's JSON Schema (readOnly honoured), and stored with a
 * compare-and-set on the ETag of the document the patch was applied to: a concurrent
 * write is never lost. Responses of the resource carry Accept-Patch (RFC 5789 3.1).
 */
import fp from 'fastify-plugin'
import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { invalidOption, preconditionFailed, unprocessable, unsupportedMediaType, type ConventionError } from '../../lib/errors'
import { parseJsonBuffer } from '../../lib/json-body'
import { applyJsonPatch, DEFAULT_PATCH_LIMITS, mergePatch, patchError, readOnlyViolations, type PatchLimits } from '../../lib/json-patch'
import { isUtf8Charset } from '@http-conventions/grammar'
import { ajvErrorsToEntries, type AjvErrorLike } from '../../lib/validation-errors'
import { type Profile } from '../../lib/profile'
import { declareConvention, type Convention, type Next, type RouteCompiler } from '../host/suite'
import { requestMediaType, useRequestMediaType } from '../services/media-type'
import { type RouteRequest } from '../services/shared'
import { FUNCTION_SCHEMA, MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { buildChecked, checkersOf, type SchemaCheckers } from '../services/schema-check'
import { readBody, setSuiteParser, type BodyStream, type Done } from '../services/body-reader'
import { kLoaded } from '../services/symbols'
import { defineConvention } from '../host/suite'
import { ACCEPT_PATCH, PRECONDITIONS, VALIDATORS } from '../services/capabilities'

/** A PATCH format a route accepts: JSON Patch (RFC 6902) or JSON Merge Patch (RFC 7396). */
export type PatchFormat = 'json-patch' | 'merge-patch'

/**
 * The one table of the patch formats: each one's media type (RFC 6902 6, RFC 7396 4), and the
 * schema of its documents for the OpenAPI records (`c.describe`).
 */
const PATCH_FORMATS: Record<PatchFormat, { readonly type: string, readonly schema: Record<string, unknown> }> = {
  'json-patch': {
    type: 'application/json-patch+json',
    schema: {
      description: 'A JSON Patch document (RFC 6902): operations applied in order, all or none',
      type: 'array',
      items: {
        type: 'object',
        required: ['op', 'path'],
        properties: {
          op: { type: 'string', enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
          path: { type: 'string', description: 'JSON Pointer (RFC 6901)' },
          from: { type: 'string', description: 'JSON Pointer, for move and copy' },
          value: { description: 'For add, replace and test' }
        }
      }
    }
  },
  'merge-patch': {
    type: 'application/merge-patch+json',
    schema: { description: 'A JSON Merge Patch (RFC 7396) of the resource: members to set, null to remove a member', type: 'object' }
  }
}

const PATCH_MEDIA_TYPES: Record<PatchFormat, string> = { 'json-patch': PATCH_FORMATS['json-patch'].type, 'merge-patch': PATCH_FORMATS['merge-patch'].type }

/** A resource as a route's `load` and `save` see it. */
export interface PatchableResource<T = unknown> {
  document: T
  /** Its entity-tag (strong): the compare-and-set key. */
  etag?: string
  lastModified?: Date | number
}

/**
 * `config.patch`: the resource's schema, and how to load and save it. `T`: the resource's
 * document, as `load` gives it and `save` receives it; `R`: the request as the route's handler
 * gets it (its generics, its type provider's schemas), on routes declared with Fastify's route
 * methods.
 */
export interface PatchRouteConfig<T = unknown, R = RouteRequest> {
  /**
   * JSON Schema of the resource: the patched document must satisfy it; `readOnly` properties
   * cannot change. Any object type: a plain schema, or a TypeBox / json-schema-to-ts one
   * (interfaces without an index signature), without a cast.
   */
  schema: object
  /** Reads the resource the request targets; null when it does not exist (404). */
  load: (request: R) => PatchableResource<T> | null | PromiseLike<PatchableResource<T> | null>
  /**
   * Stores the patched document only if the stored ETag is still `expectedEtag`
   * (`UPDATE ... WHERE etag = ?`). Returns the stored resource, or false when another
   * write came first (the plugin then answers 412 to a conditional request, and re-applies
   * the patch to the new state otherwise).
   */
  save: (request: R, document: T, expectedEtag: string | undefined) => PatchableResource<T> | false | PromiseLike<PatchableResource<T> | false>
  /** Patch formats accepted. Default both. */
  formats?: PatchFormat[]
}

/** Options of the PATCH plugin (RFC 5789): retries of a lost race and the bounds of a patch. */
export interface PatchOptions {
  profile?: Profile
  /** How many times an unconditional PATCH is re-applied after losing a race before giving up with 412. Default 5. */
  maxRetries?: number
  /** Most operations in one JSON Patch document (default 1000); more is a 422. */
  maxOperations?: number
  /** Deepest nesting of a patch value or of the patched document (default 64). */
  maxDepth?: number
  /**
   * How large the working document may grow while a patch applies, as a multiple of the
   * route's body limit (default 2, at least 1 MiB): `copy` and `add` of large values are
   * refused with 422 before they are made.
   */
  maxDocumentGrowth?: number
}

declare module 'fastify' {
  interface FastifyRequest {
    /** On PATCH routes with `config.patch`: the resource as stored after the patch. */
    patched: PatchableResource | null
  }
}

const PLUGIN = 'fastify-http-conventions-patch'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'patch',
  plugin: 'fastify-http-conventions-patch',
  configKey: 'patch',
  // A PATCH route's loader doubles as its validators provider (one read per request).
  provides: [VALIDATORS.name, ACCEPT_PATCH.name],
  // A PATCH route honours If-Match even where the conditional plugin is not registered: the
  // kernel brings a provider of preconditions with its defaults; a write that lost a race
  // answers `request.preconditions.failed()`.
  needs: [PRECONDITIONS],
  steps: [
    { name: 'patch:media-type', phase: 'preParsing', after: ['content-type'] }, // 415 with Accept-Patch for a patch document of another type
    { name: 'patch', phase: 'preHandler', after: ['conditional'] }, // the write happens where the handler would run, after the preconditions
    { name: 'patch:accept-patch', phase: 'onSend', after: ['conditional'] } // RFC 5789 3.1: Accept-Patch on the 2xx and 415 answers
  ]
})

const WHERE = PLUGIN
const POSITIVE_INTEGER = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be a positive integer' } as const

/** The plugin's options as JSON Schema, checked at registration. */
export const patchOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    maxRetries: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, [MESSAGE]: 'must be a non-negative integer' },
    maxOperations: POSITIVE_INTEGER,
    maxDepth: POSITIVE_INTEGER,
    maxDocumentGrowth: POSITIVE_INTEGER
  }
} as const

/** A route's `config.patch` as JSON Schema, checked when the route is added (then, in code, that the route serves PATCH). */
export const patchRouteConfigSchema = {
  type: ['boolean', 'object'],
  not: { const: true },
  required: ['schema', 'load', 'save'],
  additionalProperties: false,
  properties: {
    schema: {
      type: 'object',
      // A Zod type (`_zod` in zod 4, `_def` in zod 3) is an object too, but not JSON Schema:
      // Ajv would fail on it with a message that names neither the route nor the fix.
      not: { anyOf: ['_zod', '_def'].map((key) => ({ required: [key], properties: { [key]: true } })) },
      [MESSAGE]: {
        type: 'must be the resource\'s JSON Schema',
        not: 'must be a JSON Schema, not a Zod type: convert it with z.toJSONSchema(schema, { target: \'draft-7\' }) (zod 4), or pass the resource\'s JSON Schema'
      }
    },
    load: { ...FUNCTION_SCHEMA, [MESSAGE]: 'must be a function (request) => { document, etag } | null' },
    save: { ...FUNCTION_SCHEMA, [MESSAGE]: 'must be a function (request, document, expectedEtag) => resource | false' },
    formats: { type: 'array', minItems: 1, items: { enum: ['json-patch', 'merge-patch'] }, [MESSAGE]: "must list 'json-patch' and/or 'merge-patch'" }
  },
  [MESSAGE]: 'must be { schema, load, save, formats? }'
} as const

const checkOptions = optionsChecker(WHERE, patchOptionsSchema)
const checkRouteConfig = routeConfigChecker<PatchRouteConfig | false>('patch', patchRouteConfigSchema)
const ACCEPT_PATCH_METHODS = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'OPTIONS'])

type Tracked = FastifyRequest & { [kLoaded]: PatchableResource | false | null }

type Validate = ((data: unknown) => boolean) & { errors?: AjvErrorLike[] | null }
const RESOURCE_AJV_OPTIONS = { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: false, strict: false }
type CompileResource = (route: { schema: unknown, method: string, url: string, httpPart: string }) => Validate

/**
 * A compiler of PATCH resource schemas for one registration of the plugin (one app, or one
 * context): its Ajv instance is built for the first schema, and never shared with another app;
 * `checkers` are the app's (schema-check.ts).
 */
function resourceSchemaCompiler (checkers: SchemaCheckers): (route: Parameters<CompileResource>[0]) => Validate {
  let compileResource: CompileResource | undefined
  return function compileResourceSchema (route) {
    compileResource ??= buildChecked(checkers, RESOURCE_AJV_OPTIONS, [], (customOptions, created) =>
      (AjvCompiler() as unknown as (ext: unknown, opts: unknown) => CompileResource)({}, { customOptions, onCreate: created }))
    return compileResource(route)
  }
}

function routeConfig (c: RouteCompiler): PatchRouteConfig | null {
  const config = checkRouteConfig(c.where, c.config.patch)
  if (config === undefined || config === false) return null
  // Of the route, not of its config: code.
  if (!c.methods.includes('PATCH')) throw invalidOption(c.where, 'config.patch belongs on a PATCH route')
  return config
}

/** A cell holding one resource's Accept-Patch value: filled by its PATCH route, read by all its routes. */
type AcceptPatchCell = { value: string | undefined }

/** What the plugin settled at registration, for every PATCH route it compiles. */
interface PatchPlan {
  maxOperations: number
  maxDepth: number
  growth: number
  maxRetries: number
  serverBodyLimit: number
  compileResourceSchema: (route: Parameters<CompileResource>[0]) => Validate
  /** Accept-Patch value by route URL. */
  cellFor: (url: string) => AcceptPatchCell
}

/** One PATCH route: its resource's hooks, schema and validator, the patch's limits, and how often to retry. */
interface PatchRoute {
  load: PatchRouteConfig['load']
  save: PatchRouteConfig['save']
  schema: PatchRouteConfig['schema']
  validate: Validate
  limits: PatchLimits
  maxRetries: number
}

function patchPlan (opts: PatchOptions, maxRetries: number, serverBodyLimit: number, checkers: SchemaCheckers): PatchPlan {
  const acceptPatch = new Map<string, AcceptPatchCell>()
  return {
    maxOperations: opts.maxOperations ?? DEFAULT_PATCH_LIMITS.maxOperations,
    maxDepth: opts.maxDepth ?? DEFAULT_PATCH_LIMITS.maxDepth,
    growth: opts.maxDocumentGrowth ?? 2,
    maxRetries,
    serverBodyLimit,
    compileResourceSchema: resourceSchemaCompiler(checkers),
    cellFor (url) {
      let cell = acceptPatch.get(url)
      if (cell === undefined) acceptPatch.set(url, cell = { value: undefined })
      return cell
    }
  }
}

/** RFC 5789 3.1: Accept-Patch on the resource's 2xx answers and on the 415 (docs/conventions.md (PATCH)). */
function addAcceptPatch (c: RouteCompiler, cell: AcceptPatchCell): void {
  // Where no PATCH route is known yet at this URL (one may be declared later), the header
  // rides along with the route's other onSend steps rather than adding a hook of its own.
  c.check('onSend', 'patch:accept-patch', function acceptPatchOnSend (_request: FastifyRequest, reply: FastifyReply): undefined {
    const value = cell.value
    if (value === undefined) return
    const status = reply.statusCode
    if ((status >= 200 && status < 300) || status === 415) reply.header('accept-patch', value)
  }, { weak: cell.value === undefined })
}

/**
 * The 404 of a PATCH route whose `load` found nothing: the app's not-found handler answers it
 * (RFC 5789 2.2), Fastify's own by default, whose body this is. An app with a not-found
 * handler of its own records its 404 (`recordResponse`), which wins.
 */
const NOT_FOUND = {
  description: 'Not Found: there is no resource to patch (the answer of the app\'s not-found handler)',
  schema: {
    description: 'Fastify\'s not-found answer',
    type: 'object',
    required: ['message', 'error', 'statusCode'],
    properties: { message: { type: 'string' }, error: { type: 'string', enum: ['Not Found'] }, statusCode: { type: 'integer', enum: [404] } }
  }
}

/** OpenAPI: a PATCH route answers the patched resource, with Accept-Patch (RFC 5789 3.1), and 404 where `load` finds nothing. */
function describePatchRoute (c: RouteCompiler, schema: unknown): void {
  const resource = typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? schema as Record<string, unknown> : undefined
  const { $id: _i, $schema: _s, ...body } = resource ?? {}
  c.describe({
    success: { headers: ['Accept-Patch'], ...(resource === undefined ? {} : { body: { description: 'OK: the patched resource', schema: body } }) },
    jsonAnswers: { 404: NOT_FOUND }
  })
}

function declareAnswers (c: RouteCompiler): void {
  c.describe({ headerTexts: { 'Accept-Patch': 'The patch document types the resource accepts', ETag: 'The current entity tag of the resource' } })
  c.respond(415, { description: 'Unsupported Media Type: the patch document is not one of the types in Accept-Patch', body: 'envelope', headers: ['Accept-Patch'] })
  c.respond(422, { description: 'Unprocessable Entity: the patch cannot apply (failed test, unresolvable path, invalid patch document) or its result violates the resource schema', body: 'envelope' })
  c.respond(412, { description: 'Precondition Failed: If-Match does not hold, or the resource changed while the patch was applied', body: 'envelope', headers: ['ETag'] })
}

/** Conventions (PATCH): a PATCH body in a media type not listed in Accept-Patch (`types`) is 415. */
function checkMediaType (c: RouteCompiler, types: string[]): void {
  c.check('preParsing', 'patch:media-type', function patchMediaType (request: FastifyRequest): ConventionError | undefined {
    const mt = requestMediaType(request)
    if (mt === null || !types.includes(mt.essence)) return unsupportedMediaType(`a PATCH body must be one of: ${types.join(', ')}`)
    if (!isUtf8Charset(mt)) return unsupportedMediaType(`charset ${JSON.stringify(mt.parameters.charset)} is not supported; send UTF-8`)
    return undefined
  })
}

/** Applies the patch to `current` and checks the result: read-only properties kept, the resource schema met. */
function patchedDocument (route: PatchRoute, current: PatchableResource, request: FastifyRequest, merge: boolean): unknown {
  // Bounded work: operations, the working document's size (a multiple of the body limit)
  // and its depth are checked as the patch applies, before their cost is paid.
  const patched = merge ? mergePatch(current.document, request.body, route.limits) : applyJsonPatch(current.document, request.body, route.limits)
  if (!patched.ok) throw patchError(patched)
  const readOnly = readOnlyViolations(current.document, patched.document, route.schema)
  if (readOnly.length > 0) throw unprocessable(readOnly)
  if (!route.validate(patched.document)) throw unprocessable(ajvErrorsToEntries(route.validate.errors ?? [], 'body'))
  return patched.document
}

/** Applies, validates and stores the patch; false when the resource does not exist. */
async function applyAndSave (route: PatchRoute, request: FastifyRequest): Promise<boolean> {
  const mt = requestMediaType(request) as { essence: string }
  const merge = mt.essence === PATCH_MEDIA_TYPES['merge-patch']
  const kept = (request as Tracked)[kLoaded]
  let current = kept === null ? (await route.load(request as RouteRequest)) ?? null : kept === false ? null : kept
  for (let attempt = 0; current !== null; attempt++) {
    const document = patchedDocument(route, current, request, merge)
    const saved = await route.save(request as RouteRequest, document, current.etag)
    if (saved !== false) {
      request.patched = saved
      return true
    }
    // Lost a race: the client's precondition no longer holds (RFC 9110 13.1.1), or re-apply to the new state.
    if (request.preconditions?.conditional === true) throw request.preconditions.failed()
    if (attempt >= route.maxRetries) throw preconditionFailed('If-Match', `the resource kept changing while the patch was applied (${attempt + 1} attempts); retry with If-Match`)
    current = (await route.load(request as RouteRequest)) ?? null
  }
  return false
}

/** The validator of the route's resource schema; a schema Ajv cannot compile is the route's boot error. */
function resourceValidator (plan: PatchPlan, c: RouteCompiler, schema: object): Validate {
  try {
    return plan.compileResourceSchema({ schema, method: 'PATCH', url: c.route.url, httpPart: 'body' })
  } catch (err) {
    throw invalidOption(c.where, `config.patch.schema is not a JSON Schema Ajv can compile (${(err as Error).message}): pass the resource's JSON Schema (a Zod type converts with z.toJSONSchema(schema, { target: 'draft-7' }))`)
  }
}

/** The steps of a route with `config.patch`: validators from `load`, the media-type check, the write. */
function compilePatchRoute (plan: PatchPlan, c: RouteCompiler, config: PatchRouteConfig): void {
  const url = c.route.url
  const formats = config.formats ?? ['json-patch', 'merge-patch']
  const types = formats.map((f) => PATCH_MEDIA_TYPES[f])
  plan.cellFor(url).value = types.join(', ')
  if (c.methods.includes('PATCH')) c.provide(ACCEPT_PATCH, types.join(', '))
  c.describe({
    requestBody: {
      content: Object.fromEntries(formats.map((f) => [PATCH_FORMATS[f].type, PATCH_FORMATS[f].schema])),
      summary: 'By Content-Type: application/json-patch+json, a JSON Patch document (RFC 6902: an array of operations); application/merge-patch+json, a JSON Merge Patch (RFC 7396: an object)'
    }
  })
  const validate = resourceValidator(plan, c, config.schema)
  const { load, save, schema } = config
  const bodyLimit = c.route.bodyLimit ?? plan.serverBodyLimit
  const limits: PatchLimits = { maxOperations: plan.maxOperations, maxDepth: plan.maxDepth, maxDocumentBytes: Math.max(1024 * 1024, plan.growth * bodyLimit) }
  const route: PatchRoute = { load, save, schema, validate, limits, maxRetries: plan.maxRetries }
  declareAnswers(c)
  if (c.methods.includes('PATCH')) describePatchRoute(c, schema)
  // The conditional convention evaluates If-Match against what `load` read: one read per request.
  c.provide(VALIDATORS, async function patchValidators (request: FastifyRequest) {
    // After the write (the answer's validators, RFC 9110 8.8.3): the resource as `save` stored it.
    const stored = request.patched
    if (stored !== null) return { etag: stored.etag, lastModified: stored.lastModified }
    const loaded = await load(request as RouteRequest)
    ;(request as Tracked)[kLoaded] = loaded ?? false
    return loaded === null || loaded === undefined ? null : { etag: loaded.etag, lastModified: loaded.lastModified }
  })
  checkMediaType(c, types)
  // After the preconditions and the route's own preHandler hooks: the write happens where
  // the handler would run, and the handler answers with `request.patched`.
  c.step('preHandler', 'patch', function patchPreHandler (request: FastifyRequest, reply: FastifyReply, next: Next) {
    applyAndSave(route, request).then((found) => {
      if (found) return next()
      // RFC 5789 2.2: no resource to patch is the route's 404.
      reply.callNotFound()
    }, next)
  })
}

function patchConvention (opts: PatchOptions, maxRetries: number, serverBodyLimit: number, checkers: SchemaCheckers): Convention {
  const plan = patchPlan(opts, maxRetries, serverBodyLimit, checkers)
  function compile (c: RouteCompiler): void {
    const config = routeConfig(c)
    if (config !== null) compilePatchRoute(plan, c, config)
    if (c.methods.some((m) => ACCEPT_PATCH_METHODS.has(m))) addAcceptPatch(c, plan.cellFor(c.route.url))
  }
  return {
    key: 'patch',
    plugin: PLUGIN,
    configKey: 'patch',
    compile,
    // 415 with Accept-Patch before the body is read.
    refusesBodies: true
  }
}

function patchPlugin (fastify: FastifyInstance, opts: PatchOptions, done: (err?: Error) => void): void {
  try {
    checkOptions(opts)
    const maxRetries = opts.maxRetries ?? 5
    // The app's server stands for the app: every context of it shares the one server.
    const checkers = checkersOf(fastify.server)
    declareConvention(fastify, patchConvention(opts, maxRetries, fastify.initialConfig.bodyLimit ?? 1048576, checkers), { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  useRequestMediaType(fastify)
  if (!fastify.hasRequestDecorator('patched')) fastify.decorateRequest('patched', null)
  if (!fastify.hasRequestDecorator('preconditions')) fastify.decorateRequest('preconditions', null)
  // RFC 5789 and RFC 7396: both media types are JSON, parsed with prototype poisoning refused.
  // Bytes: invalid UTF-8 is refused; the depth is checked before JSON.parse sees the text.
  const depth = { maxDepth: opts.maxDepth ?? DEFAULT_PATCH_LIMITS.maxDepth }
  setSuiteParser(fastify, [PATCH_MEDIA_TYPES['json-patch'], PATCH_MEDIA_TYPES['merge-patch']], function parsePatchBody (request: FastifyRequest, payload: BodyStream, next: Done) {
    readBody(request, payload, next, function parsePatchBytes (bytes) {
      const parsed = parseJsonBuffer(bytes, depth)
      if (parsed.ok) next(null, parsed.value)
      else next(parsed.error, undefined)
    })
  })
  done()
}

/** PATCH with JSON Patch and JSON Merge Patch (docs/conventions.md (PATCH)): Accept-Patch, 415, atomic apply, 422. */
export const httpConventionsPatch = fp(patchPlugin, { fastify: '^5.10.0', name: PLUGIN })
