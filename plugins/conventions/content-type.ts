/**
 * Content-Type (docs/conventions.md (Content-Type)): a request with a body carries a Content-Type whose charset, if
 * any, is UTF-8; bodies are parsed as JSON (prototype poisoning refused), text/plain,
 * text/html or XML (no DOCTYPE). Every response body carries a Content-Type, text types
 * with `charset=utf-8`; routes that opt in answer JSON or XML by the request's Accept.
 */
import { isUtf8 } from 'node:buffer'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badFraming, invalidOption, malformedBody, unsupportedMediaType, type ConventionError } from '../../lib/errors'
import { DEFAULT_JSON_MAX_DEPTH, parseJsonBuffer } from '../../lib/json-body'
import { isTextual, isUtf8Charset, negotiateMediaType, parseMediaType } from '@http-conventions/grammar'
import { DEFAULT_XML_MAX_ELEMENTS, jsonToXml, parseXmlBody, xmlReader, type JsonSchemaLike } from '../../lib/xml'
import { type Profile } from '../../lib/profile'
import { declareConvention, type PayloadNext, type RouteCompiler } from '../host/suite'
import { requestMediaType, useRequestMediaType } from '../services/media-type'
import { addVary, declaresBody } from '../services/shared'
import { MESSAGE, optionsChecker, PROFILE_SCHEMA, routeConfigChecker, WHERE_KEY } from '../services/options'
import { isBareEssence, readBody, setSuiteParser, type BodyStream, type Done } from '../services/body-reader'
import { defineConvention } from '../host/suite'

/** How a route's JSON answers are written as XML: the root element and the names of array items. */
export interface XmlConfig {
  /** Root element name (`article`, or `articles` for a list). */
  root: string
  /** Child element name for the items of an array, by the array's element name. Default: the singular (`tags` -> `tag`). */
  itemNames?: Record<string, string>
}

/** Options of the Content-Type plugin (RFC 9110 8.3): the XML parser and the bounds of a parsed body. */
export interface ContentTypeOptions {
  profile?: Profile
  /** Register the XML body parser (application/xml). Default true. */
  xml?: boolean
  /** Deepest nesting of a JSON or XML body (default 64): deeper bodies are a 400, parsed by no one. */
  maxDepth?: number
  /** Most elements of an XML body (default 10,000): more is a 400, before any tree is built. */
  xmlMaxElements?: number
}

/** `config.contentType`: the media types the route accepts (415 for others, RFC 9110 15.5.16) and its XML answers. */
export interface ContentTypeRouteConfig {
  /** Media types (essence) this route accepts as bodies; others are 415. Default: every type with a parser. */
  accept?: string[]
  /** Opt in to answering XML when the request's Accept prefers it (JSON otherwise). */
  xml?: XmlConfig
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const OFFERS = ['application/json', 'application/xml'] as const
const XML_CHARSETS = new Set(['iso-8859-1', 'latin1', 'us-ascii', 'utf-16', 'utf-16le', 'utf-16be'])

const PLUGIN = 'fastify-http-conventions-content-type'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'content-type',
  plugin: 'fastify-http-conventions-content-type',
  configKey: 'contentType',
  steps: [
    { name: 'content-type', phase: 'preParsing', after: ['auth'] }, // 415 from the headers alone, once credentials passed
    { name: 'content-type:xml', phase: 'preSerialization' }, // RFC 9110 12.5.1: XML when the client prefers it
    { name: 'content-type:charset', phase: 'onSend', after: ['conditional:elsewhere'], before: ['conditional'] } // the charset is settled before the ETag is computed
  ]
})

const WHERE = 'http-conventions/content-type'

/** The plugin's options as JSON Schema, checked at registration. */
export const contentTypeOptionsSchema = {
  [WHERE_KEY]: WHERE,
  type: 'object',
  additionalProperties: false,
  properties: {
    profile: PROFILE_SCHEMA,
    xml: { type: 'boolean', [MESSAGE]: 'must be a boolean' },
    maxDepth: { type: 'integer', minimum: 1, maximum: 10_000, [MESSAGE]: 'must be an integer from 1 to 10000' },
    xmlMaxElements: { type: 'integer', minimum: 1, maximum: 10_000_000, [MESSAGE]: 'must be an integer from 1 to 10000000' }
  }
} as const

/** A route's `config.contentType` as JSON Schema, checked when the route is added; each accepted type is then parsed. */
export const contentTypeRouteConfigSchema = {
  type: ['boolean', 'object'],
  not: { const: true },
  additionalProperties: false,
  properties: {
    accept: { type: 'array', items: { type: 'string' }, [MESSAGE]: 'must be an array of media types' },
    xml: {
      type: 'object',
      required: ['root'],
      additionalProperties: false,
      properties: {
        root: { type: 'string', minLength: 1 },
        itemNames: { type: 'object', additionalProperties: { type: 'string' }, [MESSAGE]: 'must be an object of element name: item element name' }
      },
      [MESSAGE]: 'needs a root element name: { root: "article" }'
    }
  },
  [MESSAGE]: 'must be false or an object'
} as const

const checkOptions = optionsChecker(WHERE, contentTypeOptionsSchema)
const checkRouteConfig = routeConfigChecker<ContentTypeRouteConfig | false>('contentType', contentTypeRouteConfigSchema)

function validateRouteConfig (c: RouteCompiler): ContentTypeRouteConfig | false | undefined {
  const config = checkRouteConfig(c.where, c.config.contentType)
  if (config === undefined || config === false) return config
  // Code, not a pattern: each type is parsed by the parser the requests' Content-Type goes through.
  if (config.accept?.some((t) => parseMediaType(t) === null)) throw invalidOption(c.where, 'config.contentType.accept must be an array of media types')
  return config
}

// Conventions (Content-Type): every response with a body carries Content-Type; text types say charset=utf-8.
function contentTypeOnSend (_request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
  if (payload === null || payload === undefined || payload === '') return
  // RFC 9110 15.3.5 / 15.4.5: a 204 or 304 has no content, so no Content-Type to settle.
  if (reply.statusCode === 304 || reply.statusCode === 204) return
  const type = reply.getHeader('content-type')
  if (type === undefined) {
    reply.header('content-type', 'application/octet-stream')
  } else if (typeof type === 'string' && type.indexOf('charset') === -1 && isTextualType(type)) {
    reply.header('content-type', `${type}; charset=utf-8`)
  }
}

/**
 * Whether a response's Content-Type (without charset) names a textual type, remembered per
 * value: an app answers with a handful of types, so each is parsed once, not per answer (the
 * suite's own `application/json` error bodies among them). At most TYPES_REMEMBERED values
 * are kept; past that a value is parsed each time.
 */
function isTextualType (type: string): boolean {
  const known = textualTypes.get(type)
  if (known !== undefined) return known
  const mt = parseMediaType(type)
  const textual = mt !== null && isTextual(mt.essence)
  if (textualTypes.size < TYPES_REMEMBERED) textualTypes.set(type, textual)
  return textual
}

const TYPES_REMEMBERED = 256
const textualTypes = new Map<string, boolean>()

/**
 * RFC 9110 5.3: more than one Content-Type line (the same value twice included) makes the
 * field a list, which Content-Type cannot be. Only a request with a body and a Content-Type
 * is counted: a GET pays nothing. No allocation.
 */
function repeatsContentType (raw: readonly string[]): boolean {
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length === 12 && (name === 'Content-Type' || name === 'content-type' || name.toLowerCase() === 'content-type') && ++seen > 1) return true
  }
  return false
}

/** The check of a request's Content-Type; `accept`, the essences the route accepts, or null for any. */
function requestTypeCheck (accept: Set<string> | null): (request: FastifyRequest) => ConventionError | undefined {
  return function checkRequestType (request: FastifyRequest): ConventionError | undefined {
    const headers = request.headers
    if (!declaresBody(headers)) return undefined
    const value = headers['content-type']
    // Conventions (Content-Type): a request with a body carries Content-Type so that the body can be interpreted.
    if (value === undefined || value === '') return unsupportedMediaType('a request with a body must carry a Content-Type header')
    // RFC 9110 5.3 / 8.3: Content-Type is a singleton field; Node keeps the first of several lines.
    if (repeatsContentType(request.raw.rawHeaders)) return badFraming('the request carries more than one Content-Type field (RFC 9110 8.3)')
    // A bare essence (`application/json`) is a valid media type without a charset: only the route's list is left to check.
    if (isBareEssence(value)) return acceptedBy(accept, value)
    const mt = requestMediaType(request)
    if (mt === null) return unsupportedMediaType('Content-Type is not a valid media type')
    // RFC 9110 8.3.2: only UTF-8 is decoded (XML: also the encodings RFC 7303 lets a document declare).
    if (!isUtf8Charset(mt) && !(mt.essence === 'application/xml' && XML_CHARSETS.has(String(mt.parameters.charset).toLowerCase()))) {
      return unsupportedMediaType(`charset ${JSON.stringify(mt.parameters.charset)} is not supported; send UTF-8`)
    }
    return acceptedBy(accept, mt.essence)
  }
}

/** RFC 9110 15.5.16: undefined when the route takes bodies of `essence` (`accept` null: any), else its 415. */
function acceptedBy (accept: Set<string> | null, essence: string): ConventionError | undefined {
  if (accept !== null && !accept.has(essence)) return unsupportedMediaType(`Content-Type ${essence} is not accepted here; send one of ${[...accept].join(', ')}`)
  return undefined
}

/**
 * RFC 9110 12.5.1: whether the client may prefer XML to JSON, judged without parsing Accept.
 * An Accept that names no XML type reaches XML only through a range (all types,
 * `application/*`) that reaches JSON too; with every weight 1 (no parameter: no `=`), JSON,
 * offered first, wins the tie or is named itself. So only an Accept holding `xml` or a
 * parameter is parsed: no Accept, the all-types range and `application/json` cost one scan.
 */
function mayPreferXml (accept: string | undefined): boolean {
  return accept !== undefined && (/xml/i.test(accept) || accept.includes('='))
}

/** The step that answers XML to a client that prefers it (`config.contentType.xml`). */
function xmlNegotiation (xml: { root: string, itemNames?: Record<string, string> }): (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: PayloadNext) => void {
  const { root, itemNames = {} } = xml
  return function negotiateXml (request, reply, payload, next) {
    // RFC 9110 12.5.1: JSON unless the client prefers XML (the answer's Vary: varyOnAccept).
    const accept = request.headers.accept
    if (reply.statusCode >= 300 || !mayPreferXml(accept) || negotiateMediaType(accept, OFFERS) !== 'application/xml') return next(null, payload)
    reply.header('content-type', 'application/xml; charset=utf-8')
    reply.serializer(function serializeXml (data: unknown) { return jsonToXml(data, root, itemNames) })
    next(null, payload)
  }
}

/**
 * RFC 9110 12.5.5: on a route that answers JSON or XML by Accept, every answer that is the
 * representation or names it (a 2xx, a 304, any answer with its ETag: the 412 "not modified"
 * of the spec profile carries the negotiated representation's entity-tag, RFC 9110 8.8.3)
 * says `Vary: Accept`, merged with the Vary already set. An error without one does not.
 */
function varyOnAccept (_request: FastifyRequest, reply: FastifyReply): undefined {
  const status = reply.statusCode
  if ((status >= 200 && status < 300) || status === 304 || reply.getHeader('etag') !== undefined) addVary(reply, 'Accept')
}

function contentTypePlugin (fastify: FastifyInstance, opts: ContentTypeOptions, done: (err?: Error) => void): void {
  try { checkOptions(opts) } catch (err) { return done(err as Error) }
  const maxDepth = opts.maxDepth ?? DEFAULT_JSON_MAX_DEPTH
  const maxElements = opts.xmlMaxElements ?? DEFAULT_XML_MAX_ELEMENTS

  function compile (c: RouteCompiler): void {
    const config = validateRouteConfig(c)
    if (config === false) return
    c.check('onSend', 'content-type:charset', contentTypeOnSend)
    // OpenAPI: the body in each type the route takes, and its XML names.
    if (config !== undefined) c.describe({ media: { ...(config.accept === undefined ? {} : { accept: config.accept }), ...(config.xml === undefined ? {} : { xml: config.xml }) } })
    const accept = config?.accept === undefined ? null : new Set(config.accept.map((t) => (parseMediaType(t) as { essence: string }).essence))
    if (c.methods.some((m) => BODY_METHODS.has(m))) {
      c.respond(400, { description: 'Bad Request: the body is not well-formed (field body)', body: 'envelope' })
      c.respond(415, { description: 'Unsupported Media Type: missing Content-Type, a charset other than UTF-8, or a type the route does not accept', body: 'envelope' })
      c.check('preParsing', 'content-type', requestTypeCheck(accept))
    }
    if (config?.xml !== undefined) {
      c.step('preSerialization', 'content-type:xml', xmlNegotiation(config.xml))
      c.check('onSend', 'content-type:charset', varyOnAccept)
    }
  }

  try {
    declareConvention(fastify, { key: 'content-type', plugin: PLUGIN, configKey: 'contentType', compile, refusesBodies: true }, { profile: opts.profile })
  } catch (err) {
    return done(err as Error)
  }
  useRequestMediaType(fastify)
  installParsers(fastify, opts.xml !== false, maxDepth, maxElements)
  done()
}

function installParsers (fastify: FastifyInstance, xml: boolean, maxDepth: number, maxElements: number): void {
  const depth = { maxDepth }
  // Every body the suite parses is read by readBody (bounded memory per body byte), never by
  // Fastify's reader, which keeps one buffer per piece received.
  // JSON with Fastify's protection against prototype poisoning (secure-json-parse, as Fastify's default).
  // Bytes, not a string: invalid UTF-8 is refused, never turned into U+FFFD (RFC 8259 8.1); the
  // nesting depth is checked before JSON.parse sees the text.
  // Made once: readBody hands it the request's `next` (no closure per request).
  function parseJsonBytes (bytes: Buffer, next: Done): void {
    const parsed = parseJsonBuffer(bytes, depth)
    if (parsed.ok) next(null, parsed.value)
    else next(parsed.error, undefined)
  }
  setSuiteParser(fastify, ['application/json'], function parseJson (request: FastifyRequest, payload: BodyStream, next: Done) {
    readBody(request, payload, next, parseJsonBytes)
  })
  // Text decoded as strictly as JSON and XML: bytes that are not UTF-8 (RFC 3629 3: ill-formed
  // sequences, overlong forms, encoded surrogates, a sequence cut short) are a 400, never
  // text with U+FFFD in it. The check charset=UTF-8 (RFC 9110 8.3.2) made is then true.
  setSuiteParser(fastify, ['text/plain', 'text/html'], function parseText (request: FastifyRequest, payload: BodyStream, next: Done) {
    readBody(request, payload, next, decodeText)
  })
  if (xml) {
    // This registration's own parser and bounds: nothing of them is shared with another app.
    const reader = xmlReader({ maxDepth, maxElements })
    // RFC 7303 3.2: the charset parameter, else the XML declaration, says how the bytes decode.
    setSuiteParser(fastify, ['application/xml'], function parseXml (request: FastifyRequest, payload: BodyStream, next: Done) {
      readBody(request, payload, next, function parseXmlBytes (bytes) {
        const schema = (request.routeOptions.schema as { body?: JsonSchemaLike } | undefined)?.body
        const charset = requestMediaType(request)?.parameters.charset
        const parsed = parseXmlBody(bytes, charset, schema, reader)
        if (parsed.ok) next(null, parsed.value)
        else next(parsed.error, undefined)
      })
    })
  }
}

/** Text bodies: strict UTF-8 (RFC 3629 3), else a 400. */
function decodeText (bytes: Buffer, next: Done): void {
  if (isUtf8(bytes)) next(null, bytes.toString('utf8'))
  else next(malformedBody('body is not valid UTF-8 (RFC 3629 3)'), undefined)
}

/** The Content-Type plugin: 415 for a body of a media type the route does not accept (RFC 9110 15.5.16), XML bodies and answers. */
export const httpConventionsContentType = fp(contentTypePlugin, { fastify: '^5.10.0', name: PLUGIN })
