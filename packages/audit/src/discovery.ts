/**
 * What the auditor probes: from the service's OpenAPI document (paths, methods, request body
 * schemas, documented 307s and 401s), else from a config file, the config winning field by
 * field.
 */
import { readFile, stat } from 'node:fs/promises'
import Ajv from 'ajv'
import { LIMITS, size } from './bounds'
import type { Transport } from './transport'
import { schemaNotes, type JsonSchema } from './schema-body'

/** The config file (`--config`): what the auditor cannot discover without an OpenAPI document. */
export interface AuditConfig {
  /** path where POST creates a resource, e.g. `/articles` */
  collection?: string
  /** path of one resource, `{id}` standing for the created id, e.g. `/articles/{id}` */
  item?: string
  /** methods the item path takes (for 405 and OPTIONS) */
  itemMethods?: string[]
  /** a valid request body */
  sample?: Record<string, unknown>
  /** the JSON Schema of request bodies */
  schema?: JsonSchema
  /** paths answered with a redirect */
  redirects?: string[]
  /** more paths to GET */
  paths?: string[]
  /** writes need credentials (else: when the OpenAPI document says 401) */
  protected?: boolean
}

export const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    collection: { type: 'string', pattern: '^/' },
    item: { type: 'string', pattern: '^/' },
    itemMethods: { type: 'array', items: { type: 'string', pattern: '^[A-Z]+$' } },
    sample: { type: 'object' },
    schema: { type: 'object' },
    redirects: { type: 'array', items: { type: 'string', pattern: '^/' } },
    paths: { type: 'array', items: { type: 'string', pattern: '^/' } },
    protected: { type: 'boolean' }
  }
} as const

const validateConfig = new Ajv({ allErrors: true }).compile(CONFIG_SCHEMA)

/** The config's problems, one line each (`/collection must match pattern "^/"`); empty when valid. */
export function configErrors (value: unknown): string[] {
  if (validateConfig(value)) return []
  return (validateConfig.errors ?? []).map((e) => `${e.instancePath === '' ? 'the config' : e.instancePath} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? `: ${String((e.params as { additionalProperty: string }).additionalProperty)}` : ''}`)
}

export interface Targets {
  collection?: string
  item?: string
  itemMethods: string[]
  schema?: JsonSchema
  sample?: Record<string, unknown>
  redirects: string[]
  paths: string[]
  protected: boolean
  /** the item path takes PATCH */
  patch: boolean
  /** the bounds discovery met (docs/audit.md, Limits), said in the report */
  notes?: string[]
}

type Operation = { requestBody?: { content?: Record<string, { schema?: JsonSchema }> }, responses?: Record<string, unknown>, security?: unknown[] }
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']

/** A resolution under way: the document, what it has spent, the bounds it met. */
interface Resolution { doc: Record<string, unknown>, refs: number, nodes: number, notes: Set<string> }

/** The value a local JSON Pointer (RFC 6901) names in `doc`, own properties only. */
function pointer (doc: Record<string, unknown>, ref: string): unknown {
  let target: unknown = doc
  for (const raw of ref.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    target = target !== null && typeof target === 'object' && Object.hasOwn(target, part) ? (target as Record<string, unknown>)[part] : undefined
  }
  return target
}

/** `$ref` to `#/...` replaced by what it names; a reference that cannot be expanded (cycle, bound) stands for any value, `{}`. */
function expandRef (ref: string, st: Resolution, stack: readonly string[], depth: number): unknown {
  if (stack.includes(ref)) { st.notes.add(`$ref ${ref} refers to itself: expanded once, then any value`); return {} }
  if (stack.length >= LIMITS.refDepth) { st.notes.add(`$refs nested more than ${LIMITS.refDepth} deep (limit): any value below`); return {} }
  if (++st.refs > LIMITS.refCount) { st.notes.add(`more than ${LIMITS.refCount} $refs in one schema (limit): any value past them`); return {} }
  return resolve(pointer(st.doc, ref), st, [...stack, ref], depth + 1)
}

function resolve (schema: unknown, st: Resolution, stack: readonly string[], depth: number): unknown {
  if (schema === null || typeof schema !== 'object') return schema
  if (++st.nodes > LIMITS.schemaNodes || depth > 4 * LIMITS.depth) { st.notes.add(`a schema over ${LIMITS.schemaNodes} objects or ${4 * LIMITS.depth} levels (limit): any value past them`); return {} }
  if (Array.isArray(schema)) return schema.map((s) => resolve(s, st, stack, depth + 1))
  const ref = (schema as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && ref.startsWith('#/')) return expandRef(ref, st, stack, depth)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) out[k] = resolve(v, st, stack, depth + 1)
  return out
}

/**
 * Resolves local `$ref`s (`#/components/schemas/x`) of `schema` with bounded expansion: a
 * reference inside its own expansion stands for any value, and so does whatever is past
 * LIMITS.refDepth, LIMITS.refCount or LIMITS.schemaNodes; each bound met is added to `notes`.
 */
export function resolveRefs (schema: unknown, doc: Record<string, unknown>, notes: string[] = []): unknown {
  const st: Resolution = { doc, refs: 0, nodes: 0, notes: new Set() }
  const out = resolve(schema, st, [], 0)
  notes.push(...st.notes)
  return out
}

function isObject (v: unknown): v is Record<string, unknown> { return v !== null && typeof v === 'object' && !Array.isArray(v) }

/** The operations of a path item that are objects (a document may put anything there). */
function operations (item: unknown): Record<string, Operation> {
  const out: Record<string, Operation> = {}
  if (isObject(item)) for (const m of METHODS) if (isObject(item[m])) out[m] = item[m] as Operation
  return out
}

/** The body schema of the first POST taking JSON at a path without parameters: the collection. */
function collectionOf (targets: Targets, path: string, ops: Record<string, Operation>, doc: Record<string, unknown>, notes: string[]): void {
  const post = ops.post
  const schema = post?.requestBody?.content?.['application/json']?.schema
  if (targets.collection !== undefined || path.includes('{') || schema === undefined) return
  targets.collection = path
  targets.schema = resolveRefs(schema, doc, notes) as JsonSchema
  notes.push(...schemaNotes(targets.schema))
  targets.protected = post.responses?.['401'] !== undefined || (Array.isArray(post.security) && post.security.length > 0)
}

/** Whether an operation of the path item documents a 307 (RFC 9110 15.4.8). */
function redirects (ops: Record<string, Operation>): boolean {
  return Object.values(ops).some((op) => isObject(op.responses) && op.responses['307'] !== undefined)
}

/**
 * A path to probe for a templated redirect path: a parameter that ends the path (`/v1/{*}`,
 * `/old/{rest}`) stands for the rest of a path, given the collection's (else another
 * documented path's) so that the redirect's target answers; a path with a parameter
 * elsewhere names no path the auditor could pick, and is left out.
 */
export function concreteRedirect (template: string, targets: Targets): string | undefined {
  const prefix = /^([^{}]*\/)\{[^{}/]+\}$/.exec(template)?.[1]
  if (prefix === undefined) return undefined
  const rest = targets.collection ?? targets.paths.find((p) => !p.startsWith(prefix))
  return rest === undefined ? undefined : prefix + rest.replace(/^\//, '')
}

/** The targets an OpenAPI 3 document describes; the bounds its schemas met are in `notes`. */
export function targetsFromOpenApi (doc: Record<string, unknown>): Targets {
  const paths = (isObject(doc.paths) ? doc.paths : {}) as Record<string, unknown>
  const targets: Targets = { itemMethods: [], redirects: [], paths: [], protected: false, patch: false }
  const notes: string[] = []
  const templated: string[] = []
  for (const [path, item] of Object.entries(paths)) {
    const ops = operations(item)
    const hasParam = path.includes('{')
    if (!hasParam && ops.get !== undefined) targets.paths.push(path)
    if (redirects(ops)) (hasParam ? templated : targets.redirects).push(path)
    collectionOf(targets, path, ops, doc, notes)
  }
  for (const template of templated) {
    const path = concreteRedirect(template, targets)
    if (path !== undefined && !targets.redirects.includes(path)) targets.redirects.push(path)
  }
  if (targets.collection !== undefined) {
    const prefix = targets.collection.replace(/\/$/, '') + '/{'
    const item = Object.keys(paths).find((p) => p.startsWith(prefix) && p.indexOf('}') === p.length - 1)
    if (item !== undefined) {
      targets.item = item.replace(/\{[^}]+\}$/, '{id}')
      targets.itemMethods = Object.keys(operations(paths[item])).map((m) => m.toUpperCase())
      if (targets.itemMethods.includes('GET') && !targets.itemMethods.includes('HEAD')) targets.itemMethods.push('HEAD')
      targets.patch = targets.itemMethods.includes('PATCH')
    }
  }
  if (notes.length > 0) targets.notes = [...new Set(notes)]
  return targets
}

/** `list` cut to LIMITS.paths, with a note saying how many were left out. */
function capped (list: string[], what: string, notes: string[]): string[] {
  if (list.length <= LIMITS.paths) return list
  notes.push(`${list.length} ${what}; the first ${LIMITS.paths} are probed, ${list.length - LIMITS.paths} are not (limit)`)
  return list.slice(0, LIMITS.paths)
}

/** The config over the discovered targets, field by field; paths and redirects capped to LIMITS.paths. */
export function mergeTargets (found: Targets | undefined, config: AuditConfig): Targets {
  const base: Targets = found ?? { itemMethods: [], redirects: [], paths: [], protected: false, patch: false }
  const itemMethods = config.itemMethods ?? base.itemMethods
  const notes = [...(base.notes ?? [])]
  const out: Targets = {
    collection: config.collection ?? base.collection,
    item: config.item ?? base.item,
    itemMethods,
    schema: config.schema ?? base.schema,
    sample: config.sample ?? base.sample,
    redirects: capped(config.redirects ?? base.redirects, 'redirects to probe', notes),
    paths: capped([...new Set([...base.paths, ...(config.paths ?? [])])], 'paths to GET', notes),
    protected: config.protected ?? base.protected,
    patch: config.itemMethods !== undefined ? itemMethods.includes('PATCH') : base.patch
  }
  if (notes.length > 0) out.notes = notes
  return out
}

/** The OpenAPI document could not be had as asked (a usage error of `--openapi`). */
export class OpenApiError extends Error {}

export interface OpenApiSource {
  /** `--openapi`: a file or a URL; undefined: /openapi.json of the audited service, when it answers */
  source?: string
  /** the audited URL (`http://host:port/prefix`) */
  url: string
  /** the audited service's transport (prefix kept; no credentials are sent on it) */
  transport: Transport
  timeoutMs: number
}

export interface LoadedOpenApi {
  targets?: Targets
  /** bounds met: the document over its limit or cut by the timeout, and not used */
  notes: string[]
}

interface Text { text?: string, note?: string }

/** A URL as a report shows it: without its query, which may hold a token. */
export function shownUrl (u: URL): string {
  return u.origin + u.pathname + (u.search === '' ? '' : '?...')
}

async function fromFile (path: string): Promise<Text> {
  try {
    const { size: bytes } = await stat(path)
    if (bytes > LIMITS.document) return { note: `the OpenAPI document ${path} is ${bytes} bytes, over ${size(LIMITS.document)} (limit): not used` }
    return { text: await readFile(path, 'utf8') }
  } catch (err) { throw new OpenApiError(`--openapi ${path}: ${(err as Error).message}`) }
}

/** From the audited service, on its transport (below its prefix), at most LIMITS.document bytes. */
async function fromService (o: OpenApiSource, u: URL | undefined): Promise<Text> {
  const target = u === undefined ? '/openapi.json' : u.pathname + u.search
  const where = u === undefined ? target : shownUrl(u)
  const ex = await o.transport.send({ method: 'GET', target, headers: [['Accept', 'application/json']], maxBody: LIMITS.document })
  const res = ex.response
  if (res?.status === 200 && res.cut !== undefined) return { note: `the OpenAPI document at ${where}: ${res.cut}; not used` }
  if (res?.status === 200) return { text: res.body.toString('utf8') }
  if (u !== undefined) throw new OpenApiError(`--openapi ${where}: ${res?.statusLine ?? `no answer (${ex.error ?? 'closed'})`}`)
  return res === null && ex.error !== 'closed' ? { note: `no OpenAPI document: GET ${where} had no answer (${ex.error ?? 'closed'})` } : {}
}

/** From another origin than the audited one, with fetch: none of the audit's credentials, at most LIMITS.document bytes. */
async function fromOtherOrigin (u: URL, timeoutMs: number): Promise<Text> {
  let res: Response
  try {
    res = await fetch(u, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) })
  } catch (err) { throw new OpenApiError(`--openapi ${shownUrl(u)}: ${(err as Error).message}`) }
  if (res.status !== 200) { await res.body?.cancel(); throw new OpenApiError(`--openapi ${shownUrl(u)}: ${res.status} ${res.statusText}`) }
  const parts: Buffer[] = []
  let kept = 0
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      kept += chunk.length
      if (kept > LIMITS.document) return { note: `the OpenAPI document at ${shownUrl(u)} is over ${size(LIMITS.document)} (limit): not used` }
      parts.push(Buffer.from(chunk))
    }
  } catch (err) { return { note: `the OpenAPI document at ${shownUrl(u)} was cut after ${kept} bytes (${(err as Error).message}): not used` } }
  return { text: Buffer.concat(parts).toString('utf8') }
}

/**
 * The targets of the OpenAPI document `--openapi` names: a file; a URL of the audited origin,
 * asked of the service below its path prefix; a URL of another origin, fetched from there with
 * none of the audit's credentials. Without `--openapi`, /openapi.json when the service has one.
 */
export async function loadOpenApi (o: OpenApiSource): Promise<LoadedOpenApi> {
  const explicit = o.source !== undefined
  let got: Text
  if (o.source !== undefined && !/^https?:/i.test(o.source)) got = await fromFile(o.source)
  else {
    const u = o.source === undefined ? undefined : new URL(o.source)
    got = u !== undefined && u.origin !== new URL(o.url).origin ? await fromOtherOrigin(u, o.timeoutMs) : await fromService(o, u)
  }
  const notes = got.note === undefined ? [] : [got.note]
  if (got.text === undefined) return { notes }
  let doc: unknown
  try { doc = JSON.parse(got.text) } catch {
    if (!explicit) return { notes }
    throw new OpenApiError(`--openapi ${/^https?:/i.test(o.source as string) ? shownUrl(new URL(o.source as string)) : o.source as string}: not JSON`)
  }
  return isObject(doc) && 'paths' in doc ? { targets: targetsFromOpenApi(doc), notes } : { notes }
}
