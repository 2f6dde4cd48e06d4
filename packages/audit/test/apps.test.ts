/**
 * The auditor against services the suite does not build (docs/audit.md): a plain Fastify app
 * and an Express 5 app serving the same small resource get the exact list of the rules they
 * miss.
 */
import { test, teardown } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import type { Server } from 'node:http'
import { failing, runAudit } from './helpers'

const schema = { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1 }, size: { type: 'integer' } } }
const dir = mkdtempSync(join(os.tmpdir(), 'audit-apps-'))
const config = join(dir, 'config.json')
writeFileSync(config, JSON.stringify({ collection: '/things', item: '/things/{id}', itemMethods: ['GET', 'HEAD', 'PUT', 'DELETE'], schema, sample: { name: 'one', size: 1 } }))
teardown(() => rmSync(dir, { recursive: true, force: true }))

interface Thing { id: string, name: string, size?: number }
/** What these handlers use of Express's request and response (the package ships no types). */
interface Req { body?: unknown, params: Record<string, string> }
interface Res { status: (code: number) => Res, location: (url: string) => Res, json: (body: unknown) => void, end: () => void }
type Handler = (req: Req, res: Res) => void
interface ExpressApp { use: (h: unknown) => void, get: (p: string, h: Handler) => void, post: (p: string, h: Handler) => void, put: (p: string, h: Handler) => void, delete: (p: string, h: Handler) => void, listen: (port: number, host: string) => Server }

const express = require('express') as (() => ExpressApp) & { json: () => unknown }

test('a plain Fastify app: what it misses of the conventions', async (t) => {
  const app = Fastify()
  const things = new Map<string, Thing>()
  let next = 0
  app.get('/things', async () => [...things.values()])
  app.post('/things', { schema: { body: schema } }, async (req, reply) => {
    const thing = { id: String(++next), ...req.body as object } as Thing
    things.set(thing.id, thing)
    return reply.code(201).header('location', `/things/${thing.id}`).send(thing)
  })
  app.get('/things/:id', async (req, reply) => things.get((req.params as { id: string }).id) ?? reply.code(404).send({ error: 'not found' }))
  app.put('/things/:id', { schema: { body: schema } }, async (req, reply) => {
    const { id } = req.params as { id: string }
    if (!things.has(id)) return reply.code(404).send({ error: 'not found' })
    const thing = { id, ...req.body as object } as Thing
    things.set(id, thing)
    return thing
  })
  app.delete('/things/:id', async (req, reply) => { things.delete((req.params as { id: string }).id); return reply.code(204).send() })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const run = await runAudit([url, '--write', '--rate', '0', '--config', config])
  t.same(failing(run), [
    'conditional.etag', 'conditional.if-match', 'conditional.if-none-match-star', 'content-length.chunked', 'content-length.duplicate',
    'content-length.get-body', 'content-length.invalid', 'content-length.limit', 'content-length.mismatch', 'content-length.missing',
    'content-length.with-transfer-encoding', 'content-type.request-charset', 'corp.every-answer', 'errors.envelope', 'rfc.405-allow',
    'rfc.date', 'rfc.one-content-type', 'rfc.options', 'rfc.version-505', 'validation.422', 'validation.422-required'
  ])
  t.equal(run.code, 1)
  t.same(things.size, 0, 'the run deleted what it created')
})

test('an Express 5 app: what it misses of the conventions', async (t) => {
  const app = express()
  const things = new Map<string, Thing>()
  let next = 0
  app.use(express.json())
  app.get('/things', (_req: Req, res: Res) => { res.json([...things.values()]) })
  app.post('/things', (req: Req, res: Res) => {
    const body = req.body as Record<string, unknown> | undefined
    if (typeof body?.name !== 'string') { res.status(400).json({ error: 'name is required' }); return }
    const thing = { id: String(++next), ...body } as Thing
    things.set(thing.id, thing)
    res.status(201).location(`/things/${thing.id}`).json(thing)
  })
  app.get('/things/:id', (req: Req, res: Res) => { const thing = things.get(req.params.id); if (thing === undefined) res.status(404).json({ error: 'not found' }); else res.json(thing) })
  app.put('/things/:id', (req: Req, res: Res) => {
    if (!things.has(req.params.id)) { res.status(404).json({ error: 'not found' }); return }
    const thing = { id: req.params.id, ...req.body as object } as Thing
    things.set(thing.id, thing)
    res.json(thing)
  })
  app.delete('/things/:id', (req: Req, res: Res) => { things.delete(req.params.id); res.status(204).end() })
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  const run = await runAudit([`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '--write', '--rate', '0', '--config', config])
  t.same(failing(run), [
    'conditional.etag-list', 'conditional.if-match', 'conditional.if-none-match', 'conditional.if-none-match-star', 'conditional.weak-strong',
    'content-length.chunked', 'content-length.duplicate', 'content-length.get-body', 'content-length.invalid', 'content-length.limit',
    'content-length.mismatch', 'content-length.missing', 'content-length.with-transfer-encoding', 'content-type.charset',
    'content-type.request-required', 'content-type.unsupported-415', 'corp.every-answer', 'errors.envelope', 'rfc.405-allow', 'rfc.date',
    'rfc.one-content-type', 'rfc.version-505', 'validation.422', 'validation.422-required'
  ])
  t.equal(run.code, 1)
  t.same(things.size, 0, 'the run deleted what it created')
})
