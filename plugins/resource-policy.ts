/**
 * Cross-Origin-Resource-Policy (spec 4.7; Fetch standard, "Cross-Origin-Resource-Policy
 * header" and "cross-origin resource policy check"): every response of a covered route
 * carries the policy, errors included, because a browser applies the check to whatever
 * a no-cors request gets back (401, 404, 411, 412, 304, 226 alike).
 *
 * One onSend hook does it: Fastify runs onSend for every reply it sends, the ones its
 * error handler and its not-found handler write included. The one exception is what a
 * server writes on the raw socket outside Fastify: the 411 (or 400) that the
 * content-length plugin answers from Node's `clientError` to a request the HTTP parser
 * refused. Such a request (malformed or duplicate Content-Length, CL with TE) is never
 * one a browser sends for an embedded resource, and no resource is ever delivered with
 * it, so there is nothing for the policy to protect there.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { invalidOption } from '../lib/errors'

/** Fetch standard: the values of Cross-Origin-Resource-Policy (case-sensitive tokens). */
export type ResourcePolicy = 'same-origin' | 'same-site' | 'cross-origin'

export interface ResourcePolicyOptions {
  /** The policy of every route that does not set its own; false sends none by default. Default 'same-origin'. */
  policy?: ResourcePolicy | false
}

/** `config.resourcePolicy`: the route's own policy, or false for none. */
export type ResourcePolicyRouteConfig = ResourcePolicy | false

const WHERE = 'http-conventions/resource-policy'
const POLICIES = new Set<unknown>(['same-origin', 'same-site', 'cross-origin'])
const kPolicy = Symbol.for('fastify-http-conventions.resource-policy')

type WithPolicy = { [kPolicy]?: string | null }

function check (value: unknown, where: string, name: string): ResourcePolicy | false {
  if (value === false || POLICIES.has(value)) return value as ResourcePolicy | false
  throw invalidOption(where, `${name} must be 'same-origin', 'same-site', 'cross-origin' or false, got ${JSON.stringify(value)}`)
}

function resourcePolicyPlugin (fastify: FastifyInstance, opts: ResourcePolicyOptions, done: (err?: Error) => void): void {
  let fallback: string | null
  try {
    for (const key of Object.keys(opts)) {
      if (key !== 'policy') throw invalidOption(WHERE, `unknown option ${JSON.stringify(key)}`)
    }
    const policy = opts.policy === undefined ? 'same-origin' : check(opts.policy, WHERE, 'policy')
    fallback = policy === false ? null : policy
  } catch (err) {
    return done(err as Error)
  }

  // A route's value is checked when the route is added, and kept on its config for onSend.
  fastify.addHook('onRoute', function resourcePolicyOnRoute (route: RouteOptions) {
    const config = route.config as ({ resourcePolicy?: unknown } & WithPolicy) | undefined
    if (config?.resourcePolicy === undefined) return
    const value = check(config.resourcePolicy, `route ${String(route.method)} ${route.url}`, 'config.resourcePolicy')
    config[kPolicy] = value === false ? null : value
  })

  // Fetch standard, CORP check: applies to every response, so errors and 404s carry it too.
  fastify.addHook('onSend', function resourcePolicyOnSend (request: FastifyRequest, reply: FastifyReply, payload: unknown, next: (err: Error | null, value?: unknown) => void) {
    // A value the handler set itself wins.
    if (reply.hasHeader('cross-origin-resource-policy')) return next(null, payload)
    const own = (request.routeOptions.config as WithPolicy | undefined)?.[kPolicy]
    const value = own === undefined ? fallback : own
    if (value !== null) reply.header('cross-origin-resource-policy', value)
    next(null, payload)
  })
  done()
}

/** Cross-Origin-Resource-Policy on every response: a default policy, per-route overrides. */
export const httpConventionsResourcePolicy = fp(resourcePolicyPlugin, { fastify: '5.x', name: 'http-conventions-resource-policy' })
