/**
 * Prefer: return=minimal (RFC 7240 4.2). A route that opts in with `config.prefer: true`
 * answers a write (a 200 or 201) to a client that prefers a minimal answer without its
 * body: 200 becomes 204 (No Content), a 201 keeps its status and Location with an empty
 * body; the answer says `Preference-Applied: return=minimal`. Every answer of the route
 * says `Vary: Prefer` (RFC 7240 2: a preference that may change the answer is a Vary field).
 *
 * Also the worked example of docs/adding-a-convention.md: a pure core (lib/prefer.ts), one
 * manifest entry, and this plugin, which declares the convention and nothing else.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { prefersMinimal } from '../../lib/prefer'
import { declareConvention, type RouteCompiler } from '../host/suite'
import { MESSAGE, optionsChecker, routeConfigChecker, WHERE_KEY } from '../services/options'
import { addVary, replacePayload } from '../services/shared'
import { defineConvention } from '../host/suite'

const PLUGIN = 'fastify-http-conventions-prefer'

/** The convention's place in the pipeline (plugins/kernel/pipeline.ts). */
defineConvention({
  key: 'prefer',
  plugin: PLUGIN,
  configKey: 'prefer',
  steps: [{ name: 'prefer', phase: 'onSend', after: ['delta-encoding'] }] // RFC 7240 4.2: the minimal answer is made of the final one
})

/** The Prefer convention has no options yet; an object keeps room for them. */
export type PreferOptions = Record<string, never>

/** The plugin's options as JSON Schema, checked at registration: none yet. */
export const preferOptionsSchema = { [WHERE_KEY]: PLUGIN, type: 'object', additionalProperties: false } as const

const checkOptions = optionsChecker(PLUGIN, preferOptionsSchema)

/** `config.prefer`: true honours `Prefer: return=minimal` on the route's writes. */
export type PreferRouteConfig = boolean

/** A route's `config.prefer` as JSON Schema, checked when the route is added. */
export const preferRouteConfigSchema = { type: 'boolean', [MESSAGE]: 'must be true or false' } as const

const checkRouteConfig = routeConfigChecker<PreferRouteConfig>('prefer', preferRouteConfigSchema)

/** The onSend step: a 200 or 201 to a client that prefers a minimal answer loses its body. */
function minimalAnswer (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  addVary(reply, 'Prefer')
  const status = reply.statusCode
  if ((status !== 200 && status !== 201) || !prefersMinimal(request.headers.prefer)) return undefined
  reply.header('preference-applied', 'return=minimal')
  reply.removeHeader('content-type')
  if (status === 200) reply.code(204)
  // The body dropped is released (a stream's file or upstream connection).
  return replacePayload(payload, '')
}

function compile (c: RouteCompiler): void {
  if (checkRouteConfig(c.where, c.config.prefer) !== true) return
  if (c.methods.includes('POST') || c.methods.includes('PUT') || c.methods.includes('PATCH')) {
    c.respond(204, { description: 'No Content: the write succeeded; the client asked for a minimal answer (Prefer: return=minimal)', body: 'none' })
  }
  c.check('onSend', 'prefer', minimalAnswer)
}

function preferPlugin (fastify: FastifyInstance, opts: PreferOptions, done: (err?: Error) => void): void {
  try {
    checkOptions(opts)
    declareConvention(fastify, { key: 'prefer', plugin: PLUGIN, configKey: 'prefer', compile })
  } catch (err) {
    return done(err as Error)
  }
  done()
}

/** The Prefer plugin: `Prefer: return=minimal` (RFC 7240 4.2) on routes with `config.prefer: true`. */
export const httpConventionsPrefer = fp(preferPlugin, { fastify: '^5.10.0', name: PLUGIN })
