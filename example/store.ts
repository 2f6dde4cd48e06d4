/**
 * The articles store. One asynchronous interface (`Store`), two backends:
 *
 * - SQLite through better-sqlite3 (the default: `DATABASE`, a file or `:memory:`), here;
 * - PostgreSQL through `pg` (`DATABASE_URL`), in store-pg.ts.
 *
 * Every conditional write is a compare-and-set on the article's ETag in one statement
 * (`UPDATE ... WHERE id = ? AND etag = ?`), so a conditional write and the check it
 * depends on cannot be separated by another writer. Every write moves the article's
 * modification time to a later second than the version it replaces (`nextModified`).
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { created, etagOf, replaced, REPLACE_ATTEMPTS, type Article, type ArticleInput, type DeleteResult, type Store, type Stored, type WriteResult } from './store-core'
import { PostgresStore } from './store-pg'

export * from './store-core'

export interface StoreOptions {
  /** SQLite file (or `:memory:`): used when `databaseUrl` is not given. */
  database: string
  /** `postgres://...`: PostgreSQL through `pg`. */
  databaseUrl?: string
  /** Makes the error thrown when the database cannot be reached (PostgreSQL); the cause is passed. */
  unavailable?: (cause: Error) => Error
}

/** Opens the store the options name: PostgreSQL when `databaseUrl` is set, SQLite otherwise. */
export async function openStore (opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl !== undefined && opts.databaseUrl !== '') {
    const store = new PostgresStore(opts.databaseUrl, { unavailable: opts.unavailable })
    await store.start()
    return store
  }
  return new SqliteStore(opts.database)
}

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

/**
 * The synchronous SQLite store (better-sqlite3). The service uses it through `SqliteStore`;
 * bench/express-service.js uses it directly.
 */
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
    // The list's order: read in index order, LIMIT rows, rather than every row sorted per request.
    this.db.exec('CREATE INDEX IF NOT EXISTS articles_created ON articles (created_at, id)')
    this.stmts = {
      get: this.db.prepare('SELECT * FROM articles WHERE id = ?'),
      list: this.db.prepare('SELECT * FROM articles ORDER BY created_at, id LIMIT ?'),
      listTag: this.db.prepare('SELECT a.* FROM articles a, json_each(a.tags) t WHERE t.value = ? ORDER BY a.created_at, a.id LIMIT ?'),
      insert: this.db.prepare('INSERT INTO articles (id, slug, title, body, tags, published, created_at, updated_at, etag) VALUES (@id, @slug, @title, @body, @tags, @published, @created_at, @updated_at, @etag)'),
      // The compare-and-set: the write happens only on the version it was computed from.
      update: this.db.prepare('UPDATE articles SET slug = @slug, title = @title, body = @body, tags = @tags, published = @published, updated_at = @updated_at, etag = @etag WHERE id = @id AND etag = @expected'),
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
    const article = created(input, now)
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
   * still that one (compare-and-set); otherwise 'precondition-failed'. Without it, the
   * write is still a compare-and-set on the version it read (several processes may share
   * the file), retried when another writer got in between.
   */
  replace (id: string, input: ArticleInput, expectedEtag: string | null = null, now = new Date()): WriteResult {
    for (let attempt = 0; attempt < REPLACE_ATTEMPTS; attempt++) {
      const current = this.get(id)
      if (current === undefined) return 'not-found'
      if (expectedEtag !== null && current.etag !== expectedEtag) return 'precondition-failed'
      const article = replaced(current.article, input, now)
      const etag = etagOf(article)
      try {
        const info = this.stmts.update.run({ ...this.row(article, etag), expected: current.etag })
        if (info.changes === 1) return { article, etag, updatedAtMs: Date.parse(article.updatedAt) }
      } catch (err) {
        if (isUniqueViolation(err)) return 'duplicate-slug'
        throw err
      }
      if (expectedEtag !== null) return this.stmts.exists.get(id) === undefined ? 'not-found' : 'precondition-failed'
    }
    throw new Error(`replace of ${id}: ${REPLACE_ATTEMPTS} attempts lost to concurrent writers`)
  }

  delete (id: string, expectedEtag: string | null = null): DeleteResult {
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

/** The SQLite backend behind the asynchronous interface. */
export class SqliteStore implements Store {
  readonly backend = 'sqlite'
  private readonly db: ArticleStore

  constructor (file: string) {
    this.db = new ArticleStore(file)
  }

  async list (opts?: { tag?: string, limit?: number }): Promise<Article[]> { return this.db.list(opts) }
  async get (id: string): Promise<Stored | undefined> { return this.db.get(id) }
  async create (input: ArticleInput, now?: Date): Promise<Stored | 'duplicate-slug'> { return this.db.create(input, now) }
  async replace (id: string, input: ArticleInput, expectedEtag: string | null = null, now?: Date): Promise<WriteResult> { return this.db.replace(id, input, expectedEtag, now) }
  async delete (id: string, expectedEtag: string | null = null): Promise<DeleteResult> { return this.db.delete(id, expectedEtag) }
  async close (): Promise<void> { this.db.close() }
}

function isUniqueViolation (err: unknown): boolean {
  return (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
}
