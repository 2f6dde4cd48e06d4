/**
 * docs/plugins.md (Cross-Origin-Resource-Policy): an app that answers Fastify's framework
 * errors itself (its own `frameworkErrors` server option, beside the rest of serverOptions)
 * keeps the root's Cross-Origin-Resource-Policy on those answers.
 */
import { test } from 'tap'
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify'
import { httpConventions, serverOptions, type HttpConventionsOptions } from '../../plugins/index'

function ownAnswer (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  reply.code(error.statusCode ?? 400).send({ mine: error.code })
}

test('docs/plugins.md (Cross-Origin-Resource-Policy): answers of the app\'s own frameworkErrors carry the root\'s policy', async (t) => {
  for (const [opts, corp] of [[{}, 'same-origin'], [{ resourcePolicy: { policy: 'same-site' } }, 'same-site'], [{ resourcePolicy: false }, undefined]] as const) {
    const app = Fastify({ ...serverOptions, frameworkErrors: ownAnswer, routerOptions: { maxParamLength: 20 } })
    await app.register(httpConventions, opts as HttpConventionsOptions)
    app.get('/articles/:id', async () => 'x')
    const bad = await app.inject({ method: 'GET', url: '/articles/%E0%A4%A' })
    t.equal(bad.statusCode, 400)
    t.same(bad.json(), { mine: 'FST_ERR_BAD_URL' }, 'the app\'s own answer')
    t.equal(bad.headers['cross-origin-resource-policy'], corp, `a path that does not decode: ${corp ?? 'no policy'}`)
    const long = await app.inject({ method: 'GET', url: `/articles/${'a'.repeat(30)}` })
    t.equal(long.statusCode, 414)
    t.equal(long.headers['cross-origin-resource-policy'], corp, `a path parameter over maxParamLength: ${corp ?? 'no policy'}`)
    await app.close()
  }
})

test('docs/plugins.md (Cross-Origin-Resource-Policy): a policy the app\'s frameworkErrors sets itself is kept', async (t) => {
  const app = Fastify({ ...serverOptions, frameworkErrors: (_e, _r, reply) => { (reply as FastifyReply).header('cross-origin-resource-policy', 'cross-origin').code(400).send('bad') } })
  t.teardown(() => app.close())
  await app.register(httpConventions)
  app.get('/articles/:id', async () => 'x')
  const bad = await app.inject({ method: 'GET', url: '/articles/%E0%A4%A' })
  t.equal(bad.headers['cross-origin-resource-policy'], 'cross-origin')
})
