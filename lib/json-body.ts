/**
 * JSON request bodies, parsed as Fastify does by default (secure-json-parse): keys that
 * would poison a prototype (`__proto__`, `constructor.prototype`) are refused.
 *
 * Hostile input is bounded before JSON.parse sees it: the text is scanned once, without
 * recursion, and a body nested deeper than `maxDepth` is refused (400, field `body`), so
 * neither the parser nor anything that later walks the value (validation, merge patch,
 * serialization) can run out of stack. Bytes are decoded strictly: invalid UTF-8 is a
 * 400, never a silent U+FFFD, and a string holding a lone surrogate is a 422 naming it.
 */
import { isUtf8 } from 'node:buffer'
import { Transform, type TransformCallback } from 'node:stream'
import secureJson from 'secure-json-parse'
import { malformedBody, unprocessable, type ConventionError } from './errors'

export interface JsonBodyOptions {
  /**
   * Deepest nesting of arrays and objects accepted (default 64): `[]` and `{}` are depth 1,
   * `{"a":[1]}` depth 2. A deeper body is a 400 with field `body`.
   */
  maxDepth?: number
}

export type JsonBodyResult = { ok: true, value: unknown } | { ok: false, error: ConventionError }

/** Default bound of nesting for every JSON body. */
export const DEFAULT_JSON_MAX_DEPTH = 64

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22

/** What one pass over a JSON text found. */
export type JsonScan =
  | { ok: true, depth: number, surrogates: boolean }
  | { ok: false, message: string }

/**
 * One iterative pass over a JSON text (RFC 8259 2: structural characters outside
 * strings): the deepest nesting, stopping as soon as it passes `maxDepth`, and whether
 * any string may hold a surrogate (an escaped `\uD800`-`\uDFFF` or a raw one), which
 * only then calls for the slower check of every string. Syntax is left to JSON.parse.
 */
export function scanJsonText (text: string, maxDepth: number): JsonScan {
  let depth = 0
  let deepest = 0
  // A raw lone surrogate can only come from a caller's string (decoded bytes never hold one).
  let surrogates = !isWellFormedString(text)
  const n = text.length
  // Position of the next backslash at or after the cursor (n when none): found once per
  // backslash, so that skipping strings stays linear however many strings there are.
  let backslash = -1
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // A string (RFC 8259 7): jump to its closing quote, stepping over escapes.
      i++
      for (;;) {
        const quote = text.indexOf('"', i)
        if (quote === -1) return { ok: true, depth: deepest, surrogates }
        if (backslash < i) {
          backslash = text.indexOf('\\', i)
          if (backslash === -1) backslash = n
        }
        if (backslash > quote) {
          i = quote
          break
        }
        // RFC 8259 7: \uXXXX with XXXX in D800-DFFF is a surrogate ("d" then 8-9 or a-f).
        const e = backslash + 1
        if (text.charCodeAt(e) === 0x75 && (text.charCodeAt(e + 1) | 0x20) === 0x64) {
          const h = text.charCodeAt(e + 2) | 0x20
          if (h === 0x38 || h === 0x39 || (h >= 0x61 && h <= 0x66)) surrogates = true
        }
        i = e + 1
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return { ok: false, message: `body is nested deeper than ${maxDepth} levels` }
      if (depth > deepest) deepest = depth
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth < 0) {
      // More closing than opening brackets: no JSON text, whatever follows (RFC 8259 2).
      return { ok: false, message: 'body is not well-formed JSON' }
    }
  }
  return { ok: true, depth: deepest, surrogates }
}

/** True when `s` holds no lone surrogate (String.prototype.isWellFormed, Node >= 20). */
export function isWellFormedString (s: string): boolean {
  return (s as unknown as { isWellFormed: () => boolean }).isWellFormed()
}

/** A printable form of a member name for `field` (lone surrogates become U+FFFD). */
function printable (s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
}

/**
 * The dotted path of the first string (value or member name) holding a lone surrogate,
 * or null. Iterative: the value is already known to be at most `maxDepth` deep, but
 * this does not rely on it.
 */
export function findLoneSurrogate (value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']]
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string]
    if (typeof node === 'string') {
      if (!isWellFormedString(node)) return path === '' ? 'body' : path
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], path === '' ? String(i) : `${path}.${i}`])
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node)
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]
        const at = path === '' ? printable(key) : `${path}.${printable(key)}`
        if (!isWellFormedString(key)) return at
        stack.push([(node as Record<string, unknown>)[key], at])
      }
    }
  }
  return null
}

// What the full scan would find in a text that fewOpeners lets through with no escape and no
// raw lone surrogate: no nesting over the limit and no string that can hold a surrogate.
// (More closing than opening brackets is left to JSON.parse: the same 400.)
const SHALLOW: JsonScan = Object.freeze({ ok: true, depth: 0, surrogates: false })

const OPENERS = ['{', '['] as const

/**
 * True when `text` holds at most `maxDepth` opening brackets (`{` or `[`, in strings or
 * not), so it cannot nest deeper: most bodies, checked by a few native searches instead
 * of a pass over every character.
 */
export function fewOpeners (text: string, maxDepth: number): boolean {
  let count = 0
  for (const opener of OPENERS) {
    let at = text.indexOf(opener)
    while (at !== -1) {
      if (++count > maxDepth) return false
      at = text.indexOf(opener, at + 1)
    }
  }
  return true
}

function limitOf (options: JsonBodyOptions | undefined): number {
  const max = options?.maxDepth ?? DEFAULT_JSON_MAX_DEPTH
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxDepth must be a positive integer')
  return max
}

/**
 * Parses a JSON body, or returns the error that says why it cannot be: 400 (field
 * `body`) when it is empty, not well-formed, nested deeper than `maxDepth` or poisoned;
 * 422 naming the field when a string holds a lone surrogate (RFC 8259 8.2: such a
 * string is grammatical but its meaning is unpredictable, so it is not processed).
 */
export function parseJsonBody (text: string, options?: JsonBodyOptions): JsonBodyResult {
  return parseText(text, limitOf(options), false)
}

/** parseJsonBody; `wellFormed`: the text is known to hold no lone surrogate (decoded from UTF-8). */
function parseText (text: string, maxDepth: number, wellFormed: boolean): JsonBodyResult {
  if (text.length === 0) return { ok: false, error: malformedBody('body is empty but Content-Type says JSON') }
  const scan = fewOpeners(text, maxDepth) && text.indexOf('\\u') === -1 && (wellFormed || isWellFormedString(text))
    ? SHALLOW
    : scanJsonText(text, maxDepth)
  if (!scan.ok) return { ok: false, error: malformedBody(scan.message) }
  let value: unknown
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (err) {
    const message = /forbidden (prototype|constructor)/.test((err as Error).message)
      ? 'body contains a forbidden __proto__ or constructor.prototype key'
      : 'body is not well-formed JSON'
    return { ok: false, error: malformedBody(message) }
  }
  if (scan.surrogates) {
    const field = findLoneSurrogate(value)
    if (field !== null) return { ok: false, error: unprocessable({ field, message: 'contains a lone surrogate, which is not a Unicode character (RFC 8259 8.2)' }) }
  }
  return { ok: true, value }
}

/**
 * Decodes UTF-8 bytes strictly (RFC 8259 8.1: JSON exchanged between systems is UTF-8;
 * RFC 3629 3: ill-formed sequences, overlong forms and encoded surrogates are not decoded).
 * A leading byte order mark is ignored (RFC 8259 8.1 allows it). Null when the bytes are
 * not UTF-8. Validation and decoding are Node's native ones (several times faster than a
 * fatal TextDecoder on short bodies).
 */
export function decodeUtf8Strict (bytes: Uint8Array): string | null {
  if (!isUtf8(bytes)) return null
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/**
 * Parses a JSON body from its bytes (Fastify `parseAs: 'buffer'`): invalid UTF-8 is a
 * 400 with field `body` instead of text with U+FFFD in it; then as parseJsonBody.
 */
export function parseJsonBuffer (bytes: Uint8Array, options?: JsonBodyOptions): JsonBodyResult {
  const maxDepth = limitOf(options)
  if (bytes.length === 0) return { ok: false, error: malformedBody('body is empty but Content-Type says JSON') }
  const text = decodeUtf8Strict(bytes)
  if (text === null) return { ok: false, error: malformedBody('body is not valid UTF-8 (RFC 8259 8.1)') }
  // RFC 3629 3: UTF-8 cannot encode a surrogate, so the text holds no lone one.
  return parseText(text, maxDepth, true)
}

/** Bytes of one block of a body whose length is not known in advance (chunked). */
const BODY_BLOCK = 16 * 1024

/**
 * A block of its own memory. `Buffer.allocUnsafe` takes blocks under half of
 * `Buffer.poolSize` (64 KiB from Node 24) from the shared pool, so a 16 KiB block cut beside
 * small buffers that die (one-byte pieces of a body) would keep the whole 64 KiB slab alive:
 * four bytes of memory per body byte.
 */
function ownBlock (size: number): Buffer {
  return Buffer.allocUnsafeSlow(size)
}

/**
 * The bytes of a request body, collected as they arrive in about one byte of memory per
 * body byte (plus one block), whatever the size of the pieces: a body sent as one-byte
 * chunks (RFC 9112 7.1) must not become one buffer per byte, each holding its own
 * bookkeeping and a view of the connection's read buffer. A body that arrives in one piece
 * is kept as it is (no copy); from the second piece on, the bytes are copied into one buffer
 * of the declared length (`expected`, from Content-Length) or, when it is unknown or
 * exceeded, into blocks joined once at the end.
 */
export class BodyBytes {
  /** Bytes received so far. */
  length = 0
  private first: Buffer | null = null
  private readonly full: Buffer[] = []
  private block: Buffer | null = null
  private used = 0

  /** `expected`: the declared length of the body (0 when unknown). */
  constructor (private readonly expected = 0) {}

  push (chunk: Buffer): void {
    if (chunk.length === 0) return
    this.length += chunk.length
    if (this.length === chunk.length) {
      this.first = chunk
      return
    }
    if (this.first !== null) {
      const first = this.first
      this.first = null
      this.copy(first)
    }
    this.copy(chunk)
  }

  private copy (bytes: Buffer): void {
    let at = 0
    while (at < bytes.length) {
      if (this.block === null || this.used === this.block.length) {
        if (this.block !== null) this.full.push(this.block)
        // The first block holds the whole declared body when the body keeps to it.
        const size = this.block === null && this.expected >= this.length ? this.expected : BODY_BLOCK
        this.block = ownBlock(size)
        this.used = 0
      }
      const n = bytes.copy(this.block, this.used, at)
      this.used += n
      at += n
    }
  }

  /** The body: one buffer of `length` bytes (the first piece itself when it was the only one). */
  bytes (): Buffer {
    if (this.first !== null) return this.first
    if (this.block === null) return Buffer.alloc(0)
    const last = this.block.subarray(0, this.used)
    return this.full.length === 0 ? last : Buffer.concat([...this.full, last], this.length)
  }
}

/**
 * A pass-through stream that joins the pieces of a body into blocks of 16 KiB (pieces of
 * that size or more pass as they are): whatever reads it (another parser that keeps one
 * buffer per piece, Fastify's own among them) holds a body sent as one-byte chunks in about
 * one byte of memory per body byte. `receivedEncodedLength` counts the bytes that came in.
 */
export class CoalescedBody extends Transform {
  receivedEncodedLength = 0
  private block: Buffer | null = null
  private used = 0

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.receivedEncodedLength += chunk.length
    if (chunk.length >= BODY_BLOCK) {
      this.flushBlock()
      this.push(chunk)
      return callback()
    }
    this.block ??= ownBlock(BODY_BLOCK)
    const n = chunk.copy(this.block, this.used)
    this.used += n
    if (this.used === BODY_BLOCK) {
      this.flushBlock()
      if (n < chunk.length) {
        this.block = ownBlock(BODY_BLOCK)
        this.used = chunk.copy(this.block, 0, n)
      }
    }
    callback()
  }

  override _flush (callback: TransformCallback): void {
    this.flushBlock()
    callback()
  }

  private flushBlock (): void {
    if (this.used === 0) return
    this.push((this.block as Buffer).subarray(0, this.used))
    this.block = null
    this.used = 0
  }
}
