/**
 * Client errors are logged (docs/plugins.md, "Composing with your own error handler"): each
 * suite error the suite answers is logged once, a 4xx at info with the reason (the errors[]
 * fields, the refused Content-Type, the failed precondition header and the value sent), a 5xx
 * at error; never a credential. Where an app handler passes the error on to Fastify's default
 * handler, Fastify's own line is the one line; a handler that answers itself logs what it likes.
 */
import { test } from 'tap'
import Fastify, { type FastifyInstance, type InjectOptions } from 'fastify'
import { httpConventions, serverOptions, serviceUnavailable, unprocessable } from '../../plugins/index'

const PASSWORD = 'S3cret-Passw0rd-logs'
const TOKEN = 'tok-SECRET-logs-4711'
const BASIC = 'Basic ' + Buffer.from(`demo:${PASSWORD}x`).toString('base64')

interface Line { level: number, msg: string, err?: Record<string, unknown>, [key: string]: unknown }

async function appWithLogs (setup?: (app: FastifyInstance) => void): Promise<{ app: FastifyInstance, raw: string[] }> {
  const raw: string[] = []
  const app = Fastify({ ...serverOptions, logger: { level: 'trace', stream: { write: (s: string) => { raw.push(s) } } } })
  await app.register(httpConventions, { auth: { realm: 'logs', basic: { users: { demo: PASSWORD } }, bearer: { verify: () => null } } })
  setup?.(app)
  const schema = { body: { type: 'object', required: ['title'], additionalProperties: false, properties: { title: { type: 'string' } } } }
  app.post('/v', { schema }, async () => 'ok')
  app.get('/auth', { config: { auth: true } }, async () => 'ok')
  app.get('/etag', { config: { conditional: { validators: () => ({ etag: '"v2"' }) } } }, async () => 'ok')
  app.get('/down', async () => { throw serviceUnavailable('the article store is down') })
  return { app, raw }
}

/** The lines at info and above of one request, other than Fastify's "incoming request" and "request completed". */
function errorLines (raw: string[]): Line[] {
  return raw.map((r) => JSON.parse(r) as Line).filter((l) => l.level >= 30 && l.msg !== 'incoming request' && l.msg !== 'request completed')
}

async function logsOf (app: FastifyInstance, raw: string[], req: InjectOptions): Promise<{ status: number, lines: Line[] }> {
  raw.length = 0
  const res = await app.inject(req)
  return { status: res.statusCode, lines: errorLines(raw) }
}

test('the suite\'s 4xx are logged once at info with the reason; its 5xx at error', async (t) => {
  const { app, raw } = await appWithLogs()
  t.teardown(() => app.close())

  const invalid = await logsOf(app, raw, { method: 'POST', url: '/v', headers: { 'content-type': 'application/json' }, payload: '{"nope":1}' })
  t.equal(invalid.status, 422)
  t.equal(invalid.lines.length, 1, 'one line besides the request\'s own')
  t.equal(invalid.lines[0].level, 30, 'info')
  t.match(invalid.lines[0].err, { statusCode: 422, code: 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY', errors: [{ field: 'title', message: 'is required' }, { field: 'nope', message: 'is not allowed' }] }, 'the errors[] fields')

  const media = await logsOf(app, raw, { method: 'POST', url: '/v', headers: { 'content-type': 'image/png' }, payload: 'x' })
  t.equal(media.status, 415)
  t.equal(media.lines.length, 1)
  t.equal(media.lines[0].level, 30)
  t.match(media.lines[0].err, { statusCode: 415, contentType: 'image/png', errors: [{ field: 'Content-Type' }] }, 'the refused media type')

  const badJson = await logsOf(app, raw, { method: 'POST', url: '/v', headers: { 'content-type': 'application/json' }, payload: '{"title": "pass' })
  t.equal(badJson.status, 400)
  t.equal(badJson.lines.length, 1)
  t.equal(badJson.lines[0].level, 30)
  t.match(badJson.lines[0].err, { statusCode: 400, errors: [{ field: 'body', message: 'body is not well-formed JSON' }] })
  t.notMatch(JSON.stringify(badJson.lines), /pass/, 'no part of the body')

  const precondition = await logsOf(app, raw, { url: '/etag', headers: { 'if-match': '"v1"' } })
  t.equal(precondition.status, 412)
  t.equal(precondition.lines.length, 1)
  t.match(precondition.lines[0].err, { statusCode: 412, precondition: { header: 'If-Match', value: '"v1"' } }, 'the failed precondition and the value sent')

  const down = await logsOf(app, raw, { url: '/down' })
  t.equal(down.status, 503)
  t.equal(down.lines.length, 1)
  t.equal(down.lines[0].level, 50, 'a 5xx at error')
  t.match(down.lines[0], { msg: 'the article store is down', err: { statusCode: 503 } })
})

test('a 401 is logged at info, and no credential reaches the log (at trace): no Authorization value, no password, no token', async (t) => {
  const { app, raw } = await appWithLogs()
  t.teardown(() => app.close())
  const all: string[] = []
  for (const authorization of [undefined, BASIC, `Bearer ${TOKEN}`, `Basic ${PASSWORD}`]) {
    const out = await logsOf(app, raw, { url: '/auth', headers: authorization === undefined ? {} : { authorization } })
    t.equal(out.status, 401, String(authorization))
    t.equal(out.lines.length, 1)
    t.equal(out.lines[0].level, 30)
    t.match(out.lines[0].err, { statusCode: 401, code: 'FST_HTTP_CONVENTIONS_UNAUTHORIZED' })
    all.push(...raw)
  }
  const text = all.join('\n')
  for (const secret of [PASSWORD, TOKEN, BASIC.slice(6), 'authorization']) t.notOk(text.toLowerCase().includes(secret.toLowerCase()), `the log holds no ${secret === 'authorization' ? 'Authorization header' : 'credential'}`)
})

test('passed on by the app\'s handler to Fastify\'s default handler: Fastify\'s line is the one line; answered by the handler: no line of the suite', async (t) => {
  const rethrow = await appWithLogs((app) => { app.setErrorHandler((err) => { throw err }) })
  t.teardown(() => rethrow.app.close())
  const passed = await logsOf(rethrow.app, rethrow.raw, { method: 'POST', url: '/v', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(passed.status, 422)
  t.equal(passed.lines.length, 1, 'one line')
  t.equal(passed.lines[0].level, 30)
  t.match(passed.lines[0].err, { code: 'FST_HTTP_CONVENTIONS_UNPROCESSABLE_ENTITY', errors: [{ field: 'title', message: 'is required' }] }, 'Fastify\'s line carries the error, its errors[] included')

  const own = await appWithLogs((app) => { app.setErrorHandler((_err, _request, reply) => { reply.code(400).send({ mine: true }) }) })
  t.teardown(() => own.app.close())
  const answered = await logsOf(own.app, own.raw, { method: 'POST', url: '/v', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(answered.status, 400)
  t.same(answered.lines, [], 'the app\'s handler answered: it logs what it likes, as with any Fastify error handler')
})

test('the logger\'s level is honoured: at warn, a 4xx logs nothing and a 5xx still logs at error', async (t) => {
  const raw: string[] = []
  const app = Fastify({ ...serverOptions, logger: { level: 'warn', stream: { write: (s: string) => { raw.push(s) } } } })
  await app.register(httpConventions)
  app.get('/thrown', async () => { throw unprocessable({ field: 'a', message: 'b' }) })
  app.get('/down', async () => { throw serviceUnavailable('down') })
  t.teardown(() => app.close())
  t.same((await logsOf(app, raw, { url: '/thrown' })).lines, [])
  const down = await logsOf(app, raw, { url: '/down' })
  t.equal(down.lines.length, 1)
  t.equal(down.lines[0].level, 50)
})
