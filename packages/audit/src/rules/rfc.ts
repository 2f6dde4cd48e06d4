/**
 * RFC 9110 behaviour beside the conventions: advice, reported apart, which sets the exit status
 * only with --strict-rfc.
 */
import { parseHttpDate } from '@http-conventions/grammar'
import { JSON_TYPE, answer, bodyRequest, is2xx, json, statusOf, type Context, type Headers } from '../context'
import type { Rule, Verdict } from '../rule'
import { header, type Exchange } from '../transport'

const methodNotAllowed: Rule = {
  id: 'rfc.405-allow',
  title: 'A method the resource does not support is 405 with Allow',
  section: '4 Endpoints',
  statement: 'RFC 9110 15.5.6: the origin server MUST generate an Allow header field in a 405 response',
  rfc: 'RFC 9110 15.5.6',
  advice: true,
  needs: ['write', 'resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const method = ['POST', 'PUT', 'PATCH', 'DELETE'].find((m) => !c.targets.itemMethods.includes(m))
    if (method === undefined) { v.skip('the resource takes every method'); return }
    const ex = await c.write(method, item, json(c.sample()))
    await c.track(ex)
    const allow = header(ex.response, 'allow')
    v.check(statusOf(ex) === 405 && allow !== undefined, `${method} ${item}: expected 405 with Allow, got ${answer(ex)}${allow === undefined ? ' without Allow' : ''}`, ex)
  }
}

const options: Rule = {
  id: 'rfc.options',
  title: 'OPTIONS on a resource is 2xx with Allow',
  section: '4 Endpoints',
  statement: 'RFC 9110 9.3.7: a server generating a successful response to OPTIONS SHOULD send any header that might indicate optional features (Allow)',
  rfc: 'RFC 9110 9.3.7',
  advice: true,
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const ex = await c.send({ method: 'OPTIONS', target: item, headers: [] })
    const allow = (header(ex.response, 'allow') ?? '').split(',').map((s) => s.trim().toUpperCase()).filter((s) => s !== '')
    if (!v.check(is2xx(ex) && allow.length > 0, `OPTIONS ${item}: expected 2xx with Allow, got ${answer(ex)}${allow.length === 0 ? ' without Allow' : ''}`, ex)) return
    const missing = c.targets.itemMethods.filter((m) => !allow.includes(m))
    if (missing.length > 0) v.partial(`Allow does not list ${missing.join(', ')}`, ex)
  }
}

/**
 * RFC 9110 8.8.2.1: a Last-Modified is never sent later than the answer's Date, so a change
 * dated in the next second (a second write within one second) is sent as the Date until that
 * second comes. A GET whose Last-Modified is its Date, then a HEAD whose Last-Modified is later
 * but not past its own Date, show one version, not two sets of fields.
 */
function clampedThenLater (got: NonNullable<Exchange['response']>, head: NonNullable<Exchange['response']>): boolean {
  const first = parseHttpDate(header(got, 'last-modified') ?? '')
  const then = parseHttpDate(header(head, 'last-modified') ?? '')
  const headDate = parseHttpDate(header(head, 'date') ?? '')
  return first !== null && then !== null && headDate !== null && first === parseHttpDate(header(got, 'date') ?? '') && then > first && then <= headDate
}

/** RFC 9110 9.3.2: HEAD has the status and the header fields of GET (Content-Length included), and no body. */
async function headLikeGet (c: Context, v: Verdict, path: string, headers: Headers): Promise<void> {
  const got = await c.get(path, headers)
  const h = await c.send({ method: 'HEAD', target: path, headers })
  if (got.response === null || h.response === null) { v.fail(`no answer to ${got.response === null ? 'GET' : 'HEAD'} ${path}`, h); return }
  if (!v.check(h.response.status === got.response.status, `HEAD ${path} is ${h.response.status}, GET is ${got.response.status}`, h)) return
  // A new version between the two is possible: two entity tags that differ describe two
  // representations, whose validators and length may differ too.
  const etags = [header(got.response, 'etag'), header(h.response, 'etag')]
  const changed = etags[0] !== undefined && etags[1] !== undefined && etags[0] !== etags[1]
  for (const name of ['content-type', 'etag', 'last-modified', 'accept-patch', 'vary', 'content-length']) {
    const a = header(got.response, name)
    const b = header(h.response, name)
    // a length HEAD leaves out is allowed (RFC 9110 8.6)
    if ((changed && (name === 'etag' || name === 'last-modified' || name === 'content-length')) || (name === 'content-length' && (a === undefined || b === undefined))) continue
    if (name === 'last-modified' && clampedThenLater(got.response, h.response)) continue
    v.check(a === b, `HEAD ${path}: ${name} is ${b ?? 'absent'}, GET says ${a ?? 'absent'}`, h)
  }
}

const head: Rule = {
  id: 'rfc.head',
  title: 'HEAD answers as GET does (status, header fields, Content-Length), without a body',
  section: '4 Endpoints',
  statement: 'RFC 9110 9.3.2: the server SHOULD send the same header fields in response to HEAD as to GET',
  rfc: 'RFC 9110 9.3.2',
  advice: true,
  needs: [],
  async probe (c, v) {
    for (const path of c.targets.paths) await headLikeGet(c, v, path, [])
    const item = await c.resource()
    if (item !== undefined) await headLikeGet(c, v, item, [['Accept', JSON_TYPE]])
    v.skip('no path to GET (give --openapi, or paths in --config)')
  }
}

/** RFC 9110 5.6.7: IMF-fixdate, the form a sender generates. */
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/

const date: Rule = {
  id: 'rfc.date',
  title: 'Every 2xx, 3xx and 4xx answer carries a Date in IMF-fixdate',
  section: '1 What the service does',
  statement: 'RFC 9110 6.6.1: an origin server with a clock MUST generate a Date header field in its 2xx, 3xx and 4xx responses',
  rfc: 'RFC 9110 5.6.7, 6.6.1',
  advice: true,
  needs: [],
  each (ex, res, v) {
    if (res.status < 200 || res.status >= 500) return
    const value = header(res, 'date')
    if (!v.check(value !== undefined, `${res.status} answer without Date`, ex)) return
    v.check(IMF_FIXDATE.test(value as string) && parseHttpDate(value as string) !== null, `Date ${JSON.stringify(value)} is not an HTTP date in IMF-fixdate`, ex)
  }
}

const version505: Rule = {
  id: 'rfc.version-505',
  title: 'A request line of HTTP/2.0 is 505',
  section: '9 Versioning',
  statement: 'RFC 9110 15.6.6: 505 indicates that the server does not support the major version of HTTP used in the request',
  rfc: 'RFC 9110 6.2, 15.6.6',
  advice: true,
  needs: [],
  async probe (c, v) {
    const ex = await c.send({ method: 'GET', target: '/', headers: [], raw: `GET / HTTP/2.0\r\nHost: ${c.host}\r\nConnection: close\r\n\r\n` })
    v.check(statusOf(ex) === 505, `expected 505 to a request line of HTTP/2.0, got ${answer(ex)}`, ex)
  }
}

const oneContentType: Rule = {
  id: 'rfc.one-content-type',
  title: 'A request with two Content-Type fields is refused (400 or 415)',
  section: '4.1 Content-Type',
  statement: 'RFC 9110 5.3: a sender MUST NOT generate multiple field lines of a field that is not a list (Content-Type)',
  rfc: 'RFC 9110 5.3, 8.3',
  advice: true,
  needs: ['write', 'collection'],
  async probe (c, v) {
    const collection = c.targets.collection as string
    const ex: Exchange = await c.send(bodyRequest('POST', collection, json(c.sample()), [['Content-Type', 'text/plain'], ...await c.auth('POST', collection)]))
    await c.track(ex)
    v.check(statusOf(ex) === 400 || statusOf(ex) === 415, `two Content-Type fields: expected 400 or 415, got ${answer(ex)}`, ex)
  }
}

/** Requests Node answers itself (417 to an unknown expectation, 400 to a malformed head): the global rules judge their answers. */
const nodeAnswers: Rule = {
  id: 'rfc.expect-417',
  title: 'An expectation the server does not know is 417',
  section: '4 Endpoints',
  statement: 'RFC 9110 10.1.1: a server that receives an Expect field value other than 100-continue MAY respond with 417',
  rfc: 'RFC 9110 10.1.1',
  advice: true,
  needs: [],
  async probe (c, v) {
    const ex = await c.get('/', [['Expect', '100-audit']])
    v.check(statusOf(ex) === 417 || is2xx(ex), `Expect: 100-audit: expected 417 (or the request fulfilled), got ${answer(ex)}`, ex)
    await c.send({ method: 'GET', target: '/', headers: [], raw: `GET / HTTP/1.1\r\nHost: ${c.host}\r\nBad Header Line\r\nConnection: close\r\n\r\n` })
  }
}

export const RFC_RULES: readonly Rule[] = [methodNotAllowed, options, head, date, version505, oneContentType, nodeAnswers]
