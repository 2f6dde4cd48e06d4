/**
 * RFC 9110 15.6.4: a reference service whose SQLite database has no room left (SQLITE_FULL,
 * as on a full disk; here the file is capped with DATABASE_MAX_BYTES) answers the writes it
 * cannot store with the catalogue's 503 and Retry-After, says nothing of the store in the
 * body, logs the failure at error, keeps serving reads, and writes again once there is room.
 */
import { test } from 'tap'
import { request } from 'undici'
import { buildService } from '../../example/app'
import { listen } from '../helpers/app'

const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const JSON_AUTH = { 'content-type': 'application/json', authorization: AUTH }

test('SQLITE_FULL: 503 from the catalogue, no internal detail, logged at error, and the service writes again once there is room', async (t) => {
  const lines: Array<{ level: number, msg: string, err?: { code?: string } }> = []
  process.env.DATABASE_MAX_BYTES = String(96 * 1024)
  t.teardown(() => { delete process.env.DATABASE_MAX_BYTES })
  const app = await buildService({
    database: ':memory:',
    bodyLimit: 1 << 20,
    profile: 'spec',
    logger: { level: 'info', stream: { write: (s: string) => { lines.push(JSON.parse(s)) } } }
  })
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${await listen(app)}`
  const created: string[] = []
  let full: { status: number, headers: Record<string, unknown>, body: string } | undefined
  for (let i = 0; i < 500 && full === undefined; i++) {
    const res = await request(`${base}/articles`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ slug: `a${i}`, title: 'T', body: 'x'.repeat(3000) }) })
    const body = await res.body.text()
    if (res.statusCode === 201) created.push(JSON.parse(body).id)
    else full = { status: res.statusCode, headers: res.headers, body }
  }
  t.ok(created.length > 3, `${created.length} articles stored before the database was full`)
  t.equal(full?.status, 503, 'the write that finds no room')
  t.equal(full?.headers['retry-after'], '5')
  // The catalogue renders its 503 as a page (a browser may be the client).
  t.match(full?.headers['content-type'], /^text\/html/)
  t.match(full?.body, /The articles database is unavailable; try again shortly\./, 'the catalogue\'s message')
  t.notMatch(full?.body, /SQLITE|disk|full|sqlite/i, 'nothing of the store in the body')
  const logged = lines.find((l) => l.level === 50)
  t.ok(logged, 'the failure is logged at error')
  t.ok(lines.some((l) => l.err?.code === 'SQLITE_FULL'), 'with the store\'s own code, in the log only')
  const read = await request(`${base}/articles/${created[0]}`)
  t.equal(read.statusCode, 200, 'reads are still served')
  await read.body.dump()
  for (const id of created.slice(0, Math.ceil(created.length / 2))) {
    const res = await request(`${base}/articles/${id}`, { method: 'DELETE', headers: { authorization: AUTH } })
    await res.body.dump()
    t.equal(res.statusCode, 204)
  }
  const again = await request(`${base}/articles`, { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ slug: 'again', title: 'T', body: 'x'.repeat(3000) }) })
  await again.body.dump()
  t.equal(again.statusCode, 201, 'room again: the service writes again')
})
