/**
 * The client against a fleet (`npm run fleet`: two instances of the reference service, one
 * Redis, one DIGEST_SECRET, one SQLite file) behind a round-robin balancer: a dispatcher
 * below the client's interceptors that sends each request to the next instance, as a load
 * balancer in front of the fleet would. The client sees one origin; a Digest nonce issued by
 * one instance is counted on the other, conflicting updates through both lose nothing, and
 * delta bases kept in Redis serve reads on either instance.
 * Needs redis-server: without it each test is skipped (failed under CI=true), see
 * test/helpers/peers.ts.
 */
import { test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, type Dispatcher } from 'undici'
import { startRedis, type RedisServer } from '../../../test/helpers/redis'
import { peer } from '../../../test/helpers/peers'
import { credentialsOf } from '../../../test/helpers/service'
import { ROOT, childEnv } from '../../../test/helpers/paths'
import { createConventionsClient, type ClientEvent, type ConventionsClient } from '../src/client'

const SECRET = 'client-fleet-secret-0123456789abcdef'
const dir = mkdtempSync(join(tmpdir(), 'client-fleet-'))
let redis: RedisServer
let fleet: ChildProcess
let output = ''
let instances: string[] = []
/** Which instance each request went to, in order, with its method and status. */
const served: Array<{ instance: number, method: string, status: number }> = []

interface Article { id: string, slug: string, title: string, body: string }

/** Round robin over the instances: each request (each repeat too) goes to the next one. */
function balancer (counter: { next: number }): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const instance = counter.next++ % instances.length
    const record: Dispatcher.DispatchHandler = {
      onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
      onResponseStart: (c, status, headers, message) => { served.push({ instance, method: opts.method, status }); handler.onResponseStart?.(c, status, headers, message) },
      onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
      onResponseEnd: (c, trailers) => handler.onResponseEnd?.(c, trailers),
      onResponseError: (c, err) => handler.onResponseError?.(c, err)
    }
    return dispatch({ ...opts, origin: instances[instance] }, record)
  }
}

/** A client behind its own balancer; `counter.next` is the number of the next request (its instance: modulo 2). */
function client (events: ClientEvent[] = [], counter = { next: 0 }): ConventionsClient {
  const below = new Agent().compose(balancer(counter))
  const c = createConventionsClient({ dispatcher: below, credentials: [{ origin: instances[0], username: 'demo', password: 'demo-password' }], onEvent: (e) => events.push(e), maxAttempts: 20 })
  const close = c.close.bind(c)
  c.close = async () => { await close(); await below.close() }
  return c
}

test('the fleet starts: two instances, one Redis, one secret, one SQLite file', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  redis = await startRedis()
  fleet = spawn(process.execPath, [join(ROOT, 'scripts', 'fleet.js')], {
    cwd: ROOT,
    env: childEnv({ FLEET_PORTS: '0,0', REDIS_URL: redis.url, DIGEST_SECRET: SECRET, DATABASE: join(dir, 'fleet.db'), LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      output += d.toString()
      const m = /fleet ready: (\S+) (\S+) redis/.exec(output)
      if (m !== null) resolve(m)
    }
    fleet.stdout?.on('data', onData)
    fleet.stderr?.on('data', onData)
    fleet.once('exit', (code) => reject(new Error(`the fleet exited with ${String(code)}:\n${output}`)))
  })
  instances = [ready[1], ready[2]]
  t.not(instances[0], instances[1])
})

test('fleet: RFC 7616 3.4: the nonce one instance issued is answered with the next count on the other; one challenge for every write', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const events: ClientEvent[] = []
  const c = client(events)
  t.teardown(() => c.close())
  const from = served.length
  for (let i = 0; i < 4; i++) t.equal((await c.create(`${instances[0]}/articles`, { slug: `fleet-digest-${i}`, title: 'T', body: 'B' })).status, 201)
  t.same(events.filter((e) => e.type === 'challenge-answered').map((e) => e.type === 'challenge-answered' && e.algorithm), ['SHA-256'], 'one Digest login')
  const writes = served.slice(from).filter((s) => s.method === 'POST' && s.status === 201)
  t.same(new Set(writes.map((s) => s.instance)), new Set([0, 1]), 'writes accepted by both instances')
})

test('fleet: RFC 9110 13.1.1: ten conflicting updates through both instances on one database lose nothing', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const c = client()
  t.teardown(() => c.close())
  const url = (await c.create<Article>(`${instances[0]}/articles`, { slug: 'fleet-count', title: 'count 0', body: 'B' })).location as string
  const from = served.length
  await Promise.all(Array.from({ length: 10 }, () => c.update<Article>(url, (a) => ({ slug: a.slug, body: a.body, title: `count ${Number(a.title.split(' ')[1]) + 1}` }))))
  t.equal((await c.get<Article>(url)).body.title, 'count 10')
  const puts = served.slice(from).filter((s) => s.method === 'PUT')
  t.same(new Set(puts.filter((s) => s.status === 200).map((s) => s.instance)), new Set([0, 1]), 'writes accepted by both instances')
  t.ok(puts.some((s) => s.status === 412), 'and refused by either when they lost a race')
})

test('fleet: RFC 3229: a base kept in Redis serves a delta on the other instance than the one that stored it', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const events: ClientEvent[] = []
  const counter = { next: 0 }
  const c = client(events, counter)
  t.teardown(() => c.close())
  const url = (await c.create<Article>(`${instances[0]}/articles`, { slug: 'fleet-delta', title: 'v0', body: 'paragraph\n'.repeat(200) })).location as string
  // A base is stored after the answer is sent: rounds of read, change, read until one delta came
  // from the instance that did not store its base (bounded by a count of rounds, not a time).
  let crossed = false
  for (let round = 1; round <= 30 && !crossed; round++) {
    const before = served.length
    const read = await c.get<Article>(url)
    const storedBy = served[before].instance
    await c.put(url, { slug: read.body.slug, title: `v${round}`, body: read.body.body }, { headers: { 'if-match': read.etag as string } })
    // the next GET must go to the other instance: a PUT and a GET alternate, so skip one turn when needed
    if (counter.next % 2 === storedBy) await c.send('HEAD', url)
    const after = served.length
    const delta = await c.get<Article>(url)
    t.equal(delta.body.title, `v${round}`, 'the whole current instance')
    crossed = served[after].instance !== storedBy && served[after].status === 226
  }
  t.ok(crossed, 'a 226 from the other instance')
  t.ok(events.some((e) => e.type === 'delta' && e.wireStatus === 226 && e.im.includes('vcdiff')))
})

test('the fleet stops cleanly, and no credential reached its logs', async (t) => {
  if (peer(t, 'redis-server') === undefined) {
    rmSync(dir, { recursive: true, force: true })
    return
  }
  fleet.removeAllListeners('exit')
  const exited = once(fleet, 'exit')
  fleet.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0)
  t.same([...credentialsOf({}), SECRET].filter((s) => output.includes(s)), [])
  await redis.stop()
  rmSync(dir, { recursive: true, force: true })
})
