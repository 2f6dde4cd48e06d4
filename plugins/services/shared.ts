/** Small helpers every plugin of the suite uses. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { invalidOption } from '../../lib/errors'
import { splitList } from '@http-conventions/grammar'
import { isProfile } from '../../lib/profile'

/** A route's methods, and how boot errors name it: the kernel's own. */
export { methodsOf, routeWhere } from '../kernel/routes'

/** The boot-time error for a `profile` option that is neither 'spec' nor 'rfc9110', or null. */
export function profileError (where: string, profile: unknown): Error | null {
  if (profile === undefined || isProfile(profile)) return null
  return invalidOption(where, `profile must be 'spec' or 'rfc9110', got ${JSON.stringify(profile)}`)
}

/** RFC 9112 6.3: the request declares a body (chunked, or a Content-Length above zero). */
export function declaresBody (headers: { 'content-length'?: string, 'transfer-encoding'?: string }): boolean {
  const cl = headers['content-length']
  return headers['transfer-encoding'] !== undefined || (cl !== undefined && cl !== '0')
}

/** A promise or any thenable a service returns. */
export function isThenable<T = unknown> (value: unknown): value is PromiseLike<T> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<T>).then === 'function'
}

/**
 * The request a route's callbacks get (`validators`, `load`, `save`) where nothing tells its
 * types (a route added with `app.addHook('onRoute')`, a config built apart from its route):
 * params, query and body as the route's schemas made them, typed `any`. On a route declared
 * with Fastify's route methods, the callbacks get the request as its handler does
 * (`HandlerRequest`).
 */
export type RouteRequest = FastifyRequest & { params: any, query: any, body: any }

/** `X`, or `any` where the route declares nothing for it (`unknown`, Fastify's default). */
type Declared<X> = unknown extends X ? any : X

/**
 * The request a route's callbacks get on a route declared with Fastify's route methods: as its
 * handler gets it, with params, query and body of the route's generics or its type provider's
 * schemas (`request.params.idd` does not compile where Params declares `id`); a part the route
 * declares nothing for stays `any`, as in `RouteRequest`.
 */
export type HandlerRequest<Req extends { params: unknown, query: unknown, body: unknown }> = Req & { params: Declared<Req['params']>, query: Declared<Req['query']>, body: Declared<Req['body']> }

/**
 * What a step replaces, it releases: a stream payload that an onSend step drops (for a 401's
 * page, a 304, a 204, an error) is destroyed, so that its file descriptor is closed and the
 * upstream connection it reads from (a proxy's) is freed. A Node stream is destroyed, a web
 * ReadableStream (or a Response's body) cancelled; strings and buffers need nothing.
 */
export function release (payload: unknown): void {
  if (payload === null || typeof payload !== 'object') return
  const p = payload as { destroy?: unknown, pipe?: unknown, cancel?: unknown, getReader?: unknown, body?: unknown, bodyUsed?: unknown }
  if (typeof p.pipe === 'function' && typeof p.destroy === 'function') {
    (payload as { destroy: () => void }).destroy()
  } else if (typeof p.getReader === 'function' && typeof p.cancel === 'function') {
    // A web stream is cancelled; the rejection of one that is locked or already failed is absorbed.
    (payload as ReadableStream).cancel().catch(() => {})
  } else if (typeof p.bodyUsed === 'boolean') {
    // A fetch Response (Fastify v5 sends its body): its body is released.
    release(p.body)
  }
}

/** `next` in place of `payload`, which is released when it is another value. */
export function replacePayload<T> (payload: unknown, next: T): T {
  if ((next as unknown) !== payload) release(payload)
  return next
}

/**
 * RFC 9110 12.5.5: adds the request field `name` to the answer's Vary, merged with what the
 * app or another plugin put there: once, whatever its case, and never beside `*` (an answer
 * that varies on everything already says so). A Vary this server cannot read is left alone.
 */
export function addVary (reply: FastifyReply, name: string): void {
  const current = reply.getHeader('vary')
  const value = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current)
  const names = splitList(value)
  if (names === null) return
  if (names.length === 0) {
    reply.header('vary', name)
    return
  }
  const lower = name.toLowerCase()
  for (const n of names) if (n === '*' || n.toLowerCase() === lower) return
  reply.header('vary', `${names.join(', ')}, ${name}`)
}

/**
 * How many Host lines the header lines hold, counted up to `upTo` (RFC 9112 3.2: exactly one):
 * read from the lines themselves, so that a request nothing else asks `headers` of never has
 * them built (Node builds them on first read, keeping the first Host and dropping the rest).
 * Host is most often the first line. No allocation.
 */
export function hostLines (raw: readonly string[], upTo: number): number {
  let hosts = 0
  for (let i = 0; i < raw.length && hosts < upTo; i += 2) {
    const name = raw[i]
    if (name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host')) hosts++
  }
  return hosts
}

/** What Cache-Control says on the suite's answers, as a document describes it (auth, conditional, delta encoding). */
export const CACHE_CONTROL_TEXT = 'What caches may keep: no-store (a 226, an error, a conditional answer where "not modified" is 412), no-cache (where it is 304)'
