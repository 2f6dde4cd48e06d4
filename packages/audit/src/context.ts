/**
 * What the rules' probes share in one run: the transport, the credentials (and the Digest
 * session), the resources the run created (deleted at the end, whatever happened), and the
 * helpers that build the requests a probe sends.
 */
import { randomBytes } from 'node:crypto'
import { type Challenge, digestResponse, parseEntityTag, parseHttpDate, parseMediaType, readChallenges } from '@http-conventions/grammar'
import type { Targets } from './discovery'
import type { AuditOptions } from './run'
import { validInstance } from './schema-body'
import { header, type Exchange, type WireRequest } from './transport'

export type Scheme = 'basic' | 'bearer' | 'digest'
export type Headers = Array<[string, string]>

export const JSON_TYPE = 'application/json'
/** An Accept that prefers anything but plain JSON: XML, then problem details (RFC 9457), then HTML. */
export const OTHER_ACCEPT = 'application/xml, application/problem+json;q=0.9, text/html;q=0.8'

/** The service kept answering 429 or 503 (after waiting as its Retry-After asked): the rule is not judged. */
export class Throttled extends Error {}

export interface Version { etag?: string, rawEtag?: string, lastModified?: string, body: Buffer, exchange: Exchange }

export function json (value: unknown): string { return JSON.stringify(value) }
export function statusOf (ex: Exchange): number { return ex.response?.status ?? 0 }
export function is2xx (ex: Exchange): boolean { const s = statusOf(ex); return s >= 200 && s < 300 }
export function answer (ex: Exchange): string { return ex.response === null ? `no answer (${ex.error ?? 'closed'})` : ex.response.statusLine }
export function throttled (ex: Exchange): boolean { return statusOf(ex) === 429 || statusOf(ex) === 503 }

export function bodyRequest (method: string, target: string, body: string, extra: Headers = [], type: string | null = JSON_TYPE): WireRequest {
  const typed: Headers = type === null ? [] : [['Content-Type', type]]
  return { method, target, headers: [...typed, ['Content-Length', String(Buffer.byteLength(body))], ...extra], body }
}

/** The listed media types of an Accept-Patch value, lower case. */
export function acceptPatchTypes (value: string | undefined): string[] {
  if (value === undefined) return []
  return value.split(',').map((s) => parseMediaType(s.trim())?.essence).filter((s): s is string => s !== undefined)
}

/** The parsed JSON of an answer's body, or undefined. */
export function bodyJson (ex: Exchange): unknown {
  try { return JSON.parse(ex.response?.body.toString('utf8') ?? '') } catch { return undefined }
}

function hasPrecondition (headers: Headers): boolean {
  return headers.some(([n]) => /^if-(match|unmodified-since)$/i.test(n))
}

export class Context {
  /** resources the run created, deleted at the end */
  readonly created = new Set<string>()
  readonly deleted: string[] = []
  readonly leftBehind: string[] = []
  /** the writes of the resource need If-Match (the service answered 428 to one without) */
  preconditionRequired = false
  /** why the resource could not be created (the answer to the POST) */
  createProblem: string | undefined
  /** the schemes the 401 to a write offers */
  offered: Scheme[] = []
  readonly tag = randomBytes(4).toString('hex')
  /** the Host the URL names, for the requests written by hand */
  readonly host: string
  private n = 0
  private digestSession: Challenge | undefined
  private digestNc = 0
  private challengeSent: Promise<Exchange | undefined> | undefined
  private resourceFound: Promise<string | undefined> | undefined
  private dated: Promise<string | undefined> | undefined

  constructor (readonly o: AuditOptions, private readonly sender: (req: WireRequest) => Promise<Exchange>) {
    this.host = new URL(o.url).host
  }

  get targets (): Targets { return this.o.targets }
  get spec (): boolean { return this.o.profile === 'spec' }

  /** One exchange; a 429 or 503 left after the transport's retries is thrown, never judged. */
  async send (req: WireRequest): Promise<Exchange> {
    const ex = await this.sender(req)
    if (throttled(ex)) throw new Throttled(`the service answered ${answer(ex)} to ${req.method} ${req.target}, also after waiting as its Retry-After asked`)
    return ex
  }

  get (target: string, headers: Headers = []): Promise<Exchange> { return this.send({ method: 'GET', target, headers }) }
  nextTag (): string { return `${this.tag}${++this.n}` }

  primaryScheme (): Scheme | undefined {
    const c = this.o.credentials
    return c.basic !== undefined ? 'basic' : c.bearer !== undefined ? 'bearer' : c.digest !== undefined ? 'digest' : undefined
  }

  /** The Authorization line of the first credentials given (none when none were given). */
  auth (method: string, target: string): Promise<Headers> { return this.authorization(this.primaryScheme(), method, target) }

  /** The Authorization line of `scheme` with the given credentials, for `method target`. */
  async authorization (scheme: Scheme | undefined, method: string, target: string): Promise<Headers> {
    const c = this.o.credentials
    if (scheme === 'basic' && c.basic !== undefined) return [['Authorization', 'Basic ' + Buffer.from(`${c.basic.user}:${c.basic.password}`).toString('base64')]]
    if (scheme === 'bearer' && c.bearer !== undefined) return [['Authorization', `Bearer ${c.bearer}`]]
    if (scheme === 'digest' && c.digest !== undefined) {
      const s = await this.digestChallenge()
      if (s === undefined) return []
      return [['Authorization', this.digestLine(s, c.digest.user, c.digest.password, method, target)]]
    }
    return []
  }

  /** The Digest challenge the 401 offers (MD5 or SHA-256), once. */
  async digestChallenge (): Promise<Challenge | undefined> {
    await this.challenge()
    return this.digestSession
  }

  /** A Digest Authorization line answering `s`; with the next nonce-count, or `count` (a count already used). */
  digestLine (s: Challenge, user: string, password: string, method: string, uri: string, count?: number): string {
    const algorithm = (s.params.algorithm ?? 'MD5') as 'MD5'
    const nc = (count ?? ++this.digestNc).toString(16).padStart(8, '0')
    const cnonce = randomBytes(8).toString('hex')
    const realm = s.params.realm ?? ''
    const nonce = s.params.nonce ?? ''
    const response = digestResponse({ algorithm, username: user, realm, password, method, uri, nonce, nc, cnonce, qop: 'auth' })
    const opaque = s.params.opaque === undefined ? '' : `, opaque="${s.params.opaque}"`
    return `Digest username="${user}", realm="${realm}", uri="${uri}", algorithm=${algorithm}, nonce="${nonce}", nc=${nc}, cnonce="${cnonce}", qop=auth, response="${response}"${opaque}`
  }

  /** An unauthenticated POST of a valid body, once: its challenges tell the schemes offered. */
  challenge (): Promise<Exchange | undefined> {
    this.challengeSent ??= this.sendChallenge()
    return this.challengeSent
  }

  private async sendChallenge (): Promise<Exchange | undefined> {
    const collection = this.targets.collection
    if (collection === undefined || !this.o.write) return undefined
    const ex = await this.send(bodyRequest('POST', collection, json(this.sample())))
    await this.track(ex)
    const challenges = readChallenges(ex.response?.headerLines.filter(([n]) => n === 'www-authenticate').map(([, v]) => v)).challenges
    this.offered = [...new Set(challenges.map((c) => c.scheme).filter((s): s is Scheme => s === 'basic' || s === 'bearer' || s === 'digest'))]
    this.digestSession = challenges.find((c) => c.scheme === 'digest' && /^(MD5|SHA-256)$/i.test(c.params.algorithm ?? 'MD5'))
    this.digestNc = 0
    return ex
  }

  /** A valid body; strings of lower-case words made unique, so that two creates do not collide. */
  sample (): Record<string, unknown> {
    const tag = this.nextTag()
    if (this.targets.schema !== undefined) return validInstance(this.targets.schema, tag) as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(this.targets.sample ?? {})) out[k] = typeof v === 'string' && /^[a-z0-9-]+$/.test(v) ? `${v}-${tag}` : v
    return out
  }

  /** The path of an item, `{id}` replaced. */
  itemPath (id: string): string | undefined { return this.targets.item?.replace('{id}', encodeURIComponent(id)) }
  /** An item path that names nothing. */
  missingItem (): string | undefined { return this.itemPath(`audit-missing-${this.tag}`) }

  /**
   * Remembers a resource a write created, to delete it at the end: its Location, else the id
   * in the answer's body, else the entry of the collection's listing that holds `sent`'s values.
   */
  async track (ex: Exchange, sent?: Record<string, unknown>): Promise<string | undefined> {
    if (!is2xx(ex) || ex.request.method !== 'POST') return undefined
    const location = header(ex.response, 'location')
    const id = (bodyJson(ex) as { id?: unknown } | undefined)?.id
    let path = location !== undefined ? new URL(location, this.o.url).pathname : typeof id === 'string' || typeof id === 'number' ? this.itemPath(String(id)) : undefined
    if (path === undefined && sent !== undefined) path = await this.findListed(sent)
    if (path !== undefined && path !== ex.request.target) this.created.add(path)
    return path
  }

  /** The item of the collection's listing whose properties include every string of `sent`. */
  private async findListed (sent: Record<string, unknown>): Promise<string | undefined> {
    const collection = this.targets.collection as string
    const list = bodyJson(await this.get(collection, [['Accept', JSON_TYPE]]))
    if (!Array.isArray(list)) return undefined
    const strings = Object.entries(sent).filter(([, v]) => typeof v === 'string')
    const found = (list as Array<Record<string, unknown> | null>).find((e) => e !== null && typeof e === 'object' && strings.every(([k, v]) => e[k] === v)) as { id?: unknown } | undefined
    return found?.id === undefined ? undefined : this.itemPath(String(found.id))
  }

  /** Creates a resource with the first credentials; its path, or undefined. */
  async create (): Promise<{ ex: Exchange, path?: string }> {
    const collection = this.targets.collection as string
    const sent = this.sample()
    const ex = await this.send(bodyRequest('POST', collection, json(sent), await this.auth('POST', collection)))
    const path = await this.track(ex, sent)
    return path === undefined ? { ex } : { ex, path }
  }

  /** The resource the probes read and write: created by a write run, else the first one listed. */
  resource (): Promise<string | undefined> {
    this.resourceFound ??= this.o.write ? this.create().then((c) => { if (c.path === undefined) this.createProblem = answer(c.ex); return c.path }) : this.firstListed()
    return this.resourceFound
  }

  /**
   * A resource for the rules on dates: one of its own in a write run, created last, since a
   * service may date each change of a resource a second after the one before (so that a date
   * tells the versions apart), ahead of its clock while the run writes.
   */
  datedResource (): Promise<string | undefined> {
    this.dated ??= this.o.write ? this.create().then(async (c) => c.path ?? await this.resource()) : this.resource()
    return this.dated
  }

  private async firstListed (): Promise<string | undefined> {
    const { collection } = this.targets
    if (collection === undefined) return undefined
    const list = bodyJson(await this.get(collection))
    const first = Array.isArray(list) ? list[0] as { id?: unknown } | undefined : undefined
    return first?.id === undefined ? undefined : this.itemPath(String(first.id))
  }

  /** The current representation of `path`, its validators kept (an ETag that does not parse is never sent back). */
  async version (path: string, extra: Headers = []): Promise<Version> {
    const ex = await this.get(path, [['Accept', JSON_TYPE], ...extra])
    const etag = header(ex.response, 'etag')
    return { etag: etag !== undefined && parseEntityTag(etag) !== null ? etag : undefined, rawEtag: etag, lastModified: header(ex.response, 'last-modified'), body: ex.response?.body ?? Buffer.alloc(0), exchange: ex }
  }

  /**
   * The representation once the service's clock is a second past its Last-Modified (waiting a
   * second once when it is not): a date of the same second as the last change does not tell
   * whether the change came before or after it (RFC 9110 8.8.2.2), and a service may say so.
   */
  async settled (path: string): Promise<Version> {
    const v = await this.version(path)
    const lm = parseHttpDate(v.lastModified ?? '')
    const date = parseHttpDate(header(v.exchange.response, 'date') ?? '') ?? Date.now()
    if (lm === null || date - lm >= 1000) return v
    await this.wait(1000)
    return this.version(path)
  }

  private wait (ms: number): Promise<void> {
    return this.o.wait?.(ms) ?? new Promise((resolve) => setTimeout(resolve, ms))
  }

  /**
   * A write with the first credentials. A service that requires a precondition (428, RFC 6585 3)
   * gets the current ETag in If-Match, from a GET, unless the probe sends its own precondition.
   */
  async write (method: string, target: string, body: string | undefined, options: { type?: string | null, extra?: Headers, auth?: boolean } = {}): Promise<Exchange> {
    const extra = options.extra ?? []
    const build = async (more: Headers): Promise<WireRequest> => {
      const auth = options.auth === false ? [] : await this.auth(method, target)
      const headers = [...auth, ...extra, ...more]
      return body === undefined ? { method, target, headers } : bodyRequest(method, target, body, headers, options.type === undefined ? JSON_TYPE : options.type)
    }
    const conditional = hasPrecondition(extra)
    if (this.preconditionRequired && !conditional) return this.send(await build(await this.ifMatch(target)))
    const ex = await this.send(await build([]))
    if (statusOf(ex) !== 428 || conditional) return ex
    this.preconditionRequired = true
    const again = await this.ifMatch(target)
    return again.length === 0 ? ex : this.send(await build(again))
  }

  private async ifMatch (target: string): Promise<Headers> {
    const v = await this.version(target)
    return v.etag === undefined ? [] : [['If-Match', v.etag]]
  }

  /** The resource takes PUT (its methods are unknown, or list PUT). */
  takesPut (): boolean { return this.targets.itemMethods.length === 0 || this.targets.itemMethods.includes('PUT') }

  /** The resource takes PATCH (its methods say so, or its GET lists Accept-Patch). */
  async takesPatch (item: string): Promise<boolean> {
    if (this.targets.patch) return true
    return acceptPatchTypes(header((await this.version(item)).exchange.response, 'accept-patch')).length > 0
  }

  /** A request written by hand (framing cases), with the first credentials and the URL's Host. */
  async raw (method: string, target: string, head: string[], body: string, endAfterWrite = false): Promise<Exchange> {
    const auth = await this.auth(method, target)
    const precondition = this.preconditionRequired && method !== 'POST' ? await this.ifMatch(target) : []
    const lines = [`${method} ${target} HTTP/1.1`, `Host: ${this.host}`, ...[...auth, ...precondition].map(([n, v]) => `${n}: ${v}`), ...head, 'Connection: close']
    return this.send({ method, target, headers: [], raw: lines.join('\r\n') + '\r\n\r\n' + body, ...(endAfterWrite ? { endAfterWrite } : {}) })
  }

  /** Deletes what the run created; what answers neither 2xx nor 404 is left behind, and listed. */
  async cleanup (): Promise<void> {
    for (const path of this.created) {
      let ex: Exchange | undefined
      try { ex = await this.write('DELETE', path, undefined) } catch { /* throttled: left behind */ }
      if (ex !== undefined && (is2xx(ex) || statusOf(ex) === 404)) this.deleted.push(path)
      else this.leftBehind.push(path)
    }
  }
}
