/**
 * Reading a stream payload up to a bound, for the steps that must see an answer's bytes
 * before it is sent (a payload-hashed ETag, RFC 9110 8.8.3): a stream that ends within the
 * bound is handed back whole, in memory; a longer one is handed back as a stream that replays
 * the bytes already read and then the rest, so that nothing is lost and no more than the
 * bound (and one chunk) is ever held.
 */
import { Readable } from 'node:stream'

/** What `readBounded` found: every byte (`complete`), or the bytes read so far of a longer stream. */
export interface BoundedRead {
  readonly chunks: Buffer[]
  readonly complete: boolean
}

/** A Node stream (what Fastify pipes to the socket). */
export function isNodeStream (payload: unknown): payload is Readable {
  return payload !== null && typeof payload === 'object' && typeof (payload as Readable).pipe === 'function' && typeof (payload as Readable).on === 'function'
}

function asBuffer (chunk: unknown): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string)
}

/**
 * Reads `source` until its end or until more than `max` bytes were read; then the source is
 * paused and left as it is (its listeners removed). An error, or a close before the end, is
 * handed to `done` as the error.
 */
export function readBounded (source: Readable, max: number, done: (err: Error | null, read: BoundedRead) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  let settled = false
  function finish (err: Error | null, complete: boolean): void {
    if (settled) return
    settled = true
    source.removeListener('data', onData)
    source.removeListener('end', onEnd)
    source.removeListener('error', onError)
    source.removeListener('close', onClose)
    done(err, { chunks, complete })
  }
  function onData (chunk: unknown): void {
    const b = asBuffer(chunk)
    chunks.push(b)
    size += b.length
    if (size > max) {
      source.pause()
      finish(null, false)
    }
  }
  function onEnd (): void { finish(null, true) }
  function onError (err: Error): void { finish(err, false) }
  function onClose (): void { finish(new Error('the stream closed before its end'), false) }
  if (source.destroyed) return finish(new Error('the stream was destroyed before it was sent'), false)
  source.on('data', onData)
  source.once('end', onEnd)
  source.once('error', onError)
  source.once('close', onClose)
}

/**
 * The bytes already read, then the rest of the paused `source`, as one stream. Destroying it
 * destroys the source (a file's descriptor closed, a proxied upstream freed).
 */
export function replay (chunks: readonly Buffer[], source: Readable): Readable {
  let ended = false
  const out = new Readable({
    read () { source.resume() },
    destroy (err, callback) {
      if (!ended) source.destroy()
      callback(err)
    }
  })
  for (const chunk of chunks) out.push(chunk)
  source.on('data', (chunk: unknown) => { if (!out.push(asBuffer(chunk))) source.pause() })
  source.once('end', () => {
    ended = true
    out.push(null)
  })
  source.once('error', (err) => out.destroy(err))
  source.once('close', () => { if (!ended) out.destroy(new Error('the stream closed before its end')) })
  return out
}
