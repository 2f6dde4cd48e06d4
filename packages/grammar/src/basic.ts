/**
 * The credentials of the "Basic" authentication scheme (RFC 7617) as a client builds them.
 */
/** Encodes credentials as a client would (RFC 7617 2), for tests and clients. */
export function encodeBasicCredentials (userId: string, password: string): string {
  if (userId.includes(':')) throw new TypeError('RFC 7617 2: a user-id cannot contain a colon')
  return Buffer.from(`${userId.normalize('NFC')}:${password.normalize('NFC')}`, 'utf8').toString('base64')
}
