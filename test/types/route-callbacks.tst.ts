// Type tests: a route's conditional and PATCH callbacks get the request as its handler does.
import Fastify from 'fastify'
import { expect, test } from 'tstyche'
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { type PatchableResource, type RouteRequest } from 'fastify-http-conventions'

interface Article { id: string, title: string }
declare const db: {
  get: (id: string) => Promise<PatchableResource<Article> | null>
  update: (id: string, doc: Article, expectedEtag: string | undefined) => Promise<PatchableResource<Article> | false>
}

test('config.conditional.validators: request.params as the route\'s generics declare them', () => {
  const app = Fastify()
  app.put<{ Params: { id: string }, Body: Article }>('/articles/:id', {
    config: {
      conditional: {
        validators: (request) => {
          expect(request.params).type.toBe<{ id: string }>()
          expect(request.body).type.toBe<Article>()
          // @ts-expect-error Property 'idd' does not exist
          return { etag: request.params.idd }
        }
      }
    }
  }, async (request) => request.params.id)
  app.route<{ Params: { id: string } }>({
    method: 'PUT',
    url: '/notes/:id',
    // @ts-expect-error Property 'idd' does not exist
    config: { conditional: { validators: (request) => ({ etag: request.params.idd }) } },
    handler: async () => 'x'
  })
})

test('config.conditional.validators: request.params as the type provider\'s schema makes them', () => {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  app.get('/articles/:id', {
    schema: { params: Type.Object({ id: Type.String() }) },
    config: {
      conditional: {
        validators: (request) => {
          expect(request.params).type.toBe<{ id: string }>()
          // @ts-expect-error Property 'idd' does not exist
          return { etag: request.params.idd }
        }
      }
    }
  }, async () => 'x')
})

test('config.patch.load and save: the route\'s request, and the document load gives', () => {
  const app = Fastify()
  app.patch('/articles/:id', {
    schema: {},
    config: {
      patch: {
        schema: {},
        load: () => db.get('1'),
        save: (_request, document, expectedEtag) => {
          expect(document).type.toBe<Article>()
          return db.update(document.id, document, expectedEtag)
        }
      }
    }
  }, async () => 'x')
  app.patch<{ Params: { id: string } }>('/articles/:id', {
    config: {
      patch: {
        schema: {},
        load: (request) => db.get(request.params.id),
        // @ts-expect-error Property 'idd' does not exist
        save: (request, document, expectedEtag) => db.update(request.params.idd, document as Article, expectedEtag)
      }
    }
  }, async () => 'x')
})

test('a route that declares no params keeps them any, as before', () => {
  const app = Fastify()
  app.put('/articles/:id', {
    config: {
      conditional: {
        validators: (request) => {
          expect(request.params).type.toBe<any>()
          return { etag: request.params.id }
        }
      }
    }
  }, async () => 'x')
  expect<RouteRequest['params']>().type.toBe<any>()
})
