/**
 * RFC 9110 13.1.4 with one-second dates (8.8.2.2): a version of the reference service is
 * judged later than any date a reader of the version before it was sent, so a writer holding
 * a stale date gets 412 even within the same second, and a writer holding the current date
 * (read once the second of the write is over, RFC 9110 8.8.2.1: no Last-Modified is sent later
 * than Date) succeeds. Over real HTTP.
 */
import { test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'

const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const JSON_AUTH = { 'content-type': 'application/json', authorization: AUTH }

let svc: RunningService

test('start the service', async () => { svc = await startService() })

test('no lost update through If-Unmodified-Since: the stale writer gets 412, the current one succeeds', async (t) => {
  const created = await request(`${svc.url}/articles`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ slug: 'lost-update', title: 'v0', body: 'b' }) })
  const article = await created.body.json() as { id: string }
  const read = await request(`${svc.url}/articles/${article.id}`)
  await read.body.dump()
  const etag = read.headers.etag as string
  const lastModified = read.headers['last-modified'] as string
  const url = `${svc.url}/articles/${article.id}`
  const other = await request(url, { method: 'PUT', headers: { ...JSON_AUTH, 'if-match': etag }, body: JSON.stringify({ slug: 'lost-update', title: 'v1 by another client', body: 'b' }) })
  await other.body.dump()
  t.equal(other.statusCode, 200, 'another client writes with If-Match')
  const written = Date.parse(other.headers.date as string)
  const stale = await request(url, { method: 'PUT', headers: { ...JSON_AUTH, 'if-unmodified-since': lastModified }, body: JSON.stringify({ slug: 'lost-update', title: 'v1 by the stale client', body: 'b' }) })
  await stale.body.dump()
  t.equal(stale.statusCode, 412, 'the first client, holding the old date, is refused (even within the same second)')
  // Within the second of the write its date may still be ahead of the clock (sent as the Date).
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, written + 1050 - Date.now())))
  const now = await request(url)
  const current = await now.body.json() as { title: string }
  t.equal(current.title, 'v1 by another client', 'nothing was overwritten')
  t.not(now.headers['last-modified'], lastModified, 'the new version has its own date')
  const fresh = await request(url, { method: 'PUT', headers: { ...JSON_AUTH, 'if-unmodified-since': now.headers['last-modified'] as string }, body: JSON.stringify({ slug: 'lost-update', title: 'v2', body: 'b' }) })
  await fresh.body.dump()
  t.equal(fresh.statusCode, 200, 'a writer holding the current date succeeds')
})

test('stop the service', async () => { await svc.stop() })
