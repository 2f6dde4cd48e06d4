/**
 * What @fastify/rate-limit does with the 405s and OPTIONS the methods convention answers:
 * they come from the not-found path (Fastify found no route for the method), where the
 * limiter, which puts its hook on each route, never runs. They are neither counted nor
 * limited, in either registration order; docs/plugins.md (Methods) says so. Real
 * @fastify/rate-limit, over real sockets.
 */
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { request } from 'undici'
import { httpConventions, serverOptions } from '../../plugins/index'
import { listen } from '../helpers/app'
import { ROOT } from '../helpers/paths'

for (const order of ['rate limiter first', 'suite first'] as const) {
  test(`@fastify/rate-limit (${order}) neither counts nor limits the suite's 405s and OPTIONS; the route's own requests are`, async (t) => {
    const app = Fastify(serverOptions)
    t.teardown(() => app.close())
    const limiter = async (): Promise<void> => { await app.register(rateLimit, { max: 3, timeWindow: 60_000 }) }
    if (order === 'rate limiter first') await limiter()
    await app.register(httpConventions)
    if (order === 'suite first') await limiter()
    app.get('/articles', async () => ({ ok: true }))
    const port = await listen(app)
    const answers: Array<[number, unknown]> = []
    for (const method of ['DELETE', 'PUT', 'DELETE', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await request(`http://127.0.0.1:${port}/articles`, { method })
      await res.body.dump()
      answers.push([res.statusCode, res.headers['x-ratelimit-remaining']])
    }
    t.same(answers, [[405, undefined], [405, undefined], [405, undefined], [405, undefined], [405, undefined], [204, undefined]], 'six answers past the limit of three: none limited, none counted')
    const statuses: number[] = []
    const remaining: unknown[] = []
    for (let i = 0; i < 4; i++) {
      const res = await request(`http://127.0.0.1:${port}/articles`)
      await res.body.dump()
      statuses.push(res.statusCode)
      remaining.push(res.headers['x-ratelimit-remaining'])
    }
    t.same(statuses, [200, 200, 200, 429], 'the route\'s own requests are counted from the first')
    t.same(remaining, ['2', '1', '0', '0'])
  })
}

test('@fastify/rate-limit\'s rateLimit() as an onRequest hook of the app counts the suite\'s 405s and limits them', async (t) => {
  const app = Fastify(serverOptions)
  t.teardown(() => app.close())
  await app.register(httpConventions)
  await app.register(rateLimit, { global: false })
  app.addHook('onRequest', app.rateLimit({ max: 3, timeWindow: 60_000 }))
  app.get('/articles', async () => ({ ok: true }))
  const port = await listen(app)
  const statuses: number[] = []
  for (const method of ['DELETE', 'PUT', 'DELETE', 'GET', 'DELETE']) {
    const res = await request(`http://127.0.0.1:${port}/articles`, { method })
    await res.body.dump()
    statuses.push(res.statusCode)
  }
  t.same(statuses, [405, 405, 405, 429, 429], 'three 405s counted, then the limiter answers')
})

test('docs/plugins.md (Methods) says what the limiter does with a 405', async (t) => {
  const text = readFileSync(join(ROOT, 'docs', 'plugins.md'), 'utf8').replace(/\s+/g, ' ')
  t.notMatch(text, /a rate limiter counts a 405/, 'not the claim the test above disproves')
  t.match(text, /@fastify\/rate-limit neither counts nor limits them/)
  t.match(text, /`app\.addHook\('onRequest', app\.rateLimit\(\{ \.\.\. \}\)\)` counts them/)
})
