/**
 * Three instances on one PostgreSQL and one Redis (the compiled service: `npm run build`
 * first) while the database fails under them:
 * - PostgreSQL restarted mid-run: requests during the outage are answered 503 with
 *   Retry-After (RFC 9110 15.6.4), never 500, never after a hang; the instances recover
 *   on their own when it is back;
 * - PostgreSQL frozen (every process stopped, connections open but silent): the pool's
 *   connect timeout and the query timeout turn the wait into a 503 within seconds;
 * - Redis and PostgreSQL both down: reads of articles fail 503, the processes stay up,
 *   and everything recovers when both are back.
 * PostgreSQL is checked by test/helpers/postgres.ts (postgresTestOptions); redis-server by
 * test/helpers/peers.ts: without it every test is skipped (failed under CI=true).
 */
import { teardown, test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { startPgFleet, postgresTestOptions, type PgFleet } from '../helpers/postgres'
import { until } from '../helpers/until'
import { startRedis } from '../helpers/redis'
import { peer } from '../helpers/peers'

const BASIC = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
// A request that hangs fails the test: the service answers within seconds or not at all.
// Generous client timeouts: a hang shows as a failure, a busy machine does not.
const agent = new Agent({ connect: { timeout: 30_000 }, headersTimeout: 60_000, bodyTimeout: 60_000 })
const options = { ...postgresTestOptions(), timeout: 300_000 }

let fleet: PgFleet | undefined
let id = ''

function f (): PgFleet {
  if (fleet === undefined) throw new Error('the fleet did not start')
  return fleet
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function get (url: string): Promise<{ status: number, ms: number, retryAfter?: string, etag?: string, body: string }> {
  const t0 = Date.now()
  const res = await request(url, { dispatcher: agent })
  const body = await res.body.text()
  return { status: res.statusCode, ms: Date.now() - t0, retryAfter: res.headers['retry-after'] as string | undefined, etag: res.headers.etag as string | undefined, body }
}

/** Asks each instance until all answer `status`; returns how long that took. */
async function untilAll (path: string, status: number, withinMs: number): Promise<number> {
  const t0 = Date.now()
  await until(`every instance answers ${status} to ${path}`, async () => {
    const answers = await Promise.all(f().urls.map((u) => get(`${u}${path}`)))
    return answers.every((a) => a.status === status)
  }, withinMs, 200)
  return Date.now() - t0
}

/** The postmaster and its children (every server process), from /proc. */
function postgresPids (dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
  const pids = [postmaster]
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(d))
    } catch {}
  }
  return pids
}

// Also when a test fails: the instances, Redis and PostgreSQL stop, the data directory goes.
teardown(async () => { await fleet?.stop() })

test('three instances on PostgreSQL and Redis start', options, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  fleet = await startPgFleet(3)
  const created = await request(`${f().urls[0]}/articles`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ slug: 'faults', title: 'count 0', body: 'b' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
  t.equal(created.statusCode, 201)
  id = (await created.body.json() as { id: string }).id
})

test('PostgreSQL restarted mid-run: 503 during the outage, not 500, not a hang; recovery without a restart', options, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { urls, pg, instances } = f()
  const pids = instances.map((s) => s.child.pid)
  const statuses = new Map<number, number>()
  const retryAfter = new Set<string | undefined>()
  let slowest = 0
  let stopped = false
  const during: number[] = []
  const run = { finished: false }
  async function client (i: number): Promise<void> {
    for (let round = 0; !run.finished; round++) {
      const url = urls[(i + round) % 3]
      // Counted as "during the outage" only when the database was down for the whole exchange.
      const began = stopped
      const read = await get(`${url}/articles/${id}`)
      let status = read.status
      let ms = read.ms
      if (read.status === 200) {
        const article = JSON.parse(read.body) as { slug: string, title: string, body: string }
        const t0 = Date.now()
        const put = await request(`${urls[(i + round + 1) % 3]}/articles/${id}`, {
          method: 'PUT',
          dispatcher: agent,
          body: JSON.stringify({ slug: article.slug, body: article.body, title: `count ${Number(article.title.split(' ')[1]) + 1}` }),
          headers: { 'content-type': 'application/json', authorization: BASIC, 'if-match': read.etag as string }
        })
        await put.body.dump()
        status = put.statusCode
        ms = Date.now() - t0
        if (status === 503) retryAfter.add(put.headers['retry-after'] as string | undefined)
      } else if (read.status === 503) retryAfter.add(read.retryAfter)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      slowest = Math.max(slowest, ms)
      if (began && stopped) during.push(status)
      await sleep(20)
    }
  }
  // Events, not a schedule: the outage starts once the clients have been answered 20 times,
  // and lasts until 5 exchanges began and ended while the database was down.
  async function outage (): Promise<void> {
    await until('20 answers to the clients', () => [...statuses.values()].reduce((a, b) => a + b, 0) >= 20)
    await pg.stop('fast')
    stopped = true
    await until('5 exchanges while the database is down', () => during.length >= 5)
    stopped = false
    await pg.start()
    run.finished = true
  }
  await Promise.all([...Array.from({ length: 10 }, (_, i) => client(i)), outage()])
  const seen = Object.fromEntries(statuses)
  t.same([...statuses.keys()].filter((s) => ![200, 412, 503].includes(s)), [], `only 200, 412 and 503: ${JSON.stringify(seen)}`)
  t.ok((statuses.get(503) ?? 0) > 0, 'the outage was answered 503')
  t.ok(during.length > 0 && during.every((s) => s === 503), `every answer while the database was down was 503 (${during.length})`)
  t.same([...retryAfter], ['5'], 'with Retry-After')
  // No request hung: each was answered (the agent's own timeouts would have failed it).
  const recovery = await untilAll(`/articles/${id}`, 200, 60_000)
  t.comment(`every instance answers 200 again ${recovery} ms after the run`)
  t.same(instances.map((s) => s.child.pid), pids, 'the same processes: no restart')
  t.ok(instances.every((s) => s.child.exitCode === null))
  t.comment(`PostgreSQL restart: ${JSON.stringify(seen)}, slowest ${slowest} ms`)
})

test('PostgreSQL frozen (connections open, no answer): 503 within the timeouts, recovery when it resumes', options, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { urls, pg } = f()
  const pids = postgresPids(join(pg.dir, 'data'))
  for (const pid of pids) process.kill(pid, 'SIGSTOP')
  let answers: Array<{ status: number, ms: number }>
  try {
    answers = await Promise.all(urls.flatMap((u) => [get(`${u}/articles/${id}`), get(`${u}/articles`)]))
  } finally {
    for (const pid of pids) process.kill(pid, 'SIGCONT')
  }
  t.same(answers.map((a) => a.status), [503, 503, 503, 503, 503, 503], 'every read is a 503')
  // The 503s came from the service's own timeouts (connect 2 s for a new connection, query 6 s
  // for an open one): the database never answered. How long they took is only reported.
  t.comment(`answered within the timeouts: the slowest took ${Math.max(...answers.map((a) => a.ms))} ms`)
  t.ok(await untilAll(`/articles/${id}`, 200, 60_000) >= 0, 'every instance answers 200 again')
})

test('Redis and PostgreSQL both down: reads of articles fail 503, the processes stay up; both back: recovery', options, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const fl = f()
  await fl.redis.stop()
  await fl.pg.stop('immediate')
  for (const url of fl.urls) {
    const one = await get(`${url}/articles/${id}`)
    t.equal(one.status, 503, `GET /articles/:id at ${url}`)
    t.equal(one.retryAfter, '5')
    t.equal((await get(`${url}/articles`)).status, 503, 'GET /articles')
    const post = await request(`${url}/articles`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ slug: 'down', title: 't', body: 'b' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
    await post.body.dump()
    t.equal(post.statusCode, 503, 'POST with Basic (no store needed for the credentials)')
  }
  // Still serving after the outage's answers (a crash would show here), not after a fixed wait.
  for (const url of fl.urls) t.equal((await get(`${url}/articles`)).status, 503, `${url} still answers`)
  t.ok(fl.instances.every((s) => s.child.exitCode === null && s.child.signalCode === null), 'every instance is still running')
  fl.redis = await startRedis(fl.redis.port)
  await fl.pg.start()
  t.ok(await untilAll(`/articles/${id}`, 200, 60_000) >= 0, 'reads work again')
  const post = await request(`${fl.urls[1]}/articles`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ slug: 'back', title: 't', body: 'b' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
  await post.body.dump()
  t.equal(post.statusCode, 201, 'and writes')
})

test('the fleet stops cleanly, no credential in its logs', options, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const stopping = fleet
  fleet = undefined
  await stopping?.stop()
})
