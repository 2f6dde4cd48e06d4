/**
 * The fleet (`npm run fleet`): two reference-service instances sharing Redis, one
 * DIGEST_SECRET and one SQLite file. Nonces and delta bases cross instances, conditional
 * writers through both never lose an update, and a Redis outage degrades (full 200s,
 * Digest fails closed) without a crash and recovers when Redis returns.
 * Every test needs redis-server: without it each is skipped (failed under CI=true), see
 * test/helpers/peers.ts.
 */
import { test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { Agent, request } from 'undici'
import Redis from 'ioredis'
import { startRedis, type RedisServer } from '../helpers/redis'
import { until } from '../helpers/until'
import { peer } from '../helpers/peers'
import { credentialsOf } from '../helpers/service'
import { answer, authorization } from '../lib/auth/digest-client'
import { decode } from '../../packages/vcdiff/src/index'
import { ROOT, childEnv } from '../helpers/paths'

const root = ROOT
const BASIC = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')
const SECRET = 'fleet-test-secret-0123456789abcdef'

let redis: RedisServer
let fleet: ChildProcess
let a: string
let b: string
let output = ''
const dir = mkdtempSync(join(tmpdir(), 'fleet-'))

test('npm run fleet starts two instances on one Redis, one secret and one SQLite file', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  redis = await startRedis()
  fleet = spawn(process.execPath, [join(root, 'scripts', 'fleet.js')], {
    cwd: root,
    env: childEnv({ FLEET_PORTS: '0,0', REDIS_URL: redis.url, DIGEST_SECRET: SECRET, DATABASE: join(dir, 'fleet.db'), LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fleet did not start:\n' + output)), 120_000)
    const onData = (d: Buffer): void => {
      output += d.toString()
      const m = /fleet ready: (\S+) (\S+) redis/.exec(output)
      if (m !== null) { clearTimeout(timer); resolve(m) }
    }
    fleet.stdout?.on('data', onData)
    fleet.stderr?.on('data', onData)
  })
  a = ready[1]
  b = ready[2]
  t.not(a, b)
})

async function post (base: string, auth?: string, slug = `s${Math.random().toString(36).slice(2)}`) {
  const res = await request(`${base}/articles`, { method: 'POST', body: JSON.stringify({ slug, title: 'count 0', body: 'p1\n\np2' }), headers: { 'content-type': 'application/json', ...(auth === undefined ? {} : { authorization: auth }) } })
  const text = await res.body.text()
  const www = res.headers['www-authenticate']
  return { status: res.statusCode, www: Array.isArray(www) ? www : www === undefined ? [] : [www], json: res.statusCode === 201 ? JSON.parse(text) as { id: string } : null }
}

test('a Digest nonce issued by one instance is accepted by the other; a replay on the first is refused', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const challenge = (await post(a)).www.find((w) => /^Digest .*algorithm=SHA-256/.test(w)) ?? ''
  t.match(challenge, /^Digest .*algorithm=SHA-256/)
  const first = answer(challenge, { username: 'demo', password: 'demo-password', method: 'POST', uri: '/articles' })
  t.equal((await post(b, authorization(first))).status, 201, 'the nonce from A is good at B')
  t.equal((await post(a, authorization(first))).status, 401, 'the same nonce count at A is a replay')
  const second = answer(challenge, { username: 'demo', password: 'demo-password', method: 'POST', uri: '/articles', nc: 2 })
  t.equal((await post(a, authorization(second))).status, 201, 'the next count is fine anywhere')
})

test('a delta base stored by one instance serves a 226 from the other', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const created = await post(a, BASIC)
  const id = (created.json as { id: string }).id
  const keys = new Redis(redis.url)
  t.teardown(() => keys.disconnect())
  const stored = async () => (await keys.keys('fhc:instance:*')).length
  const before = await stored()
  // Served to a delta client (A-IM from its first GET): the service keeps it as a base.
  const first = await request(`${a}/articles/${id}`, { headers: { 'a-im': 'vcdiff' } })
  const base = Buffer.from(await first.body.arrayBuffer())
  const oldTag = first.headers.etag as string
  // A base is stored without waiting for Redis (the response is not held back): until it is there.
  await until('the delta base in Redis', async () => (await stored()) > before, 10_000)
  const current = JSON.parse(base.toString()) as Record<string, unknown>
  const put = await request(`${b}/articles/${id}`, { method: 'PUT', body: JSON.stringify({ slug: current.slug, title: 'count 0', body: 'p1 edited\n\np2' }), headers: { 'content-type': 'application/json', authorization: BASIC, 'if-match': oldTag } })
  t.equal(put.statusCode, 200)
  await put.body.dump()
  const delta = await request(`${b}/articles/${id}`, { headers: { 'a-im': 'vcdiff', 'if-none-match': oldTag } })
  t.equal(delta.statusCode, 226)
  t.equal(delta.headers.im, 'vcdiff')
  t.equal(delta.headers['delta-base'], oldTag)
  const rebuilt = Buffer.from(decode(base, new Uint8Array(await delta.body.arrayBuffer())))
  const full = await request(`${a}/articles/${id}`)
  t.same(rebuilt, Buffer.from(await full.body.arrayBuffer()), 'the base from A plus the delta from B is exactly the current instance')
})

test('conditional writers through both instances on one SQLite file: no lost update', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { id } = (await post(a, BASIC)).json as { id: string }
  const until = Date.now() + 3000
  let ok = 0
  let refused = 0
  let other = 0
  async function writer (i: number): Promise<void> {
    const base = i % 2 === 0 ? a : b
    while (Date.now() < until) {
      const get = await request(`${base}/articles/${id}`)
      const article = await get.body.json() as { slug: string, title: string, body: string }
      const n = Number(article.title.split(' ')[1])
      const put = await request(`${base === a ? b : a}/articles/${id}`, {
        method: 'PUT',
        body: JSON.stringify({ slug: article.slug, body: article.body, title: `count ${n + 1}` }),
        headers: { 'content-type': 'application/json', authorization: BASIC, 'if-match': get.headers.etag as string }
      })
      await put.body.dump()
      if (put.statusCode === 200) ok++
      else if (put.statusCode === 412) refused++
      else other++
    }
  }
  await Promise.all(Array.from({ length: 20 }, (_, i) => writer(i)))
  const final = await (await request(`${a}/articles/${id}`)).body.json() as { title: string }
  t.equal(other, 0, 'every answer is 200 or 412')
  t.ok(ok > 0 && refused > 0, `${ok} writes, ${refused} refusals`)
  t.equal(final.title, `count ${ok}`, 'the final count equals the successful writes')
})

test('Redis stops mid-run: deltas degrade to full 200s, Digest fails closed, Basic still works, nothing crashes', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { id } = (await post(a, BASIC)).json as { id: string }
  const first = await request(`${a}/articles/${id}`)
  const tag = first.headers.etag as string
  await first.body.dump()
  const challenge = (await post(a)).www[0]
  await redis.stop()
  const got = await request(`${b}/articles/${id}`, { headers: { 'a-im': 'vcdiff', 'if-none-match': '"no-such-base"' } })
  t.equal(got.statusCode, 200, 'no base can be read: an ordinary 200')
  t.equal(got.headers.im, undefined)
  await got.body.dump()
  const digest = answer(challenge, { username: 'demo', password: 'demo-password', method: 'POST', uri: '/articles' })
  const refused = await post(b, authorization(digest))
  t.equal(refused.status, 401, 'Digest cannot check its nonce count: it fails closed')
  t.ok(refused.www.length > 0)
  t.equal((await post(a, BASIC)).status, 201, 'Basic needs no store')
  const nm = await request(`${a}/articles/${id}`, { headers: { 'if-none-match': tag } })
  t.equal(nm.statusCode, 412, 'conditional requests need no store')
  await nm.body.dump()
  t.equal(fleet.exitCode, null, 'the fleet is still running')
})

test('Redis returns: deltas and Digest recover', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  redis = await startRedis(redis.port)
  const { id } = (await post(a, BASIC)).json as { id: string }
  const status = await until('a Digest write through both instances', async () => {
    const challenge = (await post(b)).www[0]
    const s = (await post(a, authorization(answer(challenge, { username: 'demo', password: 'demo-password', method: 'POST', uri: '/articles' })))).status
    return s === 201 && s
  }, 10_000, 250)
  t.equal(status, 201, 'Digest works again once the instances reconnected')
  // The instances reconnect to Redis on their own schedule, and a base is stored without
  // waiting for Redis: try the whole round (store a base, change, ask for a delta) until it works.
  // The writers above stored well over a minute's instance budget for 127.0.0.1 (bases are
  // counted per client): this round is another client, from another loopback address.
  const client = new Agent({ localAddress: '127.0.0.2' })
  t.teardown(() => client.close())
  let n = 0
  const deltaStatus = await until('a 226 after a base was stored and the article changed', async () => {
    n++
    const first = await request(`${a}/articles/${id}`, { dispatcher: client })
    const tag = first.headers.etag as string
    const current = await first.body.json() as { slug: string }
    const put = await request(`${a}/articles/${id}`, { method: 'PUT', body: JSON.stringify({ slug: current.slug, title: `count ${n}`, body: 'p1\n\np2 changed' }), headers: { 'content-type': 'application/json', authorization: BASIC } })
    await put.body.dump()
    const delta = await request(`${b}/articles/${id}`, { dispatcher: client, headers: { 'a-im': 'vcdiff', 'if-none-match': tag } })
    await delta.body.dump()
    return delta.statusCode === 226 && delta.statusCode
  }, 20_000, 150)
  t.equal(deltaStatus, 226, 'bases are stored and served again')
})

test('the fleet stops cleanly on SIGTERM, and no credential reached its logs', async (t) => {
  if (peer(t, 'redis-server') === undefined) {
    rmSync(dir, { recursive: true, force: true })
    return
  }
  const exited = once(fleet, 'exit')
  fleet.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0)
  const leaked = [...credentialsOf({}), SECRET].filter((c) => output.includes(c))
  t.same(leaked, [])
  await redis.stop()
  rmSync(dir, { recursive: true, force: true })
})
