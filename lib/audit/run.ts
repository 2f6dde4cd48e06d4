/**
 * The audit: probes a running service rule by rule (rules.ts) over one connection at a time,
 * then checks every answer against the rules that hold for all of them. A write run creates
 * its own resources and deletes them at the end, whatever happened.
 */
import { randomBytes } from 'node:crypto'
import { digestResponse } from '../auth/digest'
import { parseChallenges, type Challenge } from '../client/challenges'
import { parseEntityTag } from '../headers/etag'
import { parseHttpDate, formatHttpDate } from '../headers/http-date'
import { parseMediaType } from '../headers/media-type'
import { undoManipulations } from './bounds'
import { Results, type RuleResult } from './results'
import { violateOne, validInstance, patchableProperty, type JsonSchema } from './schema-body'
import { createTransport, header, headerValues, type Exchange, type Transport, type WireRequest } from './transport'
import type { Targets } from './discovery'
import { checkGlobal } from './global'

export type Profile = 'spec' | 'rfc9110'

export interface Credentials {
  basic?: { user: string, password: string }
  bearer?: string
  digest?: { user: string, password: string }
}

export interface AuditOptions {
  /** `http://host:port`, or `http://host:port/prefix`: every probe is sent below the prefix */
  url: string
  profile: Profile
  targets: Targets
  write: boolean
  credentials: Credentials
  /** requests a second at most (0: no limit) */
  rate: number
  timeoutMs: number
  /** called after each request */
  onRequest?: (exchange: Exchange) => void
  /** a transport already created (the OpenAPI document was fetched with it) */
  transport?: Transport
}

export interface AuditReport {
  url: string
  profile: Profile
  write: boolean
  rules: RuleResult[]
  requests: number
  /** resources created and deleted */
  created: number
  /** resources the run could not delete (their paths) */
  leftBehind: string[]
}

export function transportFor (url: string, rate: number, timeoutMs: number, onRequest?: (ex: Exchange) => void): Transport {
  const u = new URL(url)
  const t = createTransport({ host: u.hostname, port: Number(u.port === '' ? 80 : u.port), rate, timeoutMs, prefix: u.pathname })
  if (onRequest === undefined) return t
  return { exchanges: t.exchanges, send: async (req) => { const ex = await t.send(req); onRequest(ex); return ex } }
}

type Scheme = 'basic' | 'bearer' | 'digest'

interface Version { etag?: string, rawEtag?: string, lastModified?: string, body: Buffer, exchange: Exchange }

const JSON_TYPE = 'application/json'
/** An Accept that prefers anything but plain JSON: XML, then problem details (RFC 9457), then HTML. */
const OTHER_ACCEPT = 'application/xml, application/problem+json;q=0.9, text/html;q=0.8'

function json (value: unknown): string { return JSON.stringify(value) }

function bodyRequest (method: string, target: string, body: string, extra: Array<[string, string]> = [], type = JSON_TYPE): WireRequest {
  return { method, target, headers: [['Content-Type', type], ['Content-Length', String(Buffer.byteLength(body))], ...extra], body }
}

function statusOf (ex: Exchange): number { return ex.response?.status ?? 0 }
function is2xx (ex: Exchange): boolean { const s = statusOf(ex); return s >= 200 && s < 300 }
function answer (ex: Exchange): string { return ex.response === null ? `no answer (${ex.error ?? 'closed'})` : ex.response.statusLine }

/** The listed media types of an Accept-Patch value, lower case. */
function acceptPatchTypes (value: string | undefined): string[] {
  if (value === undefined) return []
  return value.split(',').map((s) => parseMediaType(s.trim())?.essence).filter((s): s is string => s !== undefined)
}

class Audit {
  readonly results = new Results()
  readonly created = new Set<string>()
  readonly leftBehind: string[] = []
  private readonly t: Transport
  private readonly tag = randomBytes(4).toString('hex')
  private n = 0
  private digestSession: Challenge | undefined
  private digestNc = 0
  private offered: Scheme[] = []

  constructor (private readonly o: AuditOptions) {
    this.t = o.transport ?? transportFor(o.url, o.rate, o.timeoutMs, o.onRequest)
  }

  get exchanges (): Exchange[] { return this.t.exchanges }
  private get targets (): Targets { return this.o.targets }
  private send (req: WireRequest): Promise<Exchange> { return this.t.send(req) }
  private get (target: string, headers: Array<[string, string]> = []): Promise<Exchange> { return this.send({ method: 'GET', target, headers }) }
  private nextTag (): string { return `${this.tag}${++this.n}` }

  private primaryScheme (): Scheme | undefined {
    const c = this.o.credentials
    return c.basic !== undefined ? 'basic' : c.bearer !== undefined ? 'bearer' : c.digest !== undefined ? 'digest' : undefined
  }

  /** The Authorization line of `scheme` with the given credentials, for `method target`. */
  private async authorization (scheme: Scheme | undefined, method: string, target: string): Promise<Array<[string, string]>> {
    const c = this.o.credentials
    if (scheme === 'basic' && c.basic !== undefined) return [['Authorization', 'Basic ' + Buffer.from(`${c.basic.user}:${c.basic.password}`).toString('base64')]]
    if (scheme === 'bearer' && c.bearer !== undefined) return [['Authorization', `Bearer ${c.bearer}`]]
    if (scheme === 'digest' && c.digest !== undefined) {
      if (this.digestSession === undefined) await this.challenge()
      const s = this.digestSession
      if (s === undefined) return []
      return [['Authorization', this.digestLine(s, c.digest.user, c.digest.password, method, target)]]
    }
    return []
  }

  private digestLine (s: Challenge, user: string, password: string, method: string, uri: string): string {
    const algorithm = (s.params.algorithm ?? 'MD5') as 'MD5'
    const nc = (++this.digestNc).toString(16).padStart(8, '0')
    const cnonce = randomBytes(8).toString('hex')
    const realm = s.params.realm ?? ''
    const nonce = s.params.nonce ?? ''
    const response = digestResponse({ algorithm, username: user, realm, password, method, uri, nonce, nc, cnonce, qop: 'auth' })
    const opaque = s.params.opaque === undefined ? '' : `, opaque="${s.params.opaque}"`
    return `Digest username="${user}", realm="${realm}", uri="${uri}", algorithm=${algorithm}, nonce="${nonce}", nc=${nc}, cnonce="${cnonce}", qop=auth, response="${response}"${opaque}`
  }

  /** An unauthenticated write that should be refused: its challenges tell the schemes offered. */
  private async challenge (): Promise<Exchange | undefined> {
    const collection = this.targets.collection
    if (collection === undefined) return undefined
    const ex = await this.send(bodyRequest('POST', collection, json(this.sample())))
    this.track(ex, collection)
    const challenges = parseChallenges(headerValues(ex.response, 'www-authenticate'))
    this.offered = [...new Set(challenges.map((c) => c.scheme).filter((s): s is Scheme => s === 'basic' || s === 'bearer' || s === 'digest'))]
    this.digestSession = challenges.find((c) => c.scheme === 'digest' && /^(MD5|SHA-256)$/i.test(c.params.algorithm ?? 'MD5'))
    this.digestNc = 0
    return ex
  }

  /** Remembers a resource a write created, to delete it at the end. */
  private track (ex: Exchange, fallback: string): string | undefined {
    if (!is2xx(ex)) return undefined
    const location = header(ex.response, 'location')
    let path: string | undefined
    if (location !== undefined) path = new URL(location, this.o.url).pathname
    else {
      const id = this.idOf(ex)
      if (id !== undefined && this.targets.item !== undefined) path = this.targets.item.replace('{id}', encodeURIComponent(id))
    }
    if (path !== undefined && path !== fallback) this.created.add(path)
    return path
  }

  private idOf (ex: Exchange): string | undefined {
    try {
      const body = JSON.parse(ex.response?.body.toString('utf8') ?? '') as { id?: unknown }
      return typeof body.id === 'string' || typeof body.id === 'number' ? String(body.id) : undefined
    } catch { return undefined }
  }

  private sample (): Record<string, unknown> {
    const tag = this.nextTag()
    if (this.targets.schema !== undefined) return validInstance(this.targets.schema, tag) as Record<string, unknown>
    const base = this.targets.sample ?? {}
    // make strings unique (a slug, a name) so that two creates do not collide
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(base)) out[k] = typeof v === 'string' && /^[a-z0-9-]+$/.test(v) ? `${v}-${tag}` : v
    return out
  }

  private async version (path: string): Promise<Version> {
    const ex = await this.get(path, [['Accept', JSON_TYPE]])
    const etag = header(ex.response, 'etag')
    // a value that is not an entity tag is reported by conditional.etag, and never sent back
    return { etag: etag !== undefined && parseEntityTag(etag) !== null ? etag : undefined, rawEtag: etag, lastModified: header(ex.response, 'last-modified'), body: ex.response?.body ?? Buffer.alloc(0), exchange: ex }
  }

  async run (): Promise<void> {
    try {
      await this.readProbes()
      if (this.o.write) await this.writeProbes()
      else this.skipWrites()
    } finally {
      await this.cleanup()
      checkGlobal(this.results, this.exchanges, this.o.profile)
    }
  }

  private skipWrites (reason = 'needs --write'): void {
    for (const id of ['content-type.request-required', 'content-length.missing', 'content-length.chunked', 'content-length.invalid', 'content-length.duplicate', 'content-length.with-transfer-encoding', 'content-length.limit', 'validation.422', 'patch.unsupported-415', 'patch.json-patch', 'patch.merge-patch', 'conditional.if-match', 'conditional.if-unmodified-since', 'conditional.if-match-star-missing', 'delta.226', 'redirect.method-kept', 'auth.401-without-credentials', 'auth.401-invalid-basic', 'auth.401-invalid-bearer', 'auth.401-invalid-digest', 'auth.credentials-accepted', 'rfc.405-allow', 'rfc.one-content-type'] as const) {
      this.results.skipped(id, reason)
    }
  }

  // ---- probes that change nothing (GET, HEAD, OPTIONS) ----

  private async readProbes (): Promise<void> {
    const r = this.results
    for (const path of this.targets.paths) {
      const ex = await this.get(path)
      await this.head(path, ex)
    }
    // answers Node itself writes: 417 to an unknown expectation, 400 to a malformed request
    await this.get('/', [['Expect', '100-audit']])
    await this.send({ method: 'GET', target: '/', headers: [], raw: 'GET / HTTP/1.1\r\nHost: audit\r\nBad Header Line\r\nConnection: close\r\n\r\n' })
    // RFC 9110 6.2 and 15.6.6: a major version the server does not support is 505
    const v2 = await this.send({ method: 'GET', target: '/', headers: [], raw: 'GET / HTTP/2.0\r\nHost: audit\r\nConnection: close\r\n\r\n' })
    r.check('rfc.version-505', statusOf(v2) === 505, `expected 505 to a request line of HTTP/2.0, got ${answer(v2)}`, v2)
    await this.redirects()
    if (this.targets.item !== undefined) {
      const missing = this.targets.item.replace('{id}', `audit-missing-${this.tag}`)
      await this.varies(missing, 'an unknown id', [])
    } else r.skipped('rfc.options', 'no resource known (give --openapi or an item in --config)')
    if (!this.o.write) {
      const item = await this.existingItem()
      if (item === undefined) this.skipItem('no resource to read: none listed at the collection (or run with --write to create one)')
      else await this.itemReads(item)
    }
  }

  /** RFC 9110 9.3.2: HEAD has the status and the header fields of GET, and no body. */
  private async head (path: string, got: Exchange, headers: Array<[string, string]> = []): Promise<void> {
    const h = await this.send({ method: 'HEAD', target: path, headers })
    const r = this.results
    if (got.response === null || h.response === null) { r.fail('rfc.head', `no answer to ${got.response === null ? 'GET' : 'HEAD'} ${path}`, h); return }
    if (!r.check('rfc.head', h.response.status === got.response.status, `HEAD ${path} is ${h.response.status}, GET is ${got.response.status}`, h)) return
    for (const name of ['content-type', 'etag', 'last-modified', 'accept-patch', 'vary']) {
      const a = header(got.response, name)
      const b = header(h.response, name)
      if (name === 'etag' && a !== undefined && b !== undefined && a !== b) continue // a new version between the two is possible; equal in a still service
      if (a !== b) r.fail('rfc.head', `HEAD ${path}: ${name} is ${b ?? 'absent'}, GET says ${a ?? 'absent'}`, h)
    }
  }

  /** The first resource listed at the collection (read-only runs). */
  private async existingItem (): Promise<string | undefined> {
    const { collection, item } = this.targets
    if (collection === undefined || item === undefined) return undefined
    const ex = this.exchanges.find((e) => e.request.method === 'GET' && e.request.target === collection) ?? await this.get(collection)
    try {
      const list = JSON.parse(ex.response?.body.toString('utf8') ?? '') as unknown
      const first = Array.isArray(list) ? list[0] as { id?: unknown } | undefined : undefined
      return first?.id === undefined ? undefined : item.replace('{id}', encodeURIComponent(String(first.id)))
    } catch { return undefined }
  }

  private skipItem (reason: string): void {
    for (const id of ['conditional.etag', 'conditional.if-none-match', 'conditional.if-modified-since', 'patch.accept-patch', 'delta.unknown-ignored', 'rfc.options'] as const) this.results.skipped(id, reason)
  }

  /** RFC 9110 12.5.5: an answer selected by Accept says so in Vary. */
  private async varies (path: string, what: string, extra: Array<[string, string]>): Promise<void> {
    const a = await this.get(path, [['Accept', JSON_TYPE], ...extra])
    const b = await this.get(path, [['Accept', OTHER_ACCEPT], ...extra])
    this.sameVary(a, b, what)
  }

  /** `a` and `b` differ only in Accept: when their answers differ, both say Vary: Accept. */
  private sameVary (a: Exchange, b: Exchange, what: string): void {
    const ta = header(a.response, 'content-type')
    const tb = header(b.response, 'content-type')
    if (ta === undefined || tb === undefined || (ta === tb && statusOf(a) === statusOf(b))) return
    for (const ex of [a, b]) {
      const vary = (header(ex.response, 'vary') ?? '').toLowerCase().split(',').map((s) => s.trim())
      this.results.check('rfc.vary-accept', vary.includes('accept') || vary.includes('*'), `${what} is ${statusOf(a)} ${ta} or ${statusOf(b)} ${tb} by Accept, but this answer has no Vary: Accept`, ex)
    }
  }

  private async itemReads (item: string): Promise<Version> {
    const r = this.results
    const v = await this.version(item)
    await this.head(item, v.exchange, [['Accept', JSON_TYPE]])
    await this.varies(item, item, [])
    // RFC 9110 8.8.3: entity-tag = [ weak ] opaque-tag, a quoted string
    const etagOk = v.etag !== undefined
    r.check('conditional.etag', etagOk, v.rawEtag === undefined ? `GET ${item} has no ETag` : `ETag ${v.rawEtag} is not a quoted entity tag`, v.exchange)
    const notModified = this.o.profile === 'spec' ? 412 : 304
    if (etagOk) {
      const hit = await this.get(item, [['Accept', JSON_TYPE], ['If-None-Match', v.etag as string]])
      r.check('conditional.if-none-match', statusOf(hit) === notModified, `If-None-Match with the current ETag: expected ${notModified}, got ${answer(hit)}`, hit)
      const miss = await this.get(item, [['Accept', JSON_TYPE], ['If-None-Match', '"audit-other-version"']])
      r.check('conditional.if-none-match', statusOf(miss) === 200, `If-None-Match with another ETag: expected 200, got ${answer(miss)}`, miss)
      await this.varies(item, 'the answer to a matching If-None-Match', [['If-None-Match', v.etag as string]])
    } else r.skipped('conditional.if-none-match', 'the resource has no ETag')
    if (v.lastModified !== undefined) {
      const ims = await this.get(item, [['Accept', JSON_TYPE], ['If-Modified-Since', v.lastModified]])
      r.check('conditional.if-modified-since', statusOf(ims) === notModified, `If-Modified-Since at Last-Modified: expected ${notModified}, got ${answer(ims)}`, ims)
    } else r.skipped('conditional.if-modified-since', 'the resource has no Last-Modified')
    const ap = header(v.exchange.response, 'accept-patch')
    if (this.targets.patch || ap !== undefined) {
      r.check('patch.accept-patch', is2xx(v.exchange) && acceptPatchTypes(ap).length > 0, `GET ${item} of a resource that takes PATCH has no Accept-Patch listing a media type`, v.exchange)
    } else r.skipped('patch.accept-patch', 'no resource that takes PATCH is known')
    // RFC 3229 10.5.3: a manipulation the server does not know is ignored
    const unknown = await this.get(item, [['Accept', JSON_TYPE], ['A-IM', 'x-audit-unknown']])
    r.check('delta.unknown-ignored', statusOf(unknown) === statusOf(v.exchange) && header(unknown.response, 'im') === undefined && (unknown.response?.body.equals(v.body) ?? false),
      `A-IM: x-audit-unknown changed the answer: ${answer(unknown)} (plain GET: ${answer(v.exchange)})`, unknown)
    await this.options(item)
    return v
  }

  /** RFC 9110 9.3.7: OPTIONS answers 2xx and names the methods in Allow. */
  private async options (item: string): Promise<void> {
    const ex = await this.send({ method: 'OPTIONS', target: item, headers: [] })
    const allow = (header(ex.response, 'allow') ?? '').split(',').map((s) => s.trim().toUpperCase()).filter((s) => s !== '')
    if (!this.results.check('rfc.options', is2xx(ex) && allow.length > 0, `OPTIONS ${item}: expected 2xx with Allow, got ${answer(ex)}${allow.length === 0 ? ' without Allow' : ''}`, ex)) return
    const missing = this.targets.itemMethods.filter((m) => !allow.includes(m))
    if (missing.length > 0) this.results.partial('rfc.options', `Allow does not list ${missing.join(', ')}`, ex)
  }

  private async redirects (): Promise<void> {
    const r = this.results
    if (this.targets.redirects.length === 0) { r.skipped('redirect.307', 'no redirect known (a 307 in the OpenAPI document, or redirects in --config)'); r.skipped('redirect.method-kept', 'no redirect known'); return }
    for (const path of this.targets.redirects) {
      const ex = await this.get(path)
      const location = header(ex.response, 'location')
      if (!r.check('redirect.307', statusOf(ex) === 307 && location !== undefined, `GET ${path}: expected 307 with Location, got ${answer(ex)}${location === undefined ? ' without Location' : ''}`, ex)) continue
      const to = new URL(location as string, this.o.url)
      const next = await this.get(to.pathname + to.search)
      r.check('redirect.307', is2xx(next), `the Location ${location as string} answers ${answer(next)}`, next)
    }
  }

  // ---- probes that write (--write) ----

  private async writeProbes (): Promise<void> {
    const r = this.results
    const { collection } = this.targets
    if (collection === undefined) {
      this.skipItem('no collection to create a resource in (give --openapi or collection in --config)')
      this.skipWrites('no collection to create a resource in (give --openapi or collection in --config)')
      return
    }
    await this.authProbes(collection)
    const scheme = this.primaryScheme()
    const body = json(this.sample())
    const created = await this.send(bodyRequest('POST', collection, body, await this.authorization(scheme, 'POST', collection)))
    const item = this.track(created, collection)
    if (item === undefined) {
      r.fail('auth.credentials-accepted', `the resource could not be created: ${answer(created)}`, created)
      this.skipItem('no resource could be created')
      return
    }
    r.pass('auth.credentials-accepted')
    await this.otherSchemes(collection, scheme)
    const v0 = await this.itemReads(item)
    await this.framing(collection)
    await this.contentTypes(collection)
    await this.validation(collection)
    await this.patches(item)
    await this.conditionalWrites(item)
    await this.delta(item, v0)
    await this.methodNotAllowed(item)
    await this.redirectPost()
  }

  private async authProbes (collection: string): Promise<void> {
    const r = this.results
    const ex = await this.challenge() as Exchange
    const given = this.primaryScheme() !== undefined
    if (statusOf(ex) !== 401 && !this.targets.protected && !given) {
      for (const id of ['auth.401-without-credentials', 'auth.401-invalid-basic', 'auth.401-invalid-bearer', 'auth.401-invalid-digest', 'auth.credentials-accepted'] as const) r.skipped(id, `writes are not protected (POST ${collection} without credentials: ${answer(ex)})`)
      return
    }
    r.check('auth.401-without-credentials', statusOf(ex) === 401, `POST ${collection} without credentials: expected 401, got ${answer(ex)}`, ex)
    const invalid: Record<Scheme, () => Promise<Array<[string, string]>>> = {
      basic: async () => [['Authorization', 'Basic ' + Buffer.from(`audit-${this.tag}:wrong-password`).toString('base64')]],
      bearer: async () => [['Authorization', `Bearer audit-invalid-${this.tag}`]],
      digest: async () => {
        const s = this.digestSession
        return s === undefined ? [['Authorization', `Digest username="audit", realm="x", uri="${collection}", nonce="x", response="0"`]] : [['Authorization', this.digestLine(s, `audit-${this.tag}`, 'wrong-password', 'POST', collection)]]
      }
    }
    for (const scheme of ['basic', 'bearer', 'digest'] as const) {
      const id = `auth.401-invalid-${scheme}` as const
      if (!this.offered.includes(scheme)) { r.skipped(id, `the 401 offers no ${scheme} challenge`); continue }
      const bad = await this.send(bodyRequest('POST', collection, json(this.sample()), await invalid[scheme]()))
      this.track(bad, collection)
      r.check(id, statusOf(bad) === 401, `POST with invalid ${scheme} credentials: expected 401, got ${answer(bad)}`, bad)
    }
  }

  /** Each credential given besides the first creates a resource too. */
  private async otherSchemes (collection: string, first: Scheme | undefined): Promise<void> {
    for (const scheme of ['basic', 'bearer', 'digest'] as const) {
      if (scheme === first || this.o.credentials[scheme] === undefined) continue
      const ex = await this.send(bodyRequest('POST', collection, json(this.sample()), await this.authorization(scheme, 'POST', collection)))
      this.track(ex, collection)
      this.results.check('auth.credentials-accepted', is2xx(ex), `POST with the given ${scheme} credentials: expected 2xx, got ${answer(ex)}`, ex)
    }
  }

  private async raw (method: string, target: string, head: string[], body: string): Promise<Exchange> {
    const auth = await this.authorization(this.primaryScheme(), method, target)
    const lines = [`${method} ${target} HTTP/1.1`, 'Host: audit', ...auth.map(([n, v]) => `${n}: ${v}`), ...head, 'Connection: close']
    return this.send({ method, target, headers: [], raw: lines.join('\r\n') + '\r\n\r\n' + body })
  }

  /** 4.2: every framing case, over the raw socket. */
  private async framing (collection: string): Promise<void> {
    const r = this.results
    const spec = this.o.profile === 'spec'
    const bad = spec ? 411 : 400
    const expect = (id: 'content-length.invalid' | 'content-length.duplicate' | 'content-length.with-transfer-encoding', ex: Exchange, what: string): void => {
      this.track(ex, collection)
      r.check(id, statusOf(ex) === bad, `${what}: expected ${bad}, got ${answer(ex)}`, ex)
    }
    if (spec) {
      const missing = await this.raw('POST', collection, ['Content-Type: application/json'], '')
      this.track(missing, collection)
      r.check('content-length.missing', statusOf(missing) === 411, `POST without Content-Length: expected 411, got ${answer(missing)}`, missing)
    } else r.skipped('content-length.missing', 'rfc9110 profile: a request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3)')
    const b1 = json(this.sample())
    const chunked = await this.raw('POST', collection, ['Content-Type: application/json', 'Transfer-Encoding: chunked'], `${Buffer.byteLength(b1).toString(16)}\r\n${b1}\r\n0\r\n\r\n`)
    this.track(chunked, collection)
    if (spec) r.check('content-length.chunked', statusOf(chunked) === 411, `chunked POST: expected 411, got ${answer(chunked)}`, chunked)
    else r.check('content-length.chunked', is2xx(chunked), `chunked POST of a valid body: expected 2xx as with Content-Length (RFC 9112 7.1), got ${answer(chunked)}`, chunked)
    const b2 = json(this.sample())
    expect('content-length.invalid', await this.raw('POST', collection, ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(b2)}x`], b2), 'Content-Length that is not a number')
    const b3 = json(this.sample())
    const n3 = Buffer.byteLength(b3)
    expect('content-length.duplicate', await this.raw('POST', collection, ['Content-Type: application/json', `Content-Length: ${n3}`, `Content-Length: ${n3 + 1}`], b3 + ' '), 'two different Content-Length values')
    const b4 = json(this.sample())
    expect('content-length.with-transfer-encoding', await this.raw('POST', collection, ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(b4)}`, 'Transfer-Encoding: chunked'], `${Buffer.byteLength(b4).toString(16)}\r\n${b4}\r\n0\r\n\r\n`), 'Content-Length with Transfer-Encoding: chunked')
    // 8: a body over the limit is refused from its Content-Length, before it is sent
    const big = await this.raw('POST', collection, ['Content-Type: application/json', 'Content-Length: 1073741824'], '')
    const limit = spec ? 411 : 413
    r.check('content-length.limit', statusOf(big) === limit, `a declared body of 1 GiB, not sent: expected ${limit} before the body, got ${answer(big)}`, big)
  }

  private async contentTypes (collection: string): Promise<void> {
    const r = this.results
    const auth = await this.authorization(this.primaryScheme(), 'POST', collection)
    const body = json(this.sample())
    const none = await this.send({ method: 'POST', target: collection, headers: [['Content-Length', String(Buffer.byteLength(body))], ...auth], body })
    this.track(none, collection)
    r.check('content-type.request-required', statusOf(none) >= 400 && statusOf(none) < 500, `a JSON body without Content-Type: expected 4xx, got ${answer(none)}`, none)
    const auth2 = await this.authorization(this.primaryScheme(), 'POST', collection)
    const body2 = json(this.sample())
    const two = await this.send({ method: 'POST', target: collection, headers: [['Content-Type', JSON_TYPE], ['Content-Type', 'text/plain'], ['Content-Length', String(Buffer.byteLength(body2))], ...auth2], body: body2 })
    this.track(two, collection)
    r.check('rfc.one-content-type', statusOf(two) === 400 || statusOf(two) === 415, `two Content-Type fields: expected 400 or 415, got ${answer(two)}`, two)
  }

  private async validation (collection: string): Promise<void> {
    const r = this.results
    const schema = this.targets.schema
    const v = schema === undefined ? null : violateOne(schema, this.nextTag())
    if (v === null) { r.skipped('validation.422', 'no JSON Schema of the body to break (give --openapi or schema in --config)'); return }
    const ex = await this.send(bodyRequest('POST', collection, json(v.body), await this.authorization(this.primaryScheme(), 'POST', collection)))
    this.track(ex, collection)
    if (!r.check('validation.422', statusOf(ex) === 422, `property ${v.field} of the wrong type: expected 422, got ${answer(ex)}`, ex)) return
    // the same body asked for another media type: 7 says a 422 is application/json
    const other = await this.send(bodyRequest('POST', collection, json(v.body), [...await this.authorization(this.primaryScheme(), 'POST', collection), ['Accept', OTHER_ACCEPT]]))
    this.track(other, collection)
    this.sameVary(ex, other, 'the answer to an invalid body')
    try {
      const errors = (JSON.parse(ex.response?.body.toString('utf8') ?? '') as { errors?: Array<{ field?: unknown }> }).errors
      if (Array.isArray(errors) && !errors.some((e) => e.field === v.field)) r.partial('validation.errors-shape', `no entry of errors[] names the field ${v.field}`, ex)
    } catch { /* the shape rule reports a body that is not JSON */ }
  }

  private async patches (item: string): Promise<void> {
    const r = this.results
    const got = await this.version(item)
    const types = acceptPatchTypes(header(got.exchange.response, 'accept-patch'))
    if (!this.targets.patch && types.length === 0) {
      for (const id of ['patch.unsupported-415', 'patch.json-patch', 'patch.merge-patch'] as const) r.skipped(id, 'the resource does not take PATCH')
      return
    }
    const auth = (): Promise<Array<[string, string]>> => this.authorization(this.primaryScheme(), 'PATCH', item)
    const unsupported = await this.send(bodyRequest('PATCH', item, 'title=audit', await auth(), 'text/plain'))
    r.check('patch.unsupported-415', statusOf(unsupported) === 415, `PATCH in text/plain: expected 415, got ${answer(unsupported)}`, unsupported)
    const prop = this.targets.schema === undefined ? undefined : patchableProperty(this.targets.schema)
    for (const [id, type] of [['patch.json-patch', 'application/json-patch+json'], ['patch.merge-patch', 'application/merge-patch+json']] as const) {
      if (!types.includes(type)) { r.skipped(id, `Accept-Patch does not list ${type}`); continue }
      if (prop === undefined) { r.skipped(id, 'no writable string property to replace'); continue }
      const value = `audit ${this.nextTag()}`
      const doc = type === 'application/json-patch+json' ? [{ op: 'replace', path: `/${prop}`, value }] : { [prop]: value }
      const ex = await this.send(bodyRequest('PATCH', item, json(doc), await auth(), type))
      if (!r.check(id, is2xx(ex), `PATCH ${type} replacing ${prop}: expected 2xx, got ${answer(ex)}`, ex)) continue
      const after = await this.version(item)
      const seen = (JSON.parse(after.body.toString('utf8') || '{}') as Record<string, unknown>)[prop]
      r.check(id, seen === value, `after the PATCH, ${prop} is ${json(seen)}, not ${json(value)}`, after.exchange)
    }
  }

  private async conditionalWrites (item: string): Promise<void> {
    const r = this.results
    const before = await this.version(item)
    const put = async (extra: Array<[string, string]>): Promise<Exchange> => this.send(bodyRequest('PUT', item, json(this.sample()), [...await this.authorization(this.primaryScheme(), 'PUT', item), ...extra]))
    if (!this.targets.itemMethods.includes('PUT') && this.targets.itemMethods.length > 0) {
      for (const id of ['conditional.if-match', 'conditional.if-unmodified-since', 'conditional.if-match-star-missing'] as const) r.skipped(id, 'the resource does not take PUT')
      return
    }
    const stale = await put([['If-Match', '"audit-stale-version"']])
    r.check('conditional.if-match', statusOf(stale) === 412, `PUT with a stale If-Match: expected 412, got ${answer(stale)}`, stale)
    const still = await this.version(item)
    r.check('conditional.if-match', still.body.equals(before.body), 'the PUT refused by If-Match changed the resource', still.exchange)
    // the same refusal asked for another media type: 7 says a 412 is application/json
    const other = await put([['If-Match', '"audit-stale-version"'], ['Accept', OTHER_ACCEPT]])
    this.sameVary(stale, other, 'the answer to a stale If-Match')
    if (before.etag !== undefined) {
      const fresh = await put([['If-Match', before.etag]])
      r.check('conditional.if-match', is2xx(fresh), `PUT with the current ETag in If-Match: expected 2xx, got ${answer(fresh)}`, fresh)
    }
    const lm = before.lastModified === undefined ? null : parseHttpDate(before.lastModified)
    if (lm !== null) {
      const ius = await put([['If-Unmodified-Since', formatHttpDate(lm - 86400_000)]])
      r.check('conditional.if-unmodified-since', statusOf(ius) === 412, `PUT with If-Unmodified-Since a day before Last-Modified: expected 412, got ${answer(ius)}`, ius)
    } else r.skipped('conditional.if-unmodified-since', 'the resource has no Last-Modified')
    // RFC 9110 13.1.1: If-Match: * is false without a current representation; 13.2.1: the
    // precondition is ignored when the answer without it would not be 2xx or 412.
    const missing = (this.targets.item as string).replace('{id}', `audit-missing-${this.tag}`)
    const star = await this.send(bodyRequest('PUT', missing, json(this.sample()), [...await this.authorization(this.primaryScheme(), 'PUT', missing), ['If-Match', '*']]))
    this.track(star, '')
    const plain = await this.send(bodyRequest('PUT', missing, json(this.sample()), await this.authorization(this.primaryScheme(), 'PUT', missing)))
    if (is2xx(plain)) this.created.add(missing)
    const expected = is2xx(plain) || statusOf(plain) === 412 ? 412 : statusOf(plain)
    r.check('conditional.if-match-star-missing', statusOf(star) === expected, `PUT with If-Match: * to a missing resource: expected ${expected} (the same PUT without it: ${answer(plain)}), got ${answer(star)}`, star)
  }

  private async delta (item: string, v0: Version): Promise<void> {
    const r = this.results
    const current = await this.version(item)
    if (v0.etag === undefined || v0.etag === current.etag) { r.skipped('delta.226', 'no earlier version with an ETag'); return }
    for (const aim of ['vcdiff', 'gzip']) {
      const ex = await this.get(item, [['Accept', JSON_TYPE], ['A-IM', aim], ['If-None-Match', v0.etag]])
      const res = ex.response
      if (statusOf(ex) === 200) { r.check('delta.226', res?.body.equals(current.body) === true, `A-IM: ${aim} answered 200 with another instance than GET`, ex); continue }
      if (!r.check('delta.226', statusOf(ex) === 226, `A-IM: ${aim} with an earlier ETag: expected 226 or 200, got ${answer(ex)}`, ex)) continue
      const im = (header(res, 'im') ?? '').toLowerCase().split(',').map((s) => s.trim())
      if (!r.check('delta.226', im.includes(aim), `226 with IM ${header(res, 'im') ?? 'absent'}, not ${aim}`, ex)) continue
      // decoded output is bounded (bounds.ts): past it, a note on the rule, not a verdict
      const decoded = undoManipulations(im, v0.body, res?.body ?? Buffer.alloc(0))
      if (!decoded.ok) { if (decoded.limit) r.note('delta.226', decoded.message); else r.fail('delta.226', decoded.message, ex); continue }
      r.check('delta.226', decoded.body.equals(current.body), 'the 226 delta applied to the earlier instance is not the current instance', ex)
    }
  }

  /** RFC 9110 15.5.6: a method the resource does not support is 405 with Allow. */
  private async methodNotAllowed (item: string): Promise<void> {
    const known = this.targets.itemMethods
    const method = ['POST', 'PUT', 'PATCH', 'DELETE'].find((m) => !known.includes(m))
    if (method === undefined) { this.results.skipped('rfc.405-allow', 'the resource takes every method'); return }
    const body = json(this.sample())
    const ex = await this.send(bodyRequest(method, item, body, await this.authorization(this.primaryScheme(), method, item)))
    this.track(ex, item)
    const allow = header(ex.response, 'allow')
    this.results.check('rfc.405-allow', statusOf(ex) === 405 && allow !== undefined, `${method} ${item}: expected 405 with Allow, got ${answer(ex)}${allow === undefined ? ' without Allow' : ''}`, ex)
  }

  private async redirectPost (): Promise<void> {
    const r = this.results
    for (const path of this.targets.redirects) {
      const body = json(this.sample())
      const ex = await this.send(bodyRequest('POST', path, body, await this.authorization(this.primaryScheme(), 'POST', path)))
      this.track(ex, path)
      const location = header(ex.response, 'location')
      if (!r.check('redirect.method-kept', statusOf(ex) === 307 && location !== undefined, `POST ${path}: expected 307 with Location, got ${answer(ex)}`, ex)) continue
      const to = new URL(location as string, this.o.url)
      const target = to.pathname + to.search
      const again = await this.send(bodyRequest('POST', target, body, await this.authorization(this.primaryScheme(), 'POST', target)))
      this.track(again, target)
      if (!is2xx(again)) r.partial('redirect.method-kept', `the same POST at ${location as string} answers ${answer(again)}`, again)
    }
  }

  private async cleanup (): Promise<void> {
    for (const path of this.created) {
      const ex = await this.send({ method: 'DELETE', target: path, headers: await this.authorization(this.primaryScheme(), 'DELETE', path) })
      if (!is2xx(ex) && statusOf(ex) !== 404) this.leftBehind.push(path)
    }
  }
}

/** Runs the audit; never throws for what the service answers. */
export async function audit (options: AuditOptions): Promise<AuditReport> {
  const a = new Audit(options)
  await a.run()
  return { url: options.url, profile: options.profile, write: options.write, rules: a.results.list(), requests: a.exchanges.length, created: a.created.size, leftBehind: a.leftBehind }
}

export type { JsonSchema }
