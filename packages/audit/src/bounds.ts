/**
 * The bounds the auditor holds against the service it audits (docs/audit.md, Limits): no
 * answer, document or schema it is sent makes it keep more than these, and a run that hits
 * one says so and goes on.
 */
import { gunzipSync } from 'node:zlib'
import { decode, VCDIFF_TARGET_TOO_LARGE } from '@http-conventions/vcdiff'

export const LIMITS = {
  /** status line and header fields of an answer */
  head: 64 * 1024,
  /** body bytes kept of an answer to a probe; the connection is closed past them */
  body: 4 * 1024 * 1024,
  /** a chunk-size line with its extensions (RFC 9112 7.1.1) */
  chunkLine: 4096,
  /** an OpenAPI document, fetched or read from a file */
  document: 16 * 1024 * 1024,
  /** what a 226 body decodes to (gzip, VCDIFF) */
  decoded: 16 * 1024 * 1024,
  /** paths without parameters probed with GET and HEAD */
  paths: 100,
  /** `$ref`s followed one inside another */
  refDepth: 16,
  /** `$ref`s resolved in one schema */
  refCount: 256,
  /** schema objects in one resolved schema */
  schemaNodes: 10000,
  /** characters of a generated string (minLength above it is not met) */
  string: 4096,
  /** items of a generated array (minItems above it is not met) */
  items: 64,
  /** nesting of a generated body */
  depth: 32
} as const

/** `4194304` as `4 MiB`. */
export function size (bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${bytes} bytes`
}

/** A 226 body decoded, or why not: a manipulation it cannot undo, or output past the bound. */
export type Decoded = { ok: true, body: Buffer } | { ok: false, limit: boolean, message: string }

/**
 * Undoes the manipulations an IM lists, last applied first (RFC 3229 10.5.2), each output held
 * to `max` bytes: gunzip stops there (zlib's maxOutputLength), the VCDIFF decoder refuses a
 * target that declares more before it allocates.
 */
export function undoManipulations (im: readonly string[], base: Uint8Array, body: Buffer, max: number = LIMITS.decoded): Decoded {
  let payload = body
  for (const m of [...im].reverse()) {
    try {
      if (m === 'gzip') payload = gunzipSync(payload, { maxOutputLength: max })
      else if (m === 'vcdiff') payload = Buffer.from(decode(base, payload, { maxTargetSize: max }))
    } catch (err) {
      const e = err as Error & { code?: string }
      const limit = e.code === 'ERR_BUFFER_TOO_LARGE' || e.code === VCDIFF_TARGET_TOO_LARGE
      return limit ? { ok: false, limit, message: `the ${m} body decodes to more than ${size(max)} (limit): not compared` } : { ok: false, limit, message: `the 226 body does not decode: ${e.message}` }
    }
  }
  return { ok: true, body: payload }
}
