/**
 * No credential in a log line (RFC 6750 2.3 and 5.3: tokens in URLs end up in logs; RFC
 * 3986 3.2.1: a password in a userinfo): Fastify's own request lines, "Route GET:/x?... not
 * found" (the default not-found handler and `reply.callNotFound()`), "incoming request" and
 * the 5xx error line, with the logger the suite's `serverOptions` sets up, whatever the
 * serializers; the reference service likewise. Log lines are captured from a stream logger.
 */
import { test, type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import { buildApp, listen } from '../helpers/app'
import { buildService } from '../../example/app'
import { answer, authorization } from '../lib/auth/digest-client'
import { REDACTED } from '../../packages/grammar/src/redact'
import { serverOptions } from '../../plugins/index'

const TOKEN = 'qTok-9f3a-SECRET-7731'
const KEY = 'kKey-1b2c-SECRET-0042'
const PASSWORD = 'pW-SECRET-ab12'
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64')

function capture (): { lines: string[], logger: { level: string, stream: { write: (s: string) => void } } } {
  const lines: string[] = []
  return { lines, logger: { level: 'trace', stream: { write: (s: string) => { lines.push(s) } } } }
}

function noSecret (t: Test, lines: string[], secrets: string[]): void {
  t.ok(lines.length > 0, 'something was logged')
  for (const s of secrets) t.notOk(lines.some((l) => l.includes(s)), `no log line carries ${s.slice(0, 6)}...`)
}

const SECRET_URLS = [
  `/nothing?access_token=${TOKEN}`,
  `/nothing?x=1&api_key=${KEY}#${TOKEN}`,
  `/nothing?ACCESS%5FTOKEN=${TOKEN}`,
  `/gone?access_token=${TOKEN}`,
  `/boom?access_token=${TOKEN}`
]

async function suiteApp (t: Test, server: Record<string, unknown>): Promise<ReturnType<typeof buildApp>> {
  const app = await buildApp({ auth: { realm: 'logs', basic: { users: { alice: PASSWORD } }, bearer: { verify: (tk) => (tk === TOKEN ? { subject: 's', scopes: [] } : null) }, digest: { secret: 'log-redaction-secret-log-redaction!!', users: { alice: PASSWORD } } } }, server)
  app.get('/gone', async (_request, reply) => reply.callNotFound())
  app.get('/boom', async () => { throw new Error('store exploded') })
  app.get('/me', { config: { auth: true } }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  return await app
}

test('RFC 6750 5.3: Fastify\'s not-found, incoming-request and 5xx lines never carry a token from the query', async (t) => {
  const { lines, logger } = capture()
  const app = await suiteApp(t, { logger })
  for (const url of SECRET_URLS) await app.inject({ url })
  t.ok(lines.some((l) => l.includes('not found') && l.includes(`access_token=${REDACTED}`)), 'the not-found line names the route, the value redacted')
  t.ok(lines.filter((l) => l.includes('not found')).length >= 4, 'callNotFound() logs its line too')
  t.ok(lines.some((l) => l.includes('store exploded') && l.includes(`access_token=${REDACTED}`)), 'the 5xx line logs the redacted req')
  noSecret(t, lines, [TOKEN, KEY])
})

test('RFC 9110 11.6.2: Basic, Bearer and Digest credentials in Authorization are never logged, on routes and on not-found', async (t) => {
  const { lines, logger } = capture()
  const app = await suiteApp(t, { logger })
  const challenge = String((await app.inject({ url: '/me' })).headers['www-authenticate']?.[0])
  const digest = answer(challenge, { username: 'alice', password: PASSWORD, uri: '/me' })
  const values = [`Basic ${b64(`alice:${PASSWORD}`)}`, `Bearer ${TOKEN}`, authorization(digest)]
  for (const value of values) {
    t.equal((await app.inject({ url: '/me', headers: { authorization: value } })).statusCode, 200)
    t.equal((await app.inject({ url: `/nothing?access_token=${TOKEN}`, headers: { authorization: value } })).statusCode, 404)
  }
  noSecret(t, lines, [TOKEN, PASSWORD, b64(`alice:${PASSWORD}`), digest.response])
})

test('RFC 3986 3.2.1: over a real socket, an absolute-form target\'s userinfo password and query are redacted', async (t) => {
  const { lines, logger } = capture()
  const app = await suiteApp(t, { logger })
  const port = await listen(app)
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `http://alice:${PASSWORD}@127.0.0.1:${port}/nothing?token=${TOKEN}` }, (res) => { res.resume(); resolve(res.statusCode ?? 0) })
    req.on('error', reject)
    req.end()
  })
  t.equal(status, 404)
  t.ok(lines.some((l) => l.includes('not found')))
  noSecret(t, lines, [TOKEN, PASSWORD])
})

test('a URL without query, fragment or userinfo is logged as it is; disableRequestLogging still silences request lines', async (t) => {
  const { lines, logger } = capture()
  const app = await suiteApp(t, { logger })
  await app.inject({ url: '/nothing/plain' })
  t.ok(lines.some((l) => l.includes('Route GET:/nothing/plain not found')))
  const quiet = capture()
  const silent = await suiteApp(t, { logger: quiet.logger, disableRequestLogging: true })
  await silent.inject({ url: `/nothing?access_token=${TOKEN}` })
  await silent.inject({ url: '/boom' })
  t.notOk(quiet.lines.some((l) => l.includes('not found') || l.includes('incoming request')), 'no request line')
  const byFunction = capture()
  const some = await suiteApp(t, { logger: byFunction.logger, disableRequestLogging: (r: { url: string }) => r.url.startsWith('/nothing') })
  await some.inject({ url: `/nothing?access_token=${TOKEN}` })
  await some.inject({ url: '/gone' })
  t.notOk(byFunction.lines.some((l) => l.includes('/nothing')), 'the function silences the lines it picks')
  t.ok(byFunction.lines.some((l) => l.includes('Route GET:/gone not found')), 'and only those')
})

test('reference service: not-found and reply.callNotFound() lines carry no credential', async (t) => {
  const { lines, logger } = capture()
  const app = await buildService({ database: ':memory:', bodyLimit: 1 << 20, profile: 'spec', logger })
  t.teardown(() => app.close())
  await app.ready()
  await app.inject({ url: `/nothing?access_token=${TOKEN}` })
  await app.inject({ url: `/articles/00000000-0000-4000-8000-000000000000?access_token=${TOKEN}` })
  await app.inject({ method: 'DELETE', url: `/articles/x?api_key=${KEY}`, headers: { authorization: `Basic ${b64('demo:demo-password')}` } })
  t.ok(lines.filter((l) => l.includes('not found')).length >= 2, 'both not-found paths log')
  noSecret(t, lines, [TOKEN, KEY, b64('demo:demo-password')])
})

test('the warning Fastify logs when writing a 5xx head fails carries the redacted req too', async (t) => {
  const { lines, logger } = capture()
  const app = await suiteApp(t, { logger })
  await app.ready()
  const request = { raw: { url: `/x?access_token=${TOKEN}` }, originalUrl: `/x?access_token=${TOKEN}`, url: `/x?access_token=${TOKEN}`, method: 'GET', server: app, log: app.log, headers: {} }
  serverOptions.logController.writeHeadError(new Error('head failed'), request as never, { log: app.log, statusCode: 500 } as never)
  t.ok(lines.some((l) => l.includes('head failed') && l.includes(`access_token=${REDACTED}`)))
  noSecret(t, lines, [TOKEN])
})
