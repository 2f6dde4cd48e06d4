/**
 * Redaction of secrets in URLs before they reach a log. Framework-free: `redactUrl`
 * takes a request-target (origin-form `/path?query#fragment` or an absolute URI) and
 * replaces the values of query parameters that commonly carry credentials (OAuth 2.0
 * tokens and codes, API keys, signatures, passwords), the password of a userinfo, and
 * the whole fragment. `createRedactingSerializers` gives a pino `serializers` object
 * whose `req` logs the method, the redacted URL, the host and the remote address, and
 * never the headers (Authorization, Cookie).
 */

/** The query parameter names redacted by default, compared case-insensitively after percent-decoding. */
export const SECRET_QUERY_NAMES: readonly string[] = Object.freeze([
  // RFC 6749 4.1.2 and 4.2.2, RFC 6750 2.3, OpenID Connect: codes and tokens in URLs.
  'access_token', 'refresh_token', 'id_token', 'token', 'token[]', 'code',
  // RFC 6749 2.3.1: client credentials as parameters.
  'client_secret', 'secret',
  'password', 'passwd',
  'api_key', 'api-key', 'apikey', 'key',
  'jwt', 'sig', 'signature'
])

/** What a redacted value, userinfo password or fragment is replaced by. */
export const REDACTED = '[REDACTED]'

function normalName (name: string): string {
  return name.trim().toLowerCase()
}

/**
 * RFC 3986 2.1 percent-decoding of a query parameter name, with "+" as a space (the
 * application/x-www-form-urlencoded rule servers apply to query strings). Sequences
 * that are not valid UTF-8 stay as they are: a name is never refused, only compared.
 */
function decodeName (raw: string): string {
  const plus = raw.indexOf('+') === -1 ? raw : raw.replace(/\+/g, ' ')
  if (plus.indexOf('%') === -1) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    // Decode each run of valid escapes on its own.
    return plus.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run)
      } catch {
        return run
      }
    })
  }
}

/** A matcher of secret names: the default list plus `extraNames`. */
function matcher (extraNames: Iterable<string> | undefined): (rawName: string) => boolean {
  const names = new Set(SECRET_QUERY_NAMES)
  if (extraNames !== undefined) {
    for (const n of extraNames) if (typeof n === 'string' && n.trim() !== '') names.add(normalName(n))
  }
  return (rawName) => {
    const name = normalName(decodeName(rawName))
    if (names.has(name)) return true
    // Bracketed names as many query parsers read them: token[], token[0], user[password].
    const open = name.indexOf('[')
    if (open <= 0) return false
    if (names.has(name.slice(0, open).trim())) return true
    for (const m of name.slice(open).matchAll(/\[([^\]]*)\]/g)) {
      if (names.has(m[1].trim())) return true
    }
    return false
  }
}

function redactWith (url: string, isSecret: (rawName: string) => boolean): string {
  if (typeof url !== 'string') return ''
  // RFC 3986 3.5: the fragment is never sent by a client; when present it is not logged.
  const hash = url.indexOf('#')
  let head = hash === -1 ? url : url.slice(0, hash)
  const fragment = hash === -1 ? '' : (hash === url.length - 1 ? '#' : '#' + REDACTED)
  const q = head.indexOf('?')
  let path = q === -1 ? head : head.slice(0, q)
  // RFC 3986 3.2.1: a password in the userinfo of an absolute URI.
  const userinfo = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#@]*)@/.exec(path)
  if (userinfo !== null && userinfo[2].includes(':')) {
    path = userinfo[1] + userinfo[2].slice(0, userinfo[2].indexOf(':') + 1) + REDACTED + '@' + path.slice(userinfo[0].length)
  }
  if (q === -1) return path + fragment
  // RFC 3986 3.4: the query; "&" (and ";", which some servers also split on) separate parameters.
  const query = head.slice(q + 1)
  // Each parameter's value runs from its first "=" to the next separator, "=" included.
  head = path + '?' + query.replace(/[^&;]+/g, (param) => {
    const eq = param.indexOf('=')
    return eq !== -1 && isSecret(param.slice(0, eq)) ? param.slice(0, eq + 1) + REDACTED : param
  })
  return head + fragment
}

/**
 * `url` with the values of secret query parameters replaced by `[REDACTED]` (names of
 * SECRET_QUERY_NAMES and `extraNames`, case-insensitive, percent-decoded, with or
 * without `[...]`), the password of a userinfo replaced, and the fragment replaced
 * whole. Every other byte of the URL is kept as it was.
 */
export function redactUrl (url: string, extraNames?: Iterable<string>): string {
  return redactWith(url, matcher(extraNames))
}

/** A `redactUrl` with its list of names prepared once, for a logger's hot path. */
export function createUrlRedactor (extraNames?: Iterable<string>): (url: string) => string {
  const isSecret = matcher(extraNames)
  return (url) => redactWith(url, isSecret)
}

/** Options of `createRedactingSerializers`. */
export interface RedactingSerializersOptions {
  /** Query parameter names to redact besides SECRET_QUERY_NAMES. */
  extraNames?: Iterable<string>
}

/** The parts of a request (Fastify's or Node's) the serializer reads. */
export interface RequestLike {
  method?: string
  url?: string
  /** Fastify: the Host (or the forwarded host when trusted). */
  host?: string
  /** Fastify: the client address (or the forwarded one when trusted). */
  ip?: string
  headers?: { host?: string | string[] }
  socket?: { remoteAddress?: string, remotePort?: number } | null
}

/** A request as the redacting serializer logs it: method, redacted URL, host and remote address. */
export interface SerializedRequest {
  [key: string]: unknown
  method: string | undefined
  url: string
  host: string | undefined
  remoteAddress: string | undefined
  remotePort: number | undefined
}

/**
 * A pino `serializers` object for Fastify's `logger` option:
 * `Fastify({ logger: { serializers: createRedactingSerializers() } })`. Its `req` logs
 * the method, the URL with secrets redacted, the host and the remote address and port;
 * never the headers.
 */
export function createRedactingSerializers (options: RedactingSerializersOptions = {}): { req: (req: RequestLike) => SerializedRequest } {
  const redact = createUrlRedactor(options.extraNames)
  return {
    req (req: RequestLike): SerializedRequest {
      const hostHeader = req.headers?.host
      return {
        method: req.method,
        url: redact(req.url ?? ''),
        host: req.host ?? (Array.isArray(hostHeader) ? hostHeader[0] : hostHeader),
        remoteAddress: req.ip ?? req.socket?.remoteAddress,
        remotePort: req.socket?.remotePort
      }
    }
  }
}
