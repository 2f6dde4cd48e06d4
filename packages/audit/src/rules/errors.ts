/** Validation errors: 422 and the errors[] envelope, and the media type of every error. */
import { parseMediaType } from '@http-conventions/grammar'
import { OTHER_ACCEPT, answer, bodyJson, json, statusOf, type Context } from '../context'
import type { Rule } from '../rule'
import { violateOne, type JsonSchema } from '../schema-body'
import { said } from '../statements'
import { header, type Exchange, type WireResponse } from '../transport'

interface Entry { field?: unknown, message?: unknown }

/** The entries of an `{ errors: [...] }` body, or undefined when the body is not that shape. */
function entries (res: WireResponse): Entry[] | undefined {
  let body: unknown
  try { body = JSON.parse(res.body.toString('utf8')) } catch { return undefined }
  const errors = (body as { errors?: unknown } | null)?.errors
  if (!Array.isArray(errors) || errors.length === 0) return undefined
  return errors.every((e: Entry | null) => typeof e?.field === 'string' && typeof e.message === 'string') ? errors as Entry[] : undefined
}

/** POSTs a body, with the first credentials; the answer is tracked (it may have created a resource). */
async function post (c: Context, body: unknown, accept?: string): Promise<Exchange> {
  const collection = c.targets.collection as string
  const ex = await c.write('POST', collection, json(body), accept === undefined ? {} : { extra: [['Accept', accept]] })
  await c.track(ex)
  return ex
}

const wrongType: Rule = {
  id: 'validation.422',
  title: 'A body whose property has the wrong type is answered 422',
  section: '7 Errors (422)',
  statement: said('validation.422'),
  rfc: 'RFC 9110 15.5.21',
  needs: ['write', 'collection', 'schema'],
  async probe (c, v) {
    const bad = violateOne(c.targets.schema as JsonSchema, c.nextTag())
    if (bad === null) { v.skip('the schema has no property to break'); return }
    const ex = await post(c, bad.body)
    if (!v.check(statusOf(ex) === 422, `property ${bad.field} of the wrong type: expected 422, got ${answer(ex)}`, ex)) return
    // the same body asked for another media type: 7 says a 422 is application/json (errors.json-media-type)
    await post(c, bad.body, OTHER_ACCEPT)
  }
}

const required: Rule = {
  id: 'validation.422-required',
  title: 'A body without a required property is answered 422 (not 400)',
  section: '7 Errors (422)',
  statement: said('validation.422'),
  rfc: 'RFC 9110 15.5.21',
  needs: ['write', 'collection', 'schema'],
  async probe (c, v) {
    const names = (c.targets.schema as { required?: unknown }).required
    const field = Array.isArray(names) ? names.find((n): n is string => typeof n === 'string') : undefined
    if (field === undefined) { v.skip('the schema requires no property'); return }
    const body = c.sample()
    delete body[field]
    const ex = await post(c, body)
    v.check(statusOf(ex) === 422, `a body without the required ${field}: expected 422, got ${answer(ex)}`, ex)
  }
}

const fieldNamed: Rule = {
  id: 'validation.field-named',
  title: 'The 422 to a broken property names it in errors[].field',
  section: '7 Errors (422 body shape)',
  statement: said('validation.field'),
  needs: ['write', 'collection', 'schema'],
  async probe (c, v) {
    const bad = violateOne(c.targets.schema as JsonSchema, c.nextTag())
    if (bad === null) { v.skip('the schema has no property to break'); return }
    const ex = await post(c, bad.body)
    const list = ex.response === null ? undefined : entries(ex.response)
    if (statusOf(ex) !== 422 || list === undefined) { v.skip('the service did not answer a broken property with the 422 envelope'); return }
    v.check(list.some((e) => e.field === bad.field), `no entry of errors[] names the field ${bad.field}: ${list.map((e) => String(e.field)).join(', ')}`, ex)
  }
}

const duplicate: Rule = {
  id: 'validation.422-duplicate',
  title: 'A second resource with the value of a unique property is answered 422 (not 409)',
  section: '7 Errors (422)',
  statement: said('validation.duplicate'),
  needs: ['write', 'collection', 'unique-field'],
  async probe (c, v) {
    const field = c.o.unique as string
    const first = c.sample()
    const a = await post(c, first)
    if (!v.check(a.response !== null && a.response.status < 300, `the first POST: expected 2xx, got ${answer(a)}`, a)) return
    const second = { ...c.sample(), [field]: first[field] }
    const b = await post(c, second)
    v.check(statusOf(b) === 422, `a second resource with the same ${field}: expected 422, got ${answer(b)}`, b)
  }
}

const shape: Rule = {
  id: 'validation.errors-shape',
  title: 'A 422 body is {"errors":[{"field","message"}]} with Content-Length',
  section: '7 Errors (422 body shape)',
  statement: said('validation.envelope'),
  needs: [],
  each (ex, res, v) {
    if (res.status !== 422) return
    if (header(res, 'content-length') === undefined) v.fail('a 422 without Content-Length', ex)
    v.check(entries(res) !== undefined, 'the 422 body is not {"errors":[{"field":string,"message":string}, ...]}', ex)
  }
}

const envelope: Rule = {
  id: 'errors.envelope',
  title: 'A 400, 412, 415 or 428 in JSON is the errors[] envelope',
  section: '7 Errors (400, 412, 415, 428)',
  statement: said('validation.envelope'),
  needs: [],
  each (ex, res, v) {
    if (![400, 412, 415, 428].includes(res.status) || res.body.length === 0) return
    const essence = parseMediaType(header(res, 'content-type') ?? '')?.essence ?? ''
    if (essence !== 'application/json' && !essence.endsWith('+json')) return
    if (bodyJson(ex) === undefined) { v.fail(`a ${res.status} labelled ${essence} whose body is not JSON`, ex); return }
    v.check(entries(res) !== undefined, `the ${res.status} body is not {"errors":[{"field":string,"message":string}, ...]}`, ex)
  }
}

const mediaType: Rule = {
  id: 'errors.json-media-type',
  title: 'A 412 or 422 is application/json',
  section: '7 Errors (412, 422)',
  statement: said('conditional.412'),
  needs: [],
  each (ex, res, v, profile) {
    if (res.status !== 412 && res.status !== 422) return
    const essence = parseMediaType(header(res, 'content-type') ?? '')?.essence
    const ok = essence === 'application/json' || (profile !== 'spec' && essence !== undefined && essence.endsWith('+json'))
    v.check(ok, `${res.status} in ${essence ?? 'no media type'}, not application/json`, ex)
  }
}

export const ERROR_RULES: readonly Rule[] = [wrongType, required, fieldNamed, duplicate, shape, envelope, mediaType]
