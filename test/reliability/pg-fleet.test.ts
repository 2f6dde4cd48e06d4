/**
 * Three instances on one PostgreSQL and one Redis (test/helpers/postgres.ts startPgFleet,
 * the compiled service: `npm run build` first). 50 clients do conditional read-modify-write
 * (GET, then PUT or PATCH with If-Match, RFC 9110 13.1.1) on one article's counter through
 * all three for 10 s (longer if the restart is slow: at least 3 s after it), while one
 * instance is killed with SIGKILL and started again.
 *
 * Every write appends its own token to the article's body and sets the counter to the
 * count it read plus one. Afterwards:
 * - every acknowledged (2xx) write's token is in the article: nothing acknowledged is lost;
 * - the counter equals the number of tokens: no write overwrote another (no lost update);
 * - the counter equals the 2xx answers plus the writes the database committed whose answer
 *   never reached the client (the instance died between its commit and its response; their
 *   tokens say which);
 * - every other answer is 412 or a connection error.
 *
 * PostgreSQL is checked by test/helpers/postgres.ts (postgresTestOptions); redis-server by
 * test/helpers/peers.ts: without it both tests are skipped (failed under CI=true).
 */
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import pg from 'pg'
import { Agent, request } from 'undici'
import { startPgFleet, postgresTestOptions, type PgFleet } from '../helpers/postgres'
import { peer } from '../helpers/peers'
import { ROOT, childEnv } from '../helpers/paths'

const BASIC = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const CLIENTS = 50
const RUN_MS = 6_000
const KILL_AT_MS = 2_000
// On a loaded machine the restart can take seconds: the run goes on at least this long after it.
const AFTER_RESTART_MS = 3_000

// A request that hangs fails the test (a timeout is not a connection error).
const agent = new Agent({ connect: { timeout: 5000 }, headersTimeout: 10_000, bodyTimeout: 10_000 })
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

function isConnectionError (err: unknown): boolean {
  const e = err as { code?: string, cause?: { code?: string } }
  return CONNECTION_ERRORS.has(e.code ?? '') || CONNECTION_ERRORS.has(e.cause?.code ?? '')
}

interface Article { slug: string, title: string, body: string }

let fleet: PgFleet | undefined

test('50 conditional writers through three instances on PostgreSQL, one instance killed (SIGKILL) and restarted: no lost update', { ...postgresTestOptions(), timeout: 300_000 }, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const started = Date.now()
  fleet = await startPgFleet(3)
  const f = fleet
  t.teardown(() => f.stop())
  const setupMs = Date.now() - started

  const created = await request(`${f.urls[0]}/articles`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ slug: 'counter', title: 'count 0', body: 'log' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
  t.equal(created.statusCode, 201)
  const { id } = await created.body.json() as { id: string }

  const acknowledged = new Set<string>()
  const unanswered = new Set<string>()
  const others: string[] = []
  let requests = 0
  let refused = 0
  let connectionErrors = 0
  let afterRestart = 0
  let restarted = false
  const runStarted = Date.now()
  let until = runStarted + RUN_MS
  let next = 0

  async function writer (client: number): Promise<void> {
    let round = 0
    while (Date.now() < until) {
      round++
      const reader = f.urls[(client + round) % 3]
      const target = (client + round + 1) % 3
      const writeUrl = f.urls[target]
      let article: Article
      let etag: string
      try {
        requests++
        const got = await request(`${reader}/articles/${id}`, { dispatcher: agent })
        if (restarted && reader === f.urls[1]) afterRestart++
        if (got.statusCode !== 200) {
          others.push(`GET ${got.statusCode} ${await got.body.text()}`)
          continue
        }
        etag = got.headers.etag as string
        article = await got.body.json() as Article
      } catch (err) {
        if (!isConnectionError(err)) throw err
        connectionErrors++
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      const n = Number(article.title.split(' ')[1])
      const token = `w${++next}`
      const changes = { title: `count ${n + 1}`, body: `${article.body} ${token}` }
      const patch = client % 2 === 1
      try {
        requests++
        const res = await request(`${writeUrl}/articles/${id}`, {
          method: patch ? 'PATCH' : 'PUT',
          dispatcher: agent,
          body: JSON.stringify(patch ? changes : { slug: article.slug, ...changes }),
          headers: { 'content-type': patch ? 'application/merge-patch+json' : 'application/json', authorization: BASIC, 'if-match': etag }
        })
        await res.body.dump()
        if (restarted && target === 1) afterRestart++
        if (res.statusCode >= 200 && res.statusCode < 300) acknowledged.add(token)
        else if (res.statusCode === 412) refused++
        else others.push(`${patch ? 'PATCH' : 'PUT'} ${res.statusCode}`)
      } catch (err) {
        if (!isConnectionError(err)) throw err
        // The request may have reached the database before the instance died.
        connectionErrors++
        unanswered.add(token)
      }
    }
  }

  async function killAndRestart (): Promise<{ killedAt: number, backAt: number }> {
    await new Promise((resolve) => setTimeout(resolve, KILL_AT_MS))
    const victim = f.instances[1]
    const exited = new Promise((resolve) => victim.child.once('exit', resolve))
    const killedAt = Date.now()
    victim.child.kill('SIGKILL')
    await exited
    await f.restart(1)
    restarted = true
    until = Math.max(until, Date.now() + AFTER_RESTART_MS)
    return { killedAt, backAt: Date.now() }
  }

  const [, outage] = await Promise.all([Promise.all(Array.from({ length: CLIENTS }, (_, i) => writer(i))), killAndRestart()])
  const runMs = Date.now() - runStarted

  const final = await request(`${f.urls[2]}/articles/${id}`, { dispatcher: agent })
  const article = await final.body.json() as Article
  const counter = Number(article.title.split(' ')[1])
  const tokens = article.body.split(' ').slice(1)
  const present = new Set(tokens)
  const lost = [...acknowledged].filter((tk) => !present.has(tk))
  const committedUnanswered = [...unanswered].filter((tk) => present.has(tk)).length
  const phantom = tokens.filter((tk) => !acknowledged.has(tk) && !unanswered.has(tk))

  t.same(others, [], 'every other answer is 412 or a connection error')
  t.equal(lost.length, 0, 'every acknowledged write is in the article')
  t.equal(present.size, tokens.length, 'no write was applied twice')
  t.equal(counter, tokens.length, 'the counter equals the writes applied: no update was lost')
  t.equal(counter, acknowledged.size + committedUnanswered, 'the counter equals the 2xx answers plus the commits whose answer died with the instance')
  t.same(phantom, [], 'nothing was written that no client sent')
  t.ok(acknowledged.size > 0 && refused > 0, 'writes landed and races were refused')
  t.ok(connectionErrors > 0, 'the killed instance cost some connections')
  const again = await request(`${f.urls[1]}/articles/${id}`, { dispatcher: agent })
  t.equal(again.statusCode, 200, `the restarted instance serves the article (it answered ${afterRestart} requests of the run)`)
  t.equal((await again.body.json() as Article).title, article.title)
  t.ok(f.instances.every((s) => s.child.exitCode === null), 'all three instances are running')

  const figures = {
    setupMs,
    runMs,
    clients: CLIENTS,
    requests,
    acknowledgedWrites: acknowledged.size,
    refused412: refused,
    connectionErrors,
    committedButUnanswered: committedUnanswered,
    finalCounter: counter,
    lost: lost.length,
    instanceDownMs: outage.backAt - outage.killedAt,
    answeredByRestarted: afterRestart
  }
  t.comment(`fault run: ${JSON.stringify(figures)}`)
})

test('npm run fleet -- --instances 3 --postgres: three instances on one PostgreSQL it starts, all stopped on SIGTERM', { ...postgresTestOptions(), timeout: 300_000 }, async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'fleet.js'), '--instances', '3', '--postgres'], {
    env: childEnv({ FLEET_PORTS: '0,0,0', LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '', DIGEST_SECRET: '' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // SIGTERM stops the instances, Redis and PostgreSQL, and removes its directory; also when the test fails.
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM') })
  let output = ''
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fleet did not start:\n' + output)), 120_000)
    const onData = (d: Buffer): void => {
      output += d.toString()
      const m = /fleet ready: (\S+) (\S+) (\S+) redis (\S+) postgres (\S+)/.exec(output)
      if (m !== null) { clearTimeout(timer); resolve(m) }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`fleet exited with ${String(code)}:\n${output}`)) })
  })
  const [, a, b, c, , databaseUrl] = ready
  t.equal(new Set([a, b, c]).size, 3, 'three instances')
  t.match(databaseUrl, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/)
  const created = await request(`${a}/articles`, { method: 'POST', dispatcher: agent, body: JSON.stringify({ slug: 'shared', title: 't', body: 'b' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
  const { id } = await created.body.json() as { id: string }
  t.equal(created.statusCode, 201)
  for (const other of [b, c]) {
    const got = await request(`${other}/articles/${id}`, { dispatcher: agent })
    await got.body.dump()
    t.equal(got.statusCode, 200, `the article written through one instance is read through ${other}`)
  }
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0, 'stopped cleanly')
  const port = Number(/:(\d+)\//.exec(databaseUrl)?.[1])
  await t.rejects(new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 }).connect(), Error, `PostgreSQL on port ${port} is stopped`)
})
