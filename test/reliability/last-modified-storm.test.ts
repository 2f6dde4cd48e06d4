/**
 * RFC 9110 8.8.2.1 and 13.1.4 together, under a storm of writes to one article of the
 * reference service, on SQLite and on a real PostgreSQL 15:
 * - no response carries a Last-Modified later than its Date;
 * - a writer whose If-Unmodified-Since is the Last-Modified it read before another write
 *   landed (within the same second, most of the time) gets 412: no lost update;
 * - after the storm, the date a reader gets works again for If-Unmodified-Since.
 * The figures (writes per second, the largest Last-Modified minus Date, the 412 counts) are
 * printed as comments; speed itself is not asserted. PostgreSQL is checked by
 * test/helpers/postgres.ts (skipped with the install hint when missing, failed under CI=true).
 */
import { test, type Test } from 'tap'
import { Pool } from 'undici'
import { buildService } from '../../example/app'
import { listen } from '../helpers/app'
import { postgresTestOptions, startPostgres } from '../helpers/postgres'

const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const JSON_AUTH = { 'content-type': 'application/json', authorization: AUTH }
// A storm: twelve writers as fast as the service answers, two stale writers among them. It
// lasts until the stale writers have written STALE_WRITES times, some of them within the
// second of their read (events, not a schedule: a busy machine only makes it longer).
const STALE_WRITES = 12
const WRITERS = 12
const PROBES = 2

interface Answer { status: number, date: number, lastModified: number | undefined, body: string }

async function storm (t: Test, config: { database: string, databaseUrl?: string }): Promise<void> {
  const app = await buildService({ ...config, bodyLimit: 1 << 20, profile: 'spec' })
  t.teardown(() => app.close())
  const pool = new Pool(`http://127.0.0.1:${await listen(app)}`, { connections: WRITERS + 2 * PROBES })
  t.teardown(() => pool.close())
  const send = async (method: 'GET' | 'POST' | 'PUT', path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> => {
    const res = await pool.request({ method, path, headers: body === undefined ? headers : { ...JSON_AUTH, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.body.text()
    const lm = res.headers['last-modified']
    return { status: res.statusCode, date: Date.parse(String(res.headers.date)), lastModified: typeof lm === 'string' ? Date.parse(lm) : undefined, body: text }
  }
  const created = await send('POST', '/articles', {}, { slug: 'storm', title: 'w0', body: 'b' })
  t.equal(created.status, 201)
  const path = `/articles/${JSON.parse(created.body).id as string}`
  let aheadMax = -Infinity
  let dated = 0
  let laterThanDate = 0
  const check = (a: Answer): void => {
    if (a.lastModified === undefined) return
    dated++
    aheadMax = Math.max(aheadMax, a.lastModified - a.date)
    if (a.lastModified > a.date) laterThanDate++
  }
  let writes = 0
  let writeFailures = 0
  let probes = 0
  let probeRefused = 0
  let probeSameSecond = 0
  const started = Date.now()
  const storming = { done: false }
  const writer = async (n: number): Promise<void> => {
    while (!storming.done) {
      const a = await send('PUT', path, {}, { slug: 'storm', title: `w${n}-${writes++}`, body: 'b' })
      if (a.status !== 200) writeFailures++
      check(a)
    }
  }
  // A stale writer: reads, lets one more write land, then writes with the date it read.
  const prober = async (): Promise<void> => {
    // Safety net: the storm ends after 2,000 stale writes even if none fell within a second.
    while (!storming.done && probes < 2000) {
      const read = await send('GET', path)
      check(read)
      const other = await send('PUT', path, {}, { slug: 'storm', title: 'other', body: 'b' })
      check(other)
      if (read.lastModified === undefined || other.status !== 200) continue
      const stale = await send('PUT', path, { 'if-unmodified-since': new Date(read.lastModified).toUTCString() }, { slug: 'storm', title: 'stale', body: 'b' })
      check(stale)
      probes++
      if (stale.status === 412) probeRefused++
      if (Math.floor(read.date / 1000) === Math.floor(other.date / 1000)) probeSameSecond++
      if (probes >= STALE_WRITES && probeSameSecond > 0) storming.done = true
    }
    storming.done = true
  }
  const probing = Array.from({ length: PROBES }, prober)
  await Promise.all([...Array.from({ length: WRITERS }, (_, n) => writer(n)), ...probing])
  const seconds = (Date.now() - started) / 1000
  t.comment(`${config.databaseUrl === undefined ? 'SQLite' : 'PostgreSQL'}: ${writes} writes in ${seconds.toFixed(1)} s = ${Math.round(writes / seconds)} writes/s (with the probes' ${2 * probes} more); ` +
    `${dated} responses with Last-Modified, largest Last-Modified - Date = ${aheadMax / 1000} s; ${probeRefused} of ${probes} stale writers refused 412 (${probeSameSecond} of them within the second of their read)`)
  t.equal(writeFailures, 0, 'every unconditional write landed')
  t.equal(laterThanDate, 0, 'RFC 9110 8.8.2.1: no Last-Modified later than its Date')
  t.ok(probes >= STALE_WRITES, `${probes} stale writers`)
  t.equal(probeRefused, probes, 'RFC 9110 13.1.4: every stale writer got 412')
  t.ok(probeSameSecond > 0, 'some of them within one second')
  const title = JSON.parse((await send('GET', path)).body).title as string
  t.not(title, 'stale', 'no stale write landed')
  // After the storm, once the clock is past the last write's second, the date works again.
  await new Promise((resolve) => setTimeout(resolve, 2000 - (Date.now() % 1000)))
  const quiet = await send('GET', path)
  check(quiet)
  const fresh = await send('PUT', path, { 'if-unmodified-since': new Date(quiet.lastModified as number).toUTCString() }, { slug: 'storm', title: 'after', body: 'b' })
  t.equal(fresh.status, 200, 'a writer holding the current date succeeds once the storm is over')
  t.ok(aheadMax <= 0)
}

test('SQLite: Last-Modified never later than Date, and no lost update through If-Unmodified-Since, under a storm of writes', async (t) => {
  await storm(t, { database: ':memory:' })
})

test('PostgreSQL: Last-Modified never later than Date, and no lost update through If-Unmodified-Since, under a storm of writes', { ...postgresTestOptions(), timeout: 300_000 }, async (t) => {
  const server = await startPostgres()
  t.teardown(() => server.destroy())
  await storm(t, { database: ':memory:', databaseUrl: await server.createDatabase('storm') })
})
