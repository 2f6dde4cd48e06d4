/**
 * Content-Type (spec 4.1): a request with a body carries a Content-Type whose charset, if
 * any, is UTF-8; bodies are parsed as JSON (prototype poisoning refused), text/plain,
 * text/html or XML (no DOCTYPE). Every response body carries a Content-Type, text types
 * with `charset=utf-8`; routes that opt in answer JSON or XML by the request's Accept.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import { invalidOption, malformedBody, unsupportedMediaType } from '../lib/errors'
import { parseJsonBody } from '../lib/json-body'
import { isTextual, isUtf8Charset, parseMediaType } from '../lib/headers/media-type'
import { negotiateMediaType } from '../lib/headers/qlist'
import { jsonToXml, xmlBodyToJson, XmlSyntaxError, type JsonSchemaLike } from '../lib/xml'
import { type Profile } from '../lib/profile'
import { httpConventionsErrors } from './errors'
import { recordResponse } from './openapi'
import { asArray, profileError } from './shared'

export interface XmlConfig {
  /** Root element name (`article`, or `articles` for a list). */
  root: string
  /** Child element name for the items of an array, by the array's element name. Default: the singular (`tags` -> `tag`). */
  itemNames?: Record<string, string>
}

export interface ContentTypeOptions {
  profile?: Profile
  /** Register the XML body parser (application/xml). Default true. */
  xml?: boolean
}

export interface ContentTypeRouteConfig {
  /** Media types (essence) this route accepts as bodies; others are 415. Default: every type with a parser. */
  accept?: string[]
  /** Opt in to answering XML when the request's Accept prefers it (JSON otherwise). */
  xml?: XmlConfig
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const OFFERS = ['application/json', 'application/xml'] as const

function routeWhere (route: RouteOptions): string {
  return `route ${String(route.method)} ${route.url}`
}

function validateRouteConfig (route: RouteOptions): ContentTypeRouteConfig | false | undefined {
  const config = (route.config as { contentType?: ContentTypeRouteConfig | false } | undefined)?.contentType
  if (config === undefined || config === false) return config
  if (typeof config !== 'object' || config === null) throw invalidOption(routeWhere(route), 'config.contentType must be false or an object')
  if (config.accept !== undefined) {
    if (!Array.isArray(config.accept) || config.accept.some((t) => typeof t !== 'string' || parseMediaType(t) === null)) {
      throw invalidOption(routeWhere(route), 'config.contentType.accept must be an array of media types')
    }
  }
  if (config.xml !== undefined && (typeof config.xml !== 'object' || config.xml === null || typeof config.xml.root !== 'string' || config.xml.root === '')) {
    throw invalidOption(routeWhere(route), 'config.contentType.xml needs a root element name: { root: "article" }')
  }
  return config
}

function contentTypePlugin (fastify: FastifyInstance, opts: ContentTypeOptions, done: (err?: Error) => void): void {
  const badProfile = profileError('http-conventions/content-type', opts.profile)
  if (badProfile !== null) return done(badProfile)
  if (opts.xml !== undefined && typeof opts.xml !== 'boolean') {
    return done(invalidOption('http-conventions/content-type', 'xml must be a boolean'))
  }
  fastify.register(httpConventionsErrors, { profile: opts.profile })

  // JSON with Fastify's protection against prototype poisoning (secure-json-parse, as Fastify's default).
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, function parseJson (_req, body, next) {
    const parsed = parseJsonBody(body as string)
    if (parsed.ok) next(null, parsed.value)
    else next(parsed.error, undefined)
  })
  fastify.removeContentTypeParser('text/plain')
  fastify.addContentTypeParser(['text/plain', 'text/html'], { parseAs: 'string' }, function parseText (_req, body, next) {
    next(null, body)
  })
  if (opts.xml !== false) {
    fastify.addContentTypeParser('application/xml', { parseAs: 'string' }, function parseXmlBody (req, body, next) {
      try {
        const schema = (req.routeOptions.schema as { body?: JsonSchemaLike } | undefined)?.body
        next(null, xmlBodyToJson(body as string, schema))
      } catch (err) {
        next(malformedBody(err instanceof XmlSyntaxError ? err.message : 'body is not well-formed XML'), undefined)
      }
    })
  }

  fastify.addHook('onRoute', function contentTypeOnRoute (route) {
    const config = validateRouteConfig(route)
    if (config === false) return
    const accept = config?.accept === undefined ? null : new Set(config.accept.map((t) => (parseMediaType(t) as { essence: string }).essence))
    const routeMethods = Array.isArray(route.method) ? route.method : [route.method]
    if (routeMethods.some((m) => BODY_METHODS.has(m.toUpperCase()))) {
      recordResponse(route, 400, { description: 'Bad Request: the body is not well-formed (field body)', body: 'envelope' })
      recordResponse(route, 415, { description: 'Unsupported Media Type: missing Content-Type, a charset other than UTF-8, or a type the route does not accept', body: 'envelope' })
    }
    route.preParsing = [checkRequestType, ...asArray(route.preParsing)] as RouteOptions['preParsing']
    if (config?.xml !== undefined) {
      const { root, itemNames = {} } = config.xml
      route.preSerialization = [...asArray(route.preSerialization), function negotiateXml (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: (err: Error | null, value?: unknown) => void) {
        // RFC 9110 12.5.1: JSON unless the client prefers XML; the answer varies with Accept.
        reply.header('vary', 'Accept')
        if (reply.statusCode >= 300 || negotiateMediaType(request.headers.accept, OFFERS) !== 'application/xml') return next(null, payload)
        reply.header('content-type', 'application/xml; charset=utf-8')
        reply.serializer(function serializeXml (data: unknown) { return jsonToXml(data, root, itemNames) })
        next(null, payload)
      }] as RouteOptions['preSerialization']
    }

    function checkRequestType (request: FastifyRequest, _reply: FastifyReply, payload: unknown, next: (err?: Error | null, value?: unknown) => void): void {
      const headers = request.headers
      const cl = headers['content-length']
      const hasBody = headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0')
      if (!hasBody) return next(null, payload)
      const value = headers['content-type']
      // Spec 4.1: a request with a body carries Content-Type so that the body can be interpreted.
      if (value === undefined || value === '') return next(unsupportedMediaType('a request with a body must carry a Content-Type header'))
      const mt = parseMediaType(value)
      if (mt === null) return next(unsupportedMediaType('Content-Type is not a valid media type'))
      // RFC 9110 8.3.2: only UTF-8 is decoded.
      if (!isUtf8Charset(mt)) return next(unsupportedMediaType(`charset ${JSON.stringify(mt.parameters.charset)} is not supported; send UTF-8`))
      if (accept !== null && !accept.has(mt.essence)) return next(unsupportedMediaType(`Content-Type ${mt.essence} is not accepted here; send one of ${[...accept].join(', ')}`))
      next(null, payload)
    }
  })

  // Spec 4.1: every response with a body carries Content-Type; text types say charset=utf-8.
  fastify.addHook('onSend', function contentTypeOnSend (_request, reply, payload, next: HookHandlerDoneFunction & ((err: Error | null, value?: unknown) => void)) {
    if (payload === null || payload === undefined || payload === '') return next(null, payload)
    const type = reply.getHeader('content-type')
    if (type === undefined) {
      reply.header('content-type', 'application/octet-stream')
    } else if (typeof type === 'string' && type.indexOf('charset') === -1) {
      const mt = parseMediaType(type)
      if (mt !== null && isTextual(mt.essence)) reply.header('content-type', `${type}; charset=utf-8`)
    }
    next(null, payload)
  })
  done()
}

export const httpConventionsContentType = fp(contentTypePlugin, { fastify: '5.x', name: 'http-conventions-content-type' })
