/**
 * The pure parts of the client, alone: the request header shapes undici accepts, and the
 * handler that passes answers through or sends a request again (the WWW-Authenticate list
 * grammar it reads is tested in packages/grammar/test/challenges.test.ts).
 */
import { test } from 'tap'
import type { Dispatcher } from 'undici'
import { ReplayingHandler, failBeforeSend, headerRecord, noop, originOf, withQuery, type Replay } from '../src/dispatch'
import { framingInterceptor } from '../src/framing'

test('request headers as undici takes them: an object, a flat array, pairs; names lower-cased, repeats kept', async (t) => {
  t.same(headerRecord({ A: '1', b: ['2', '3'], c: undefined } as never), { a: '1', b: ['2', '3'] })
  t.same(headerRecord(['X-A', '1', 'x-a', '2']), { 'x-a': ['1', '2'] })
  t.same(headerRecord(new Map([['Y', '1']])), { y: '1' })
  t.same(headerRecord(null), {})
  t.same(headerRecord(undefined), {})
  t.equal(originOf({ path: '/', method: 'GET' }), 'http://invalid')
  t.same(withQuery({ path: '/a', method: 'GET', query: { x: 1, y: ['a', 'b c'] } }), { path: '/a?x=1&y=a&y=b%20c', method: 'GET', query: undefined }, 'a query given apart is written into the path, as undici writes it')
  t.same(withQuery({ path: '/a', method: 'GET', query: {} }), { path: '/a', method: 'GET', query: undefined })
  const plain = { path: '/a', method: 'GET' } as const
  t.equal(withQuery(plain), plain)
})

function recording (): { handler: Dispatcher.DispatchHandler, events: string[] } {
  const events: string[] = []
  return {
    events,
    handler: {
      onRequestUpgrade: (_c, status) => { events.push(`upgrade ${status}`) },
      onResponseError: (c, err) => { c.pause(); c.resume(); c.abort(err); events.push(`error ${err.message}`) }
    }
  }
}

class PassThrough extends ReplayingHandler {
  protected replay (): Replay { return undefined }
}

test('the replaying handler forwards an upgrade; a dispatch that throws at once reaches the caller as an error', async (t) => {
  const { handler, events } = recording()
  const opts: Dispatcher.DispatchOptions = { origin: 'http://x', path: '/', method: 'GET' }
  const h = new PassThrough(() => { throw new Error('refused at once') }, opts, handler)
  h.onRequestUpgrade({} as Dispatcher.DispatchController, 101, {}, {} as never)
  h.send(opts)
  failBeforeSend(handler, new Error('before'))
  noop()
  t.same(events, ['upgrade 101', 'error refused at once', 'error before'])
})

test('framing: a dispatch below that throws once the stream is read reaches the caller as an error', async (t) => {
  const { handler, events } = recording()
  const done = new Promise<void>((resolve) => {
    const onResponseError = handler.onResponseError as NonNullable<Dispatcher.DispatchHandler['onResponseError']>
    handler.onResponseError = (c, err) => { onResponseError(c, err); resolve() }
  })
  const dispatch = framingInterceptor()(() => { throw new Error('below') })
  dispatch({ origin: 'http://x', path: '/', method: 'POST', body: (async function * () { yield 'x' })() as never }, handler)
  await done
  t.same(events, ['error below'])
})
