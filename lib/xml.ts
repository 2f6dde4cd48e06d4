/**
 * XML bodies (spec 4.1: application/xml) through fast-xml-parser, with the tricks XML
 * allows refused: no DOCTYPE, hence no entity declarations, expansion bombs or
 * external entities; only the five predefined entities and character references.
 * Conversion to and from JSON is schema-driven so `<published>true</published>` becomes
 * a boolean and `<tags><tag>a</tag></tags>` an array.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser'

export interface JsonSchemaLike {
  type?: string | string[]
  properties?: Record<string, JsonSchemaLike>
  items?: JsonSchemaLike
  xml?: { name?: string }
  [k: string]: unknown
}

export class XmlSyntaxError extends Error {
  override name = 'XmlSyntaxError'
}

const parser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  maxNestedTags: 64
})

function hasDoctype (text: string): boolean {
  // Any markup declaration (<!DOCTYPE, <!ENTITY, <!ELEMENT...) other than comments and CDATA is refused.
  let i = text.indexOf('<!')
  while (i !== -1) {
    if (!text.startsWith('<!--', i) && !text.startsWith('<![CDATA[', i)) return true
    i = text.indexOf('<!', i + 2)
  }
  return false
}

/** Parses an XML document into fast-xml-parser's plain tree; throws XmlSyntaxError when not well-formed. */
export function parseXml (text: string): Record<string, unknown> {
  if (hasDoctype(text)) throw new XmlSyntaxError('XML body must not contain a DOCTYPE or other markup declarations')
  const valid = XMLValidator.validate(text)
  if (valid !== true) {
    throw new XmlSyntaxError(`XML body is not well-formed: ${valid.err.msg} (line ${valid.err.line})`)
  }
  const tree = parser.parse(text) as Record<string, unknown>
  const roots = Object.keys(tree)
  if (roots.length !== 1) throw new XmlSyntaxError('XML body must have exactly one root element')
  return tree
}

function typeOf (schema: JsonSchemaLike | undefined): string | undefined {
  const t = schema?.type
  return Array.isArray(t) ? t.find((x) => x !== 'null') : t
}

/** Converts a parsed element to the JSON shape `schema` describes; unknown shapes stay as parsed. */
export function xmlToJson (node: unknown, schema: JsonSchemaLike | undefined): unknown {
  const type = typeOf(schema)
  if (type === 'array') {
    // <tags><tag>a</tag><tag>b</tag></tags>: the wrapper holds one kind of child element.
    if (node === '' || node === undefined) return []
    if (typeof node !== 'object' || node === null) return node
    const keys = Object.keys(node)
    if (keys.length !== 1) return node
    const items = (node as Record<string, unknown>)[keys[0]]
    const list = Array.isArray(items) ? items : [items]
    return list.map((item) => xmlToJson(item, schema?.items))
  }
  if (type === 'object' || (type === undefined && schema?.properties !== undefined)) {
    if (node === '') return {}
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      out[key] = xmlToJson(value, schema?.properties?.[key])
    }
    return out
  }
  if (typeof node !== 'string') return node
  if (type === 'boolean') return node === 'true' ? true : node === 'false' ? false : node
  if (type === 'integer' || type === 'number') {
    const n = Number(node)
    return node.trim() !== '' && Number.isFinite(n) ? n : node
  }
  if (type === 'null' && node === '') return null
  return node
}

/** Parses an XML body and returns the root element's content converted by `schema`. */
export function xmlBodyToJson (text: string, schema?: JsonSchemaLike): unknown {
  const tree = parseXml(text)
  const root = Object.keys(tree)[0]
  return xmlToJson(tree[root], schema)
}

const builder = new XMLBuilder({ format: false, suppressEmptyNode: false, processEntities: true })

function singular (name: string): string {
  return name.length > 1 && name.endsWith('s') ? name.slice(0, -1) : 'item'
}

function toTree (value: unknown, name: string, itemNames: Record<string, string>): unknown {
  if (Array.isArray(value)) {
    const item = itemNames[name] ?? singular(name)
    return { [item]: value.map((v) => toTree(v, item, itemNames)) }
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) out[k] = toTree(v, k, itemNames)
    }
    return out
  }
  if (value === null || value === undefined) return ''
  return String(value)
}

/**
 * Serializes JSON data as an XML document with root element `root`. Arrays become a
 * wrapper element holding one child per item, named by `itemNames[wrapper]` or the
 * wrapper's singular (`tags` -> `tag`).
 */
export function jsonToXml (value: unknown, root: string, itemNames: Record<string, string> = {}): string {
  return '<?xml version="1.0" encoding="UTF-8"?>' + builder.build({ [root]: toTree(value, root, itemNames) })
}
