import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'

/** A Fastify app with the suite registered, not yet listening. */
export async function buildApp (opts: HttpConventionsOptions = {}, server: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions, ...server })
  await app.register(httpConventions, opts)
  return app
}

/** Listens on 127.0.0.1 with a free port and returns it. */
export async function listen (app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** Turns Fastify's thenable `ready()` into a Promise for t.rejects / t.resolves. */
export function boot (ready: PromiseLike<unknown>): Promise<unknown> {
  return Promise.resolve(ready)
}
