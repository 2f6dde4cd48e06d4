/**
 * Basic (RFC 7617) for the auth plugin: the credentials are decoded by the core
 * (strict base64, strict UTF-8, NFC) and checked against configured users in
 * constant time, or handed to the service's own `verify`.
 */
import crypto, { randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { decodeBasicCredentials } from '../../lib/auth/basic'
import { invalidOption } from '../../lib/errors'
import {
  fail, runtimeScopes, scopeList, userTable, WHERE,
  isThenable, type AuthUser, type Credentials, type Outcome, type SchemeAdapter, type Verdict
} from './common'

/** What a Basic `verify` returns: false/null to refuse, true or `{ subject?, scopes? }` to accept. */
export type BasicVerifyResult = boolean | null | undefined | { subject?: string, scopes?: readonly string[] | string }

export interface BasicAuthOptions {
  /** user: password (or { password, scopes }); compared in constant time. */
  users?: Readonly<Record<string, AuthUser>>
  /** The service's own check, instead of `users`. Receives the NFC user-id and password. */
  verify?: (userId: string, password: string, request: FastifyRequest) => BasicVerifyResult | Promise<BasicVerifyResult>
  /** Scopes granted to users that do not list their own (default none). */
  scopes?: readonly string[] | string
}

const INVALID = fail('invalid', 'basic: credentials refused')

// crypto.hash: the one-shot form, about twice as fast as createHash.
function sha256 (s: string): Buffer {
  return crypto.hash('sha256', s, 'buffer')
}

export function createBasicAdapter (opts: BasicAuthOptions): SchemeAdapter {
  if (opts === null || typeof opts !== 'object') throw invalidOption(WHERE, 'basic must be { users } or { verify }')
  const defaultScopes = opts.scopes === undefined ? Object.freeze([]) : scopeList(opts.scopes, 'basic.scopes')
  if ((opts.users === undefined) === (opts.verify === undefined)) throw invalidOption(WHERE, 'basic needs exactly one of users and verify')

  if (opts.verify !== undefined) {
    const verify = opts.verify
    if (typeof verify !== 'function') throw invalidOption(WHERE, 'basic.verify must be a function')
    return {
      scheme: 'basic',
      verify (credentials: Credentials, request: FastifyRequest): Verdict {
        const decoded = decodeBasicCredentials(credentials.token68 ?? '')
        if (!decoded.ok) return fail('invalid', `basic: ${decoded.reason}`)
        const userId = decoded.userId
        const accept = (r: BasicVerifyResult): Outcome => {
          if (r === true) return { ok: true, principal: { scheme: 'basic', subject: userId, scopes: defaultScopes } }
          if (r === null || typeof r !== 'object') return INVALID
          const subject = typeof r.subject === 'string' ? r.subject : userId
          return { ok: true, principal: { scheme: 'basic', subject, scopes: runtimeScopes(r.scopes, defaultScopes) } }
        }
        const r = verify(userId, decoded.password, request)
        // any thenable the service returns, not only native promises
        return isThenable(r) ? Promise.resolve(r).then(accept) : accept(r)
      }
    }
  }

  // Constant time: SHA-256 of both sides, compared with timingSafeEqual; an unknown user is
  // compared against a random digest, so it costs the same as a wrong password.
  const table = new Map<string, { digest: Buffer, scopes: readonly string[] }>()
  for (const [user, entry] of userTable(opts.users, defaultScopes, 'basic')) {
    table.set(user, { digest: sha256(entry.password), scopes: entry.scopes })
  }
  const dummy = sha256(randomBytes(32).toString('hex'))
  return {
    scheme: 'basic',
    verify (credentials: Credentials): Outcome {
      const decoded = decodeBasicCredentials(credentials.token68 ?? '')
      if (!decoded.ok) return fail('invalid', `basic: ${decoded.reason}`)
      const user = table.get(decoded.userId)
      const match = timingSafeEqual(sha256(decoded.password), user?.digest ?? dummy)
      if (!match || user === undefined) return INVALID
      return { ok: true, principal: { scheme: 'basic', subject: decoded.userId, scopes: user.scopes } }
    }
  }
}
