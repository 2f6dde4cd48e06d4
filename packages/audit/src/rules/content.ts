/** Content-Type and Content-Length (411): what a request must declare, what an answer says. */
import { parseMediaType } from '@http-conventions/grammar'
import { answer, is2xx, json, statusOf, type Context } from '../context'
import type { Rule, Verdict } from '../rule'
import { said } from '../statements'
import { header, type Exchange } from '../transport'

/** A write the framing and Content-Type probes send: POST to the collection, PUT and PATCH to the resource. */
interface WriteTarget { method: string, target: string, type: string, body: () => string }

/** The writes the service takes: POST always, PUT and PATCH when the resource takes them. */
async function writeTargets (c: Context): Promise<WriteTarget[]> {
  const out: WriteTarget[] = [{ method: 'POST', target: c.targets.collection as string, type: 'application/json', body: () => json(c.sample()) }]
  const item = await c.resource()
  if (item === undefined) return out
  if (c.takesPut()) out.push({ method: 'PUT', target: item, type: 'application/json', body: () => json(c.sample()) })
  if (await c.takesPatch(item)) out.push({ method: 'PATCH', target: item, type: 'application/merge-patch+json', body: () => '{}' })
  return out
}

/** Each write sent once by `send`; the answers are tracked (a POST may create) and judged by `ok`. */
async function eachWrite (c: Context, v: Verdict, send: (w: WriteTarget) => Promise<Exchange>, ok: (ex: Exchange) => boolean, what: string, expected: string): Promise<void> {
  for (const w of await writeTargets(c)) {
    const ex = await send(w)
    await c.track(ex)
    v.check(ok(ex), `${w.method} ${what}: expected ${expected}, got ${answer(ex)}`, ex)
  }
}

function chunk (body: string): string { return `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n` }

/** The status of a Content-Length that cannot be trusted: 411, or 400 under rfc9110 (RFC 9112 6.3). */
function untrusted (c: Context): number { return c.spec ? 411 : 400 }

const requestRequired: Rule = {
  id: 'content-type.request-required',
  title: 'A request body without Content-Type is refused with 415 (POST, PUT, PATCH)',
  section: '4.1 Content-Type',
  statement: said('content-type.request'),
  rfc: 'RFC 9110 8.3',
  needs: ['write', 'collection'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => c.write(w.method, w.target, w.body(), { type: null }), (ex) => statusOf(ex) === 415, 'with a body and no Content-Type', '415')
  }
}

/** A POST to the collection in media type `type`, expected 415 (the body is a valid sample). */
async function postRefusedAs (c: Context, v: Verdict, type: string): Promise<void> {
  const ex = await c.write('POST', c.targets.collection as string, json(c.sample()), { type })
  await c.track(ex)
  v.check(statusOf(ex) === 415, `POST in ${type}: expected 415, got ${answer(ex)}`, ex)
}

const charsetUtf8: Rule = {
  id: 'content-type.request-charset',
  title: 'A request body in a charset other than UTF-8 is refused with 415',
  section: '4.1 Content-Type',
  statement: said('content-type.charset-utf8'),
  needs: ['write', 'collection'],
  probe: (c, v) => postRefusedAs(c, v, 'application/json; charset=iso-8859-1')
}

const unsupported: Rule = {
  id: 'content-type.unsupported-415',
  title: 'A request body in a media type the route does not take is refused with 415',
  section: '4.1 Content-Type',
  statement: said('content-type.accepted'),
  needs: ['write', 'collection'],
  probe: (c, v) => postRefusedAs(c, v, 'application/x-audit-unknown')
}

const labelLies: Rule = {
  id: 'content-type.malformed-400',
  title: 'A body that is not what its Content-Type says (JSON labelled, not JSON) is 400',
  section: '4.1 Content-Type',
  statement: said('content-type.well-formed'),
  needs: ['write', 'collection'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => c.write(w.method, w.target, '{"audit": not json', { type: w.type }), (ex) => statusOf(ex) === 400, `labelled ${'JSON'} with a body that is not JSON`, '400')
  }
}

const response: Rule = {
  id: 'content-type.response',
  title: 'A response with a body carries Content-Type',
  section: '4.1 Content-Type',
  statement: said('content-type.response'),
  rfc: 'RFC 9110 8.3',
  needs: [],
  each (ex, res, v) {
    if (res.body.length === 0) return
    const value = header(res, 'content-type')
    if (!v.check(value !== undefined, `${res.status} answer with a body and no Content-Type`, ex)) return
    v.check(parseMediaType(value as string) !== null, `Content-Type ${value as string} is not a media type`, ex)
  }
}

const charset: Rule = {
  id: 'content-type.charset',
  title: 'A text response (text/*, XML) names its charset',
  section: '4.1 Content-Type',
  statement: said('content-type.response'),
  rfc: 'RFC 9110 8.3.2',
  needs: [],
  each (ex, res, v) {
    if (res.body.length === 0) return
    const mt = parseMediaType(header(res, 'content-type') ?? '')
    if (mt === null || !(mt.type === 'text' || mt.essence.endsWith('/xml') || mt.essence.endsWith('+xml'))) return
    v.check(mt.parameters.charset !== undefined, `${res.status} answer in ${mt.essence} without a charset`, ex)
  }
}

/** `a` and `b` differ only in Accept: when their answers differ, both say Vary: Accept. */
function sameVary (v: Verdict, a: Exchange, b: Exchange, what: string): void {
  const ta = header(a.response, 'content-type')
  const tb = header(b.response, 'content-type')
  if (ta === undefined || tb === undefined || (ta === tb && statusOf(a) === statusOf(b))) return
  for (const ex of [a, b]) {
    const vary = (header(ex.response, 'vary') ?? '').toLowerCase().split(',').map((s) => s.trim())
    v.check(vary.includes('accept') || vary.includes('*'), `${what} is ${statusOf(a)} ${ta} or ${statusOf(b)} ${tb} by Accept, but this answer has no Vary: Accept`, ex)
  }
}

const varyAccept: Rule = {
  id: 'content-type.vary-accept',
  title: 'An answer whose Content-Type follows Accept says Vary: Accept',
  section: '4.1 Content-Type',
  statement: said('content-type.vary'),
  rfc: 'RFC 9110 12.5.5',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const pairs: Array<[string, string, Array<[string, string]>]> = [[item, item, []], [c.missingItem() as string, 'an unknown id', []]]
    const etag = (await c.version(item)).etag
    if (etag !== undefined) pairs.push([item, 'the answer to a matching If-None-Match', [['If-None-Match', etag]]])
    for (const [path, what, extra] of pairs) {
      const a = await c.get(path, [['Accept', 'application/json'], ...extra])
      const b = await c.get(path, [['Accept', 'application/xml, application/problem+json;q=0.9, text/html;q=0.8'], ...extra])
      sameVary(v, a, b, what)
    }
    v.skip('no answer changed with Accept')
  }
}

const missing: Rule = {
  id: 'content-length.missing',
  title: 'A POST, PUT or PATCH without Content-Length is refused with 411',
  section: '4.2 Content-Length',
  statement: said('content-length.required'),
  rfc: 'RFC 9110 15.5.12',
  needs: ['write', 'collection', 'spec-profile'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => c.raw(w.method, w.target, [`Content-Type: ${w.type}`], ''), (ex) => statusOf(ex) === 411, 'without Content-Length', '411')
  }
}

const chunked: Rule = {
  id: 'content-length.chunked',
  title: 'A chunked request body is refused with 411 (rfc9110: accepted)',
  section: '4.2 Content-Length',
  statement: said('content-length.required'),
  rfc: 'RFC 9112 6.1, 7.1',
  needs: ['write', 'collection'],
  async probe (c, v) {
    const send = async (w: WriteTarget): Promise<Exchange> => c.raw(w.method, w.target, [`Content-Type: ${w.type}`, 'Transfer-Encoding: chunked'], chunk(w.body()))
    if (c.spec) await eachWrite(c, v, send, (ex) => statusOf(ex) === 411, 'chunked', '411')
    else await eachWrite(c, v, send, is2xx, 'chunked, of a valid body', '2xx as with Content-Length (RFC 9112 7.1)')
  }
}

const invalid: Rule = {
  id: 'content-length.invalid',
  title: 'A Content-Length that is not a decimal number is refused with 411 (rfc9110: 400)',
  section: '4.2 Content-Length',
  statement: said('content-length.untrusted'),
  rfc: 'RFC 9112 6.3',
  needs: ['write', 'collection'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => { const b = w.body(); return c.raw(w.method, w.target, [`Content-Type: ${w.type}`, `Content-Length: ${Buffer.byteLength(b)}x`], b) }, (ex) => statusOf(ex) === untrusted(c), 'with a Content-Length that is not a number', String(untrusted(c)))
  }
}

const duplicate: Rule = {
  id: 'content-length.duplicate',
  title: 'Two different Content-Length values are refused with 411 (rfc9110: 400)',
  section: '4.2 Content-Length',
  statement: said('content-length.untrusted'),
  rfc: 'RFC 9112 6.3',
  needs: ['write', 'collection'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => { const b = w.body(); const n = Buffer.byteLength(b); return c.raw(w.method, w.target, [`Content-Type: ${w.type}`, `Content-Length: ${n}`, `Content-Length: ${n + 1}`], b + ' ') }, (ex) => statusOf(ex) === untrusted(c), 'with two different Content-Length values', String(untrusted(c)))
  }
}

const withTransferEncoding: Rule = {
  id: 'content-length.with-transfer-encoding',
  title: 'Content-Length with Transfer-Encoding is refused with 411 (rfc9110: 400)',
  section: '4.2 Content-Length',
  statement: said('content-length.untrusted'),
  rfc: 'RFC 9112 6.1',
  needs: ['write', 'collection'],
  async probe (c, v) {
    await eachWrite(c, v, async (w) => { const b = w.body(); return c.raw(w.method, w.target, [`Content-Type: ${w.type}`, `Content-Length: ${Buffer.byteLength(b)}`, 'Transfer-Encoding: chunked'], chunk(b)) }, (ex) => statusOf(ex) === untrusted(c), 'with Content-Length and Transfer-Encoding: chunked', String(untrusted(c)))
  }
}

const mismatch: Rule = {
  id: 'content-length.mismatch',
  title: 'A Content-Length larger than the bytes sent is refused with 411 (rfc9110: 400)',
  section: '4.2 Content-Length',
  statement: said('content-length.untrusted'),
  rfc: 'RFC 9112 6.3, 8',
  needs: ['write', 'collection'],
  async probe (c, v) {
    // the request ends (the connection is half-closed) 10 bytes short of its Content-Length
    await eachWrite(c, v, async (w) => { const b = w.body(); return c.raw(w.method, w.target, [`Content-Type: ${w.type}`, `Content-Length: ${Buffer.byteLength(b) + 10}`], b, true) }, (ex) => statusOf(ex) === untrusted(c), 'whose body ends 10 bytes short of its Content-Length', String(untrusted(c)))
  }
}

const limit: Rule = {
  id: 'content-length.limit',
  title: 'A body over the size limit is refused with 411 (rfc9110: 413) before it is sent',
  section: '4.2 Content-Length, 8 Limits',
  statement: said('content-length.limit'),
  rfc: 'RFC 9110 15.5.14',
  needs: ['write', 'collection'],
  async probe (c, v) {
    const big = await c.raw('POST', c.targets.collection as string, ['Content-Type: application/json', 'Content-Length: 1073741824'], '')
    const expected = c.spec ? 411 : 413
    v.check(statusOf(big) === expected, `a declared body of 1 GiB, not sent: expected ${expected} before the body, got ${answer(big)}`, big)
  }
}

const getBody: Rule = {
  id: 'content-length.get-body',
  title: 'A GET with a chunked body is refused with 411, as a POST is',
  section: '4.2 Content-Length',
  statement: said('content-length.get'),
  rfc: 'RFC 9110 9.3.1',
  needs: ['collection', 'spec-profile'],
  async probe (c, v) {
    const target = c.targets.collection as string
    const ex = await c.send({ method: 'GET', target, headers: [], raw: `GET ${target} HTTP/1.1\r\nHost: ${c.host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunk('audit')}` })
    v.check(statusOf(ex) === 411, `GET ${target} with a chunked body: expected 411, got ${answer(ex)}`, ex)
  }
}

const text411: Rule = {
  id: 'content-length.411-text',
  title: 'A 411 says why in a text/plain body that starts with Length Required',
  section: '7 Errors (411)',
  statement: said('content-length.411-text'),
  needs: [],
  each (ex, res, v) {
    if (res.status !== 411) return
    const essence = parseMediaType(header(res, 'content-type') ?? '')?.essence
    if (!v.check(essence === 'text/plain', `411 in ${essence ?? 'no media type'}, not text/plain`, ex)) return
    v.check(res.body.toString('utf8').startsWith('Length Required'), `the 411 body does not start with "Length Required": ${JSON.stringify(res.body.toString('utf8').slice(0, 40))}`, ex)
  }
}

export const CONTENT_RULES: readonly Rule[] = [response, charset, varyAccept, requestRequired, charsetUtf8, unsupported, labelLies, missing, chunked, invalid, duplicate, withTransferEncoding, mismatch, limit, getBody, text411]
