/**
 * What a client gets from @fastify/sensible's reply helpers beside the suite, in either
 * registration order: sensible's own error (Fastify's error body, `{ statusCode, error,
 * message }`), dressed with the route's resource policy, never the suite's envelope. Real
 * @fastify/sensible, over real sockets; the README's comment says the same.
 */
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import sensible from '@fastify/sensible'
import { request } from 'undici'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { ROOT } from '../helpers/paths'

for (const order of ['sensible first', 'suite first'] as const) {
  test(`@fastify/sensible (${order}): reply.unprocessableEntity() and reply.notFound() answer sensible's own body, not the envelope`, async (t) => {
    const app = Fastify(serverOptions)
    t.teardown(() => app.close())
    if (order === 'sensible first') await app.register(sensible)
    await app.register(httpConventions)
    if (order === 'suite first') await app.register(sensible)
    app.post('/articles', async (_request, reply) => reply.unprocessableEntity('slug is already used'))
    app.get('/articles/:id', async (_request, reply) => reply.notFound())
    const port = await listen(app)
    const taken = await request(`http://127.0.0.1:${port}/articles`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"slug":"taken"}' })
    t.equal(taken.statusCode, 422)
    t.equal(taken.headers['content-type'], 'application/json; charset=utf-8', 'Fastify\'s error media type')
    t.equal(taken.headers['cross-origin-resource-policy'], 'same-origin', 'dressed with the route\'s policy')
    t.same(await taken.body.json(), { statusCode: 422, error: 'Unprocessable Entity', message: 'slug is already used' }, 'sensible\'s body: no errors[]')
    const missing = await request(`http://127.0.0.1:${port}/articles/1`)
    t.equal(missing.statusCode, 404)
    t.same(await missing.body.json(), { statusCode: 404, error: 'Not Found', message: 'Not Found' })
  })
}

test('the README says what @fastify/sensible\'s helpers answer', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  t.notMatch(readme, /unprocessableEntity\(\): rendered in the envelope/, 'not the claim the test above disproves')
  t.match(readme, /reply\.unprocessableEntity\(\): sensible's own body/)
})
