/**
 * Basic (RFC 7617) for the auth plugin: the credentials are decoded by the core
 * (strict base64, strict UTF-8, NFC) and checked against configured users in
 * constant time, or handed to the service's own `verify`.
 */
import type { FastifyRequest } from 'fastify'
import { decodeBasicCredentials } from '../../../lib/auth/basic'
import { secretMatcher, storeSecret, unmatchableSecret, type StoredSecret } from '../../../lib/auth/secret'
import {
  asRefusal, fail, notPrincipal, runtimeScopes, scopeList, settle, userTable,
  type AuthUser, type Credentials, type Outcome, type SchemeAdapter, type Verdict
} from './common'

/** What a Basic `verify` returns: false/null to refuse, true or `{ subject?, scopes? }` to accept. */
export type BasicVerifyResult = boolean | null | undefined | { subject?: string, scopes?: readonly string[] | string }

/** Basic authentication (RFC 7617): users and passwords, or the service's own `verify`. */
export interface BasicAuthOptions {
  /** user: password (or { password, scopes }); compared in constant time. */
  users?: Readonly<Record<string, AuthUser>>
  /** The service's own check, instead of `users`. Receives the NFC user-id and password. */
  verify?: (userId: string, password: string, request: FastifyRequest) => BasicVerifyResult | Promise<BasicVerifyResult>
  /** Scopes granted to users that do not list their own (default none). */
  scopes?: readonly string[] | string
}

const INVALID = fail('invalid', 'basic: credentials refused')
const refusal = (err: unknown): Outcome => asRefusal('basic', err)

export function createBasicAdapter (opts: BasicAuthOptions): SchemeAdapter {
  // Its shape was checked with the plugin's options (authOptionsSchema); here what JSON Schema cannot say.
  const defaultScopes = opts.scopes === undefined ? Object.freeze([]) : scopeList(opts.scopes, 'basic.scopes')

  if (opts.verify !== undefined) {
    const verify = opts.verify
    return {
      scheme: 'basic',
      verify (credentials: Credentials, request: FastifyRequest): Verdict {
        const decoded = decodeBasicCredentials(credentials.token68 ?? '')
        if (!decoded.ok) return fail('invalid', `basic: ${decoded.reason}`)
        const userId = decoded.userId
        const accept = (r: BasicVerifyResult): Outcome => {
          if (r === true) return { ok: true, principal: { scheme: 'basic', subject: userId, scopes: defaultScopes } }
          // false, null and undefined refuse, as documented; any other non-object is outside the contract
          if (r === false || r === null || r === undefined) return INVALID
          if (typeof r !== 'object' || Array.isArray(r)) return notPrincipal('basic', 'verify returned neither a boolean nor { subject?, scopes? }')
          if (r.subject !== undefined && typeof r.subject !== 'string') return notPrincipal('basic', 'verify returned a subject that is not a string')
          const scopes = runtimeScopes(r.scopes, defaultScopes)
          if (scopes === null) return notPrincipal('basic', 'verify returned scopes that are not scope tokens')
          return { ok: true, principal: { scheme: 'basic', subject: r.subject ?? userId, scopes } }
        }
        // Any outcome of the service's code, a throw or rejection of any value included, is an Outcome.
        return settle(() => verify(userId, decoded.password, request), accept, refusal)
      }
    }
  }

  // Constant time (lib/auth/secret.ts): the stored password's bytes and length are not in the
  // time taken; an unknown user is compared against a secret nothing matches, so it costs the
  // same as a wrong password.
  const table = new Map<string, { secret: StoredSecret, scopes: readonly string[] }>()
  // No verify: users, as the schema's oneOf says.
  for (const [user, entry] of userTable(opts.users as object, defaultScopes, 'basic')) {
    table.set(user, { secret: storeSecret(entry.password), scopes: entry.scopes })
  }
  const nobody = unmatchableSecret()
  const matches = secretMatcher()
  return {
    scheme: 'basic',
    verify (credentials: Credentials): Outcome {
      const decoded = decodeBasicCredentials(credentials.token68 ?? '')
      if (!decoded.ok) return fail('invalid', `basic: ${decoded.reason}`)
      const user = table.get(decoded.userId)
      const match = matches(decoded.password, user?.secret ?? nobody)
      if (!match || user === undefined) return INVALID
      return { ok: true, principal: { scheme: 'basic', subject: decoded.userId, scopes: user.scopes } }
    }
  }
}
