/** Conditional requests (412): validators, the four preconditions, tag lists and comparisons. */
import { formatEntityTag, formatHttpDate, parseEntityTag, parseHttpDate } from '@http-conventions/grammar'
import { JSON_TYPE, OTHER_ACCEPT, answer, is2xx, json, statusOf, type Context, type Headers } from '../context'
import type { Rule, Verdict } from '../rule'
import { said } from '../statements'
import { header, type Exchange } from '../transport'

const STALE = '"audit-stale-version"'

/** What a GET whose copy is current gets: 412, or 304 under rfc9110. */
function notModified (c: Context): number { return c.spec ? 412 : 304 }

/** A conditional GET of the resource, judged against `expected`. */
async function conditionalGet (c: Context, v: Verdict, item: string, headers: Headers, expected: number, what: string): Promise<Exchange> {
  const ex = await c.get(item, [['Accept', JSON_TYPE], ...headers])
  v.check(statusOf(ex) === expected, `${what}: expected ${expected}, got ${answer(ex)}`, ex)
  return ex
}

/** A PUT of a new valid body with `headers` (its own precondition). */
function put (c: Context, item: string, headers: Headers): Promise<Exchange> {
  return c.write('PUT', item, json(c.sample()), { extra: headers })
}

/** The current ETag of the resource, or a skip saying there is none. */
async function currentTag (c: Context, v: Verdict, item: string): Promise<string | undefined> {
  const etag = (await c.version(item)).etag
  if (etag === undefined) v.skip('the resource has no ETag')
  return etag
}

/** The same entity tag written with the other strength: `W/"x"` for `"x"` and the reverse. */
function otherStrength (etag: string): { tag: string, weak: boolean } {
  const t = parseEntityTag(etag) as { weak: boolean, opaque: string }
  return { tag: formatEntityTag({ weak: !t.weak, opaque: t.opaque }), weak: t.weak }
}

const etag: Rule = {
  id: 'conditional.etag',
  title: 'A resource answers GET with an entity tag as a quoted string',
  section: '4.4 Conditional requests',
  statement: said('conditional.validators'),
  rfc: 'RFC 9110 8.8.3',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const got = await c.version(item)
    v.check(got.etag !== undefined, got.rawEtag === undefined ? `GET ${item} has no ETag` : `ETag ${got.rawEtag} is not a quoted entity tag`, got.exchange)
  }
}

const ifNoneMatch: Rule = {
  id: 'conditional.if-none-match',
  title: 'GET with a matching If-None-Match is 412 (rfc9110: 304); a stale one is 200',
  section: '4.4 Conditional requests',
  statement: said('conditional.not-modified'),
  rfc: 'RFC 9110 13.1.2',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const tag = await currentTag(c, v, item)
    if (tag === undefined) return
    await conditionalGet(c, v, item, [['If-None-Match', tag]], notModified(c), 'If-None-Match with the current ETag')
    await conditionalGet(c, v, item, [['If-None-Match', STALE]], 200, 'If-None-Match with another ETag')
  }
}

const ifNoneMatchStar: Rule = {
  id: 'conditional.if-none-match-star',
  title: 'GET with If-None-Match: * of an existing resource is 412 (rfc9110: 304)',
  section: '4.4 Conditional requests',
  statement: said('conditional.not-modified'),
  rfc: 'RFC 9110 13.1.2',
  needs: ['resource'],
  async probe (c, v) {
    await conditionalGet(c, v, await c.resource() as string, [['If-None-Match', '*']], notModified(c), 'If-None-Match: * on an existing resource')
  }
}

const ifModifiedSince: Rule = {
  id: 'conditional.if-modified-since',
  title: 'GET with If-Modified-Since at or after Last-Modified is 412 (rfc9110: 304); before it, 200',
  section: '4.4 Conditional requests',
  statement: said('conditional.not-modified'),
  rfc: 'RFC 9110 13.1.3',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.datedResource() as string
    const got = await c.settled(item)
    const lm = got.lastModified === undefined ? null : parseHttpDate(got.lastModified)
    if (lm === null) { v.skip('the resource has no Last-Modified'); return }
    await conditionalGet(c, v, item, [['If-Modified-Since', got.lastModified as string]], notModified(c), 'If-Modified-Since at Last-Modified')
    // a date after Last-Modified, and not after the answer's own Date (a date in the future is ignored, RFC 9110 13.1.3)
    const date = parseHttpDate(header(got.exchange.response, 'date') ?? '') ?? Date.now()
    if (lm + 1000 <= date) await conditionalGet(c, v, item, [['If-Modified-Since', formatHttpDate(lm + 1000)]], notModified(c), 'If-Modified-Since a second after Last-Modified')
    await conditionalGet(c, v, item, [['If-Modified-Since', formatHttpDate(lm - 86400_000)]], 200, 'If-Modified-Since a day before Last-Modified')
  }
}

const tagList: Rule = {
  id: 'conditional.etag-list',
  title: 'A list of entity tags matches when any of them does (If-None-Match; If-Match with --write)',
  section: '4.4 Conditional requests',
  statement: said('conditional.not-modified'),
  rfc: 'RFC 9110 13.1.1, 13.1.2',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const tag = await currentTag(c, v, item)
    if (tag === undefined) return
    await conditionalGet(c, v, item, [['If-None-Match', `${STALE}, ${tag}`]], notModified(c), 'If-None-Match with a stale tag, then the current one')
    if (!c.o.write || !c.takesPut() || parseEntityTag(tag)?.weak === true) return
    const ex = await put(c, item, [['If-Match', `${STALE}, ${tag}`]])
    v.check(is2xx(ex), `PUT with If-Match of a stale tag, then the current one: expected 2xx, got ${answer(ex)}`, ex)
  }
}

const comparison: Rule = {
  id: 'conditional.weak-strong',
  title: 'If-None-Match compares weakly (W/ matches); If-Match strongly (a weak tag never matches)',
  section: '4.4 Conditional requests',
  statement: said('conditional.not-modified'),
  rfc: 'RFC 9110 8.8.3.2, 13.1.1, 13.1.2',
  needs: ['resource'],
  async probe (c, v) {
    const item = await c.resource() as string
    const tag = await currentTag(c, v, item)
    if (tag === undefined) return
    const other = otherStrength(tag)
    await conditionalGet(c, v, item, [['If-None-Match', other.tag]], notModified(c), `If-None-Match ${other.tag} (the current ${tag}, weakly compared)`)
    if (!c.o.write || !c.takesPut()) return
    const weak = other.weak ? tag : other.tag
    const ex = await put(c, item, [['If-Match', weak]])
    v.check(statusOf(ex) === 412, `PUT with If-Match ${weak} (the current ${tag}; a weak tag never matches strongly): expected 412, got ${answer(ex)}`, ex)
  }
}

const ifMatch: Rule = {
  id: 'conditional.if-match',
  title: 'PUT with a stale If-Match is 412 and changes nothing; with the current tag, 2xx',
  section: '4.4 Conditional requests',
  statement: said('conditional.order'),
  rfc: 'RFC 9110 13.1.1',
  needs: ['write', 'resource', 'put'],
  async probe (c, v) {
    const item = await c.resource() as string
    const before = await c.version(item)
    const stale = await put(c, item, [['If-Match', STALE]])
    v.check(statusOf(stale) === 412, `PUT with a stale If-Match: expected 412, got ${answer(stale)}`, stale)
    const still = await c.version(item)
    v.check(still.body.equals(before.body), 'the PUT refused by If-Match changed the resource', still.exchange)
    // the same refusal asked for another media type: 7 says a 412 is application/json (errors.json-media-type)
    await put(c, item, [['If-Match', STALE], ['Accept', OTHER_ACCEPT]])
    if (before.etag === undefined || parseEntityTag(before.etag)?.weak === true) return
    const fresh = await put(c, item, [['If-Match', before.etag]])
    v.check(is2xx(fresh), `PUT with the current ETag in If-Match: expected 2xx, got ${answer(fresh)}`, fresh)
  }
}

const ifUnmodifiedSince: Rule = {
  id: 'conditional.if-unmodified-since',
  title: 'PUT with If-Unmodified-Since before Last-Modified is 412; at Last-Modified, 2xx',
  section: '4.4 Conditional requests',
  statement: said('conditional.order'),
  rfc: 'RFC 9110 13.1.4',
  needs: ['write', 'resource', 'put'],
  async probe (c, v) {
    const item = await c.datedResource() as string
    const got = await c.settled(item)
    const lm = got.lastModified === undefined ? null : parseHttpDate(got.lastModified)
    if (lm === null) { v.skip('the resource has no Last-Modified'); return }
    const early = await put(c, item, [['If-Unmodified-Since', formatHttpDate(lm - 86400_000)]])
    v.check(statusOf(early) === 412, `PUT with If-Unmodified-Since a day before Last-Modified: expected 412, got ${answer(early)}`, early)
    const ok = await put(c, item, [['If-Unmodified-Since', got.lastModified as string]])
    v.check(is2xx(ok), `PUT with If-Unmodified-Since at Last-Modified: expected 2xx, got ${answer(ok)}`, ok)
  }
}

const starMissing: Rule = {
  id: 'conditional.if-match-star-missing',
  title: 'If-Match: * on a missing resource: 412, or the answer without it (404)',
  section: '4.4 Conditional requests',
  statement: said('conditional.order'),
  rfc: 'RFC 9110 13.1.1, 13.2.1',
  needs: ['write', 'collection', 'put'],
  async probe (c, v) {
    const missing = c.missingItem()
    if (missing === undefined) { v.skip('no resource path known (give --openapi or item in --config)'); return }
    // RFC 9110 13.1.1: If-Match: * is false without a current representation; 13.2.1: the
    // precondition is ignored when the answer without it would not be 2xx or 412.
    const star = await put(c, missing, [['If-Match', '*']])
    if (is2xx(star)) c.created.add(missing)
    const plain = await c.write('PUT', missing, json(c.sample()))
    if (is2xx(plain)) c.created.add(missing)
    // a 428 (a precondition required) says nothing of the answer without one: 412, or the 404 of a missing resource
    const expected = statusOf(plain) === 428 ? [412, 404] : is2xx(plain) || statusOf(plain) === 412 ? [412] : [statusOf(plain)]
    v.check(expected.includes(statusOf(star)), `PUT with If-Match: * to a missing resource: expected ${expected.join(' or ')} (the same PUT without it: ${answer(plain)}), got ${answer(star)}`, star)
  }
}

export const CONDITIONAL_RULES: readonly Rule[] = [etag, ifNoneMatch, ifNoneMatchStar, ifModifiedSince, ifUnmodifiedSince, tagList, comparison, ifMatch, starMissing]
