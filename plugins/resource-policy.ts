/**
 * Cross-Origin-Resource-Policy (docs/conventions.md (Cross-Origin-Resource-Policy); Fetch standard, "Cross-Origin-Resource-Policy
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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { declareConvention, type Next, type RouteCompiler } from './compose'
import { invalidOption } from '../lib/errors'

/** Fetch standard: the values of Cross-Origin-Resource-Policy (case-sensitive tokens). */
export type ResourcePolicy = 'same-origin' | 'same-site' | 'cross-origin'

export interface ResourcePolicyOptions {
  /** The policy of every route that does not set its own; false sends none by default. Default 'same-origin'. */
  policy?: ResourcePolicy | false
}

/** `config.resourcePolicy`: the route's own policy, or false for none. */
export type ResourcePolicyRouteConfig = ResourcePolicy | false

const PLUGIN = 'fastify-http-conventions-resource-policy'
const WHERE = PLUGIN
const HEADER = 'cross-origin-resource-policy'
/** A route with `resourcePolicy: false`: removed again before the answer is sent (were it not, an empty value is no policy). */
const NONE = ''
const POLICIES = new Set<unknown>(['same-origin', 'same-site', 'cross-origin'])

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

  // A route's own value is checked when the route is added and set as the request starts, so
  // every answer of the route carries it, errors included (Fastify keeps headers set in hooks).
  function compile (c: RouteCompiler): void {
    const config = c.config.resourcePolicy
    if (config === undefined) return
    const value = check(config, c.where, 'config.resourcePolicy')
    const header = value === false ? NONE : value
    c.step('onRequest', 'resource-policy', function routeResourcePolicy (_request: FastifyRequest, reply: FastifyReply, next: Next) {
      reply.header(HEADER, header)
      next()
    })
  }

  // Fetch standard, CORP check: applies to every response, so errors and 404s carry it too.
  function resourcePolicyOnSend (_request: FastifyRequest, reply: FastifyReply): void {
    const set = reply.getHeader(HEADER)
    if (set === NONE) reply.removeHeader(HEADER)
    else if (set === undefined && fallback !== null) reply.header(HEADER, fallback)
  }

  try {
    declareConvention(fastify, { key: 'resource-policy', plugin: PLUGIN, configKey: 'resourcePolicy', compile, context: { onSend: resourcePolicyOnSend } })
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** Cross-Origin-Resource-Policy on every response: a default policy, per-route overrides. */
export const httpConventionsResourcePolicy = fp(resourcePolicyPlugin, { fastify: '5.x', name: PLUGIN })
