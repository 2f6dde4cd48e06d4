/**
 * `fastify-http-conventions/headers`: the framework-free helpers the plugins are built on:
 * content negotiation and media types, JSON <-> XML, JSON Patch and JSON Merge Patch,
 * constant-time Bearer key matching, and redaction of secrets in logged URLs.
 */
export { negotiateMediaType } from '../../lib/headers/qlist'
export { parseMediaType } from '../../lib/headers/media-type'
export type { MediaType } from '../../lib/headers/media-type'
export { jsonToXml, xmlBodyToJson } from '../../lib/xml'
export type { JsonSchemaLike, XmlParseOptions } from '../../lib/xml'
export { applyJsonPatch, applyMergePatch } from '../../lib/json-patch'
export type { PatchLimits, PatchResult, PatchLimit } from '../../lib/json-patch'
export { createBearerKeyMatcher } from '../../lib/auth/bearer'
export { redactUrl, createRedactingSerializers, SECRET_QUERY_NAMES } from '../../lib/redact'
export type { RedactingSerializersOptions, RequestLike, SerializedRequest } from '../../lib/redact'
