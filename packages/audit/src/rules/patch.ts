/** PATCH, Accept-Patch, JSON Patch and JSON Merge Patch (415, 422). */
import { acceptPatchTypes, answer, bodyJson, is2xx, json, statusOf, type Context } from '../context'
import type { Rule, Verdict } from '../rule'
import { patchableProperty } from '../schema-body'
import { said } from '../statements'
import { header, type Exchange } from '../transport'

const JSON_PATCH = 'application/json-patch+json'
const MERGE_PATCH = 'application/merge-patch+json'

/** A string property a patch can replace: from the schema, else the resource's first one but its id. */
function property (c: Context, current: Buffer): string | undefined {
  if (c.targets.schema !== undefined) return patchableProperty(c.targets.schema)
  let doc: unknown
  try { doc = JSON.parse(current.toString('utf8')) } catch { return undefined }
  return Object.entries(doc !== null && typeof doc === 'object' ? doc : {}).find(([k, v]) => k !== 'id' && typeof v === 'string')?.[0]
}

/**
 * The value a patch writes into `prop`: without a schema, the one a fresh sample (the config's,
 * known valid) gives it, so that a pattern the service enforces still holds; else `audit <tag>`,
 * which the property the schema picked accepts.
 */
function replacement (c: Context, prop: string): string {
  const fresh = c.targets.schema === undefined ? c.sample()[prop] : undefined
  return typeof fresh === 'string' ? fresh : `audit ${c.nextTag()}`
}

function listsTypes (v: Verdict, ex: Exchange, what: string): void {
  if (!is2xx(ex)) return
  v.check(acceptPatchTypes(header(ex.response, 'accept-patch')).length > 0, `${what} of a resource that takes PATCH has no Accept-Patch listing a media type`, ex)
}

const acceptPatch: Rule = {
  id: 'patch.accept-patch',
  title: 'A resource that takes PATCH lists Accept-Patch on its 2xx answers (GET, HEAD, PUT, PATCH)',
  section: '4.3 PATCH and Accept-Patch',
  statement: said('patch.accept-patch'),
  rfc: 'RFC 5789 3.1',
  needs: ['resource', 'patch'],
  async probe (c, v) {
    const item = await c.resource() as string
    const got = await c.version(item)
    v.check(is2xx(got.exchange), `GET ${item}: expected 2xx, got ${answer(got.exchange)}`, got.exchange)
    listsTypes(v, got.exchange, `GET ${item}`)
    listsTypes(v, await c.send({ method: 'HEAD', target: item, headers: [['Accept', 'application/json']] }), `HEAD ${item}`)
    if (!c.o.write) return
    const types = acceptPatchTypes(header(got.exchange.response, 'accept-patch'))
    const type = types.includes(MERGE_PATCH) ? MERGE_PATCH : JSON_PATCH
    listsTypes(v, await c.write('PATCH', item, type === MERGE_PATCH ? '{}' : '[]', { type }), `PATCH ${item}`)
    if (c.takesPut()) listsTypes(v, await c.write('PUT', item, json(c.sample())), `PUT ${item}`)
  }
}

const unsupported: Rule = {
  id: 'patch.unsupported-415',
  title: 'A PATCH body in an unsupported media type is answered 415',
  section: '4.3 PATCH and Accept-Patch',
  statement: said('patch.415'),
  rfc: 'RFC 5789 2.2',
  needs: ['write', 'resource', 'patch'],
  async probe (c, v) {
    const item = await c.resource() as string
    const ex = await c.write('PATCH', item, 'title=audit', { type: 'text/plain' })
    v.check(statusOf(ex) === 415, `PATCH in text/plain: expected 415, got ${answer(ex)}`, ex)
  }
}

const accept415: Rule = {
  id: 'patch.accept-patch-415',
  title: 'A 415 to a PATCH carries Accept-Patch',
  section: '4.3 PATCH and Accept-Patch, 7 Errors (415)',
  statement: said('patch.415'),
  rfc: 'RFC 5789 2.2',
  needs: [],
  each (ex, res, v) {
    if (res.status !== 415 || ex.request.method !== 'PATCH') return
    v.check(header(res, 'accept-patch') !== undefined, '415 to a PATCH without Accept-Patch', ex)
  }
}

/** A patch of `type` replacing one string property is 2xx, and a GET then shows the new value. */
async function applies (c: Context, v: Verdict, type: string): Promise<void> {
  const item = await c.resource() as string
  const got = await c.version(item)
  if (!acceptPatchTypes(header(got.exchange.response, 'accept-patch')).includes(type)) { v.skip(`Accept-Patch does not list ${type}`); return }
  const prop = property(c, got.body)
  if (prop === undefined) { v.skip('no writable string property to replace'); return }
  const value = replacement(c, prop)
  const doc = type === JSON_PATCH ? [{ op: 'replace', path: `/${prop}`, value }] : { [prop]: value }
  const ex = await c.write('PATCH', item, json(doc), { type })
  if (!v.check(is2xx(ex), `PATCH ${type} replacing ${prop}: expected 2xx, got ${answer(ex)}`, ex)) return
  const after = await c.version(item)
  const seen = (bodyJson(after.exchange) as Record<string, unknown> | undefined)?.[prop]
  v.check(seen === value, `after the PATCH, ${prop} is ${json(seen)}, not ${json(value)}`, after.exchange)
}

const jsonPatch: Rule = {
  id: 'patch.json-patch',
  title: 'A JSON Patch replace is applied',
  section: '4.3 PATCH and Accept-Patch',
  statement: said('patch.formats'),
  rfc: 'RFC 6902',
  needs: ['write', 'resource', 'patch'],
  probe: (c, v) => applies(c, v, JSON_PATCH)
}

const mergePatch: Rule = {
  id: 'patch.merge-patch',
  title: 'A JSON Merge Patch is applied',
  section: '4.3 PATCH and Accept-Patch',
  statement: said('patch.formats'),
  rfc: 'RFC 7396',
  needs: ['write', 'resource', 'patch'],
  probe: (c, v) => applies(c, v, MERGE_PATCH)
}

const atomic: Rule = {
  id: 'patch.atomic-422',
  title: 'A JSON Patch whose test fails is 422 and changes nothing',
  section: '4.3 PATCH and Accept-Patch',
  statement: said('patch.atomic'),
  rfc: 'RFC 5789 2, RFC 6902 5',
  needs: ['write', 'resource', 'patch'],
  async probe (c, v) {
    const item = await c.resource() as string
    const before = await c.version(item)
    if (!acceptPatchTypes(header(before.exchange.response, 'accept-patch')).includes(JSON_PATCH)) { v.skip(`Accept-Patch does not list ${JSON_PATCH}`); return }
    const prop = property(c, before.body)
    if (prop === undefined) { v.skip('no writable string property to replace'); return }
    const doc = [{ op: 'replace', path: `/${prop}`, value: `audit ${c.nextTag()}` }, { op: 'test', path: `/${prop}`, value: 'audit: a value it never had' }]
    const ex = await c.write('PATCH', item, json(doc), { type: JSON_PATCH })
    v.check(statusOf(ex) === 422, `a JSON Patch whose test fails: expected 422, got ${answer(ex)}`, ex)
    const after = await c.version(item)
    v.check(after.body.equals(before.body), 'the JSON Patch whose test failed changed the resource', after.exchange)
  }
}

export const PATCH_RULES: readonly Rule[] = [acceptPatch, unsupported, accept415, jsonPatch, mergePatch, atomic]
