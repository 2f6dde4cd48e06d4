/**
 * The lifecycle of docs/client.md written with plain `fetch`, for the line count beside the
 * client's: the same steps and the same rules (Digest SHA-256 login with nonce counts, If-Match
 * and a re-read on 412, Accept-Patch and a JSON Patch from fast-json-patch's compare, A-IM with
 * the VCDIFF and gzip decoding, a 307 repeated with its method and body). packages/client/test/
 * lifecycle.test.ts runs it against the reference service.
 */
import { createHash, randomBytes } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { compare } from 'fast-json-patch'
import { decode } from '../../vcdiff/src/index'

interface Article { id: string, slug: string, title: string, body: string, tags?: string[], published?: boolean }

export async function plainFetchLifecycle (base: string): Promise<Record<string, unknown>> {
  const user = 'demo'
  const password = 'demo-password'
  const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex')
  let digest: { realm: string, nonce: string, opaque: string, nc: number } | undefined
  let login = ''
  let deltas = 0

  // RFC 7616 3.4: the Authorization of one request, with the next nonce count.
  function authorization (method: string, uri: string): string | undefined {
    if (digest === undefined) return undefined
    const nc = (++digest.nc).toString(16).padStart(8, '0')
    const cnonce = randomBytes(8).toString('hex')
    const response = sha256(`${sha256(`${user}:${digest.realm}:${password}`)}:${digest.nonce}:${nc}:${cnonce}:auth:${sha256(`${method}:${uri}`)}`)
    return `Digest username="${user}", realm="${digest.realm}", uri="${uri}", algorithm=SHA-256, nonce="${digest.nonce}", nc=${nc}, ` +
      `cnonce="${cnonce}", qop=auth, response="${response}", opaque="${digest.opaque}"`
  }

  // One request: a 401 answered with Digest (stale nonces too), a 307 followed by hand with the same method and body
  // (fetch would follow it, but with the Digest uri of the first target).
  async function send (method: string, url: string, body?: unknown, headers: Record<string, string> = {}, type = 'application/json'): Promise<Response> {
    for (let hops = 0, tries = 0; ;) {
      const h: Record<string, string> = { accept: 'application/json', ...headers }
      const auth = authorization(method, new URL(url).pathname)
      if (auth !== undefined) h.authorization = auth
      if (body !== undefined) h['content-type'] = type
      const res = await fetch(url, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' })
      if (res.status === 401 && tries++ < 2) {
        const m = /Digest realm="([^"]+)", qop="auth", algorithm=SHA-256, nonce="([^"]+)", opaque="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')
        if (m === null) return res
        await res.arrayBuffer()
        digest = { realm: m[1], nonce: m[2], opaque: m[3], nc: 0 }
        login = 'digest SHA-256'
        continue
      }
      if (res.status !== 307 || hops++ >= 5) return res
      await res.arrayBuffer()
      url = new URL(res.headers.get('location') as string, url).toString()
    }
  }

  // RFC 3229: a GET with A-IM and the kept instance's ETag; a 226 undone (in reverse), a "not modified" is the kept one.
  const kept = new Map<string, { etag: string, body: Buffer }>()
  async function read (url: string): Promise<{ article: Article, etag: string, acceptPatch: string }> {
    const k = kept.get(url)
    const res = await send('GET', url, undefined, { 'a-im': 'vcdiff, gzip', ...(k === undefined ? {} : { 'if-none-match': k.etag }) })
    let body: Buffer = Buffer.from(await res.arrayBuffer())
    if ((res.status === 412 || res.status === 304) && k !== undefined) {
      body = k.body
    } else if (res.status === 226) {
      deltas++
      for (const im of (res.headers.get('im') ?? '').split(',').map((s) => s.trim()).reverse()) {
        body = im === 'gzip' ? gunzipSync(body) : Buffer.from(decode((k as { body: Buffer }).body, body))
      }
    } else if (res.status !== 200) {
      throw new Error(`GET ${url}: ${res.status}`)
    }
    const etag = res.headers.get('etag') as string
    kept.set(url, { etag, body })
    return { article: JSON.parse(body.toString()) as Article, etag, acceptPatch: res.headers.get('accept-patch') ?? '' }
  }

  // Read, change, write with If-Match; on 412 read again and apply the change to the fresh version.
  async function conditional (url: string, method: 'PUT' | 'PATCH', change: (a: Article) => object): Promise<Article> {
    for (let attempt = 1; ; attempt++) {
      const { article, etag, acceptPatch } = await read(url)
      const next = change(structuredClone(article))
      if (method === 'PATCH' && !acceptPatch.includes('application/json-patch+json')) throw new Error('JSON Patch is not accepted')
      const body = method === 'PUT' ? next : compare(article, next)
      const res = await send(method, url, body, { 'if-match': etag }, method === 'PUT' ? 'application/json' : 'application/json-patch+json')
      if (res.ok) return await res.json() as Article
      if (res.status !== 412 || attempt === 10) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
    }
  }
  const fields = ({ slug, title, body, tags, published }: Article): object => ({ slug, title, body, tags, published })

  const createdRes = await send('POST', `${base}/articles`, { slug: `plain-${Date.now()}`, title: 'count 0', body: 'Hello' })
  if (createdRes.status !== 201) throw new Error(`POST: ${createdRes.status} ${await createdRes.text()}`)
  await createdRes.arrayBuffer()
  const url = new URL(createdRes.headers.get('location') as string, base).toString()
  const read1 = await read(url)
  await Promise.all(Array.from({ length: 10 }, () =>
    conditional(url, 'PUT', (a) => ({ ...fields(a), title: `count ${Number(a.title.split(' ')[1]) + 1}` }))))
  const patched = await conditional(url, 'PATCH', (a) => ({ ...a, tags: ['intro'], published: true }))
  const again = await read(url)
  const moved = await conditional(url.replace('/articles/', '/v1/articles/'), 'PUT', (a) => ({ ...fields(a), body: 'Moved' }))
  return { created: createdRes.status, read: read1.article.title, counted: patched.title, tags: again.article.tags, body: moved.body, login, deltas }
}
