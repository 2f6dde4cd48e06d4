// Real clients against the Digest core behind a plain node:http server (no framework):
// curl (its own RFC 7616 implementation; skipped without it, see test/helpers/peers.ts)
// and the digest-fetch package.
import { test } from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { peer } from '../../helpers/peers'
import { createDigest, digestUserhash, type DigestAlgorithm, type DigestOptions, type DigestUserLookup } from '../../../lib/auth/digest'

const run = promisify(execFile)
const USER = 'Mufasa'
const PASSWORD = 'Circle of Life'

const lookup: DigestUserLookup = ({ username, userhash, hash, realm }) => {
  const name = userhash ? (digestUserhash(hash, USER, realm) === username ? USER : undefined) : username
  return name === USER ? { username: USER, password: PASSWORD } : null
}

async function serve (options: Omit<DigestOptions, 'secret'>): Promise<{ url: string, close: () => Promise<void>, log: string[] }> {
  const digest = createDigest({ secret: 'interop-secret-interop-secret-interop!', ...options })
  const log: string[] = []
  const server = http.createServer((req, res) => {
    digest.verifyAuthorization(req.headers.authorization, req.method ?? 'GET', req.url ?? '/', lookup).then((r) => {
      log.push(r.ok ? `ok ${r.algorithm} ${r.nc}${r.userhash ? ' userhash' : ''}` : r.reason)
      if (r.ok) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${r.username}`)
      } else {
        // RFC 9110 11.6.1: one WWW-Authenticate line per challenge
        res.writeHead(401, { 'www-authenticate': digest.challenges(r.stale), 'content-type': 'text/plain' }).end('Unauthorized')
      }
    }, (err) => { res.writeHead(500).end(String(err)) })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: async () => { server.closeAllConnections(); server.close(); await once(server, 'close') }
  }
}

let curlPath = 'curl'

async function curl (url: string, password = PASSWORD): Promise<string> {
  const { stdout } = await run(curlPath, ['-s', '--digest', '-u', `${USER}:${password}`, '-w', ' %{http_code}', url])
  return stdout
}

// Not SHA-512-256: curl before 8.8 labels its answer SHA-512-256 but computes it with
// SHA-256, which a correct server refuses (digest-fetch covers SHA-512-256 below).
for (const algorithm of ['SHA-256', 'SHA-256-sess', 'MD5', 'MD5-sess'] as DigestAlgorithm[]) {
  test(`interop: curl --digest answers a ${algorithm} challenge`, async (t) => {
    const path = peer(t, 'curl')
    if (path === undefined) return
    curlPath = path
    const srv = await serve({ realm: 'interop@example.org', algorithms: [algorithm] })
    t.teardown(srv.close)
    t.equal(await curl(`${srv.url}/dir/index.html?a=1&b=%20`), `hello ${USER} 200`)
    t.equal(await curl(`${srv.url}/`, 'wrong'), 'Unauthorized 401')
    t.same(srv.log, ['missing', `ok ${algorithm} 1`, 'missing', 'invalid'])
  })
}

test('interop: curl picks one of several challenges and hashes the user name when offered (RFC 7616 3.4.4)', async (t) => {
  const path = peer(t, 'curl')
  if (path === undefined) return
  curlPath = path
  const srv = await serve({ realm: 'interop@example.org', algorithms: ['SHA-256', 'MD5'], userhash: true })
  t.teardown(srv.close)
  t.equal(await curl(`${srv.url}/x`), `hello ${USER} 200`)
  t.match(srv.log[1], /^ok (SHA-256|MD5) 1 userhash$/)
})

test('interop: digest-fetch (every algorithm), several requests on one nonce', async (t) => {
  const { default: DigestClient } = await import('digest-fetch') as unknown as { default: new (u: string, p: string, o: object) => { fetch: (url: string, o?: object) => Promise<Response> } }
  for (const algorithm of ['SHA-512-256', 'SHA-512-256-sess', 'SHA-256', 'SHA-256-sess', 'MD5', 'MD5-sess'] as DigestAlgorithm[]) {
    const srv = await serve({ realm: 'interop@example.org', algorithms: [algorithm] })
    const client = new DigestClient(USER, PASSWORD, { algorithm })
    for (const path of ['/a', '/b?c=d', '/a']) {
      const res = await client.fetch(srv.url + path)
      t.equal(res.status, 200, `${algorithm} ${path}`)
      t.equal(await res.text(), `hello ${USER}`)
    }
    t.equal(srv.log.filter((l) => l.startsWith('ok')).length, 3, `${algorithm}: ${srv.log.join(', ')}`)
    await srv.close()
  }
})
