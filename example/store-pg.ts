/**
 * The articles store on PostgreSQL through `pg` (DATABASE_URL). Same behaviour as the
 * SQLite store (store.ts): conditional writes are a compare-and-set in one statement
 * (`UPDATE ... WHERE id = $1 AND etag = $2`), a unique constraint on the slug, timestamps
 * with sub-second precision (timestamptz), and the Last-Modified second each version is
 * judged by (`last_modified`, nextLastModified), at most one second after its write.
 * Unconditional replacements lock the row (SELECT ... FOR UPDATE) instead of retrying.
 *
 * An unreachable database never hangs a request: the pool gives up connecting after
 * CONNECT_TIMEOUT_MS, the server cancels a statement after STATEMENT_TIMEOUT_MS and the
 * client stops waiting after QUERY_TIMEOUT_MS. Such failures are thrown as the error
 * `unavailable` makes (the service: a 503); the pool reconnects on its own once the
 * database is back.
 */
import pg from 'pg'
import { created, createdLastModified, etagOf, legacyLastModified, replacement, REPLACE_ATTEMPTS, type Article, type ArticleInput, type DeleteResult, type LastModifiedOptions, type Store, type Stored, type WriteResult } from './store-core'

export const CONNECT_TIMEOUT_MS = 2000
export const STATEMENT_TIMEOUT_MS = 5000
export const QUERY_TIMEOUT_MS = 6000

interface Row { id: string, slug: string, title: string, body: string, tags: string[], published: boolean, created_at: Date, updated_at: Date, last_modified: string | null, etag: string }

const SCHEMA = `CREATE TABLE IF NOT EXISTS articles (
  id text PRIMARY KEY,
  slug text NOT NULL,
  title text NOT NULL,
  body text NOT NULL,
  tags text[] NOT NULL,
  published boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  etag text NOT NULL,
  last_modified bigint,
  CONSTRAINT articles_slug_key UNIQUE (slug)
)`
// Instances of a fleet start together: one creates the table at a time.
const SCHEMA_LOCK = 7_417_001

function toStored (row: Row): Stored {
  const article: Article = {
    id: row.id,
    slug: row.slug,
    title: row.title,
    body: row.body,
    tags: row.tags,
    published: row.published,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString()
  }
  // bigint arrives as a string; epoch ms fit a double exactly.
  return { article, etag: row.etag, updatedAtMs: row.last_modified === null ? legacyLastModified(row.updated_at) : Number(row.last_modified) }
}

/** Thrown (unless the caller makes its own) when the database cannot be reached. */
export class DatabaseUnavailableError extends Error {
  constructor (cause: Error) {
    super(`the articles database is unavailable: ${cause.message}`, { cause })
    this.name = 'DatabaseUnavailableError'
  }
}

/**
 * Errors that say the database is out of reach rather than that a statement is wrong:
 * the client's own (refused, reset or timed-out connections carry no SQLSTATE) and the
 * SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57 (operator
 * intervention: shutdown, statement timeout) and 58 (system error).
 */
export function isUnavailable (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^(08|53|57|58)/.test(code)
  return true
}

export interface PostgresStoreOptions extends LastModifiedOptions {
  unavailable?: (cause: Error) => Error
  /** Connections per instance (default 10). */
  max?: number
}

export class PostgresStore implements Store {
  readonly backend = 'postgres'
  private readonly pool: pg.Pool
  private readonly unavailable: (cause: Error) => Error
  private readonly neverAfterDate: boolean
  private schema: Promise<void> | undefined

  constructor (url: string, opts: PostgresStoreOptions = {}) {
    this.neverAfterDate = opts.lastModifiedNeverAfterDate === true
    this.unavailable = opts.unavailable ?? ((cause) => new DatabaseUnavailableError(cause))
    this.pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 10000,
      keepAlive: true
    })
    // An idle connection the server closed (a restart): the pool drops it and opens a new
    // one when needed. Without a listener the error would end the process.
    this.pool.on('error', () => {})
  }

  /**
   * Creates the schema if missing. A database that is down at start is not fatal: the
   * schema is created before the first statement that reaches it.
   */
  async start (): Promise<void> {
    try {
      await this.ready()
    } catch (err) {
      if (!isUnavailable(err)) throw err
    }
  }

  private ready (): Promise<void> {
    this.schema ??= this.createSchema().catch((err: unknown) => {
      this.schema = undefined
      throw err
    })
    return this.schema
  }

  private async createSchema (): Promise<void> {
    const client = await this.pool.connect()
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK])
      await client.query(SCHEMA)
      // A table created before the column existed.
      await client.query('ALTER TABLE articles ADD COLUMN IF NOT EXISTS last_modified bigint')
      await client.query('CREATE INDEX IF NOT EXISTS articles_created ON articles (created_at, id)')
      await client.query('COMMIT')
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {})
      throw err
    } finally {
      client.release()
    }
  }

  private async query (text: string, values: unknown[]): Promise<pg.QueryResult<Row>> {
    try {
      await this.ready()
      return await this.pool.query<Row>(text, values)
    } catch (err) {
      if (isUnavailable(err)) throw this.unavailable(err as Error)
      throw err
    }
  }

  async list (opts: { tag?: string, limit?: number } = {}): Promise<Article[]> {
    const limit = opts.limit ?? 100
    const res = opts.tag === undefined
      ? await this.query('SELECT * FROM articles ORDER BY created_at, id LIMIT $1', [limit])
      : await this.query('SELECT * FROM articles WHERE $1 = ANY(tags) ORDER BY created_at, id LIMIT $2', [opts.tag, limit])
    return res.rows.map((r) => toStored(r).article)
  }

  async get (id: string): Promise<Stored | undefined> {
    const res = await this.query('SELECT * FROM articles WHERE id = $1', [id])
    return res.rows.length === 0 ? undefined : toStored(res.rows[0])
  }

  async create (input: ArticleInput, now = new Date()): Promise<Stored | 'duplicate-slug'> {
    const article = created(input, now)
    const etag = etagOf(article)
    const updatedAtMs = createdLastModified(now)
    try {
      await this.query('INSERT INTO articles (id, slug, title, body, tags, published, created_at, updated_at, last_modified, etag) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
        [article.id, article.slug, article.title, article.body, article.tags, article.published, article.createdAt, article.updatedAt, updatedAtMs, etag])
    } catch (err) {
      if (isSlugViolation(err)) return 'duplicate-slug'
      throw err
    }
    return { article, etag, updatedAtMs }
  }

  /** `now` is the time of the write; by default the clock's when the version is computed (after a wait for the row's lock). */
  async replace (id: string, input: ArticleInput, expectedEtag: string | null = null, now?: Date): Promise<WriteResult> {
    if (expectedEtag === null) return await this.replaceLocked(id, input, now)
    for (let attempt = 0; attempt < REPLACE_ATTEMPTS; attempt++) {
      const current = await this.get(id)
      if (current === undefined) return 'not-found'
      if (expectedEtag !== null && current.etag !== expectedEtag) return 'precondition-failed'
      const version = replacement(current, input, now ?? new Date(), this.neverAfterDate)
      const { article, etag } = version
      let changed: number
      try {
        // The compare-and-set: the write happens only on the version it was computed from.
        const res = await this.query('UPDATE articles SET slug = $3, title = $4, body = $5, tags = $6, published = $7, updated_at = $8, last_modified = $9, etag = $10 WHERE id = $1 AND etag = $2',
          [id, current.etag, article.slug, article.title, article.body, article.tags, article.published, article.updatedAt, version.updatedAtMs, etag])
        changed = res.rowCount ?? 0
      } catch (err) {
        if (isSlugViolation(err)) return 'duplicate-slug'
        throw err
      }
      if (changed === 1) return version
      if (expectedEtag !== null) return (await this.exists(id)) ? 'precondition-failed' : 'not-found'
    }
    throw new Error(`replace of ${id}: ${REPLACE_ATTEMPTS} attempts lost to concurrent writers`)
  }

  /**
   * An unconditional replacement: the row is locked while the new version is computed
   * from it, so concurrent writers queue instead of retrying their compare-and-set.
   */
  private async replaceLocked (id: string, input: ArticleInput, now: Date | undefined): Promise<WriteResult> {
    let client: pg.PoolClient
    try {
      await this.ready()
      client = await this.pool.connect()
    } catch (err) {
      if (isUnavailable(err)) throw this.unavailable(err as Error)
      throw err
    }
    let failed: unknown
    try {
      await client.query('BEGIN')
      const res = await client.query<Row>('SELECT * FROM articles WHERE id = $1 FOR UPDATE', [id])
      if (res.rows.length === 0) {
        await client.query('ROLLBACK')
        return 'not-found'
      }
      // The clock after the lock: a time taken before the wait would be older than the version it replaces.
      const version = replacement(toStored(res.rows[0]), input, now ?? new Date(), this.neverAfterDate)
      const { article, etag } = version
      await client.query('UPDATE articles SET slug = $2, title = $3, body = $4, tags = $5, published = $6, updated_at = $7, last_modified = $8, etag = $9 WHERE id = $1',
        [id, article.slug, article.title, article.body, article.tags, article.published, article.updatedAt, version.updatedAtMs, etag])
      await client.query('COMMIT')
      return version
    } catch (err) {
      failed = err
      await client.query('ROLLBACK').catch(() => {})
      if (isSlugViolation(err)) return 'duplicate-slug'
      if (isUnavailable(err)) throw this.unavailable(err as Error)
      throw err
    } finally {
      // A connection that failed is not given back to the pool.
      client.release(failed !== undefined && isUnavailable(failed) ? (failed as Error) : undefined)
    }
  }

  async delete (id: string, expectedEtag: string | null = null): Promise<DeleteResult> {
    const res = await this.query('DELETE FROM articles WHERE id = $1 AND ($2::text IS NULL OR etag = $2)', [id, expectedEtag])
    if (res.rowCount === 1) return true
    return (await this.exists(id)) ? 'precondition-failed' : 'not-found'
  }

  async close (): Promise<void> {
    await this.pool.end()
  }

  private async exists (id: string): Promise<boolean> {
    return (await this.query('SELECT 1 FROM articles WHERE id = $1', [id])).rows.length === 1
  }
}

function isSlugViolation (err: unknown): boolean {
  // 23505: unique_violation, on the slug's constraint
  const e = err as { code?: string, constraint?: string }
  return e.code === '23505' && e.constraint === 'articles_slug_key'
}
