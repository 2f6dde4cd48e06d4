/**
 * Instance manipulation (conventions (Delta encoding), RFC 3229) against the running reference service
 * (docs/reference-service.md: `GET /articles/{id}` answers A-IM), over real HTTP: a one-paragraph
 * edit of a 100 KB article travels as a VCDIFF delta of at most 2% of the bytes of the 200.
 * Also a fleet of two instances sharing delta bases through Redis (REDIS_URL): it needs
 * redis-server, skipped without it (failed under CI=true), see test/helpers/peers.ts.
 */
import { test } from 'tap'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { startService, type RunningService } from '../helpers/service'
import { rawExchange } from '../helpers/raw'
import { decode } from '../../packages/vcdiff/src/index'
import { DeltaClient } from '../../packages/client/src/delta-client'
import { startRedis } from '../helpers/redis'
import { peer } from '../helpers/peers'

const AUTH = 'Basic ' + Buffer.from('demo:demo-password').toString('base64')

/** About 100 KB of prose in paragraphs (deterministic). */
function paragraphs (): string[] {
  const words = 'the of and to in is that for it as was with be by on not this are or from at which request response header server client cache delta encoding instance version resource entity validator window source target address'.split(' ')
  let s = 42
  const next = (): number => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s >>> 4 }
  const out: string[] = []
  let size = 0
  while (size < 100 * 1024) {
    const w: string[] = []
    for (let i = 0; i < 60 + (next() % 40); i++) w.push(words[next() % words.length])
    const p = w.join(' ') + '.'
    out.push(p[0].toUpperCase() + p.slice(1))
    size += p.length + 2
  }
  return out
}

interface Wire { status: number, headers: Record<string, string>, body: Buffer, bytes: number }

/** One GET over a fresh connection: the exact bytes the server wrote. */
async function wireGet (svc: RunningService, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Wire> {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
  const { raw } = await rawExchange(svc.port, lines.join('\r\n') + '\r\n\r\n', { waitMs: 5000 })
  const bytes = Buffer.from(raw, 'latin1')
  const end = bytes.indexOf('\r\n\r\n')
  const head = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const out: Record<string, string> = {}
  for (const line of head.slice(1)) {
    const i = line.indexOf(':')
    out[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
  }
  return { status: Number(head[0].split(' ')[1]), headers: out, body: bytes.subarray(end + 4), bytes: bytes.length }
}

async function create (svc: RunningService, slug: string, body: string): Promise<{ id: string, etag: string }> {
  const res = await request(`${svc.url}/articles`, { method: 'POST', body: JSON.stringify({ slug, title: 'A long article', body, tags: ['delta'] }), headers: { 'content-type': 'application/json', authorization: AUTH } })
  const a = await res.body.json() as { id: string }
  if (res.statusCode !== 201) throw new Error(`POST answered ${res.statusCode}`)
  return { id: a.id, etag: res.headers.etag as string }
}

async function put (svc: RunningService, id: string, slug: string, body: string, etag: string): Promise<string> {
  const res = await request(`${svc.url}/articles/${id}`, { method: 'PUT', body: JSON.stringify({ slug, title: 'A long article', body, tags: ['delta'] }), headers: { 'content-type': 'application/json', 'if-match': etag, authorization: AUTH } })
  await res.body.dump()
  if (res.statusCode !== 200) throw new Error(`PUT answered ${res.statusCode}`)
  return res.headers.etag as string
}

let svc: RunningService

test('start the service', async () => {
  svc = await startService()
})

test('conventions (Delta encoding): one edited paragraph of a 100 KB article travels as a 226 delta of at most 2% of the 200', async (t) => {
  const paras = paragraphs()
  const a = await create(svc, 'delta-long', paras.join('\n\n'))
  // A delta client sends A-IM from its first GET: the service keeps bases once a client asked.
  const first = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff' })
  t.equal(first.status, 200)
  t.ok(first.body.length > 100 * 1024, `the 200 carries ${first.body.length} B`)
  const old = first.headers.etag
  t.equal(old, a.etag)

  const edited = [...paras]
  edited[Math.floor(paras.length / 2)] = 'This paragraph was rewritten: the delta carries these words and little else, while the rest of the article is copied from the instance the client already holds.'
  const newEtag = await put(svc, a.id, 'delta-long', edited.join('\n\n'), old)

  const full = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': '"not-kept"' })
  t.equal(full.status, 200, 'an unknown base: the whole instance')
  const res = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': old })
  t.equal(res.status, 226)
  t.equal(res.headers.im, 'vcdiff')
  t.equal(res.headers.etag, newEtag, 'RFC 3229 10.4.1: the ETag of the new instance')
  t.equal(res.headers['delta-base'], old, 'RFC 3229 10.5.1')
  t.equal(res.headers['cache-control'], 'no-store, im', 'RFC 3229 10.8.2')
  t.equal(res.headers['content-type'], full.headers['content-type'], 'the Content-Type of the instance')
  t.equal(Number(res.headers['content-length']), res.body.length)
  t.equal(res.headers['cross-origin-resource-policy'], 'same-origin', 'the resource policy header is kept on the 226 (docs/reference-service.md)')
  const decoded = Buffer.from(decode(first.body, res.body))
  t.ok(decoded.equals(full.body), 'base + delta = exactly the new body')
  t.equal(JSON.parse(decoded.toString()).body, edited.join('\n\n'))
  const ratio = res.bytes / full.bytes
  t.ok(ratio <= 0.02, `bytes on the wire: 226 ${res.bytes} B / 200 ${full.bytes} B = ${(ratio * 100).toFixed(2)}% (target <= 2%)`)

  const head = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': old }, 'HEAD')
  t.equal(head.status, 226, 'HEAD makes GET\'s decision')
  t.equal(head.headers['content-length'], res.headers['content-length'])
  t.equal(head.body.length, 0)

  const gz = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff, gzip', 'If-None-Match': old })
  t.equal(gz.status, 226)
  t.match(gz.headers.im, /^vcdiff(, gzip)?$/, 'RFC 3229 10.5.2: in the order applied')

  const current = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': newEtag })
  t.equal(current.status, 412, 'conventions (Conditional requests): If-None-Match naming the current instance is 412, never a 226')

  const xml = await wireGet(svc, `/articles/${a.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': old, Accept: 'application/xml' })
  t.equal(xml.status, 200, 'no XML instance was kept under the old ETag: no delta across representations')
  t.match(xml.headers['content-type'], /^application\/xml/)
})

test('the client helper reads the service: a whole article, then deltas, then "not modified"', async (t) => {
  const paras = paragraphs()
  const a = await create(svc, 'delta-client', paras.join('\n\n'))
  const client = new DeltaClient({ aim: 'vcdiff' })
  const url = `${svc.url}/articles/${a.id}`
  const first = await client.get(url)
  t.equal(first.wireStatus, 200)
  let etag = first.etag as string
  for (let round = 1; round <= 3; round++) {
    paras[round * 10] = `Edited in round ${round}.`
    etag = await put(svc, a.id, 'delta-client', paras.join('\n\n'), etag)
    const res = await client.get(url)
    t.equal(res.wireStatus, 226, `round ${round}: a delta`)
    t.equal(JSON.parse(res.body.toString()).body, paras.join('\n\n'))
    t.ok(res.wireBytes < first.wireBytes / 50, `round ${round}: ${res.wireBytes} B instead of ${first.wireBytes} B`)
  }
  const same = await client.get(url)
  t.equal(same.wireStatus, 412)
  t.equal(same.notModified, true)
  t.equal(JSON.parse(same.body.toString()).body, paras.join('\n\n'))
})

test('stop the service', async (t) => {
  t.equal(await svc.stop(), 0)
})

test('REDIS_URL: a fleet shares delta bases; one instance serves the 200, another the 226', async (t) => {
  if (peer(t, 'redis-server') === undefined) return
  const { port, proc } = await startRedis()
  const dir = mkdtempSync(join(os.tmpdir(), 'delta-fleet-'))
  const env = { REDIS_URL: `redis://127.0.0.1:${port}`, DATABASE: join(dir, 'articles.db') }
  const a = await startService(env)
  const b = await startService(env)
  t.teardown(async () => {
    await a.stop()
    await b.stop()
    const exited = once(proc, 'exit')
    proc.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  })
  const paras = paragraphs()
  const created = await create(a, 'delta-fleet', paras.join('\n\n'))
  const first = await wireGet(a, `/articles/${created.id}`, { 'A-IM': 'vcdiff' })
  paras[3] = 'Edited through instance A.'
  const newEtag = await put(a, created.id, 'delta-fleet', paras.join('\n\n'), first.headers.etag)
  const res = await wireGet(b, `/articles/${created.id}`, { 'A-IM': 'vcdiff', 'If-None-Match': first.headers.etag })
  t.equal(res.status, 226, 'instance B found the base instance A kept in Redis')
  t.equal(res.headers.etag, newEtag)
  t.equal(JSON.parse(Buffer.from(decode(first.body, res.body)).toString()).body, paras.join('\n\n'))
})
