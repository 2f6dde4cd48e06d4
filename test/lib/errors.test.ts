import { test } from 'tap'
import { invalidOption, misconfigured, preconditionFailed, unauthorized, unprocessable } from '../../lib/errors'

test('answers to the client carry no stack trace, and building them leaves Error.stackTraceLimit alone', async (t) => {
  const limit = Error.stackTraceLimit
  for (const err of [preconditionFailed('If-Match', 'no'), unprocessable({ field: 'a', message: 'b' }), unauthorized('no', ['Basic realm="r"'])]) {
    t.notMatch(String(err.stack), /\n\s+at /, `${err.code}: no frames`)
    t.equal(err instanceof Error, true)
  }
  t.equal(Error.stackTraceLimit, limit)
  t.match(String(invalidOption('x', 'y').stack), /\n\s+at /, 'a boot error keeps its stack')
  t.match(String(misconfigured('route').stack), /\n\s+at /, 'a server fault keeps its stack')
})
