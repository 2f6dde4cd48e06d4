/** The rules that hold for every answer of the run, checked once all the probes are done. */
import { parseChallenges } from '../client/challenges'
import { parseMediaType } from '../headers/media-type'
import type { Results } from './results'
import { header, headerValues, type Exchange, type WireResponse } from './transport'

const CORP = new Set(['same-origin', 'same-site', 'cross-origin'])

function hasBody (res: WireResponse): boolean { return res.body.length > 0 }

/** 4.7: Cross-Origin-Resource-Policy with one of its three values. */
function corp (r: Results, ex: Exchange, res: WireResponse): void {
  const value = header(res, 'cross-origin-resource-policy')
  r.check('corp.every-answer', value !== undefined && CORP.has(value.trim().toLowerCase()), `${res.status} answer ${value === undefined ? 'without' : `with an invalid (${value})`} Cross-Origin-Resource-Policy`, ex)
}

/** 4.1: a body comes with its Content-Type; a text type names its charset. */
function contentType (r: Results, ex: Exchange, res: WireResponse): void {
  if (!hasBody(res)) return
  const value = header(res, 'content-type')
  if (!r.check('content-type.response', value !== undefined, `${res.status} answer with a body and no Content-Type`, ex)) return
  const mt = parseMediaType(value as string)
  if (mt === null) { r.fail('content-type.response', `Content-Type ${value as string} is not a media type`, ex); return }
  if (mt.type === 'text' || mt.essence.endsWith('/xml') || mt.essence.endsWith('+xml')) {
    r.check('content-type.charset', mt.parameters.charset !== undefined, `${res.status} answer in ${mt.essence} without a charset`, ex)
  }
}

/** 7: 412 and 422 are application/json (rfc9110: or a +json type such as problem details). */
function errorMediaType (r: Results, ex: Exchange, res: WireResponse, profile: string): void {
  if (res.status !== 412 && res.status !== 422) return
  const essence = parseMediaType(header(res, 'content-type') ?? '')?.essence
  const ok = essence === 'application/json' || (profile !== 'spec' && essence !== undefined && essence.endsWith('+json'))
  r.check('errors.json-media-type', ok, `${res.status} in ${essence ?? 'no media type'}, not application/json`, ex)
}

/** 7, 422 body shape: `{ errors: [ { field: string, message: string } ] }` with Content-Length. */
function errorsShape (r: Results, ex: Exchange, res: WireResponse): void {
  if (res.status !== 422) return
  if (header(res, 'content-length') === undefined) r.fail('validation.errors-shape', 'a 422 without Content-Length', ex)
  let body: unknown
  try { body = JSON.parse(res.body.toString('utf8')) } catch { r.fail('validation.errors-shape', 'a 422 body that is not JSON', ex); return }
  const errors = (body as { errors?: unknown } | null)?.errors
  const ok = Array.isArray(errors) && errors.length > 0 && errors.every((e: { field?: unknown, message?: unknown } | null) => typeof e?.field === 'string' && typeof e.message === 'string')
  r.check('validation.errors-shape', ok, 'the 422 body is not {"errors":[{"field":string,"message":string}, ...]}', ex)
}

/** 5.3: WWW-Authenticate on every 401, each challenge `<scheme> realm="<realm>"`. */
function challenges (r: Results, ex: Exchange, res: WireResponse): void {
  const lines = headerValues(res, 'www-authenticate')
  if (res.status === 401) r.check('auth.www-authenticate', lines.length > 0, '401 without WWW-Authenticate', ex)
  for (const c of parseChallenges(lines)) {
    r.check('auth.challenge-form', typeof c.params.realm === 'string', `the ${c.scheme} challenge has no realm="..."`, ex)
  }
}

/** RFC 9110 6.6.1: an origin server with a clock sends Date in its 2xx, 3xx and 4xx answers. */
function date (r: Results, ex: Exchange, res: WireResponse): void {
  if (res.status < 200 || res.status >= 500) return
  r.check('rfc.date', header(res, 'date') !== undefined, `${res.status} answer without Date`, ex)
}

export function checkGlobal (r: Results, exchanges: readonly Exchange[], profile: string): void {
  for (const ex of exchanges) {
    const res = ex.response
    if (res === null) continue
    corp(r, ex, res)
    contentType(r, ex, res)
    errorMediaType(r, ex, res, profile)
    errorsShape(r, ex, res)
    challenges(r, ex, res)
    date(r, ex, res)
    if (res.status === 411) {
      const essence = parseMediaType(header(res, 'content-type') ?? '')?.essence
      r.check('content-length.411-text', essence === 'text/plain', `411 in ${essence ?? 'no media type'}, not text/plain`, ex)
    }
    if (res.status === 415 && ex.request.method === 'PATCH') {
      r.check('patch.accept-patch-415', header(res, 'accept-patch') !== undefined, '415 to a PATCH without Accept-Patch', ex)
    }
  }
}
