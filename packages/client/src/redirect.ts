/**
 * An undici interceptor that follows 307 and 308 as the conventions ask (conventions
 * (Redirects); RFC 9110 15.4.8, 15.4.9): the request is repeated at `Location` with the
 * same method and the same body, at most `maxRedirections` times. Other redirects (301,
 * 302, 303), which may change the method, are the caller's answer.
 *
 * A stream body is read first (up to `maxBodyBytes`; over it the request is refused,
 * `BODY_TOO_LARGE`) so that it can be sent again. A hop to another origin drops
 * `Authorization`, `Proxy-Authorization` and `Cookie` (RFC 9110 15.4: credentials are not
 * carried to another origin), and an auth interceptor composed before this one sees the
 * new origin and answers with that origin's credentials only.
 */
import type { Dispatcher } from 'undici'
import { ReplayingHandler, failBeforeSend, firstHeader, headerRecord, originOf, urlOf, type Replay, withQuery } from './dispatch'
import { ConventionsClientError, clientErrorCodes } from './errors'
import { isAsyncIterable, readBounded } from './framing'

/** Options of `redirectInterceptor`. */
export interface RedirectInterceptorOptions {
  /** Redirects followed for one request (default 5); one more is `TOO_MANY_REDIRECTS`. */
  maxRedirections?: number
  /** Largest stream body kept to be sent again (default 1 MiB). */
  maxBodyBytes?: number
}

const CREDENTIAL_FIELDS = ['authorization', 'proxy-authorization', 'cookie']

/** An undici interceptor that follows 307 and 308 (RFC 9110 15.4.8, 15.4.9) with the same method and body; credentials are dropped across origins. */
export function redirectInterceptor (options: RedirectInterceptorOptions = {}): Dispatcher.DispatcherComposeInterceptor {
  const max = options.maxRedirections ?? 5
  const maxBody = options.maxBodyBytes ?? 1024 * 1024
  if (!Number.isSafeInteger(max) || max < 0) throw new RangeError('maxRedirections must be a non-negative integer')
  if (!Number.isSafeInteger(maxBody) || maxBody < 0) throw new RangeError('maxBodyBytes must be a non-negative integer')

  class RedirectHandler extends ReplayingHandler {
    #hops = 0

    protected replay (statusCode: number, headers: Record<string, string | string[] | undefined>): Replay {
      const location = firstHeader(headers, 'location')
      if ((statusCode !== 307 && statusCode !== 308) || location === undefined) return undefined
      const opts = this.opts
      const from = urlOf(opts)
      if (this.#hops >= max) {
        return () => { throw new ConventionsClientError(clientErrorCodes.TOO_MANY_REDIRECTS, `more than ${max} redirects`, { status: statusCode, method: opts.method, url: from }) }
      }
      this.#hops++
      return () => {
        const to = new URL(location, from)
        if (to.protocol !== 'http:' && to.protocol !== 'https:') throw new TypeError('a redirect to a URL that is not http: or https:')
        const headers = headerRecord(opts.headers)
        delete headers.host
        if (to.origin !== originOf(opts)) for (const name of CREDENTIAL_FIELDS) delete headers[name]
        return { ...opts, origin: to.origin, path: to.pathname + to.search, headers }
      }
    }
  }

  return (dispatch) => function redirectDispatch (given, handler) {
    const opts = withQuery(given)
    const body = opts.body
    if (body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array) {
      return dispatch(opts, new RedirectHandler(dispatch, opts, handler))
    }
    if (!isAsyncIterable(body)) {
      failBeforeSend(handler, new TypeError('the request body is a string, bytes, a stream or an async iterable'))
      return true
    }
    readBounded(body, maxBody).then((bytes) => {
      const kept = { ...opts, body: bytes }
      new RedirectHandler(dispatch, kept, handler).send(kept)
    }, (err: Error) => failBeforeSend(handler, err))
    return true
  }
}
