/**
 * The articles store. One asynchronous interface (`Store`), two backends:
 *
 * - SQLite through Node's built-in `node:sqlite` (the default: `DATABASE`, a file or
 *   `:memory:`), here: no native build, on every supported Node line;
 * - PostgreSQL through `pg` (`DATABASE_URL`), in store-pg.ts.
 *
 * Every conditional write is a compare-and-set on the article's ETag in one statement
 * (`UPDATE ... WHERE id = ? AND etag = ?`), so a conditional write and the check it
 * depends on cannot be separated by another writer. Each version keeps the time of its
 * write (with milliseconds) and the Last-Modified second preconditions judge it by
 * (`last_modified`, nextLastModified), at most one second after the write.
 *
 * A database that cannot take a write or a read for want of room or I/O (SQLITE_FULL,
 * SQLITE_IOERR, ...) is thrown as the error `unavailable` makes (the service: a 503); the
 * next statement tries again, so the service serves again once there is room.
 * `DATABASE_MAX_BYTES` (or `maxBytes`) caps the file, for a disk shared with others.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { created, createdLastModified, etagOf, legacyLastModified, replacement, REPLACE_ATTEMPTS, type Article, type ArticleInput, type DeleteResult, type LastModifiedOptions, type Store, type Stored, type WriteResult } from './store-core'
import { PostgresStore } from './store-pg'

export * from './store-core'

export interface StoreOptions extends LastModifiedOptions {
  /** SQLite file (or `:memory:`): used when `databaseUrl` is not given. */
  database: string
  /** `postgres://...`: PostgreSQL through `pg`. */
  databaseUrl?: string
  /** Makes the error thrown when the database cannot be reached or has no room; the cause is passed. */
  unavailable?: (cause: Error) => Error
  /** SQLite: most bytes of the database file (PRAGMA max_page_count); default DATABASE_MAX_BYTES, else no cap. */
  maxBytes?: number
}

/** Opens the store the options name: PostgreSQL when `databaseUrl` is set, SQLite otherwise. */
export async function openStore (opts: StoreOptions): Promise<Store> {
  if (opts.databaseUrl !== undefined && opts.databaseUrl !== '') {
    const store = new PostgresStore(opts.databaseUrl, { unavailable: opts.unavailable, lastModifiedNeverAfterDate: opts.lastModifiedNeverAfterDate })
    await store.start()
    return store
  }
  const env = process.env.DATABASE_MAX_BYTES
  const maxBytes = opts.maxBytes ?? (env === undefined || env === '' ? undefined : Number(env))
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1)) throw new Error('DATABASE_MAX_BYTES must be a positive integer')
  return new SqliteStore(opts.database, { unavailable: opts.unavailable, maxBytes, lastModifiedNeverAfterDate: opts.lastModifiedNeverAfterDate })
}

interface Row { id: string, slug: string, title: string, body: string, tags: string, published: number, created_at: string, updated_at: string, last_modified: number | null, etag: string }

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
  return { article, etag: row.etag, updatedAtMs: row.last_modified ?? legacyLastModified(row.updated_at) }
}

/**
 * The synchronous SQLite store (`node:sqlite`). The service uses it through `SqliteStore`;
 * bench/express-service.js uses it directly. Errors of SQLite carry its result code's name
 * as `code` (`SQLITE_FULL`, `SQLITE_CONSTRAINT_UNIQUE`, ...), see `withSqliteCode`.
 */
export class ArticleStore {
  private readonly db: DatabaseSync
  private readonly stmts: Record<'get' | 'list' | 'listTag' | 'insert' | 'update' | 'delete' | 'exists', StatementSync>
  private readonly neverAfterDate: boolean

  constructor (file: string, opts: { maxBytes?: number } & LastModifiedOptions = {}) {
    this.neverAfterDate = opts.lastModifiedNeverAfterDate === true
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
    this.db = new DatabaseSync(file)
    if (opts.maxBytes !== undefined) {
      // Per connection: writes past it fail with SQLITE_FULL, as on a full disk.
      const pageSize = Number(this.db.prepare('PRAGMA page_size').get()?.page_size)
      this.db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(opts.maxBytes / pageSize))}`)
    }
    this.db.exec('PRAGMA journal_mode = WAL')
    // WAL with synchronous=NORMAL: no corruption on a crash, one fsync per checkpoint rather than per write.
    this.db.exec('PRAGMA synchronous = NORMAL')
    this.db.exec('PRAGMA busy_timeout = 5000')
    this.db.exec(`CREATE TABLE IF NOT EXISTS articles (
      id TEXT PRIMARY KEY,
      slug TEXT NOT NULL UNIQUE,
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      tags TEXT NOT NULL,
      published INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      etag TEXT NOT NULL,
      last_modified INTEGER
    )`)
    // A file written before the column existed: add it (another process may just have).
    const columns = this.db.prepare('PRAGMA table_info(articles)').all() as Array<{ name: string }>
    if (!columns.some((c) => c.name === 'last_modified')) {
      try {
        this.db.exec('ALTER TABLE articles ADD COLUMN last_modified INTEGER')
      } catch (err) {
        if (!/duplicate column/.test((err as Error).message)) throw withSqliteCode(err)
      }
    }
    // The list's order: read in index order, LIMIT rows, rather than every row sorted per request.
    this.db.exec('CREATE INDEX IF NOT EXISTS articles_created ON articles (created_at, id)')
    this.stmts = {
      get: this.db.prepare('SELECT * FROM articles WHERE id = ?'),
      list: this.db.prepare('SELECT * FROM articles ORDER BY created_at, id LIMIT ?'),
      listTag: this.db.prepare('SELECT a.* FROM articles a, json_each(a.tags) t WHERE t.value = ? ORDER BY a.created_at, a.id LIMIT ?'),
      insert: this.db.prepare('INSERT INTO articles (id, slug, title, body, tags, published, created_at, updated_at, last_modified, etag) VALUES (@id, @slug, @title, @body, @tags, @published, @created_at, @updated_at, @last_modified, @etag)'),
      // The compare-and-set: the write happens only on the version it was computed from.
      update: this.db.prepare('UPDATE articles SET slug = @slug, title = @title, body = @body, tags = @tags, published = @published, updated_at = @updated_at, last_modified = @last_modified, etag = @etag WHERE id = @id AND etag = @expected'),
      delete: this.db.prepare('DELETE FROM articles WHERE id = ? AND (? IS NULL OR etag = ?)'),
      exists: this.db.prepare('SELECT 1 FROM articles WHERE id = ?')
    }
  }

  list (opts: { tag?: string, limit?: number } = {}): Article[] {
    const limit = opts.limit ?? 100
    const rows = (opts.tag === undefined ? this.stmts.list.all(limit) : this.stmts.listTag.all(opts.tag, limit)) as unknown as Row[]
    return rows.map((r) => toStored(r).article)
  }

  get (id: string): Stored | undefined {
    const row = this.stmts.get.get(id) as unknown as Row | undefined
    return row === undefined ? undefined : toStored(row)
  }

  create (input: ArticleInput, now = new Date()): Stored | 'duplicate-slug' {
    const article = created(input, now)
    const version: Stored = { article, etag: etagOf(article), updatedAtMs: createdLastModified(now) }
    try {
      this.stmts.insert.run(this.row(version))
    } catch (err) {
      if (isUniqueViolation(err)) return 'duplicate-slug'
      throw err
    }
    return version
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
      const version = replacement(current, input, now, this.neverAfterDate)
      try {
        // node:sqlite refuses a named parameter the statement does not use: no created_at here.
        const { created_at: unchanged, ...row } = this.row(version)
        const info = this.stmts.update.run({ ...row, expected: current.etag })
        if (info.changes === 1) return version
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

  private row ({ article: a, etag, updatedAtMs }: Stored): Record<string, string | number> {
    return { id: a.id, slug: a.slug, title: a.title, body: a.body, tags: JSON.stringify(a.tags), published: a.published ? 1 : 0, created_at: a.createdAt, updated_at: a.updatedAt, last_modified: updatedAtMs, etag }
  }
}

/**
 * SQLite result codes that say the database cannot work now rather than that a statement is
 * wrong: no room (SQLITE_FULL: the disk, or max_page_count), I/O errors, a lock held past
 * busy_timeout, a file that cannot be opened or written, no memory.
 */
export function isSqliteUnavailable (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|NOMEM|PROTOCOL)(_|$)/.test(code)
}

/** The SQLite backend behind the asynchronous interface. */
export class SqliteStore implements Store {
  readonly backend = 'sqlite'
  private readonly db: ArticleStore
  private readonly unavailable: ((cause: Error) => Error) | undefined

  constructor (file: string, opts: { unavailable?: (cause: Error) => Error, maxBytes?: number } & LastModifiedOptions = {}) {
    this.db = new ArticleStore(file, opts)
    this.unavailable = opts.unavailable
  }

  async list (opts?: { tag?: string, limit?: number }): Promise<Article[]> { return this.run(() => this.db.list(opts)) }
  async get (id: string): Promise<Stored | undefined> { return this.run(() => this.db.get(id)) }
  getNow (id: string): Stored | undefined { return this.run(() => this.db.get(id)) }
  async create (input: ArticleInput, now?: Date): Promise<Stored | 'duplicate-slug'> { return this.run(() => this.db.create(input, now)) }
  async replace (id: string, input: ArticleInput, expectedEtag: string | null = null, now?: Date): Promise<WriteResult> { return this.run(() => this.db.replace(id, input, expectedEtag, now)) }
  async delete (id: string, expectedEtag: string | null = null): Promise<DeleteResult> { return this.run(() => this.db.delete(id, expectedEtag)) }
  async close (): Promise<void> { this.db.close() }

  /** RFC 9110 15.6.4: a database with no room or failing I/O is the caller's `unavailable` error (a 503), not a 500. */
  private run<R> (statement: () => R): R {
    try {
      return statement()
    } catch (err) {
      withSqliteCode(err)
      if (this.unavailable !== undefined && isSqliteUnavailable(err)) throw this.unavailable(err as Error)
      throw err
    }
  }
}

function isUniqueViolation (err: unknown): boolean {
  return (withSqliteCode(err) as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE'
}

/** SQLite's primary result codes (the low byte of an extended code) that the store names. */
const SQLITE_CODES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  19: 'SQLITE_CONSTRAINT'
}

/**
 * `node:sqlite` throws with `code: 'ERR_SQLITE_ERROR'` and SQLite's extended result code in
 * `errcode`; the store's callers (and its log lines) read SQLite's own names instead:
 * `SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_CONSTRAINT_UNIQUE` (2067), ...
 */
export function withSqliteCode (err: unknown): unknown {
  const e = err as { code?: unknown, errcode?: unknown } | null
  if (e === null || typeof e !== 'object' || e.code !== 'ERR_SQLITE_ERROR' || typeof e.errcode !== 'number') return err
  const name = e.errcode === 2067 ? 'SQLITE_CONSTRAINT_UNIQUE' : SQLITE_CODES[e.errcode & 0xff]
  if (name !== undefined) e.code = name
  return err
}
