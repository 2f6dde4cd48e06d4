/**
 * PATCH (spec 4.3, section 7 rows 415 and 422; RFC 5789): JSON Patch (RFC 6902) and JSON
 * Merge Patch (RFC 7396), applied atomically to the resource a route loads, validated
 * against the resource's JSON Schema (readOnly honoured), and stored with a
 * compare-and-set on the ETag of the document the patch was applied to: a concurrent
 * write is never lost. Responses of the resource carry Accept-Patch (RFC 5789 3.1).
 */
import fp from 'fastify-plugin'
import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify'
import { invalidOption, preconditionFailed, unprocessable, unsupportedMediaType } from '../lib/errors'
import { parseJsonBody } from '../lib/json-body'
import { applyJsonPatch, applyMergePatch, readOnlyViolations } from '../lib/json-patch'
import { isUtf8Charset, parseMediaType } from '../lib/headers/media-type'
import { ajvErrorsToEntries, type AjvErrorLike } from '../lib/validation-errors'
import { type Profile } from '../lib/profile'
import { httpConventionsErrors } from './errors'
import { recordResponse } from './openapi'
import { asArray, assertProfile } from './shared'

export type PatchFormat = 'json-patch' | 'merge-patch'

export const PATCH_MEDIA_TYPES: Record<PatchFormat, string> = {
  'json-patch': 'application/json-patch+json',
  'merge-patch': 'application/merge-patch+json'
}

/** A resource as a route's `load` and `save` see it. */
export interface PatchableResource<T = unknown> {
  document: T
  /** Its entity-tag (strong): the compare-and-set key. */
  etag?: string
  lastModified?: Date | number
}

export interface PatchRouteConfig<T = unknown> {
  /** JSON Schema of the resource: the patched document must satisfy it; `readOnly` properties cannot change. */
  schema: Record<string, unknown>
  /** Reads the resource the request targets; null when it does not exist (404). */
  load: (request: FastifyRequest) => PatchableResource<T> | null | PromiseLike<PatchableResource<T> | null>
  /**
   * Stores the patched document only if the stored ETag is still `expectedEtag`
   * (`UPDATE ... WHERE etag = ?`). Returns the stored resource, or false when another
   * write came first (the plugin then answers 412 to a conditional request, and re-applies
   * the patch to the new state otherwise).
   */
  save: (request: FastifyRequest, document: T, expectedEtag: string | undefined) => PatchableResource<T> | false | PromiseLike<PatchableResource<T> | false>
  /** Patch formats accepted. Default both. */
  formats?: PatchFormat[]
}

export interface PatchOptions {
  profile?: Profile
  /** How many times an unconditional PATCH is re-applied after losing a race before giving up with 412. Default 5. */
  maxRetries?: number
}

declare module 'fastify' {
  interface FastifyRequest {
    /** On PATCH routes with `config.patch`: the resource as stored after the patch. */
    patched: PatchableResource | null
  }
}

const WHERE = 'http-conventions/patch'
const ROUTE_KEYS = new Set(['schema', 'load', 'save', 'formats'])
const ACCEPT_PATCH_METHODS = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'OPTIONS'])
const kLoaded = Symbol('http-conventions.patch.loaded')
const kInstalled = Symbol.for('fastify-http-conventions.patch-installed')

type Tracked = FastifyRequest & { [kLoaded]?: PatchableResource | null }

const ajvFactory = AjvCompiler()
type Validate = ((data: unknown) => boolean) & { errors?: AjvErrorLike[] | null }
const compileResourceSchema = (ajvFactory as unknown as (ext: unknown, opts: unknown) => (route: object) => Validate)({}, {
  customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: false, strict: false }
})

function routeConfig (route: RouteOptions): PatchRouteConfig | null {
  const config = (route.config as { patch?: unknown } | undefined)?.patch
  if (config === undefined || config === false) return null
  const where = `route ${String(route.method)} ${route.url}`
  if (typeof config !== 'object' || config === null) throw invalidOption(where, 'config.patch must be { schema, load, save, formats? }')
  for (const key of Object.keys(config)) {
    if (!ROUTE_KEYS.has(key)) throw invalidOption(where, `unknown config.patch option ${JSON.stringify(key)}`)
  }
  const c = config as PatchRouteConfig
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (!methods.some((m) => m.toUpperCase() === 'PATCH')) throw invalidOption(where, 'config.patch belongs on a PATCH route')
  if (typeof c.schema !== 'object' || c.schema === null) throw invalidOption(where, 'config.patch.schema must be the resource\'s JSON Schema')
  if (typeof c.load !== 'function') throw invalidOption(where, 'config.patch.load must be a function (request) => { document, etag } | null')
  if (typeof c.save !== 'function') throw invalidOption(where, 'config.patch.save must be a function (request, document, expectedEtag) => resource | false')
  if (c.formats !== undefined && (!Array.isArray(c.formats) || c.formats.length === 0 || c.formats.some((f) => PATCH_MEDIA_TYPES[f] === undefined))) {
    throw invalidOption(where, "config.patch.formats must list 'json-patch' and/or 'merge-patch'")
  }
  return c
}

async function patchPlugin (fastify: FastifyInstance, opts: PatchOptions): Promise<void> {
  for (const key of Object.keys(opts)) {
    if (key !== 'profile' && key !== 'maxRetries') throw invalidOption(WHERE, `unknown option ${JSON.stringify(key)}`)
  }
  assertProfile(WHERE, opts.profile)
  const maxRetries = opts.maxRetries ?? 5
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw invalidOption(WHERE, 'maxRetries must be a non-negative integer')

  fastify.register(httpConventionsErrors, { profile: opts.profile })
  const store = fastify as unknown as Record<symbol, boolean>
  if (store[kInstalled]) return
  store[kInstalled] = true
  fastify.decorateRequest('patched', null)

  // RFC 5789 and RFC 7396: both media types are JSON, parsed with prototype poisoning refused.
  fastify.addContentTypeParser([PATCH_MEDIA_TYPES['json-patch'], PATCH_MEDIA_TYPES['merge-patch']], { parseAs: 'string' }, function parsePatchBody (_req, body, next) {
    const parsed = parseJsonBody(body as string)
    if (parsed.ok) next(null, parsed.value)
    else next(parsed.error, undefined)
  })

  /** Accept-Patch value by route URL, for every route of a resource that supports PATCH. */
  const acceptPatch = new Map<string, string>()

  fastify.addHook('onRoute', function patchOnRoute (route) {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase())
    const url = route.url
    if (methods.some((m) => ACCEPT_PATCH_METHODS.has(m))) {
      // RFC 5789 3.1: Accept-Patch on the resource's 2xx answers and on the 415 (spec 4.3.3).
      route.onSend = [...asArray(route.onSend), function acceptPatchOnSend (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, value?: unknown) => void) {
        const value = acceptPatch.get(url)
        const status = reply.statusCode
        if (value !== undefined && ((status >= 200 && status < 300) || status === 415)) reply.header('accept-patch', value)
        done(null, payload)
      }] as RouteOptions['onSend']
    }
    const config = routeConfig(route)
    if (config === null) return
    const formats = config.formats ?? ['json-patch', 'merge-patch']
    const types = formats.map((f) => PATCH_MEDIA_TYPES[f])
    acceptPatch.set(url, types.join(', '))
    const validate = compileResourceSchema({ schema: config.schema, method: 'PATCH', url, httpPart: 'body' })
    const { load, save } = config

    recordResponse(route, 415, { description: 'Unsupported Media Type: the patch document is not one of the types in Accept-Patch', body: 'envelope', headers: ['Accept-Patch'] })
    recordResponse(route, 422, { description: 'Unprocessable Entity: the patch cannot apply (failed test, unresolvable path, invalid patch document) or its result violates the resource schema', body: 'envelope' })
    recordResponse(route, 412, { description: 'Precondition Failed: If-Match does not hold, or the resource changed while the patch was applied', body: 'envelope', headers: ['ETag'] })

    // The conditional plugin (registered after this one) reads the same load: one read per request.
    const routeConfigObject = (route.config ?? (route.config = {})) as { conditional?: unknown }
    if (routeConfigObject.conditional === undefined) {
      routeConfigObject.conditional = {
        async validators (request: FastifyRequest) {
          const loaded = await load(request)
          ;(request as Tracked)[kLoaded] = loaded ?? null
          return loaded === null || loaded === undefined ? null : { etag: loaded.etag, lastModified: loaded.lastModified }
        }
      }
    }

    route.preParsing = [...asArray(route.preParsing), function patchMediaType (request: FastifyRequest, _reply: FastifyReply, payload: unknown, next: (err?: Error | null, value?: unknown) => void) {
      const value = request.headers['content-type']
      const mt = value === undefined ? null : parseMediaType(value)
      // Spec 4.3.5: a PATCH body in a media type not listed in Accept-Patch is 415.
      if (mt === null || !types.includes(mt.essence)) {
        return next(unsupportedMediaType(`a PATCH body must be one of: ${types.join(', ')}`))
      }
      if (!isUtf8Charset(mt)) return next(unsupportedMediaType(`charset ${JSON.stringify(mt.parameters.charset)} is not supported; send UTF-8`))
      next(null, payload)
    }] as RouteOptions['preParsing']

    const handler = route.handler as RouteHandlerMethod
    route.handler = async function patchHandler (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const mt = parseMediaType(request.headers['content-type'] as string) as { essence: string }
      const merge = mt.essence === PATCH_MEDIA_TYPES['merge-patch']
      const tracked = request as Tracked
      let current = tracked[kLoaded] !== undefined ? tracked[kLoaded] : (await load(request)) ?? null
      for (let attempt = 0; ; attempt++) {
        if (current === null) return reply.callNotFound()
        const patched = merge ? { ok: true as const, document: applyMergePatch(current.document, request.body) } : applyJsonPatch(current.document, request.body)
        if (!patched.ok) throw unprocessable(patched.errors)
        const readOnly = readOnlyViolations(current.document, patched.document, config.schema)
        if (readOnly.length > 0) throw unprocessable(readOnly)
        if (!validate(patched.document)) throw unprocessable(ajvErrorsToEntries(validate.errors ?? [], 'body'))
        const saved = await save(request, patched.document, current.etag)
        if (saved !== false) {
          request.patched = saved
          return handler.call(this, request, reply)
        }
        // Lost a race: the client's precondition no longer holds (RFC 9110 13.1.1), or re-apply to the new state.
        if (request.preconditions?.conditional === true) throw request.preconditions.failed()
        if (attempt >= maxRetries) throw preconditionFailed('If-Match', `the resource kept changing while the patch was applied (${attempt + 1} attempts); retry with If-Match`)
        current = (await load(request)) ?? null
      }
    }
  })
}

/** PATCH with JSON Patch and JSON Merge Patch (spec 4.3): Accept-Patch, 415, atomic apply, 422. */
export const httpConventionsPatch = fp(patchPlugin, { fastify: '5.x', name: 'http-conventions-patch' })
