/** Redirects (307) and Cross-Origin-Resource-Policy. */
import { answer, bodyJson, is2xx, json, statusOf, type Context } from '../context'
import type { Rule, Verdict } from '../rule'
import { said } from '../statements'
import { header, type Exchange } from '../transport'

/** Where a 307 sends the client: a same-origin target to follow, or undefined (reported) for another origin. */
function sameOrigin (c: Context, v: Verdict, ex: Exchange): string | undefined {
  const to = new URL(header(ex.response, 'location') as string, c.o.url)
  if (to.origin === new URL(c.o.url).origin) return to.pathname + to.search
  v.partial(`Location ${to.href} is another origin: not followed, and no credentials sent there`, ex)
  return undefined
}

const redirect307: Rule = {
  id: 'redirect.307',
  title: 'A redirect is 307 with a Location that answers',
  section: '4.6 Redirects',
  statement: said('redirect.307'),
  rfc: 'RFC 9110 15.4.8',
  needs: ['redirect'],
  async probe (c, v) {
    for (const path of c.targets.redirects) {
      const ex = await c.get(path)
      const location = header(ex.response, 'location')
      if (!v.check(statusOf(ex) === 307 && location !== undefined, `GET ${path}: expected 307 with Location, got ${answer(ex)}${location === undefined ? ' without Location' : ''}`, ex)) continue
      const target = sameOrigin(c, v, ex)
      if (target === undefined) continue
      const next = await c.get(target)
      v.check(is2xx(next), `the Location ${location as string} answers ${answer(next)}`, next)
    }
  }
}

/** Every string the body sent is in the answer's JSON (the resource holds what was sent). */
function holds (ex: Exchange, sent: Record<string, unknown>): boolean {
  const got = bodyJson(ex) as Record<string, unknown> | undefined
  return got !== undefined && Object.entries(sent).every(([k, value]) => typeof value !== 'string' || got[k] === value)
}

const methodKept: Rule = {
  id: 'redirect.method-kept',
  title: 'A POST is redirected with 307, and the same POST with the same body at Location succeeds',
  section: '4.6 Redirects',
  statement: said('redirect.not-301'),
  rfc: 'RFC 9110 15.4.8',
  needs: ['write', 'redirect'],
  async probe (c, v) {
    for (const path of c.targets.redirects) {
      const sent = c.sample()
      const ex = await c.write('POST', path, json(sent))
      await c.track(ex)
      if (!v.check(statusOf(ex) === 307 && header(ex.response, 'location') !== undefined, `POST ${path}: expected 307 with Location, got ${answer(ex)}`, ex)) continue
      const target = sameOrigin(c, v, ex)
      if (target === undefined) continue
      const again = await c.write('POST', target, json(sent))
      await c.track(again, sent)
      if (!v.check(is2xx(again), `the same POST at ${target} answers ${answer(again)}`, again)) continue
      v.check(holds(again, sent) || bodyJson(again) === undefined, `the POST at ${target} answered a resource without the body sent`, again)
    }
  }
}

const queryKept: Rule = {
  id: 'redirect.query-kept',
  title: 'A redirect keeps the query string',
  section: '4.6 Redirects',
  statement: said('redirect.query'),
  rfc: 'RFC 9110 15.4.8',
  needs: ['redirect'],
  async probe (c, v) {
    for (const path of c.targets.redirects) {
      const query = `audit=${c.nextTag()}`
      const ex = await c.get(`${path}${path.includes('?') ? '&' : '?'}${query}`)
      const location = header(ex.response, 'location')
      if (statusOf(ex) !== 307 || location === undefined) { v.skip(`GET ${path} is not a 307 with Location`); continue }
      v.check(new URL(location, c.o.url).search.includes(query), `GET ${path}?${query}: Location ${location} dropped the query string`, ex)
    }
  }
}

/** The three values a browser knows, compared byte for byte (Fetch standard, CORP check). */
const CORP = new Set(['same-origin', 'same-site', 'cross-origin'])

const corp: Rule = {
  id: 'corp.every-answer',
  title: 'Every answer carries Cross-Origin-Resource-Policy: same-origin, same-site or cross-origin, as written',
  section: '4.7 Cross-Origin-Resource-Policy',
  statement: said('corp.every'),
  needs: [],
  each (ex, res, v) {
    const value = header(res, 'cross-origin-resource-policy')
    v.check(value !== undefined && CORP.has(value), `${res.status} answer ${value === undefined ? 'without' : `with an invalid (${value})`} Cross-Origin-Resource-Policy`, ex)
  }
}

export const REDIRECT_RULES: readonly Rule[] = [redirect307, methodKept, queryKept, corp]
