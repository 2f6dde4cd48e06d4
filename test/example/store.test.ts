import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArticleStore, etagOf } from '../../example/store'

const input = { slug: 'a', title: 'A', body: 'b' }

test('writes with an expected ETag are compare-and-set: a stale ETag changes nothing', async (t) => {
  const store = new ArticleStore(':memory:')
  t.teardown(() => store.close())
  const created = store.create(input)
  if (created === 'duplicate-slug') throw new Error('unexpected')
  const first = store.replace(created.article.id, { ...input, title: 'B' }, created.etag)
  if (typeof first === 'string') throw new Error(first)
  t.not(first.etag, created.etag)
  t.equal(store.replace(created.article.id, { ...input, title: 'C' }, created.etag), 'precondition-failed', 'the second writer with the old ETag loses')
  t.equal(store.get(created.article.id)?.article.title, 'B')
  t.equal(store.delete(created.article.id, created.etag), 'precondition-failed')
  t.equal(store.delete(created.article.id, first.etag), true)
  t.equal(store.delete(created.article.id), 'not-found')
  t.equal(store.replace('nope', input), 'not-found')
})

test('slugs are unique on create and replace; tags filter; limit caps', async (t) => {
  const store = new ArticleStore(':memory:')
  t.teardown(() => store.close())
  const a = store.create({ ...input, tags: ['x'] })
  const b = store.create({ ...input, slug: 'b' })
  t.equal(store.create(input), 'duplicate-slug')
  if (typeof b === 'string' || typeof a === 'string') throw new Error('unexpected')
  t.equal(store.replace(b.article.id, input), 'duplicate-slug')
  t.same(store.list({ tag: 'x' }).map((x) => x.slug), ['a'])
  t.equal(store.list({ limit: 1 }).length, 1)
  t.equal(store.list().length, 2)
  t.equal(etagOf(a.article), a.etag, 'the ETag is a hash of the representation')
})

test('a database file is created with its folder, and survives a reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'articles-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'nested', 'articles.db')
  const one = new ArticleStore(file)
  const created = one.create(input)
  one.close()
  const two = new ArticleStore(file)
  t.teardown(() => two.close())
  t.equal(two.get((created as { article: { id: string } }).article.id)?.article.slug, 'a')
})
