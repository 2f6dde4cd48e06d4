/**
 * A Cache-Control convention written only against the package's public way to add a
 * convention (docs/adding-a-convention.md): it imports nothing of the suite but its root
 * export. It owns `Cache-Control` (RFC 9111 5.2.2): a route says what caches may keep with
 * `config.cacheControl`, and the convention writes the final value of every answer of it.
 *
 * The other conventions that write the header do not write it against the owner: they
 * declare what they need it to say (delta encoding: `no-store, im` on a 226; the error
 * catalogue: `no-store` on a 401, 403, 428 and 503), which the owner writes on those answers;
 * the conditional convention leaves its `cacheControl` to the owner (and an explicit option
 * beside it is a boot error naming both). A second owner is a boot error naming both.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { declareConvention, defineConvention, headerClaims, type RouteCompiler } from '../../plugins/index'

export interface CacheControlOptions {
  /** What the 2xx GET and HEAD answers of a route without `config.cacheControl` say (none when unset). */
  default?: string
}

/** A route's policy: a Cache-Control value for its 2xx GET and HEAD answers, or false (the convention leaves the route alone). */
export type CacheControlRouteConfig = string | false

declare module 'fastify' {
  interface FastifyContextConfig {
    cacheControl?: CacheControlRouteConfig
  }
}

const PLUGIN = 'example-cache-control'

/** RFC 9110 5.5: a field value of visible characters and spaces, not empty. */
const FIELD_VALUE = /^[!-~](?:[ -~]*[!-~])?$/

/** The convention's place in the pipeline: one onSend step, after every step that makes the final answer. */
export const cacheControlConvention = defineConvention({
  key: 'cache-control',
  plugin: PLUGIN,
  configKey: 'cacheControl',
  steps: [{ name: 'cache-control', phase: 'onSend', after: ['errors:passed-on', 'auth:challenges', 'conditional', 'delta-encoding', 'prefer'] }],
  headers: { 'cache-control': { owns: true } }
})

function checked (value: unknown, where: string): string | false | undefined {
  if (value === undefined || value === false) return value
  if (typeof value !== 'string' || !FIELD_VALUE.test(value)) throw new TypeError(`${PLUGIN}: ${where} must be a Cache-Control value (RFC 9111 5.2) or false`)
  return value
}

/** The route's step: what another convention declared the header must say on this answer, else the route's policy on a 2xx GET/HEAD. */
function compile (c: RouteCompiler, fallback: string | undefined): void {
  const own = checked(c.config.cacheControl, `${c.where}: config.cacheControl`)
  if (own === false) return
  const policy = own ?? fallback
  // What the other conventions need the header to say, by status (read once, when the route is compiled).
  const says = headerClaims('cache-control').says
  const needs = new Map(Object.entries(says).map(([status, need]) => [Number(status), need.value]))
  if (policy === undefined && needs.size === 0) return
  c.check('onSend', 'cache-control', function cacheControlOnSend (request: FastifyRequest, reply: FastifyReply): undefined {
    const needed = needs.get(reply.statusCode)
    if (needed !== undefined) reply.header('cache-control', needed)
    else if (policy !== undefined && reply.statusCode >= 200 && reply.statusCode < 300 && (request.method === 'GET' || request.method === 'HEAD')) reply.header('cache-control', policy)
    return undefined
  })
}

function cacheControlPlugin (fastify: FastifyInstance, opts: CacheControlOptions, done: (err?: Error) => void): void {
  try {
    const fallback = checked(opts.default, 'default')
    declareConvention(fastify, { key: cacheControlConvention.key, plugin: PLUGIN, configKey: 'cacheControl', compile: (c) => { compile(c, fallback === false ? undefined : fallback) } })
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** Cache-Control, per route (`config.cacheControl`), owned by one convention. */
export const cacheControl = fp(cacheControlPlugin, { fastify: '^5.10.0', name: PLUGIN })
