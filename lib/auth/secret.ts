/**
 * Comparing a presented secret (a password) with a stored one in time that does not depend
 * on the stored secret: neither its bytes nor its length. Framework-free.
 *
 * Secrets up to `SHORT` bytes are compared as fixed-width, zero-padded blocks with
 * `timingSafeEqual`, and their lengths compared apart; longer ones by their SHA-256. The
 * only thing the time reveals is whether the *presented* secret is longer than `SHORT`
 * bytes, which its sender knows already. The padded copy avoids hashing every attempt (a
 * SHA-256 costs several times the whole comparison).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

const SHORT = 128

export interface StoredSecret {
  /** The secret's UTF-8 bytes, zero-padded to SHORT (random bytes when it is longer). */
  readonly block: Buffer
  readonly length: number
  readonly digest: Buffer
}

function sha256 (bytes: Buffer): Buffer {
  return hash('sha256', bytes, 'buffer') as unknown as Buffer
}

/** Prepares a stored secret once (at registration). */
export function storeSecret (secret: string): StoredSecret {
  const bytes = Buffer.from(secret, 'utf8')
  const block = Buffer.alloc(SHORT)
  if (bytes.length <= SHORT) bytes.copy(block)
  else randomBytes(SHORT).copy(block)
  return { block, length: bytes.length, digest: sha256(bytes) }
}

/** A stored secret that no presented secret matches (for unknown users: the same work as a wrong password). */
export function unmatchableSecret (): StoredSecret {
  return { block: randomBytes(SHORT), length: -1, digest: randomBytes(32) }
}

/** True when `presented` equals the stored secret. Synchronous; one scratch block per call site. */
export function secretMatcher (): (presented: string, stored: StoredSecret) => boolean {
  const scratch = Buffer.alloc(SHORT)
  return function secretMatches (presented, stored) {
    const length = Buffer.byteLength(presented, 'utf8')
    if (length > SHORT) {
      const bytes = Buffer.from(presented, 'utf8')
      return timingSafeEqual(sha256(bytes), stored.digest) && length === stored.length
    }
    scratch.fill(0)
    scratch.write(presented, 0, 'utf8')
    // Both operands are evaluated whatever the first gives.
    const same = timingSafeEqual(scratch, stored.block)
    return (length === stored.length) && same
  }
}
