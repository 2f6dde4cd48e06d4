/**
 * An offline contract judge: given an OpenAPI 3 document and one real exchange, it says
 * whether the answer is one the document lists, as a validating proxy (Stoplight Prism) would,
 * with no network and no framework: the path template and operation, the status (or its
 * `2XX` range, or `default`), the response's media type, its headers (each one the answer
 * carries is documented, and valid against its schema; a documented `required` one is there)
 * and its body, validated with Ajv against the schema of its media type. XML bodies are read
 * with the suite's XML reader into the JSON shape the schema describes, then validated.
 */
import Ajv, { type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { xmlBodyToJson, type JsonSchemaLike } from '../../lib/xml'

export interface Exchange {
  method: string
  /** The request target: path and query. */
  path: string
  requestHeaders?: Record<string, string | string[] | undefined>
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer | string
}

export interface Verdict {
  /** True when the answer is one the document lists. */
  ok: boolean
  /** What is not in the document, one line each. */
  problems: string[]
  /** `METHOD /template status media-type`, as far as it was found: the documented answer this one is. */
  answer: string
}

type Json = Record<string, unknown>

interface Document { paths?: Record<string, Record<string, unknown>>, components?: Json }

/**
 * Headers of the message's framing and of every answer (RFC 9110 6.6.1 Date, RFC 9112
 * framing), which no document lists; OpenAPI 3.0 4.7.17.1 ignores a Content-Type header too.
 */
const FRAMING = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'])

function isObject (v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function essence (type: string): string {
  return type.split(';')[0].trim().toLowerCase()
}

/** The path parameters of an operation (its own, and the path item's), by name. */
function pathParameters (item: Json, operation: unknown): Map<string, Json> {
  const out = new Map<string, Json>()
  for (const list of [item.parameters, isObject(operation) ? operation.parameters : undefined]) {
    for (const p of Array.isArray(list) ? list : []) if (isObject(p) && p.in === 'path' && typeof p.name === 'string') out.set(p.name, p)
  }
  return out
}

const OPERATIONS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** The names of a path item's template variables that a parameter declares the rest of the path (`x-rest-of-path`: a Fastify wildcard). */
function restOfPath (item: Json | undefined): Set<string> {
  const out = new Set<string>()
  for (const method of OPERATIONS) {
    for (const [name, p] of pathParameters(item ?? {}, item?.[method])) if (isObject(p.schema) && p.schema['x-rest-of-path'] === true) out.add(name)
  }
  return out
}

/** A path template as a pattern: `{name}` is one segment, or the rest of the path where its parameter says so (`x-rest-of-path`). */
function templatePattern (template: string, rest: ReadonlySet<string> = new Set()): RegExp {
  let out = '^'
  for (const part of template.split(/(\{[^}]*\})/)) {
    if (part.startsWith('{') && rest.has(part.slice(1, -1))) out += '(.*)'
    else if (part.startsWith('{') && part.endsWith('}')) out += '([^/]+)'
    else out += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(out + '$')
}

/** The templates of the document, literal ones first (OpenAPI 3.0 4.7.8: a concrete path wins over a templated one). */
function templatesOf (doc: Document): Array<[string, RegExp]> {
  const literal = (t: string): number => t.replace(/\{[^}]*\}/g, '').length
  return Object.keys(doc.paths ?? {})
    .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')) || literal(b) - literal(a))
    .map((t) => [t, templatePattern(t, restOfPath(doc.paths?.[t]))])
}

/** Redocly's template variable: letters, digits, `_`, `.` and `-` (path-parameters-defined). */
const VARIABLE = /^[A-Za-z0-9_.-]+$/

/**
 * The rules of Redocly's `spec` ruleset about path parameters (path-parameters-defined), one
 * line per problem: each template variable is a name, and each operation declares a path
 * parameter for every variable of its template and none that is not in it.
 */
export function pathParameterProblems (doc: unknown): string[] {
  const problems: string[] = []
  for (const [template, item] of Object.entries((doc as Document).paths ?? {})) {
    const names = [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1])
    for (const n of names) if (!VARIABLE.test(n)) problems.push(`path-parameters-defined: ${template}: {${n}} is not a template variable`)
    for (const method of OPERATIONS) {
      if (item[method] === undefined) continue
      const declared = pathParameters(item, item[method])
      for (const n of names) if (VARIABLE.test(n) && !declared.has(n)) problems.push(`path-parameters-defined: ${method.toUpperCase()} ${template} declares no path parameter ${n}`)
      for (const n of declared.keys()) if (!names.includes(n) || !VARIABLE.test(n)) problems.push(`path-parameters-defined: ${method.toUpperCase()} ${template}: the path parameter ${n} is not in the template`)
    }
  }
  return problems
}

export class OpenApiJudge {
  readonly #doc: Document
  readonly #templates: Array<[string, RegExp]>
  readonly #ajv: Ajv
  readonly #validators = new Map<unknown, ValidateFunction>()

  constructor (doc: unknown) {
    this.#doc = doc as Document
    this.#templates = templatesOf(this.#doc)
    // OpenAPI 3.0 schemas carry keywords JSON Schema does not know (xml, example): not strict.
    this.#ajv = new Ajv({ strict: false, allErrors: true })
    addFormats(this.#ajv)
    this.#ajv.addSchema({ components: this.#doc.components ?? {} }, 'openapi:doc')
  }

  /** The schema of a `$ref` of the document (`#/components/...`). */
  #resolve (schema: unknown, depth = 0): Json {
    if (!isObject(schema)) return {}
    if (typeof schema.$ref === 'string' && depth < 32) {
      let at: unknown = this.#doc
      for (const key of schema.$ref.replace(/^#\//, '').split('/')) at = isObject(at) ? at[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
      return this.#resolve(at, depth + 1)
    }
    return schema
  }

  /** The schema with every reference and one-member allOf replaced by what it names, for the XML reader. */
  #expand (schema: unknown, depth = 0): JsonSchemaLike {
    const s = this.#resolve(schema)
    if (depth > 32) return s as JsonSchemaLike
    if (Array.isArray(s.allOf) && s.allOf.length === 1) return this.#expand({ ...this.#resolve(s.allOf[0]), ...s, allOf: undefined }, depth + 1)
    const out: Json = { ...s }
    if (s.items !== undefined) out.items = this.#expand(s.items, depth + 1)
    if (isObject(s.properties)) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, this.#expand(v, depth + 1)]))
    return out as JsonSchemaLike
  }

  #validator (schema: unknown): ValidateFunction {
    let v = this.#validators.get(schema)
    if (v === undefined) {
      // References point into the document, which Ajv holds as `openapi:doc`.
      const rewritten = JSON.parse(JSON.stringify(schema ?? {}), (_k, value: unknown) => typeof value === 'string' && value.startsWith('#/components/') ? 'openapi:doc' + value : value) as Json
      v = this.#ajv.compile(rewritten)
      this.#validators.set(schema, v)
    }
    return v
  }

  #check (schema: unknown, value: unknown): string | null {
    const validate = this.#validator(schema)
    if (validate(value)) return null
    return this.#ajv.errorsText(validate.errors, { dataVar: 'body' })
  }

  /** The template and operation the document has for the request. */
  operationOf (method: string, path: string): { template: string, operation: Json } | string {
    const pathname = path.split('?')[0]
    const found = this.#templates.find(([, pattern]) => pattern.test(pathname))
    if (found === undefined) return `no path of the document matches ${pathname}`
    const item = this.#doc.paths?.[found[0]] ?? {}
    const operation = item[method.toLowerCase()]
    if (!isObject(operation)) return `${found[0]} documents no ${method.toUpperCase()} operation`
    return { template: found[0], operation }
  }

  judge (x: Exchange): Verdict {
    const problems: string[] = []
    const method = x.method.toUpperCase()
    const op = this.operationOf(method, x.path)
    if (typeof op === 'string') return { ok: false, problems: [op], answer: `${method} ${x.path}` }
    const responses = isObject(op.operation.responses) ? op.operation.responses : {}
    const status = String(x.status)
    const key = [status, `${status[0]}XX`, 'default'].find((k) => responses[k] !== undefined)
    let answer = `${method} ${op.template} ${status}`
    if (key === undefined) return { ok: false, problems: [`${answer} is not documented (documented: ${Object.keys(responses).join(', ')})`], answer }
    const response = this.#resolve(responses[key])

    // Headers: each one the answer carries is documented and valid; each required one is there.
    const documented = new Map(Object.entries(isObject(response.headers) ? response.headers : {}).map(([name, h]) => [name.toLowerCase(), this.#resolve(h)]))
    for (const [name, value] of Object.entries(x.headers)) {
      const lower = name.toLowerCase()
      if (FRAMING.has(lower) || value === undefined) continue
      const header = documented.get(lower)
      if (header === undefined) {
        problems.push(`${answer} carries ${name}, which the document does not list`)
        continue
      }
      for (const one of Array.isArray(value) ? value : [value]) {
        const wrong = this.#check(header.schema ?? {}, one)
        if (wrong !== null) problems.push(`${answer} header ${name}: ${JSON.stringify(one)} ${wrong.replace(/^body/, '')}`)
      }
    }
    for (const [name, header] of documented) if (header.required === true && x.headers[name] === undefined) problems.push(`${answer} lacks the required header ${name}`)

    // Body: its media type is documented, and it is valid against that type's schema.
    const content = isObject(response.content) ? response.content : undefined
    const bytes = typeof x.body === 'string' ? Buffer.from(x.body) : x.body
    const contentType = x.headers['content-type']
    const type = typeof contentType === 'string' ? essence(contentType) : undefined
    if (content === undefined) {
      // No content documented: a body of no documented type (HEAD sends none: RFC 9110 9.3.2).
      if (bytes.length > 0) problems.push(`${answer} has a body (${type ?? 'no Content-Type'}), the document lists none`)
      return { ok: problems.length === 0, problems, answer }
    }
    const media = Object.keys(content).find((k) => essence(k) === type) ??
      Object.keys(content).find((k) => type !== undefined && (k === '*/*' || (k.endsWith('/*') && type.startsWith(k.slice(0, -1)))))
    if (type === undefined || media === undefined) {
      // A HEAD, 204 or 304 answer without content has no media type to check.
      if (bytes.length === 0 && type === undefined) return { ok: problems.length === 0, problems, answer }
      problems.push(`${answer} answers ${type ?? 'no Content-Type'}, the document lists ${Object.keys(content).join(', ')}`)
      return { ok: false, problems, answer }
    }
    answer += ` ${media}`
    if (method === 'HEAD' || x.status === 204 || x.status === 304) {
      if (bytes.length > 0) problems.push(`${answer} has a body`)
      return { ok: problems.length === 0, problems, answer }
    }
    const schema = this.#resolve(isObject(content[media]) ? (content[media] as Json).schema : undefined)
    const wrong = this.#bodyProblem(media, schema, bytes)
    if (wrong !== null) problems.push(`${answer} body: ${wrong}`)
    return { ok: problems.length === 0, problems, answer }
  }

  #bodyProblem (media: string, schema: Json, bytes: Buffer): string | null {
    const text = bytes.toString('utf8')
    if (schema.type === 'string') return this.#check(schema, text)
    let value: unknown
    if (/^application\/(.+\+)?json$/.test(essence(media))) {
      try {
        value = JSON.parse(text)
      } catch {
        return 'not JSON'
      }
    } else if (/^application\/(.+\+)?xml$/.test(essence(media))) {
      try {
        value = xmlBodyToJson(text, this.#expand(schema))
      } catch (err) {
        return `not well-formed XML (${(err as Error).message})`
      }
    } else {
      return `no reader for ${media} against a schema of type ${String(schema.type)}`
    }
    return this.#check(schema, value)
  }
}
