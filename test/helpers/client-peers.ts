/**
 * Peers for the client tests, each on a real socket:
 * - `recorder(answer)`: a bare Node server that records every request (method, URL,
 *   headers, body bytes) and answers with `answer`; its origin differs from every other
 *   server's (its own port), for the cross-origin rules.
 * - `thingsApp(options)`: a small resource `/things/:id` served with the suite's own
 *   plugins (auth, conditional requests, PATCH), for what the reference service does not
 *   offer: Digest SHA-512-256, -sess and userhash, a clock for stale nonces, 428, a
 *   resource with only Last-Modified, a PATCH route that takes one format.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildApp, listen } from './app'
import type { HttpConventionsOptions } from '../../plugins/index'

export interface Recorded { method: string, url: string, headers: IncomingMessage['headers'], body: Buffer }

export interface Recorder { origin: string, requests: Recorded[], close: () => Promise<void> }

export async function recorder (answer: (req: Recorded, res: ServerResponse, origin: string) => void): Promise<Recorder> {
  const requests: Recorded[] = []
  let origin = ''
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r = { method: req.method as string, url: req.url as string, headers: req.headers, body: Buffer.concat(chunks) }
      requests.push(r)
      answer(r, res, origin)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

export interface Thing { name: string, count: number, tags?: string[] }

export interface ThingsOptions {
  suite?: HttpConventionsOptions
  /** which validators the resource has (default both) */
  validators?: 'etag' | 'last-modified' | 'none'
  patchFormats?: Array<'json-patch' | 'merge-patch'>
  /** protect the writes (default: when `suite.auth` is set) */
  protect?: boolean
}

export interface ThingsApp { app: FastifyInstance, origin: string, things: Map<string, { doc: Thing, version: number }>, url: (id: string) => string }

const SCHEMA = {
  type: 'object',
  required: ['name', 'count'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } } }
}

export async function thingsApp (options: ThingsOptions = {}): Promise<ThingsApp> {
  const app = await buildApp(options.suite ?? {})
  const things = new Map<string, { doc: Thing, version: number }>()
  const kind = options.validators ?? 'both'
  const protect = options.protect ?? options.suite?.auth !== undefined
  const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id
  const validatorsOf = (stored: { version: number }): { etag?: string, lastModified?: number } => ({
    ...(kind === 'both' || kind === 'etag' ? { etag: `"v${stored.version}"` } : {}),
    ...(kind === 'both' || kind === 'last-modified' ? { lastModified: Date.UTC(2020, 0, 1) + stored.version * 1000 } : {})
  })
  const validators = async (request: FastifyRequest): Promise<{ etag?: string, lastModified?: number } | null> => {
    const stored = things.get(idOf(request))
    return stored === undefined ? null : validatorsOf(stored)
  }
  const send = (reply: import('fastify').FastifyReply, stored: { doc: Thing, version: number }): unknown => {
    const v = validatorsOf(stored)
    if (v.etag !== undefined) reply.header('etag', v.etag)
    if (v.lastModified !== undefined) reply.header('last-modified', new Date(v.lastModified).toUTCString())
    return reply.send(stored.doc)
  }
  const auth = protect ? { auth: true } : {}
  app.get('/things/:id', { config: { conditional: { validators } } }, async (request, reply) => {
    const stored = things.get(idOf(request))
    if (stored === undefined) return reply.callNotFound()
    return send(reply, stored)
  })
  app.put('/things/:id', { schema: { body: SCHEMA }, config: { conditional: { validators, creates: false }, ...auth } }, async (request, reply) => {
    const stored = things.get(idOf(request)) as { doc: Thing, version: number }
    const next = { doc: request.body as Thing, version: stored.version + 1 }
    things.set(idOf(request), next)
    return send(reply, next)
  })
  app.patch('/things/:id', {
    config: {
      ...auth,
      patch: {
        schema: SCHEMA,
        formats: options.patchFormats,
        load: (request) => {
          const stored = things.get(idOf(request))
          return stored === undefined ? null : { document: stored.doc, ...validatorsOf(stored) }
        },
        save: (request, document) => {
          const stored = things.get(idOf(request)) as { doc: Thing, version: number }
          const next = { doc: document as Thing, version: stored.version + 1 }
          things.set(idOf(request), next)
          return { document: next.doc, ...validatorsOf(next) }
        }
      }
    }
  }, async (request, reply) => {
    const patched = request.patched as { document: Thing }
    return send(reply, { doc: patched.document, version: (things.get(idOf(request)) as { version: number }).version })
  })
  const port = await listen(app)
  const origin = `http://127.0.0.1:${port}`
  return { app, origin, things, url: (id) => `${origin}/things/${id}` }
}
