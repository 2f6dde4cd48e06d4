/**
 * JSON request bodies, parsed as Fastify does by default (secure-json-parse): keys that
 * would poison a prototype (`__proto__`, `constructor.prototype`) are refused.
 */
import secureJson from 'secure-json-parse'
import { malformedBody, type ConventionError } from './errors'

/** Parses a JSON body, or returns the 400 (field `body`) that says why it cannot be. */
export function parseJsonBody (text: string): { ok: true, value: unknown } | { ok: false, error: ConventionError } {
  if (text.length === 0) return { ok: false, error: malformedBody('body is empty but Content-Type says JSON') }
  try {
    return { ok: true, value: secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }) }
  } catch (err) {
    const message = /forbidden (prototype|constructor)/.test((err as Error).message)
      ? 'body contains a forbidden __proto__ or constructor.prototype key'
      : 'body is not well-formed JSON'
    return { ok: false, error: malformedBody(message) }
  }
}
