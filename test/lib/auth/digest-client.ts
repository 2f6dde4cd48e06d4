// A minimal RFC 7616 client for the tests: answers a challenge written by createDigest.
import { randomBytes } from 'node:crypto'
import { parseAuthorization } from '../../../packages/grammar/src/authorization'
import { digestResponse, digestUserhash, type DigestAlgorithm, type DigestHash } from '../../../lib/auth/digest'

export interface Answer {
  username: string
  password: string
  method?: string
  uri?: string
  nc?: number
  cnonce?: string
  userhash?: boolean
  /** send username* (RFC 8187) instead of username */
  ext?: boolean
}

export function challengeParams (challenge: string): Record<string, string> {
  const r = parseAuthorization(challenge)
  if (!r.ok || r.scheme !== 'digest' || r.params === undefined) throw new Error(`not a Digest challenge: ${challenge}`)
  return { ...r.params }
}

/** The auth-params a client sends in answer to `challenge`. */
export function answer (challenge: string, a: Answer): Record<string, string> {
  const c = challengeParams(challenge)
  const algorithm = c.algorithm as DigestAlgorithm
  const method = a.method ?? 'GET'
  const uri = a.uri ?? '/'
  const nc = (a.nc ?? 1).toString(16).padStart(8, '0')
  const cnonce = a.cnonce ?? randomBytes(12).toString('base64')
  const response = digestResponse({
    algorithm, username: a.username, realm: c.realm, password: a.password, method, uri, nonce: c.nonce, nc, cnonce, qop: 'auth'
  })
  const out: Record<string, string> = {
    realm: c.realm, uri, algorithm, nonce: c.nonce, nc, cnonce, qop: 'auth', response, opaque: c.opaque
  }
  if (a.userhash === true) {
    out.username = digestUserhash(algorithm.replace(/-sess$/, '') as DigestHash, a.username, c.realm)
    out.userhash = 'true'
  } else if (a.ext === true) {
    out['username*'] = "UTF-8''" + encodeURIComponent(a.username)
  } else {
    out.username = a.username
  }
  return out
}

/** The same params written as an `Authorization` value (RFC 7616 3.4 quoting). */
export function authorization (params: Record<string, string>): string {
  const bare = new Set(['algorithm', 'qop', 'nc', 'userhash', 'username*'])
  return 'Digest ' + Object.entries(params)
    .map(([k, v]) => `${k}=${bare.has(k) ? v : '"' + v.replace(/["\\]/g, '\\$&') + '"'}`)
    .join(', ')
}
