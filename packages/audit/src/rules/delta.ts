/** Delta encoding (A-IM, IM, 226): deltas that decode, their header fields, A-IM's tokens. */
import { undoManipulations } from '../bounds'
import { JSON_TYPE, answer, json, statusOf, type Context, type Version } from '../context'
import type { Rule, Verdict } from '../rule'
import { said } from '../statements'
import { header, type Exchange } from '../transport'

/** An earlier instance the service was asked to keep (a GET with A-IM), and the current one after a PUT. */
interface Versions { earlier: Version, current: Version }

/** The resource read with A-IM (so the service keeps that instance), then changed by a PUT. */
async function versions (c: Context, v: Verdict): Promise<Versions | undefined> {
  const item = await c.resource() as string
  const earlier = await c.version(item, [['A-IM', 'vcdiff']])
  const changed = await c.write('PUT', item, json(c.sample()))
  const current = await c.version(item)
  if (earlier.etag === undefined || earlier.etag === current.etag) { v.skip(`no earlier version with an ETag (the PUT: ${answer(changed)})`); return undefined }
  return { earlier, current }
}

function imList (ex: Exchange): string[] { return (header(ex.response, 'im') ?? '').toLowerCase().split(',').map((s) => s.trim()).filter((s) => s !== '') }

/** A 200 with the current instance, or a 226 that decodes to it. */
function judge (v: Verdict, ex: Exchange, vs: Versions, aim: string): void {
  if (statusOf(ex) === 200) { v.check(ex.response?.body.equals(vs.current.body) === true, `A-IM: ${aim} answered 200 with another instance than GET`, ex); return }
  if (!v.check(statusOf(ex) === 226, `A-IM: ${aim} with an earlier ETag: expected 226 or 200, got ${answer(ex)}`, ex)) return
  const asked = aim.toLowerCase().split(',').map((s) => s.trim())
  if (!v.check(imList(ex).length > 0 && imList(ex).every((m) => asked.includes(m)), `226 with IM ${header(ex.response, 'im') ?? 'absent'}, not what A-IM: ${aim} asked`, ex)) return
  // The instance a 226 encodes: its manipulations undone in reverse order (RFC 3229 10.5.2),
  // its decoded size bounded (bounds.ts): past the bound, a note on the rule, not a verdict.
  const decoded = undoManipulations(imList(ex), vs.earlier.body, ex.response?.body ?? Buffer.alloc(0))
  if (!decoded.ok) {
    if (decoded.limit) v.note(decoded.message)
    else v.fail(decoded.message, ex)
    return
  }
  v.check(decoded.body.equals(vs.current.body), 'the 226 delta applied to the earlier instance is not the current instance', ex)
}

function deltaGet (c: Context, vs: Versions, aim: string): Promise<Exchange> {
  return c.get(vs.current.exchange.request.target, [['Accept', JSON_TYPE], ['A-IM', aim], ['If-None-Match', vs.earlier.etag as string]])
}

const delta: Rule = {
  id: 'delta.226',
  title: 'A-IM: vcdiff (then gzip) with a known ETag: a 226 that decodes to the current instance, or a normal 200',
  section: '4.5 Instance manipulation',
  statement: said('delta.200'),
  rfc: 'RFC 3229 10.4.1, RFC 3284',
  needs: ['write', 'resource', 'put'],
  async probe (c, v) {
    const vs = await versions(c, v)
    if (vs === undefined) return
    for (const aim of ['vcdiff', 'gzip']) judge(v, await deltaGet(c, vs, aim), vs, aim)
  }
}

const headers: Rule = {
  id: 'delta.226-headers',
  title: 'A 226 carries Content-Length, the current ETag, Delta-Base and Cache-Control: no-store, im',
  section: '4.5 Instance manipulation',
  statement: said('delta.226'),
  rfc: 'RFC 3229 10.5.1, 10.6.1',
  needs: ['write', 'resource', 'put'],
  async probe (c, v) {
    const vs = await versions(c, v)
    if (vs === undefined) return
    const ex = await deltaGet(c, vs, 'vcdiff')
    if (statusOf(ex) !== 226) { v.skip(`the service answered A-IM: vcdiff with ${answer(ex)}, not a delta`); return }
    const res = ex.response
    const cc = (header(res, 'cache-control') ?? '').toLowerCase().split(',').map((s) => s.trim())
    v.check(header(res, 'content-length') !== undefined, 'a 226 without Content-Length', ex)
    v.check(header(res, 'etag') === vs.current.etag, `a 226 with ETag ${header(res, 'etag') ?? 'absent'}, not the current ${vs.current.etag ?? ''}`, ex)
    v.check(header(res, 'delta-base') !== undefined, 'a 226 without Delta-Base', ex)
    v.check(cc.includes('no-store') && cc.includes('im'), `a 226 with Cache-Control ${header(res, 'cache-control') ?? 'absent'}, not no-store, im`, ex)
  }
}

const tokens: Rule = {
  id: 'delta.a-im-tokens',
  title: 'A-IM tokens are case-insensitive and listed: VCDIFF as vcdiff; "gzip, vcdiff" gets a delta',
  section: '4.5 Instance manipulation',
  statement: said('delta.tokens'),
  rfc: 'RFC 3229 10.5.3',
  needs: ['write', 'resource', 'put'],
  async probe (c, v) {
    const vs = await versions(c, v)
    if (vs === undefined) return
    const lower = await deltaGet(c, vs, 'vcdiff')
    const upper = await deltaGet(c, vs, 'VCDIFF')
    v.check(statusOf(upper) === statusOf(lower), `A-IM: VCDIFF answered ${answer(upper)}, A-IM: vcdiff ${answer(lower)}`, upper)
    judge(v, upper, vs, 'VCDIFF')
    const both = await deltaGet(c, vs, 'gzip, vcdiff')
    if (statusOf(lower) === 226) v.check(statusOf(both) === 226, `A-IM: gzip, vcdiff answered ${answer(both)}, A-IM: vcdiff alone a 226`, both)
    judge(v, both, vs, 'gzip, vcdiff')
  }
}

const unknown: Rule = {
  id: 'delta.unknown-ignored',
  title: 'An A-IM the service does not apply is ignored: the normal answer',
  section: '4.5 Instance manipulation',
  statement: said('delta.tokens'),
  rfc: 'RFC 3229 10.5.3',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const plain = await c.version(item)
    const ex = await c.get(item, [['Accept', JSON_TYPE], ['A-IM', 'x-audit-unknown']])
    v.check(statusOf(ex) === statusOf(plain.exchange) && header(ex.response, 'im') === undefined && (ex.response?.body.equals(plain.body) ?? false),
      `A-IM: x-audit-unknown changed the answer: ${answer(ex)} (plain GET: ${answer(plain.exchange)})`, ex)
  }
}

export const DELTA_RULES: readonly Rule[] = [delta, headers, tokens, unknown]
