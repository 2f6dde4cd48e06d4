// Deadlines of store operations: a store that never answers costs a bounded wait, and a late
// answer is never an unhandled rejection. The deadlines are short so that the tests wait
// little; what they prove does not depend on the machine's speed (a never-settling promise
// loses to any deadline).
import { test } from 'tap'
import { checkTimeout, StoreTimeoutError, withDeadline } from '../../../lib/io/stores/deadline'

test('a store operation that never settles fails with StoreTimeoutError naming what and how long', async (t) => {
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  const err = await withDeadline(new Promise(() => {}), 5, 'the test store').then(() => null, (e: unknown) => e)
  t.ok(err instanceof StoreTimeoutError)
  t.match(err, { code: 'ERR_STORE_TIMEOUT', timeoutMs: 5, name: 'StoreTimeoutError', message: 'the test store did not answer within 5 ms' })
})

test('an answer within the deadline is the answer; a failure is the failure', async (t) => {
  t.equal(await withDeadline(Promise.resolve(42), 60_000, 'x'), 42)
  await t.rejects(withDeadline(Promise.reject(new Error('refused')), 60_000, 'x'), /refused/)
})

test('a failure after the deadline is absorbed (no unhandled rejection)', async (t) => {
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(alive))
  let fail: (err: Error) => void = () => {}
  const late = new Promise<never>((_resolve, reject) => { fail = reject })
  await t.rejects(withDeadline(late, 5, 'x'), StoreTimeoutError)
  let unhandled = false
  const onUnhandled = (): void => { unhandled = true }
  process.once('unhandledRejection', onUnhandled)
  fail(new Error('late'))
  await new Promise((resolve) => setImmediate(resolve))
  process.removeListener('unhandledRejection', onUnhandled)
  t.equal(unhandled, false)
})

test('deadlines are checked once, at creation: whole milliseconds from 1 to 60000', async (t) => {
  t.equal(checkTimeout('storeTimeoutMs', 1000), 1000)
  for (const bad of [0, -1, 1.5, 60_001, Number.NaN, '1000', undefined]) {
    t.throws(() => checkTimeout('storeTimeoutMs', bad), /storeTimeoutMs must be an integer number of milliseconds from 1 to 60000/, String(bad))
  }
})
