/**
 * A small app that uses every convention that chooses an answer by a request header: an
 * article answered JSON or XML by Accept (each representation with its own strong ETag,
 * RFC 9110 8.8.3, as the reference service does), conditional on every method, PATCH,
 * A-IM deltas on its GET, Prefer: return=minimal on its writes, and the suite's errors.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { buildApp } from './app'
import { negotiateMediaType } from '../../plugins/entries/headers'
import type { ErrorFormat, Profile } from '../../plugins/index'

export interface Article { title: string, body: string, tags: string[] }

const XML = { root: 'article', itemNames: { tags: 'tag' } }
const SCHEMA = {
  type: 'object',
  required: ['title', 'body', 'tags'],
  additionalProperties: false,
  properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }
}

/** A body long enough that a delta between two versions is smaller than either. */
function article (version: number): Article {
  return { title: `version ${version}`, body: 'lorem ipsum dolor sit amet '.repeat(40), tags: ['a', 'b'] }
}

export interface NegotiatedApp {
  app: FastifyInstance
  /** Puts the store back in its first state (article 1 at version 2). */
  reset: () => void
}

/** The ETag of the representation the request's Accept selects: `"v2"` for JSON, `"v2.xml"` for XML. */
function etagFor (request: FastifyRequest, version: number): string {
  return negotiateMediaType(request.headers.accept, ['application/json', 'application/xml']) === 'application/xml' ? `"v${version}.xml"` : `"v${version}"`
}

export async function negotiatedApp (profile: Profile, errorFormat?: ErrorFormat, seedAccepts: ReadonlyArray<string | undefined> = [undefined]): Promise<NegotiatedApp> {
  const app = await buildApp({ profile, errorFormat })
  let rows = new Map<string, { version: number, article: Article }>()
  const reset = (): void => { rows = new Map([['1', { version: 2, article: article(2) }]]) }
  const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id
  const validators = (request: FastifyRequest): { etag: string } | null => {
    const row = rows.get(idOf(request))
    return row === undefined ? null : { etag: etagFor(request, row.version) }
  }
  const send = (request: FastifyRequest, reply: FastifyReply, id: string, status = 200): FastifyReply => {
    const row = rows.get(id) as { version: number, article: Article }
    return reply.code(status).header('etag', etagFor(request, row.version)).send(row.article)
  }
  const notFound = (reply: FastifyReply): FastifyReply => reply.code(404).send({ errors: [{ message: 'article not found' }] })
  const contentType = { accept: ['application/json', 'application/xml'], xml: XML }

  app.get('/articles/:id', { config: { contentType, conditional: { validators }, deltaEncoding: true } }, async (request, reply) => {
    return rows.has(idOf(request)) ? send(request, reply, idOf(request)) : notFound(reply)
  })
  app.post('/articles', { schema: { body: SCHEMA }, config: { contentType, prefer: true } }, async (request, reply) => {
    rows.set('2', { version: 1, article: request.body as Article })
    return send(request, reply.header('location', '/articles/2'), '2', 201)
  })
  app.put('/articles/:id', { schema: { body: SCHEMA }, config: { contentType, conditional: { validators, creates: false }, prefer: true } }, async (request, reply) => {
    const row = rows.get(idOf(request))
    if (row === undefined) return notFound(reply)
    rows.set(idOf(request), { version: row.version + 1, article: request.body as Article })
    return send(request, reply, idOf(request))
  })
  app.patch('/articles/:id', {
    config: {
      contentType: { xml: XML },
      prefer: true,
      patch: {
        schema: SCHEMA,
        load: (request) => {
          const row = rows.get(idOf(request))
          return row === undefined ? null : { document: row.article, etag: etagFor(request, row.version) }
        },
        save: (request, document) => {
          const row = rows.get(idOf(request)) as { version: number }
          rows.set(idOf(request), { version: row.version + 1, article: document as Article })
          return { document, etag: etagFor(request, row.version + 1) }
        }
      }
    }
  }, async (request, reply) => send(request, reply, idOf(request)))
  // Its preconditions are evaluated against the representation Accept selects, so its answers name it too.
  app.delete('/articles/:id', { config: { contentType: { xml: XML }, conditional: { validators } } }, async (request, reply) => {
    if (!rows.delete(idOf(request))) return notFound(reply)
    return reply.code(204).send()
  })
  await app.ready()

  // The instance of version 1 of each representation is kept: a later A-IM request naming it gets a delta.
  rows = new Map([['1', { version: 1, article: article(1) }]])
  // Served to a delta client (A-IM from its first GET): the route keeps bases once a client asked.
  for (const accept of seedAccepts) await app.inject({ url: '/articles/1', headers: accept === undefined ? { 'a-im': 'vcdiff' } : { accept, 'a-im': 'vcdiff' } })
  await new Promise((resolve) => setImmediate(resolve))
  reset()
  return { app, reset }
}
