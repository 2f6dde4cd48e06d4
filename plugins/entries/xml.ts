/**
 * `fastify-http-conventions/xml`: JSON <-> XML as the Content-Type plugin reads and writes
 * `application/xml` bodies (XML 1.0, no DTDs, names and characters checked).
 *
 * @module fastify-http-conventions/xml
 */
export { jsonToXml, xmlBodyToJson } from '../../lib/xml'
export type { JsonSchemaLike, XmlParseOptions } from '../../lib/xml'
