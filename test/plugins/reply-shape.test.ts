/**
 * docs/architecture.md (Errors): the mark a route's error handler leaves on a reply (the suite
 * error the app's handlers passed on) is a Fastify reply decorator, declared once when the
 * suite is installed: every reply has it from its start (null), so no reply changes shape
 * in the middle of a request.
 */
import { test } from 'tap'
import { buildApp } from '../helpers/app'
import { kPassedOn } from '../../plugins/services/symbols'
import { unprocessable } from '../../plugins/index'

test('docs/architecture.md (Errors): the passed-on mark is a reply decorator, null on every reply until an error is passed on, null again once answered', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  t.equal(app.hasReplyDecorator(kPassedOn), true, 'declared once, in the root')
  const marks: unknown[] = []
  app.get('/plain', async (_request, reply) => {
    marks.push((reply as unknown as Record<symbol, unknown>)[kPassedOn])
    return 'plain'
  })
  const schema = { querystring: { type: 'object' } }
  let after: unknown = 'unset'
  app.get('/passed-on', {
    schema,
    errorHandler: (err) => { throw err },
    onResponse: async (_request, reply) => { after = (reply as unknown as Record<symbol, unknown>)[kPassedOn] }
  }, async () => { throw unprocessable({ field: 'slug', message: 'taken' }) })
  await app.inject('/plain')
  const res = await app.inject('/passed-on')
  t.same(marks, [null], 'a reply has the mark from its start')
  t.equal(res.statusCode, 422)
  t.same(res.json(), { errors: [{ field: 'slug', message: 'taken' }] }, 'the suite\'s answer replaced Fastify\'s')
  t.equal(after, null, 'the mark is cleared once the answer is written')
  const again = await buildApp()
  t.teardown(() => again.close())
  t.equal(again.hasReplyDecorator(kPassedOn), true, 'each app declares its own')
})
