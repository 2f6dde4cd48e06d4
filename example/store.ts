/**
 * The articles store: SQLite through better-sqlite3. Every write is a compare-and-set
 * on the article's ETag when the caller passes one, so a conditional write and the
 * check it depends on are one atomic statement (`UPDATE ... WHERE id = ? AND etag = ?`).
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'

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

interface Row { id: string, slug: string, title: string, body: string, tags: string, published: number, created_at: string, updated_at: string, etag: string }

function toStored (row: Row): Stored {
  const article: Article = {
    id: row.id,
    slug: row.slug,
    title: row.title,
    body: row.body,
    tags: JSON.parse(row.tags) as string[],
    published: row.published === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
  return { article, etag: row.etag, updatedAtMs: Date.parse(row.updated_at) }
}

/** A strong ETag (RFC 9110 8.8.3): a hash of the representation's content. */
export function etagOf (article: Article): string {
  return '"' + createHash('sha256').update(JSON.stringify(article)).digest('base64url').slice(0, 22) + '"'
}

export class ArticleStore {
  private readonly db: Database.Database
  private readonly stmts: Record<string, Database.Statement>

  constructor (file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
    this.db = new Database(file)
    this.db.pragma('journal_mode = WAL')
    // WAL with synchronous=NORMAL: no corruption on a crash, one fsync per checkpoint rather than per write.
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('busy_timeout = 5000')
    this.db.exec(`CREATE TABLE IF NOT EXISTS articles (
      id TEXT PRIMARY KEY,
      slug TEXT NOT NULL UNIQUE,
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      tags TEXT NOT NULL,
      published INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      etag TEXT NOT NULL
    )`)
    this.stmts = {
      get: this.db.prepare('SELECT * FROM articles WHERE id = ?'),
      list: this.db.prepare('SELECT * FROM articles ORDER BY created_at, id LIMIT ?'),
      listTag: this.db.prepare('SELECT a.* FROM articles a, json_each(a.tags) t WHERE t.value = ? ORDER BY a.created_at, a.id LIMIT ?'),
      insert: this.db.prepare('INSERT INTO articles (id, slug, title, body, tags, published, created_at, updated_at, etag) VALUES (@id, @slug, @title, @body, @tags, @published, @created_at, @updated_at, @etag)'),
      update: this.db.prepare('UPDATE articles SET slug = @slug, title = @title, body = @body, tags = @tags, published = @published, updated_at = @updated_at, etag = @etag WHERE id = @id AND (@expected IS NULL OR etag = @expected)'),
      delete: this.db.prepare('DELETE FROM articles WHERE id = ? AND (? IS NULL OR etag = ?)'),
      exists: this.db.prepare('SELECT 1 FROM articles WHERE id = ?')
    }
  }

  list (opts: { tag?: string, limit?: number } = {}): Article[] {
    const limit = opts.limit ?? 100
    const rows = (opts.tag === undefined ? this.stmts.list.all(limit) : this.stmts.listTag.all(opts.tag, limit)) as Row[]
    return rows.map((r) => toStored(r).article)
  }

  get (id: string): Stored | undefined {
    const row = this.stmts.get.get(id) as Row | undefined
    return row === undefined ? undefined : toStored(row)
  }

  create (input: ArticleInput, now = new Date()): Stored | 'duplicate-slug' {
    const at = now.toISOString()
    const article: Article = { id: randomUUID(), slug: input.slug, title: input.title, body: input.body, tags: input.tags ?? [], published: input.published ?? false, createdAt: at, updatedAt: at }
    const etag = etagOf(article)
    try {
      this.stmts.insert.run(this.row(article, etag))
    } catch (err) {
      if (isUniqueViolation(err)) return 'duplicate-slug'
      throw err
    }
    return { article, etag, updatedAtMs: now.getTime() }
  }

  /**
   * Full replacement. With `expectedEtag`, the write happens only if the stored ETag is
   * still that one (compare-and-set); otherwise 'precondition-failed'.
   */
  replace (id: string, input: ArticleInput, expectedEtag: string | null = null, now = new Date()): WriteResult {
    const current = this.get(id)
    if (current === undefined) return 'not-found'
    const article: Article = { ...current.article, slug: input.slug, title: input.title, body: input.body, tags: input.tags ?? [], published: input.published ?? false, updatedAt: now.toISOString() }
    const etag = etagOf(article)
    try {
      const info = this.stmts.update.run({ ...this.row(article, etag), expected: expectedEtag })
      if (info.changes === 0) return this.stmts.exists.get(id) === undefined ? 'not-found' : 'precondition-failed'
    } catch (err) {
      if (isUniqueViolation(err)) return 'duplicate-slug'
      throw err
    }
    return { article, etag, updatedAtMs: now.getTime() }
  }

  delete (id: string, expectedEtag: string | null = null): true | 'not-found' | 'precondition-failed' {
    const info = this.stmts.delete.run(id, expectedEtag, expectedEtag)
    if (info.changes === 1) return true
    return this.stmts.exists.get(id) === undefined ? 'not-found' : 'precondition-failed'
  }

  close (): void {
    this.db.close()
  }

  private row (a: Article, etag: string): Record<string, unknown> {
    return { id: a.id, slug: a.slug, title: a.title, body: a.body, tags: JSON.stringify(a.tags), published: a.published ? 1 : 0, created_at: a.createdAt, updated_at: a.updatedAt, etag }
  }
}

function isUniqueViolation (err: unknown): boolean {
  return (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
}
