/**
 * The articles store: one suite (`storeSuite`) run against both backends, SQLite and a
 * real PostgreSQL 15 (test/helpers/postgres.ts; skipped with the install hint when it is
 * not installed, except under CI). Then what only one backend has: the SQLite file, and
 * PostgreSQL out of reach.
 */
import { teardown, test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArticleStore, SqliteStore, etagOf, nextModified, openStore, type Store } from '../../example/store'
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
    t.equal(read?.updatedAtMs, at.getTime())
    t.equal(read?.etag, created.etag, 'the ETag computed at write is the ETag of what is read back')
  })

  test(`${name}: two writes within one wall-clock second get different Last-Modified seconds`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    // Last-Modified has a resolution of one second (RFC 9110 8.8.2.2): it is what a
    // client sends back in If-Unmodified-Since (RFC 9110 13.1.4).
    const lastModified = (ms: number): string => new Date(ms).toUTCString()
    const t0 = new Date('2024-01-15T12:45:26.100Z')
    const v1 = must(await store.create(input, t0))
    const v2 = must(await store.replace(v1.article.id, { ...input, title: 'v2' }, v1.etag, new Date(t0.getTime() + 200)))
    const v3 = must(await store.replace(v1.article.id, { ...input, title: 'v3' }, null, new Date(t0.getTime() + 400)))
    t.equal(lastModified(v1.updatedAtMs), 'Mon, 15 Jan 2024 12:45:26 GMT')
    t.equal(lastModified(v2.updatedAtMs), 'Mon, 15 Jan 2024 12:45:27 GMT', 'the second version moves to the next second')
    t.equal(lastModified(v3.updatedAtMs), 'Mon, 15 Jan 2024 12:45:28 GMT', 'and the third to the one after')
    t.equal((await store.get(v1.article.id))?.updatedAtMs, v3.updatedAtMs, 'the stored time is the one answered')
    // Later writes at the real time: once the clock is past the last version, the clock wins.
    const later = new Date(t0.getTime() + 10_000)
    const v4 = must(await store.replace(v1.article.id, { ...input, title: 'v4' }, v3.etag, later))
    t.equal(v4.updatedAtMs, later.getTime())
    t.equal(v4.article.createdAt, v1.article.createdAt, 'the creation time stays')

    // The same with the real clock: two writes back to back (well within one second).
    const w1 = must(await store.create({ ...input, slug: 'now' }))
    const w2 = must(await store.replace(w1.article.id, { ...input, slug: 'now', title: 'w2' }, w1.etag))
    const w3 = must(await store.replace(w1.article.id, { ...input, slug: 'now', title: 'w3' }, w2.etag))
    const seconds = [w1, w2, w3].map((w) => lastModified(w.updatedAtMs))
    t.equal(new Set(seconds).size, 3, `three versions, three Last-Modified dates: ${seconds.join(', ')}`)
  })

  test(`${name}: concurrent compare-and-set writers on one version: exactly one wins`, options, async (t) => {
    const store = await open()
    t.teardown(() => store.close())
    const v1 = must(await store.create(input))
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.replace(v1.article.id, { ...input, title: `w${i}` }, v1.etag)))
    t.equal(results.filter((r) => typeof r !== 'string').length, 1, 'one write')
    t.equal(results.filter((r) => r === 'precondition-failed').length, 7, 'seven 412s')
    // Unconditional writers all land, one after the other, each on a later second.
    const before = must(await store.get(v1.article.id))
    const blind = await Promise.all(Array.from({ length: 5 }, (_, i) => store.replace(v1.article.id, { ...input, title: `b${i}` })))
    const stamps = blind.map((r) => must(r).updatedAtMs)
    t.equal(new Set(stamps.map((s) => Math.floor(s / 1000))).size, 5, 'five versions, five seconds')
    t.ok(Math.min(...stamps) >= Math.floor(before.updatedAtMs / 1000) * 1000 + 1000)
  })
}

test('nextModified: max(now, the previous second + 1 s)', async (t) => {
  t.equal(nextModified('2024-01-15T12:00:00.300Z', new Date('2024-01-15T12:00:00.500Z')).toISOString(), '2024-01-15T12:00:01.000Z')
  t.equal(nextModified('2024-01-15T12:00:00.300Z', new Date('2024-01-15T12:00:01.250Z')).toISOString(), '2024-01-15T12:00:01.250Z')
  t.equal(nextModified(Date.parse('2024-01-15T12:00:05.000Z'), new Date('2024-01-15T12:00:01.000Z')).toISOString(), '2024-01-15T12:00:06.000Z', 'ahead of the clock: still a later second')
})

storeSuite('SQLite', async () => new SqliteStore(':memory:'))

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
  return await openStore({ database: ':memory:', databaseUrl: await server.createDatabase(`articles_${++databases}`) })
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
  t.ok(Date.now() - started < 5000, `five refusals in ${Date.now() - started} ms`)
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
