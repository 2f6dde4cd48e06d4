/**
 * The errors of the conventions client: one class, one code per answer a caller can act
 * on. Messages name the method, the URL (without userinfo, secret query values redacted)
 * and the status; they never carry a credential, a request header or a request body.
 */
import { redactUrl } from '@http-conventions/grammar'

/** One entry of a service's `errors[]` envelope, as the client reads it. */
export interface ClientErrorEntry {
  field?: string
  message: string
  code?: string
}

/** The codes of ConventionsClientError, one per answer a caller can act on. */
export const clientErrorCodes = Object.freeze({
  /** 401 after the client answered the challenge (or had no credentials for it). */
  UNAUTHORIZED: 'ERR_CONVENTIONS_CLIENT_UNAUTHORIZED',
  /** 412 after the last try of a conditional update. */
  PRECONDITION_FAILED: 'ERR_CONVENTIONS_CLIENT_PRECONDITION_FAILED',
  /** 428 that a re-read could not satisfy (the resource has no validator). */
  PRECONDITION_REQUIRED: 'ERR_CONVENTIONS_CLIENT_PRECONDITION_REQUIRED',
  /** 415: no format the client can write is accepted; `acceptPatch` lists what is. */
  UNSUPPORTED_MEDIA_TYPE: 'ERR_CONVENTIONS_CLIENT_UNSUPPORTED_MEDIA_TYPE',
  /** 422: `errors` holds the server's entries. */
  UNPROCESSABLE: 'ERR_CONVENTIONS_CLIENT_UNPROCESSABLE',
  /** Any other status that is not 2xx. */
  HTTP_STATUS: 'ERR_CONVENTIONS_CLIENT_HTTP_STATUS',
  /** A request body (a stream) over the bound the client buffers, refused before sending. */
  BODY_TOO_LARGE: 'ERR_CONVENTIONS_CLIENT_BODY_TOO_LARGE',
  /** More redirects than the bound. */
  TOO_MANY_REDIRECTS: 'ERR_CONVENTIONS_CLIENT_TOO_MANY_REDIRECTS',
  /** A credential source (a token provider) failed. */
  CREDENTIALS: 'ERR_CONVENTIONS_CLIENT_CREDENTIALS',
  /** A 401 over plain http offered only answers weaker than `weakestAuth`; no credentials were sent. `offered` names them. */
  WEAK_CHALLENGE: 'ERR_CONVENTIONS_CLIENT_WEAK_CHALLENGE'
})

/** One of the values of `clientErrorCodes`. */
export type ClientErrorCode = typeof clientErrorCodes[keyof typeof clientErrorCodes]

/** What a ConventionsClientError carries besides its code and message. */
export interface ClientErrorDetails {
  status?: number
  method?: string
  url?: string
  errors?: ClientErrorEntry[]
  acceptPatch?: string[]
  etag?: string
  attempts?: number
  offered?: string[]
}

/** The URL as it may appear in a message: no userinfo, secret query values redacted. */
export function safeUrl (url: string): string {
  try {
    const u = new URL(url)
    u.username = ''
    u.password = ''
    return redactUrl(u.toString())
  } catch {
    return '(invalid URL)'
  }
}

/** An answer the client could not turn into a result (a status that is not 2xx, a bound reached): `code` says which. */
export class ConventionsClientError extends Error {
  readonly code: ClientErrorCode
  /** The status of the last answer, when there was one. */
  readonly status: number | undefined
  readonly method: string | undefined
  /** The URL, without userinfo and with secret query values redacted. */
  readonly url: string | undefined
  /** The 422's `errors[]` (any envelope's entries, when the answer had one). */
  readonly errors: ClientErrorEntry[]
  /** The media types of the answer's Accept-Patch (a 415). */
  readonly acceptPatch: string[]
  /** The ETag of the last answer, when it had one. */
  readonly etag: string | undefined
  /** How many requests the operation sent. */
  readonly attempts: number | undefined
  /** WEAK_CHALLENGE: the answers the 401 offered that the credentials could give ("Basic", "Digest MD5"), strongest first. */
  readonly offered: string[]

  constructor (code: ClientErrorCode, message: string, details: ClientErrorDetails = {}) {
    const where = details.method !== undefined && details.url !== undefined ? `${details.method} ${safeUrl(details.url)}: ` : ''
    super(where + message)
    this.name = 'ConventionsClientError'
    this.code = code
    this.status = details.status
    this.method = details.method
    this.url = details.url === undefined ? undefined : safeUrl(details.url)
    this.errors = details.errors ?? []
    this.acceptPatch = details.acceptPatch ?? []
    this.etag = details.etag
    this.attempts = details.attempts
    this.offered = details.offered ?? []
  }
}

/** True for a ConventionsClientError. */
export function isConventionsClientError (err: unknown): err is ConventionsClientError {
  return err instanceof ConventionsClientError
}
