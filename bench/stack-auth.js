'use strict'
/**
 * Authentication of the hand-built stack (bench/stack-server.js), as a user would assemble it
 * for the reference service's contract (docs/reference-service.md, "Authentication"): writes
 * need a user of USERS by Basic or Digest, or a Bearer token with the scope `write`.
 *
 * - Basic: @fastify/basic-auth (its `basicAuth` decorator, called for the Basic scheme).
 * - Bearer: written by hand (RFC 6750 2.1 and 3.1): @fastify/bearer-auth is not installed in
 *   this repository, and the few lines it would save are below. Tokens are looked up by their
 *   SHA-256, as the reference service does.
 * - Digest: written by hand (RFC 7616, MD5 and SHA-256, qop=auth): no server-side Digest
 *   package is installed (digest-fetch is a client). Nonces are random, kept in a Map with
 *   their expiry and the last nonce count seen (RFC 7616 3.4: a count that does not grow is
 *   a replay).
 *
 * A failed check is an Error with statusCode 401 and `auth` ({ reason, bearer, stale }); the
 * stack's error handler answers it with `unauthorized()`: every challenge on one 401, in the
 * contract's order (Digest MD5, Digest SHA-256, Basic, Bearer), and an HTML page.
 */
const { createHash, randomBytes, timingSafeEqual } = require('node:crypto')

const REALM = 'articles'
const USERS = { demo: 'demo-password' }
const TOKENS = [{ token: 'demo-write-token', scopes: ['read', 'write'] }, { token: 'demo-read-token', scopes: ['read'] }]
const NONCE_MS = 5 * 60 * 1000
const MAX_NONCES = 10000

const sha256 = (s) => createHash('sha256').update(s).digest('hex')
const HASHES = { MD5: (s) => createHash('md5').update(s).digest('hex'), 'SHA-256': sha256 }

const denied = (reason, more = {}) => Object.assign(new Error('Unauthorized'), { statusCode: 401, auth: { reason, ...more } })

// ---------------------------------------------------------------- Bearer (RFC 6750)

const TOKEN_SCOPES = new Map(TOKENS.map((t) => [sha256(t.token), t.scopes]))
// RFC 6750 2.1: b64token
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i

function bearer (request) {
  const m = BEARER.exec(request.headers.authorization)
  const scopes = m === null ? undefined : TOKEN_SCOPES.get(sha256(m[1]))
  if (scopes === undefined) throw denied('invalid', { bearer: 'invalid_token' })
  // RFC 6750 3.1: a valid token without the scope the request needs (the contract's 401 under spec).
  if (!scopes.includes('write')) throw denied('scope', { bearer: 'insufficient_scope' })
}

// ---------------------------------------------------------------- Digest (RFC 7616)

/** Issued nonces: nonce -> { expires, nc } (the last nonce count accepted; 0 before the first). */
const nonces = new Map()
const OPAQUE = randomBytes(24).toString('base64url')

function issueNonce () {
  // The oldest first out: a Map iterates in insertion order.
  if (nonces.size >= MAX_NONCES) nonces.delete(nonces.keys().next().value)
  const nonce = randomBytes(24).toString('base64url')
  nonces.set(nonce, { expires: Date.now() + NONCE_MS, nc: 0 })
  return nonce
}

/** RFC 9110 11.2 auth-params: name=token or name="quoted-string" (backslash escapes). */
function authParams (header) {
  const out = {}
  for (const m of header.slice(header.indexOf(' ') + 1).matchAll(/([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/g)) {
    out[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]
  }
  return out
}

/** RFC 7616 3.4.1: the response a client that knows the password computes, or null for an unknown user or algorithm. */
function expectedResponse (p, method) {
  const hash = HASHES[p.algorithm ?? 'MD5']
  if (hash === undefined || !Object.hasOwn(USERS, p.username)) return null
  const ha1 = hash(`${p.username}:${REALM}:${USERS[p.username]}`)
  const ha2 = hash(`${method}:${p.uri}`)
  return hash(`${ha1}:${p.nonce}:${p.nc}:${p.cnonce}:${p.qop}:${ha2}`)
}

const sameText = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

function digest (request) {
  const p = authParams(request.headers.authorization)
  // RFC 7616 3.4: every field qop=auth needs; the realm, opaque and request-target this server gave.
  const complete = ['username', 'nonce', 'uri', 'response', 'nc', 'cnonce'].every((k) => typeof p[k] === 'string')
  if (!complete || p.realm !== REALM || p.qop !== 'auth' || !/^[0-9a-f]{8}$/i.test(p.nc) || (p.opaque !== undefined && p.opaque !== OPAQUE) || p.uri !== request.url) throw denied('invalid')
  const expected = expectedResponse(p, request.method)
  if (expected === null || !sameText(expected, p.response.toLowerCase())) throw denied('invalid')
  const issued = nonces.get(p.nonce)
  // RFC 7616 3.3: the right password with a nonce that is no longer valid: stale=true, the client retries.
  // A nonce count that does not grow is a replay (RFC 7616 3.4): the nonce is spent, the client gets a new one.
  const nc = parseInt(p.nc, 16)
  if (issued === undefined || issued.expires < Date.now() || nc <= issued.nc) throw denied('stale', { stale: true })
  issued.nc = nc
}

// ---------------------------------------------------------------- the hook and the 401

/**
 * The onRequest hook of the writes: the scheme of Authorization selects the check (RFC 9110
 * 11.6.2); Basic through @fastify/basic-auth's decorator, which `app` must have. A callback
 * hook, as the decorator is: no promise a request.
 */
function authenticator (app) {
  return function authenticate (request, reply, done) {
    const header = request.headers.authorization
    if (header === undefined) return done(denied('missing'))
    const scheme = header.slice(0, header.indexOf(' ')).toLowerCase()
    // Its 401 has no `auth`: unauthorized() reads it as credentials that are not valid.
    if (scheme === 'basic') return app.basicAuth(request, reply, done)
    try {
      if (scheme === 'bearer') bearer(request)
      else if (scheme === 'digest') digest(request)
      else throw denied('invalid')
    } catch (err) {
      return done(err)
    }
    done()
  }
}

const PAGE = {
  missing: 'Authentication is required to access this resource.',
  invalid: 'The credentials sent are not valid for this resource.',
  scope: 'The credentials sent do not grant access to this resource.',
  stale: 'The credentials sent have expired. Authenticate again.'
}
const BEARER_ERRORS = {
  invalid_token: 'error="invalid_token", error_description="The access token is invalid"',
  insufficient_scope: 'scope="write", error="insufficient_scope", error_description="The access token lacks a needed scope"'
}

/** RFC 9110 11.6.1: every scheme the route takes, one challenge a line; one fresh nonce for both Digest algorithms. */
function challenges (auth) {
  const nonce = issueNonce()
  const stale = auth.stale === true ? ', stale=true' : ''
  const digestOf = (algorithm) => `Digest realm="${REALM}", qop="auth", algorithm=${algorithm}, nonce="${nonce}", opaque="${OPAQUE}", charset=UTF-8${stale}`
  const bearerError = auth.bearer === undefined ? '' : `, ${BEARER_ERRORS[auth.bearer]}`
  return [digestOf('MD5'), digestOf('SHA-256'), `Basic realm="${REALM}", charset="UTF-8"`, `Bearer realm="${REALM}"${bearerError}`]
}

/**
 * The 401 (RFC 9110 15.5.2): the challenges, never cached, and a short HTML page, or for a
 * client that prefers JSON (`json`), the same sentence in the JSON error body; its media type
 * is chosen by Accept, so it says `Vary: Accept` (RFC 9110 12.5.5).
 */
function unauthorized (reply, err, json) {
  const auth = err.auth ?? { reason: 'invalid' }
  reply.code(401).header('www-authenticate', challenges(auth)).header('cache-control', 'no-store').header('vary', 'Accept')
  if (json) return reply.send({ errors: [{ message: PAGE[auth.reason] }] })
  const page = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>401 Unauthorized</title></head><body><h1>401 Unauthorized</h1><p>${PAGE[auth.reason]}</p></body></html>\n`
  return reply.type('text/html; charset=UTF-8').send(page)
}

module.exports = { authenticator, unauthorized, authParams, REALM, USERS, TOKENS }
