/**
 * What the auditor probes: from the service's OpenAPI document (paths, methods, request body
 * schemas, documented 307s and 401s), else from a config file, the config winning field by
 * field.
 */
import Ajv from 'ajv'
import type { JsonSchema } from './schema-body'

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
}

type Operation = { requestBody?: { content?: Record<string, { schema?: JsonSchema }> }, responses?: Record<string, unknown>, security?: unknown[] }
type PathItem = Record<string, Operation>
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']

/** Resolves local `$ref`s (`#/components/schemas/x`) of `schema`, to a depth of 20. */
export function resolveRefs (schema: unknown, doc: Record<string, unknown>, depth = 0): unknown {
  if (depth > 20 || schema === null || typeof schema !== 'object') return schema
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, doc, depth + 1))
  const ref = (schema as { $ref?: unknown }).$ref
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    let target: unknown = doc
    for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
    return resolveRefs(target, doc, depth + 1)
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) out[k] = resolveRefs(v, doc, depth + 1)
  return out
}

/** The targets an OpenAPI 3 document describes. */
export function targetsFromOpenApi (doc: Record<string, unknown>): Targets {
  const paths = (doc.paths ?? {}) as Record<string, PathItem>
  const targets: Targets = { itemMethods: [], redirects: [], paths: [], protected: false, patch: false }
  for (const [path, item] of Object.entries(paths)) {
    const ops = METHODS.filter((m) => item[m] !== undefined)
    const hasParam = path.includes('{')
    if (!hasParam && ops.includes('get')) targets.paths.push(path)
    if (!hasParam && ops.some((m) => item[m].responses?.['307'] !== undefined)) targets.redirects.push(path)
    const post = item.post
    const schema = post?.requestBody?.content?.['application/json']?.schema
    if (targets.collection === undefined && !hasParam && schema !== undefined) {
      targets.collection = path
      targets.schema = resolveRefs(schema, doc) as JsonSchema
      targets.protected = post.responses?.['401'] !== undefined || (Array.isArray(post.security) && post.security.length > 0)
    }
  }
  if (targets.collection !== undefined) {
    const prefix = targets.collection.replace(/\/$/, '') + '/{'
    const item = Object.keys(paths).find((p) => p.startsWith(prefix) && p.indexOf('}') === p.length - 1)
    if (item !== undefined) {
      targets.item = item.replace(/\{[^}]+\}$/, '{id}')
      targets.itemMethods = METHODS.filter((m) => paths[item][m] !== undefined).map((m) => m.toUpperCase())
      if (targets.itemMethods.includes('GET') && !targets.itemMethods.includes('HEAD')) targets.itemMethods.push('HEAD')
      targets.patch = targets.itemMethods.includes('PATCH')
    }
  }
  return targets
}

/** The config over the discovered targets, field by field. */
export function mergeTargets (found: Targets | undefined, config: AuditConfig): Targets {
  const base: Targets = found ?? { itemMethods: [], redirects: [], paths: [], protected: false, patch: false }
  const itemMethods = config.itemMethods ?? base.itemMethods
  return {
    collection: config.collection ?? base.collection,
    item: config.item ?? base.item,
    itemMethods,
    schema: config.schema ?? base.schema,
    sample: config.sample ?? base.sample,
    redirects: config.redirects ?? base.redirects,
    paths: [...new Set([...base.paths, ...(config.paths ?? [])])],
    protected: config.protected ?? base.protected,
    patch: config.itemMethods !== undefined ? itemMethods.includes('PATCH') : base.patch
  }
}
