/**
 * The articles store: one suite (`storeSuite`) run against both backends, SQLite and a
 * real PostgreSQL 15 (test/helpers/postgres.ts; skipped with the install hint when it is
 * not installed, except under CI). Then what only one backend has: the SQLite file, and
 * PostgreSQL out of reach.
 */
import { teardown, test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { DatabaseSync } from 'node:sqlite'
import { join } from 'node:path'
import { ArticleStore, SqliteStore, etagOf, isSqliteUnavailable, lastModifiedAt, nextLastModified, openStore, type Store } from '../../example/store'
import { PostgresStore, DatabaseUnavailableError, isUnavailable } from '../../example/store-pg'
import { startPostgres, postgresTestOptions, type PostgresServer } from '../helpers/postgres'

const input = { slug: 'a', title: 'A', body: 'b' }

function must<X> (v: X | string | undefined): X {
  if (typeof v === 'string' || v === undefined) throw new Error(`unexpected ${String(v)}`)
  return v
}

/** The behaviour both stores share; `open()` gives a fresh, empty store. */
function storeSuite (name: string, open: () => Promise<Store>, options: { skip?: string } = {}): void {
  test(`${name}: writes with an expected ETag are compare-and-set: a stale ETag changes nothing`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const created = must(await store.create(input))
    const first = must(await store.replace(created.article.id, { ...input, title: 'B' }, created.etag))
    t.not(first.etag, created.etag)
    t.equal(await store.replace(created.article.id, { ...input, title: 'C' }, created.etag), 'precondition-failed', 'the second writer with the old ETag loses')
    t.equal((await store.get(created.article.id))?.article.title, 'B')
    t.equal(await store.delete(created.article.id, created.etag), 'precondition-failed')
    t.equal(await store.delete(created.article.id, first.etag), true)
    t.equal(await store.delete(created.article.id), 'not-found')
    t.equal(await store.replace('nope', input), 'not-found')
    t.equal(await store.replace('nope', input, first.etag), 'not-found')
    t.equal(await store.get('nope'), undefined)
  })

  test(`${name}: slugs are unique on create and replace; tags filter; limit caps; order of creation`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const t0 = new Date('2024-01-15T12:00:00.000Z')
    const a = must(await store.create({ ...input, tags: ['x', 'y'] }, t0))
    const b = must(await store.create({ ...input, slug: 'b', published: true }, new Date(t0.getTime() + 1)))
    t.equal(await store.create(input), 'duplicate-slug')
    t.equal(await store.replace(b.article.id, input), 'duplicate-slug')
    t.equal(await store.replace(b.article.id, input, b.etag), 'duplicate-slug')
    t.same((await store.list({ tag: 'x' })).map((x) => x.slug), ['a'])
    t.same((await store.list({ tag: 'z' })), [])
    t.equal((await store.list({ limit: 1 })).length, 1)
    t.same((await store.list()).map((x) => x.slug), ['a', 'b'])
    t.equal(etagOf(a.article), a.etag, 'the ETag is a hash of the representation')
    const read = await store.get(b.article.id)
    t.same(read?.article, b.article, 'what is read back is what was written')
    t.equal(read?.etag, etagOf(b.article))
    t.same(read?.article.tags, [])
    t.equal(read?.article.published, true)
  })

  test(`${name}: timestamps keep sub-second precision`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const at = new Date('2024-01-15T12:45:26.123Z')
    const created = must(await store.create(input, at))
    const read = await store.get(created.article.id)
    t.equal(read?.article.createdAt, '2024-01-15T12:45:26.123Z')
    t.equal(read?.article.updatedAt, '2024-01-15T12:45:26.123Z')
    t.equal(read?.updatedAtMs, Date.parse('2024-01-15T12:45:26.000Z'), 'the Last-Modified of a new article is the second of its write')
    t.equal(read?.etag, created.etag, 'the ETag computed at write is the ETag of what is read back')
  })

  test(`${name}: RFC 9110 8.8.2.1 and 13.1.4: a second write within one second is judged a second later, never more`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    // Last-Modified has a resolution of one second (RFC 9110 8.8.2.2); it is sent no later
    // than Date (lastModifiedAt), so a reader of v1 within its second holds 12:45:26.
    const http = (ms: number): string => new Date(ms).toUTCString()
    const t0 = Date.parse('2024-01-15T12:45:26.100Z')
    const v1 = must(await store.create(input, new Date(t0)))
    const v2 = must(await store.replace(v1.article.id, { ...input, title: 'v2' }, v1.etag, new Date(t0 + 200)))
    const v3 = must(await store.replace(v1.article.id, { ...input, title: 'v3' }, null, new Date(t0 + 400)))
    t.equal(http(v1.updatedAtMs), 'Mon, 15 Jan 2024 12:45:26 GMT')
    t.equal(http(v2.updatedAtMs), 'Mon, 15 Jan 2024 12:45:27 GMT', 'the second version is judged the next second')
    t.equal(http(v3.updatedAtMs), 'Mon, 15 Jan 2024 12:45:27 GMT', 'and so is the third: no reader was sent a date later than 12:45:26')
    t.equal(http(lastModifiedAt(v3, t0 + 500)), 'Mon, 15 Jan 2024 12:45:26 GMT', 'sent within 12:45:26, it is the Date')
    t.equal(http(lastModifiedAt(v3, t0 + 1000)), 'Mon, 15 Jan 2024 12:45:27 GMT', 'and its own date once that second has come')
    t.equal(v3.article.updatedAt, '2024-01-15T12:45:26.500Z', 'the article keeps the time of the write')
    t.equal((await store.get(v1.article.id))?.updatedAtMs, v3.updatedAtMs, 'the stored date is the one answered')
    // A write in a later second, after a second already judged ahead: one second more.
    const v4 = must(await store.replace(v1.article.id, { ...input, title: 'v4' }, v3.etag, new Date(t0 + 1100)))
    t.equal(http(v4.updatedAtMs), 'Mon, 15 Jan 2024 12:45:28 GMT', 'a reader of v3 at 12:45:27.1 held 12:45:27')
    // Once the writes slow down, the date is the second of the write.
    const later = new Date(t0 + 10_000)
    const v5 = must(await store.replace(v1.article.id, { ...input, title: 'v5' }, v4.etag, later))
    t.equal(http(v5.updatedAtMs), 'Mon, 15 Jan 2024 12:45:36 GMT')
    t.equal(v5.article.createdAt, v1.article.createdAt, 'the creation time stays')
  })

  test(`${name}: a storm of writes in one second keeps the date within one second of the clock`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const t0 = Date.parse('2024-01-15T12:00:00.000Z')
    let last = must(await store.create(input, new Date(t0)))
    for (let i = 1; i <= 400; i++) {
      // 400 writes in two seconds, 200 a second.
      last = must(await store.replace(last.article.id, { ...input, title: `w${i}` }, last.etag, new Date(t0 + i * 5)))
      t.ok(last.updatedAtMs <= Math.floor((t0 + i * 5) / 1000) * 1000 + 1000, `write ${i}`)
    }
    t.equal(new Date(last.updatedAtMs).toISOString(), '2024-01-15T12:00:03.000Z')
  })

  test(`${name}: concurrent compare-and-set writers on one version: exactly one wins`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const v1 = must(await store.create(input))
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.replace(v1.article.id, { ...input, title: `w${i}` }, v1.etag)))
    t.equal(results.filter((r) => typeof r !== 'string').length, 1, 'one write')
    t.equal(results.filter((r) => r === 'precondition-failed').length, 7, 'seven 412s')
    // Unconditional writers all land, one after the other, each judged later than any date a reader got before it.
    const before = must(await store.get(v1.article.id))
    const sentAt = Date.now()
    const blind = await Promise.all(Array.from({ length: 5 }, (_, i) => store.replace(v1.article.id, { ...input, title: `b${i}` })))
    t.equal(new Set(blind.map((r) => must(r).etag)).size, 5, 'five versions')
    const after = must(await store.get(v1.article.id))
    t.ok(after.updatedAtMs > lastModifiedAt(before, sentAt), 'later than the date the version before them was sent with')
    t.ok(after.updatedAtMs <= Date.now() + 1000, 'and at most a second ahead of the clock')
  })
}

test('nextLastModified, dates never sent after Date: this second after an earlier date, else the next one; later than the last should the clock go back', async (t) => {
  const at = (iso: string): number => Date.parse(iso)
  const next = (previous: string, now: string): string => new Date(nextLastModified(at(previous), at(now), true)).toISOString()
  t.equal(next('2024-01-15T12:00:00.000Z', '2024-01-15T12:00:01.250Z'), '2024-01-15T12:00:01.000Z')
  t.equal(next('2024-01-15T12:00:00.000Z', '2024-01-15T12:00:00.500Z'), '2024-01-15T12:00:01.000Z')
  t.equal(next('2024-01-15T12:00:01.000Z', '2024-01-15T12:00:00.900Z'), '2024-01-15T12:00:01.000Z', 'never more than a second ahead')
  t.equal(next('2024-01-15T12:00:05.000Z', '2024-01-15T12:00:01.000Z'), '2024-01-15T12:00:06.000Z', 'the clock went back: still a later date')
  t.equal(lastModifiedAt({ updatedAtMs: at('2024-01-15T12:00:01.000Z') }, at('2024-01-15T12:00:00.999Z')), at('2024-01-15T12:00:00.000Z'))
})

test('RFC 9110 15.6.4: SQLite with no room (SQLITE_FULL) or failing I/O is the caller\'s unavailable error; the store writes again once there is room', async (t) => {
  const seen: Error[] = []
  const store = await openStore({ database: ':memory:', maxBytes: 64 * 1024, unavailable: (cause) => { seen.push(cause); return new Error('503') } })
  t.teardown(() => store.close())
  const ids: string[] = []
  let failure: unknown
  for (let i = 0; i < 1000 && failure === undefined; i++) {
    try {
      ids.push(must(await store.create({ slug: `s${i}`, title: 't', body: 'x'.repeat(2000) })).article.id)
    } catch (err) {
      failure = err
    }
  }
  t.match(failure, { message: '503' }, 'the write past the cap')
  t.equal((seen[0] as { code?: string }).code, 'SQLITE_FULL')
  t.ok(ids.length > 5, `${ids.length} articles fit`)
  t.equal((await store.get(ids[0]))?.article.slug, 's0', 'reads still work')
  for (const id of ids.slice(0, Math.ceil(ids.length / 2))) t.equal(await store.delete(id), true)
  t.ok(must(await store.create({ slug: 'again', title: 't', body: 'x'.repeat(2000) })), 'room again: writes again')
  t.ok(isSqliteUnavailable({ code: 'SQLITE_IOERR_WRITE' }))
  t.ok(isSqliteUnavailable({ code: 'SQLITE_BUSY' }))
  t.notOk(isSqliteUnavailable({ code: 'SQLITE_CONSTRAINT_UNIQUE' }))
  t.notOk(isSqliteUnavailable(null))
  const plain = new SqliteStore(':memory:', { maxBytes: 32 * 1024 })
  t.teardown(() => plain.close())
  await t.rejects(plain.create({ slug: 'big', title: 't', body: 'x'.repeat(100_000) }), { code: 'SQLITE_FULL' }, 'without unavailable, the error as it is')
  await t.rejects(openStore({ database: ':memory:', maxBytes: 0 }), /DATABASE_MAX_BYTES must be a positive integer/)
})

test('a SQLite file written before last_modified existed is upgraded; its versions are judged the second after their write', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'articles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'old.db')
  const old = new DatabaseSync(file)
  old.exec('CREATE TABLE articles (id TEXT PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL, body TEXT NOT NULL, tags TEXT NOT NULL, published INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, etag TEXT NOT NULL)')
  old.prepare('INSERT INTO articles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run('x', 'old', 'Old', 'b', '[]', 0, '2024-01-15T12:00:00.250Z', '2024-01-15T12:00:00.250Z', '"e"')
  old.close()
  const store = new SqliteStore(file)
  t.teardown(() => store.close())
  t.equal(new Date(must(await store.get('x')).updatedAtMs).toISOString(), '2024-01-15T12:00:01.000Z')
  const next = must(await store.replace('x', { slug: 'old', title: 'New', body: 'b' }, '"e"', new Date('2024-01-15T12:00:00.500Z')))
  t.equal(new Date(next.updatedAtMs).toISOString(), '2024-01-15T12:00:02.000Z', 'later than the date a reader of the old version may hold')
  const again = new SqliteStore(file)
  t.teardown(() => again.close())
  t.equal(must(await again.get('x')).article.title, 'New', 'a second opening finds the column')
})

storeSuite('SQLite', async () => new SqliteStore(':memory:', { lastModifiedNeverAfterDate: true }))

test('without lastModifiedNeverAfterDate, each version is judged a second later than the last (a client may hold any date it was sent)', async (t) => {
  const store = new SqliteStore(':memory:')
  t.teardown(() => store.close())
  const t0 = Date.parse('2024-01-15T12:45:26.100Z')
  const v1 = must(await store.create(input, new Date(t0)))
  const v2 = must(await store.replace(v1.article.id, { ...input, title: 'v2' }, v1.etag, new Date(t0 + 200)))
  const v3 = must(await store.replace(v1.article.id, { ...input, title: 'v3' }, v2.etag, new Date(t0 + 400)))
  t.same([v1, v2, v3].map((v) => new Date(v.updatedAtMs).toISOString()), ['2024-01-15T12:45:26.000Z', '2024-01-15T12:45:27.000Z', '2024-01-15T12:45:28.000Z'])
  t.equal(new Date(nextLastModified(t0, t0 + 200)).toISOString(), '2024-01-15T12:45:27.100Z', 'the default rule')
})

let server: PostgresServer | undefined
let databases = 0
const pgOptions = postgresTestOptions()

test('PostgreSQL 15 starts', pgOptions, async () => {
  server = await startPostgres()
})
teardown(async () => { await server?.destroy() })

storeSuite('PostgreSQL', async () => {
  if (server === undefined) throw new Error('PostgreSQL did not start')
  // A fresh database for every test: the schema is created when the store starts.
  return await openStore({ database: ':memory:', databaseUrl: await server.createDatabase(`articles_${++databases}`), lastModifiedNeverAfterDate: true })
}, pgOptions)

test('PostgreSQL: two stores (a fleet) create the schema at once, and share the articles', pgOptions, async (t) => {
  if (server === undefined) throw new Error('PostgreSQL did not start')
  const url = await server.createDatabase('fleet')
  const [a, b, c] = await Promise.all([1, 2, 3].map(() => openStore({ database: ':memory:', databaseUrl: url })))
  t.teardown(async () => { await Promise.all([a.close(), b.close(), c.close()]) })
  t.equal(a.backend, 'postgres')
  const created = must(await a.create(input))
  t.same((await b.get(created.article.id))?.article, created.article)
  t.equal(await c.create(input), 'duplicate-slug', 'the unique constraint holds across instances')
})

test('PostgreSQL out of reach: every call fails fast with the unavailable error, and recovers', pgOptions, async (t) => {
  if (server === undefined) throw new Error('PostgreSQL did not start')
  const url = await server.createDatabase('outage')
  const seen: Error[] = []
  const store = await openStore({ database: ':memory:', databaseUrl: url, unavailable: (cause) => { seen.push(cause); return new Error('503') } })
  t.teardown(() => store.close())
  const created = must(await store.create(input))
  await server.stop('fast')
  const started = Date.now()
  const calls: Array<() => Promise<unknown>> = [() => store.get(created.article.id), () => store.list(), () => store.create({ ...input, slug: 'x' }), () => store.replace(created.article.id, input, created.etag), () => store.delete(created.article.id)]
  for (const call of calls) {
    await t.rejects(call(), { message: '503' })
  }
  t.comment(`five refusals in ${Date.now() - started} ms`)
  t.ok(seen.length >= 5 && seen.every(isUnavailable), 'the cause is a connection error')
  await server.start()
  t.same((await store.get(created.article.id))?.article, created.article, 'the pool reconnects on its own')
})

test('PostgreSQL down when a store starts: it starts anyway and creates the schema once the database is back', pgOptions, async (t) => {
  if (server === undefined) throw new Error('PostgreSQL did not start')
  const url = await server.createDatabase('late')
  await server.stop('immediate')
  const store = new PostgresStore(url)
  t.teardown(() => store.close())
  await store.start()
  await t.rejects(store.list(), DatabaseUnavailableError)
  await server.start()
  t.same(await store.list(), [])
  t.equal(await store.get('none'), undefined)
})

test('isUnavailable: connection errors and SQLSTATE classes 08, 53, 57, 58; not statement errors', async (t) => {
  const withCode = (code: string): Error => Object.assign(new Error(code), { code })
  t.ok(isUnavailable(withCode('ECONNREFUSED')))
  t.ok(isUnavailable(new Error('timeout exceeded when trying to connect')))
  for (const code of ['08006', '53300', '57P01', '57014', '58030']) t.ok(isUnavailable(withCode(code)), code)
  for (const code of ['23505', '42P01', '22P02']) t.notOk(isUnavailable(withCode(code)), code)
  t.notOk(isUnavailable('not an error'))
})

test('a SQLite database file is created with its folder, and survives a reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'articles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'nested', 'articles.db')
  const one = await openStore({ database: file })
  t.equal(one.backend, 'sqlite')
  const created = must(await one.create(input))
  await one.close()
  const two = new SqliteStore(file)
  t.teardown(() => two.close())
  t.equal((await two.get(created.article.id))?.article.slug, 'a')
})

test('the synchronous SQLite store (bench/express-service.js uses it) keeps its interface', async (t) => {
  const store = new ArticleStore(':memory:')
  t.teardown(() => store.close())
  const created = must(store.create(input))
  t.equal(store.replace(created.article.id, { ...input, title: 'B' }, '"stale"'), 'precondition-failed')
  t.equal(must(store.replace(created.article.id, { ...input, title: 'B' })).article.title, 'B')
  t.equal(store.list().length, 1)
})
