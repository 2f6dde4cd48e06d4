/**
 * The credentials of the "Digest" authentication scheme (RFC 7616) as both sides compute
 * them, qop=auth: the algorithms (RFC 7616 3.2, 6.1), H and KD (RFC 7616 3.4.1), A1 and its
 * session variant (RFC 7616 3.4.2), A2 (RFC 7616 3.4.3) and the userhash (RFC 7616 3.4.4). The
 * server side (challenges, nonces, verification) builds on these.
 */
import { createHash } from 'node:crypto'

/** The hash functions of RFC 7616 3.2 (SHA-512-256 is FIPS 180-4 SHA-512/256). */
export type DigestHash = 'SHA-512-256' | 'SHA-256' | 'MD5'
/** RFC 7616 3.3 / 6.1: each hash alone, or with session (-sess) keying. */
export type DigestAlgorithm = DigestHash | 'SHA-512-256-sess' | 'SHA-256-sess' | 'MD5-sess'

/** An algorithm of RFC 7616 3.2 as computed: Node's hash name, -sess keying, the digest's hex length, its rank (strongest first). */
export interface DigestAlgorithmInfo {
  name: DigestAlgorithm
  hash: DigestHash
  node: string
  sess: boolean
  hexLength: number
  rank: number
}

const HASHES: Record<DigestHash, { node: string, hexLength: number, rank: number }> = {
  'SHA-512-256': { node: 'sha512-256', hexLength: 64, rank: 0 },
  'SHA-256': { node: 'sha256', hexLength: 64, rank: 1 },
  MD5: { node: 'md5', hexLength: 32, rank: 2 }
}

const ALGORITHMS = new Map<string, DigestAlgorithmInfo>()
for (const hash of Object.keys(HASHES) as DigestHash[]) {
  const h = HASHES[hash]
  for (const sess of [false, true]) {
    const name = (sess ? `${hash}-sess` : hash) as DigestAlgorithm
    ALGORITHMS.set(name.toLowerCase(), { name, hash, node: h.node, sess, hexLength: h.hexLength, rank: h.rank * 2 + (sess ? 1 : 0) })
  }
}

/** The algorithm named (case-insensitive, RFC 7616 3.3: algorithm), or undefined when unknown. */
export function digestAlgorithmInfo (name: string): DigestAlgorithmInfo | undefined {
  return ALGORITHMS.get(name.toLowerCase())
}

/**
 * H(data) of RFC 7616 3.4.1: the lower-case hex digest. A1 material (user name,
 * password) is hashed as UTF-8 (RFC 7616 4: charset=UTF-8); values that come from
 * the header itself are octets and are hashed as such ('latin1').
 */
export function digestHex (node: string, data: string, encoding: 'utf8' | 'latin1'): string {
  return createHash(node).update(data, encoding).digest('hex')
}

/** The hash of `data` under `hash`, lower-case hex (UTF-8 input). */
export function digestHash (hash: DigestHash, data: string): string {
  return digestHex(HASHES[hash].node, data, 'utf8')
}

/**
 * H(username ":" realm ":" password): the value to store instead of a password
 * (RFC 7616 3.4.2). User name and password are NFC normalised first (RFC 7616 3.3,
 * charset=UTF-8: the client converts both to NFC before encoding them as UTF-8).
 */
export function digestHa1 (hash: DigestHash, username: string, realm: string, password: string): string {
  return digestHash(hash, `${username.normalize('NFC')}:${realm}:${password.normalize('NFC')}`)
}

/** RFC 7616 3.4.4: username = H( unq(username) ":" unq(realm) ) when userhash=true (NFC, UTF-8). */
export function digestUserhash (hash: DigestHash, username: string, realm: string): string {
  return digestHash(hash, `${username.normalize('NFC')}:${realm}`)
}

/** What `digestResponse` computes from: the challenge's and the request's values, and the password or H(A1). */
export interface DigestResponseInput {
  algorithm: DigestAlgorithm
  /** the user name as the client sends it (not the userhash), NFC per RFC 7616 3.3 */
  username: string
  realm: string
  /** the password, or `ha1` instead */
  password?: string
  /** H(username:realm:password) in lower-case hex */
  ha1?: string
  method: string
  uri: string
  nonce: string
  /** eight hex digits */
  nc: string
  cnonce: string
  qop: string
}

/** KD(H(A1), nonce:nc:cnonce:qop:H(A2)) (RFC 7616 3.4.1) from H(A1) in lower-case hex. */
export function digestResponseHex (info: DigestAlgorithmInfo, ha1: string, method: string, uri: string, nonce: string, nc: string, cnonce: string, qop: string): string {
  // RFC 7616 3.4.2: for -sess, H(A1) = H( H(username:realm:passwd) ":" nonce-prime ":" cnonce-prime )
  const secret = info.sess ? digestHex(info.node, `${ha1}:${nonce}:${cnonce}`, 'latin1') : ha1
  // RFC 7616 3.4.3: A2 = Method ":" request-uri (qop=auth)
  const ha2 = digestHex(info.node, `${method}:${uri}`, 'latin1')
  // RFC 7616 3.4.1: response = KD(H(A1), nonce ":" nc ":" cnonce ":" qop ":" H(A2)), KD(s, d) = H(s ":" d)
  return digestHex(info.node, `${secret}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`, 'latin1')
}

/** The `response` value a client computes (RFC 7616 3.4.1), for clients and tests. */
export function digestResponse (input: DigestResponseInput): string {
  const info = digestAlgorithmInfo(input.algorithm)
  if (info === undefined) throw new TypeError(`unknown Digest algorithm ${JSON.stringify(input.algorithm)}`)
  let ha1 = input.ha1
  if (ha1 === undefined) {
    if (input.password === undefined) throw new TypeError('a password or an ha1 is needed')
    // RFC 7616 3.3 (charset=UTF-8): the password in NFC; the user name as it is sent
    ha1 = digestHex(info.node, `${input.username}:${input.realm}:${input.password.normalize('NFC')}`, 'utf8')
  }
  return digestResponseHex(info, ha1.toLowerCase(), input.method, input.uri, input.nonce, input.nc, input.cnonce, input.qop)
}

/** Every character printable US-ASCII (0x20-0x7E): what a quoted-string carries without escapes or an encoding. */
export function isPrintableAscii (s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) return false
  }
  return true
}
