import { test } from 'tap'
import { render, escapeHtml, reasonPhrase } from '../../lib/render'
import { lengthRequired, contentTooLarge, badFraming, serviceUnavailable, unauthorized, unprocessable, malformedBody, unsupportedMediaType, invalidOption, isConventionError } from '../../lib/errors'

const serialize = (b: unknown) => JSON.stringify(b)

test('411 is text/plain: the status phrase, then a one-line reason', async (t) => {
  const r = render(lengthRequired('line one\r\nSet-Cookie: x'), serialize)
  t.equal(r.statusCode, 411)
  t.equal(r.contentType, 'text/plain; charset=utf-8')
  t.equal(r.body, 'Length Required\nline one  Set-Cookie: x\n', 'control characters cannot break the line')
  t.equal(r.headers.connection, 'close')
  t.equal(render(lengthRequired('x', false), serialize).headers.connection, undefined)
  t.equal(render(contentTooLarge('big'), serialize).body, 'Content Too Large\nbig\n')
  t.equal(render(badFraming('dup'), serialize).body, 'Bad Request\ndup\n')
})

test('401 is a small escaped HTML page', async (t) => {
  const r = render(unauthorized('<script>"x"&\'y\'</script>', ['Basic realm="r"']), serialize)
  t.equal(r.contentType, 'text/html; charset=UTF-8')
  t.match(r.body, /<title>401 Unauthorized<\/title>/)
  t.match(r.body, /&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;\/script&gt;/)
  t.equal(escapeHtml('plain'), 'plain')
})

test('envelope errors render their entries', async (t) => {
  t.equal(render(unprocessable({ field: 'a', message: 'b' }), serialize).body, '{"errors":[{"field":"a","message":"b"}]}')
  t.equal(render(malformedBody('bad'), serialize).body, '{"errors":[{"field":"body","message":"bad"}]}')
  t.same(render(unsupportedMediaType('no', { 'accept-patch': 'application/json-patch+json' }), serialize).headers, { 'accept-patch': 'application/json-patch+json' })
})

test('reason phrases follow RFC 9110; catalogue errors are recognised, others not', async (t) => {
  t.equal(reasonPhrase(413), 'Content Too Large')
  t.equal(reasonPhrase(411), 'Length Required')
  t.equal(reasonPhrase(599), 'Error')
  t.ok(isConventionError(unprocessable({ field: 'a', message: 'b' })))
  t.notOk(isConventionError(new Error('x')))
  t.notOk(isConventionError(null))
  const opt = invalidOption('plugin', 'bad')
  t.ok(opt instanceof TypeError)
  t.equal((opt as Error & { code: string }).code, 'FST_HTTP_CONVENTIONS_INVALID_OPTION')
})

test('503 is an HTML page with Retry-After and no-store', async (t) => {
  const r = render(serviceUnavailable('try later', 7), serialize)
  t.equal(r.statusCode, 503)
  t.equal(r.contentType, 'text/html; charset=UTF-8')
  t.same(r.headers, { 'retry-after': '7', 'cache-control': 'no-store' })
})
