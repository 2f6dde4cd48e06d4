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

export interface Stored { article: Article, etag: string, updatedAtMs: number }

export type WriteResult = Stored | 'not-found' | 'precondition-failed' | 'duplicate-slug'
export type DeleteResult = true | 'not-found' | 'precondition-failed'

/** What the service needs from a store; both backends implement it. */
export interface Store {
  readonly backend: 'sqlite' | 'postgres'
  list: (opts?: { tag?: string, limit?: number }) => Promise<Article[]>
  get: (id: string) => Promise<Stored | undefined>
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
 * The modification time of a new version. Last-Modified has a resolution of one second
 * (RFC 9110 8.8.2.2), and If-Unmodified-Since holds when the representation was modified
 * at or before the given date (RFC 9110 13.1.4): two versions in the same second would
 * share a Last-Modified, and a writer holding the older one would pass the check. So
 * every version gets a later second than the one before it: max(now, the previous
 * version's second + 1 s). Under more than one write a second to one article the time
 * runs ahead of the clock until the writes slow down.
 */
export function nextModified (previous: string | number, now: Date): Date {
  const prev = typeof previous === 'number' ? previous : Date.parse(previous)
  const next = Math.floor(prev / 1000) * 1000 + 1000
  return now.getTime() >= next ? now : new Date(next)
}

/** The article a replacement writes: everything but id and createdAt from the input. */
export function replaced (current: Article, input: ArticleInput, now: Date): Article {
  return {
    ...current,
    slug: input.slug,
    title: input.title,
    body: input.body,
    tags: input.tags ?? [],
    published: input.published ?? false,
    updatedAt: nextModified(current.updatedAt, now).toISOString()
  }
}

export function created (input: ArticleInput, now: Date): Article {
  const at = now.toISOString()
  return { id: randomUUID(), slug: input.slug, title: input.title, body: input.body, tags: input.tags ?? [], published: input.published ?? false, createdAt: at, updatedAt: at }
}

/** How often an unconditional replace retries its compare-and-set when another writer got in first. */
export const REPLACE_ATTEMPTS = 20
