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
import secureJson from 'secure-json-parse'
import { malformedBody, serviceUnavailable, unprocessable, type ConventionError } from './errors'

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
const BACKSLASH = 0x5c
/** Characters of a string read one by one before the scan searches natively for its end. */
const IN_PLACE = 32

/** What one pass over a JSON text found. */
export type JsonScan =
  | { ok: true, depth: number, surrogates: boolean }
  | { ok: false, message: string }

/**
 * A counter of the characters a pass examined (each character the loop reads, and each one a
 * native search passes over), for tests that bound the work done per byte of input. Passed
 * by the caller or not at all: the pass counts in a local variable and adds it once at the end.
 */
export interface WorkCounter { steps: number }

/**
 * One iterative pass over a JSON text (RFC 8259 2: structural characters outside
 * strings): the deepest nesting, stopping as soon as it passes `maxDepth`, and whether
 * any string may hold a surrogate (an escaped `\uD800`-`\uDFFF` or a raw one), which
 * only then calls for the slower check of every string. Syntax is left to JSON.parse.
 * Linear: every character is examined a bounded number of times (`work` counts them).
 */
export function scanJsonText (text: string, maxDepth: number, work?: WorkCounter): JsonScan {
  const n = text.length
  // A raw lone surrogate can only come from a caller's string (decoded bytes never hold one).
  const surrogates = !isWellFormedString(text)
  const scan = scanStructure(text, maxDepth, surrogates)
  // isWellFormedString examined every character once.
  if (work !== undefined) work.steps += n + scan.steps
  return scan.result
}

/** RFC 8259 7: true when the escape at `at` is \\uXXXX with XXXX in D800-DFFF ("d", then 8-9 or a-f), a surrogate. */
function checkEscape (text: string, at: number): boolean {
  if (text.charCodeAt(at + 1) !== 0x75 || (text.charCodeAt(at + 2) | 0x20) !== 0x64) return false
  const h = text.charCodeAt(at + 3) | 0x20
  return h === 0x38 || h === 0x39 || (h >= 0x61 && h <= 0x66)
}

/** scanJsonText's pass; `steps` counts the characters its loops read and its native searches passed over. */
function scanStructure (text: string, maxDepth: number, surrogates: boolean): { result: JsonScan, steps: number } {
  let depth = 0
  let deepest = 0
  let steps = 0
  const n = text.length
  // Positions of the next quote and the next backslash at or after the cursor (n when
  // none), searched for again only once the cursor has passed them: every search starts
  // beyond where the last one of its kind ended, so the searches pass over the text once,
  // and the loops read each character at most once.
  let quote = -1
  let backslash = -1
  for (let i = 0; i < n; i++) {
    steps++
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // A string (RFC 8259 7), up to its closing quote.
      i++
      for (;;) {
        // A few characters are read in place: escapes close together cost no search each.
        const stop = Math.min(n, i + IN_PLACE)
        const from = i
        let d = 0
        for (; i < stop; i++) {
          d = text.charCodeAt(i)
          if (d === QUOTE || d === BACKSLASH) break
        }
        steps += i - from + 1
        if (i === stop) {
          if (i === n) break
          // A long run: to the next quote or backslash by native searches, each started where
          // the last one of its kind ended.
          if (quote < i) {
            quote = text.indexOf('"', i)
            if (quote === -1) quote = n
            steps += quote - i
          }
          if (backslash < i) {
            backslash = text.indexOf('\\', i)
            if (backslash === -1) backslash = n
            steps += backslash - i
          }
          i = Math.min(quote, backslash)
          if (i === n) break
          d = text.charCodeAt(i)
        }
        if (d === QUOTE) break
        if (checkEscape(text, i)) surrogates = true
        i += 2
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return { result: { ok: false, message: `body is nested deeper than ${maxDepth} levels` }, steps }
      if (depth > deepest) deepest = depth
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth < 0) {
      // More closing than opening brackets: no JSON text, whatever follows (RFC 8259 2).
      return { result: { ok: false, message: 'body is not well-formed JSON' }, steps }
    }
  }
  return { result: { ok: true, depth: deepest, surrogates }, steps }
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
export function fewOpeners (text: string, maxDepth: number, work?: WorkCounter): boolean {
  let count = 0
  let steps = 0
  let few = true
  for (const opener of OPENERS) {
    let at = text.indexOf(opener)
    let from = 0
    while (at !== -1 && few) {
      steps += at + 1 - from
      from = at + 1
      if (++count > maxDepth) few = false
      else at = text.indexOf(opener, from)
    }
    if (at === -1) steps += text.length - from
  }
  if (work !== undefined) work.steps += steps
  return few
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
export function parseJsonBody (text: string, options?: JsonBodyOptions, work?: WorkCounter): JsonBodyResult {
  return parseText(text, limitOf(options), false, work)
}

/**
 * parseJsonBody; `wellFormed`: the text is known to hold no lone surrogate (decoded from
 * UTF-8). `work` counts the characters the checks before JSON.parse examine: a few passes
 * over the text, never one per token.
 */
function parseText (text: string, maxDepth: number, wellFormed: boolean, work?: WorkCounter): JsonBodyResult {
  if (text.length === 0) return { ok: false, error: malformedBody('body is empty but Content-Type says JSON') }
  const shallow = fewOpeners(text, maxDepth, work) && text.indexOf('\\u') === -1 && (wellFormed || isWellFormedString(text))
  // Each native search above passed over the text at most once.
  if (work !== undefined) work.steps += 2 * text.length
  const scan = shallow ? SHALLOW : scanJsonText(text, maxDepth, work)
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
  // A Buffer (what Fastify hands a parser) is decoded as it is: a view is made only for another Uint8Array.
  const text = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8')
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/**
 * Parses a JSON body from its bytes (Fastify `parseAs: 'buffer'`): invalid UTF-8 is a
 * 400 with field `body` instead of text with U+FFFD in it; then as parseJsonBody.
 */
export function parseJsonBuffer (bytes: Uint8Array, options?: JsonBodyOptions, work?: WorkCounter): JsonBodyResult {
  const maxDepth = limitOf(options)
  if (bytes.length === 0) return { ok: false, error: malformedBody('body is empty but Content-Type says JSON') }
  const text = decodeUtf8Strict(bytes)
  if (text === null) return { ok: false, error: malformedBody('body is not valid UTF-8 (RFC 8259 8.1)') }
  // RFC 3629 3: UTF-8 cannot encode a surrogate, so the text holds no lone one.
  return parseText(text, maxDepth, true, work)
}

/** Bytes of one block of a body whose length is not known in advance (chunked). */
const BODY_BLOCK = 16 * 1024

/**
 * The fewest bytes a body's buffer is given when it first needs one: the few pieces of a small
 * body fit before it grows again.
 */
const FIRST_BYTES = 1024

/**
 * Makes a buffer of `size` bytes for a body. The default takes memory of its own
 * (`Buffer.allocUnsafeSlow`); an allocation that cannot be made throws (a RangeError,
 * `ERR_MEMORY_ALLOCATION_FAILED`), which the readers turn into an answer (isAllocationFailure).
 */
export type Allocate = (size: number) => Buffer

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
 * The size a body's buffer grows to when `needed` bytes must fit: twice the bytes received (at
 * least FIRST_BYTES), and no more than `cap` (the declared length, or a block) while the body
 * keeps to it. The size follows the bytes that arrived, never the number a client declared:
 * a connection that declares 1 GB and sends two bytes is given 1 KiB, and the bytes held stay
 * below twice the bytes received plus FIRST_BYTES; each growth at least doubles the size, so
 * the copies add up to less than twice the body.
 */
function grownSize (needed: number, cap: number): number {
  const size = Math.max(2 * needed, FIRST_BYTES)
  return cap >= needed ? Math.min(size, cap) : size
}

/**
 * True for what an allocation that cannot be made throws: a RangeError ("Array buffer
 * allocation failed", `ERR_MEMORY_ALLOCATION_FAILED`, an invalid length) or
 * `ERR_OUT_OF_MEMORY`. The readers answer it (noRoomForBody) instead of letting it escape a
 * stream's 'data' listener, which would end the process.
 */
export function isAllocationFailure (err: unknown): boolean {
  return err instanceof RangeError || (err as { code?: unknown } | null)?.code === 'ERR_OUT_OF_MEMORY'
}

/**
 * The answer to a body the server could not make room for while reading it: 503 (RFC 9110
 * 15.6.4: a temporary overload; the body was within the limit, so retrying later may succeed),
 * with Retry-After; the rest of the body is not read, so the connection closes after the answer.
 */
export function noRoomForBody (): ConventionError {
  const err = serviceUnavailable('the server could not make room for the request body now; retry later')
  err.closeConnection = true
  return err
}

/**
 * The bytes of a request body, collected as they arrive in at most about two bytes of memory
 * per body byte received, whatever the size of the pieces and whatever length was declared: a
 * body sent as one-byte chunks (RFC 9112 7.1) must not become one buffer per byte, each
 * holding its own bookkeeping and a view of the connection's read buffer, and a declared
 * Content-Length is a stranger's number, not an amount of memory to set aside. A body that
 * arrives in one piece is kept as it is (no copy); from the second piece on, the bytes are
 * copied into one buffer that grows with the bytes received (grownSize), up to the declared
 * length (`expected`, from Content-Length) while the body keeps to it: a body that arrives
 * in a few pieces as long as declared gets one buffer of that length, the size it had before.
 * `push` throws what `allocate` throws, and then holds what it held before.
 */
export class BodyBytes {
  /** Bytes received so far. */
  length = 0
  private first: Buffer | null = null
  private buffer: Buffer | null = null

  /** `expected`: the declared length of the body (0 when unknown). */
  constructor (private readonly expected = 0, private readonly allocate: Allocate = ownBlock) {}

  push (chunk: Buffer): void {
    if (chunk.length === 0) return
    const used = this.length
    const length = used + chunk.length
    if (used === 0) {
      this.first = chunk
      this.length = length
      return
    }
    let buffer = this.buffer
    if (buffer === null || length > buffer.length) {
      const grown = this.allocate(grownSize(length, this.expected))
      ;(this.first ?? buffer as Buffer).copy(grown, 0, 0, used)
      this.first = null
      this.buffer = buffer = grown
    }
    chunk.copy(buffer, used)
    this.length = length
  }

  /** The body: one buffer of `length` bytes (the first piece itself when it was the only one). */
  bytes (): Buffer {
    if (this.first !== null) return this.first
    if (this.buffer === null) return Buffer.alloc(0)
    return this.buffer.subarray(0, this.length)
  }
}

/**
 * Joins the pieces of a body into blocks of 16 KiB (pieces of that size or more pass as
 * they are): whatever reads the blocks (another parser that keeps one buffer per piece,
 * Fastify's own among them) holds a body sent in pieces of one byte (as one-byte chunks, or
 * one byte per TCP segment) in about one byte of memory per body byte. `expected`, the
 * declared length (Content-Length; 0 when unknown), sizes the blocks of a shorter body to
 * the body, and lets a body that arrives in one piece pass as it is. A block's buffer grows
 * with the bytes it holds (grownSize, up to the block's size): a connection that sent two
 * bytes holds 1 KiB, not a block. `received` counts the bytes that came in. No stream of its
 * own: the caller hands each block on (`emit`). `add` throws what `allocate` throws.
 */
export class BlockJoiner {
  received = 0
  private block: Buffer | null = null
  /** The size of the block being filled: BODY_BLOCK, or what is left of a shorter declared body. */
  private size = 0
  private used = 0

  constructor (private readonly expected = 0, private readonly allocate: Allocate = ownBlock) {}

  /** Takes one piece; calls `emit` with each block it completes (or the piece itself). */
  add (chunk: Buffer, emit: (block: Buffer) => void): void {
    const before = this.received
    this.received += chunk.length
    // A large piece, or the whole rest of a declared body with nothing held: no copy.
    if (chunk.length >= BODY_BLOCK || (this.used === 0 && this.expected > 0 && this.received >= this.expected)) {
      this.end(emit)
      return emit(chunk)
    }
    let at = 0
    while (at < chunk.length) {
      // A block holds what is left of a declared body when that is less than a block.
      if (this.used === 0) this.size = this.expected > before + at ? Math.min(BODY_BLOCK, this.expected - before - at) : BODY_BLOCK
      const n = Math.min(chunk.length - at, this.size - this.used)
      const block = this.room(this.used + n)
      chunk.copy(block, this.used, at, at + n)
      this.used += n
      at += n
      if (this.used === this.size) this.end(emit)
    }
  }

  /** The block's buffer, grown so that `needed` bytes fit. */
  private room (needed: number): Buffer {
    const block = this.block
    if (block !== null && block.length >= needed) return block
    const grown = this.allocate(grownSize(needed, this.size))
    if (block !== null) block.copy(grown, 0, 0, this.used)
    this.block = grown
    return grown
  }

  /** Hands on what is held (at the end of the body, or before a piece that passes as it is). */
  end (emit: (block: Buffer) => void): void {
    if (this.used === 0) return
    const block = this.block as Buffer
    const out = this.used === block.length ? block : block.subarray(0, this.used)
    this.block = null
    this.used = 0
    emit(out)
  }
}
