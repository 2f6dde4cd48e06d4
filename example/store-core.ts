/**
 * What both articles stores share (store.ts: SQLite, store-pg.ts: PostgreSQL): the
 * article, the store interface, the ETag and the modification time of a new version.
 */
import { createHash, randomUUID } from 'node:crypto'

export interface ArticleInput {
  slug: string
  title: string
  body: string
  tags?: string[]
  published?: boolean
}

export interface Article extends Required<ArticleInput> {
  id: string
  createdAt: string
  updatedAt: string
}

/**
 * A stored version. `updatedAtMs` is its Last-Modified as preconditions judge it (a whole
 * second, epoch ms: see nextLastModified), never more than one second after the write;
 * `article.updatedAt` is the time of the write itself, with its milliseconds.
 */
export interface Stored { article: Article, etag: string, updatedAtMs: number }

export type WriteResult = Stored | 'not-found' | 'precondition-failed' | 'duplicate-slug'
export type DeleteResult = true | 'not-found' | 'precondition-failed'

/** What the service needs from a store; both backends implement it. */
export interface Store {
  readonly backend: 'sqlite' | 'postgres'
  list: (opts?: { tag?: string, limit?: number }) => Promise<Article[]>
  get: (id: string) => Promise<Stored | undefined>
  /** The same read, answered at once, on a backend that reads synchronously (SQLite); absent otherwise. */
  getNow?: (id: string) => Stored | undefined
  create: (input: ArticleInput, now?: Date) => Promise<Stored | 'duplicate-slug'>
  /**
   * Full replacement. With `expectedEtag`, the write happens only if the stored ETag is
   * still that one (compare-and-set); otherwise 'precondition-failed'.
   */
  replace: (id: string, input: ArticleInput, expectedEtag?: string | null, now?: Date) => Promise<WriteResult>
  delete: (id: string, expectedEtag?: string | null) => Promise<DeleteResult>
  close: () => Promise<void>
}

/** A strong ETag (RFC 9110 8.8.3): a hash of the representation's content. */
export function etagOf (article: Article): string {
  return '"' + createHash('sha256').update(JSON.stringify(article)).digest('base64url').slice(0, 22) + '"'
}

/**
 * The Last-Modified second (epoch ms) preconditions judge a new version by, written at
 * `now` over a version judged by `previous`. `neverAfterDate` says that the service sends
 * every Last-Modified as lastModifiedAt gives it; without it, each version is judged a
 * second later than the one before (a client may hold any date it was sent), which runs
 * ahead of the clock under more than one write a second. With it:
 *
 * Dates have a resolution of one second (RFC 9110 8.8.2.2) and If-Unmodified-Since holds
 * when the representation was modified at or before the date sent (RFC 9110 13.1.4). A
 * Last-Modified is never sent later than the response's Date (RFC 9110 8.8.2.1: a date
 * still in the future is sent as the Date), so a client read the previous version with a
 * date no later than the second of this write, and no later than `previous`:
 *
 * - `previous` before this second: this second, already later than any date the previous
 *   version was sent with;
 * - otherwise (a second write within one second): the next second, later than the date
 *   any reader of the previous version got, and sent as the Date until that second comes.
 *   A client holding the date of this very version within its second gets 412 too (it
 *   cannot be told from the previous one): If-Match tells them apart.
 *
 * So the date never runs more than one second ahead of the clock, however many writes a
 * second. Should the clock go back, every version still gets a later date than the last.
 */
export function nextLastModified (previous: number, now: number, neverAfterDate = false): number {
  const second = Math.floor(now / 1000) * 1000
  if (previous < second) return second
  if (neverAfterDate && previous <= second + 1000) return second + 1000
  return previous + 1000
}

/** The Last-Modified of a version stored before the stores kept it: the second after its write (never earlier than the truth). */
export function legacyLastModified (updatedAt: string | Date): number {
  const ms = updatedAt instanceof Date ? updatedAt.getTime() : Date.parse(updatedAt)
  return Math.floor(ms / 1000) * 1000 + 1000
}

/**
 * The Last-Modified to send with a version at `now` (RFC 9110 8.8.2.1): its date, or the
 * message's own Date while that date is still ahead of the clock. Send the same `now` as
 * the Date header, so that the two agree.
 */
export function lastModifiedAt (stored: Pick<Stored, 'updatedAtMs'>, now: number): number {
  return Math.min(stored.updatedAtMs, Math.floor(now / 1000) * 1000)
}

/** The article a replacement writes: everything but id and createdAt from the input; updatedAt is the time of the write. */
export function replaced (current: Article, input: ArticleInput, now: Date): Article {
  return {
    ...current,
    slug: input.slug,
    title: input.title,
    body: input.body,
    tags: input.tags ?? [],
    published: input.published ?? false,
    updatedAt: now.toISOString()
  }
}

/** The version a replacement writes: the article, its ETag and its Last-Modified second (nextLastModified). */
export function replacement (current: Stored, input: ArticleInput, now: Date, neverAfterDate = false): Stored {
  const article = replaced(current.article, input, now)
  return { article, etag: etagOf(article), updatedAtMs: nextLastModified(current.updatedAtMs, now.getTime(), neverAfterDate) }
}

/** What the stores are told of the service that sends their versions. */
export interface LastModifiedOptions {
  /**
   * The service sends every Last-Modified as lastModifiedAt gives it, never later than the
   * response's Date (RFC 9110 8.8.2.1): a second write within one second may then be judged
   * the next second and no later (nextLastModified). Default false: each version a second
   * later than the last.
   */
  lastModifiedNeverAfterDate?: boolean
}

/** The Last-Modified second of a new article: no date of it was ever sent before. */
export function createdLastModified (now: Date): number {
  return Math.floor(now.getTime() / 1000) * 1000
}

export function created (input: ArticleInput, now: Date): Article {
  const at = now.toISOString()
  return { id: randomUUID(), slug: input.slug, title: input.title, body: input.body, tags: input.tags ?? [], published: input.published ?? false, createdAt: at, updatedAt: at }
}

/** How often an unconditional replace retries its compare-and-set when another writer got in first. */
export const REPLACE_ATTEMPTS = 20
