/**
 * Credentials never appear in logs, error messages or responses: every scheme, every
 * kind of success and failure, with the logger at its most verbose level.
 */
import { test } from 'tap'
import { buildApp, listen } from '../helpers/app'
import { rawRequest } from '../helpers/raw'
import { answer, authorization } from '../lib/auth/digest-client'
import type { NonceCountStore } from '../../lib/io/stores/nonce-store'

const PASSWORD = 'S3cret-Passw0rd-zq'
const TOKEN = 'tok-SECRET-4711-zq'
const READ_TOKEN = 'tok-READONLY-0815-zq'
const OLD_TOKEN = 'tok-EXPIRED-9999-zq'
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')

test('no credential reaches the logs, error messages or responses, whatever the scheme and outcome', async (t) => {
  const logs: string[] = []
  let now = Date.now()
  let storeDown = false
  const memory = new Map<string, boolean>()
  const store: NonceCountStore = {
    seen: async (nonce, nc) => {
      if (storeDown) throw new Error('store down')
      const key = `${nonce}:${nc}`
      const used = memory.has(key)
      memory.set(key, true)
      return used
    }
  }
  const app = await buildApp({
    auth: {
      realm: 'logs',
      basic: { users: { alice: PASSWORD }, scopes: ['write'] },
      bearer: {
        verify: (token) => {
          if (token === TOKEN) return { subject: 'svc', scopes: ['write'] }
          if (token === READ_TOKEN) return { subject: 'svc', scopes: ['read'] }
          if (token === OLD_TOKEN) return { subject: 'svc', scopes: ['write'], expiresAt: 1 }
          return null
        }
      },
      digest: { secret: 'logs-secret-logs-secret-logs-secret!!', algorithms: ['SHA-256', 'MD5'], users: { alice: PASSWORD }, nonceTtlMs: 1000, now: () => now, store, scopes: ['write'] }
    }
  }, { logger: { level: 'trace', stream: { write: (s: string) => { logs.push(s) } } } })
  app.get('/p', { config: { auth: { scopes: ['write'] } } }, async (req) => ({ who: req.principal?.subject }))
  const port = await listen(app)
  t.teardown(() => app.close())

  const secrets = new Set<string>([PASSWORD, TOKEN, READ_TOKEN, OLD_TOKEN, b64(`alice:${PASSWORD}`), b64(`alice:${PASSWORD}x`), b64(`bob:${PASSWORD}`)])
  const responses: string[] = []
  const send = async (authz?: string): Promise<number> => {
    const res = await app.inject({ url: '/p', headers: authz === undefined ? {} : { authorization: authz } })
    responses.push(res.body, JSON.stringify(res.headers))
    return res.statusCode
  }
  const digest = async (password: string, nc = 1, challenge?: string): Promise<{ status: number, challenge: string }> => {
    const c = challenge ?? String((await app.inject({ url: '/p' })).headers['www-authenticate']?.[0])
    const params = answer(c, { username: 'alice', password, uri: '/p', nc })
    secrets.add(params.response)
    return { status: await send(authorization(params)), challenge: c }
  }

  t.equal(await send(`Basic ${b64(`alice:${PASSWORD}`)}`), 200, 'Basic ok')
  t.equal(await send(`Basic ${b64(`alice:${PASSWORD}x`)}`), 401, 'Basic wrong password')
  t.equal(await send(`Basic ${b64(`bob:${PASSWORD}`)}`), 401, 'Basic unknown user')
  t.equal(await send(`Basic ${Buffer.from([0x61, 0x3a, 0xff]).toString('base64')}`), 401, 'Basic not UTF-8')
  t.equal(await send(`Bearer ${TOKEN}`), 200, 'Bearer ok')
  t.equal(await send(`Bearer ${TOKEN}x`), 401, 'Bearer unknown')
  t.equal(await send(`Bearer ${OLD_TOKEN}`), 401, 'Bearer expired')
  t.equal(await send(`Bearer ${READ_TOKEN}`), 401, 'Bearer insufficient scope')
  t.equal(await send(`Bearer ${TOKEN} trailing`), 401, 'Bearer malformed')
  const ok = await digest(PASSWORD)
  t.equal(ok.status, 200, 'Digest ok')
  t.equal((await digest(PASSWORD, 1, ok.challenge)).status, 401, 'Digest replay')
  t.equal((await digest(`${PASSWORD}x`)).status, 401, 'Digest wrong password')
  const old = String((await app.inject({ url: '/p' })).headers['www-authenticate']?.[0])
  now += 5000
  t.equal((await digest(PASSWORD, 1, old)).status, 401, 'Digest stale')
  storeDown = true
  t.equal((await digest(PASSWORD)).status, 401, 'Digest with the store down')
  storeDown = false
  const dup = await rawRequest(port, `GET /p HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAuthorization: Basic ${b64(`alice:${PASSWORD}`)}\r\n\r\n`)
  t.equal(dup.status, 401, 'duplicated Authorization')
  responses.push(dup.raw)
  const long = await rawRequest(port, `GET /p HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}${'a'.repeat(9000)}\r\n\r\n`)
  t.equal(long.status, 401, 'too long')
  responses.push(long.raw)

  const logText = logs.join('')
  t.match(logText, /credentials refused/, 'refusals are logged (without credentials)')
  t.match(logText, /fail closed/)
  for (const secret of secrets) {
    t.notOk(logText.includes(secret), `the logs never hold ${secret.slice(0, 6)}…`)
    t.notOk(responses.some((r) => r.includes(secret)), `no response holds ${secret.slice(0, 6)}…`)
  }
  t.notOk(/"authorization"\s*:/i.test(logText), 'the Authorization header is never logged')
})
