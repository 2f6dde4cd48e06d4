/**
 * A VCDIFF source with its hash indexes built once, and the encode of one
 * target against it (RFC 3284 sections 4.1-4.3: header, then windows).
 *
 * Indexes: a short look (`hashLength`, default 8 bytes: xdelta3's source
 * checksum) every `sourceStep` positions, and a long look (32 bytes:
 * open-vcdiff's block hash) on blocks. Small sources are indexed finely
 * (every 2nd / 16th position); sources over 512 KiB more sparsely (every
 * 4th position / whole 32-byte blocks, whose hashes are joined from the short
 * ones), as building the index is then most of the work: matches are
 * extended backwards, so a sparser index loses only short matches (every
 * 8th position lost too many of them in edited text and JSON).
 *
 * The common prefix and suffix of source and target (a new version of a
 * document that changed in a few places) are found first, by native
 * comparisons at memory speed, and become one COPY each; the match search
 * runs on the changed middle only. When that middle is small next to the
 * source, the search uses an index of the source around the change (built for
 * this target, a fraction of the whole index) rather than the whole index: the
 * choice depends on the source and target only, so a delta does not depend on
 * what was built before.
 */
import { MIN_MATCH, SourceIndex, entryHashes, joinHashes } from './block-hash'
import { Matcher } from './matcher'
import { Sink, varintSize } from './varint'
import { HEADER, Matches, WindowWriter } from './window-writer'

/**
 * How hard the encoder searches. 'default': deltas about the size of `xdelta3 -3`'s
 * (gzipped, no larger). 'fast': the same search below 512 KiB of source (where it is
 * already several times as fast as `xdelta3 -1`); above, one candidate a lookup, no lazy
 * matching and, over 4 MiB, the short index every 16th source position: at least as fast
 * as `xdelta3 -1`, with deltas no larger than its own (docs/plugins.md has the numbers).
 */
export type EncodeLevel = 'fast' | 'default'

/** Options of `encode` and `prepareSource`. */
export interface EncodeOptions {
  /** 'default' or 'fast' (see `EncodeLevel`): fixed when a source is prepared. */
  level?: EncodeLevel
  /** Largest target window in bytes, 1..64 MiB (default 8 MiB). */
  windowSize?: number
  /** Bytes covered by the short rolling hash, 4..64 (default 8). */
  hashLength?: number
  /** Distance between indexed source positions, 1..64 (default 2, 4 for sources over 512 KiB; fast level: 16 over 4 MiB). */
  sourceStep?: number
  /** Source candidates examined per lookup in each index, 1..1024 (default 4; fast level: 1 for sources over 512 KiB). */
  maxProbes?: number
  /** Look for COPY instructions into the target already written (default true). */
  targetMatches?: boolean
}

/** Options fixed when a source is prepared may not change per target; these may. */
export type TargetOptions = Pick<EncodeOptions, 'windowSize' | 'targetMatches'>

/** Per-target options of `tryEncode`. */
export interface TryEncodeOptions extends TargetOptions {
  /**
   * Give up (return null) when the delta would take at least this many bytes
   * (default: the target's length, i.e. a delta that saves nothing).
   */
  maxSize?: number
}

/** The encoder's default largest target window, in bytes (8 MiB; `EncodeOptions.windowSize`). */
export const DEFAULT_WINDOW_SIZE = 8 * 1024 * 1024
/** Bytes hashed by the long source index. */
const LONG_LOOK = 32
/** The short index of a source over this size computes its hashes again for its filter rather than keep them. */
const REHASH_SOURCE = 4 * 1024 * 1024
/** Sources above this size get sparser indexes: building them is most of the work. */
const LARGE_SOURCE = 512 * 1024
/**
 * A common prefix or suffix at least this long is one COPY and is not searched
 * (the search itself takes a match this long without looking further).
 */
const FIXED_MIN = 64
/** Source bytes indexed on each side of the changed middle, at least (a local index) ... */
const MARGIN_MIN = 4 * 1024
/** ... and at most: a few times the changed middle in between. */
const MARGIN_MAX = 64 * 1024
/** A local index serves when it covers at most this share of the source. */
const LOCAL_SHARE = 1 / 4
/** Bytes compared at a time when looking for the common prefix and suffix. */
const SPAN = 64 * 1024
const SPAN_SMALL = 256
/** The fast level's short index of a source over 4 MiB samples every 16th position (xdelta3 -1 samples sparsely too). */
const FAST_SPARSE_SOURCE = 4 * 1024 * 1024
const FAST_SPARSE_STEP = 16
const LEVELS = new Set<unknown>(['fast', 'default'])
/** Native comparison of two byte ranges (memcmp). */
const compareRange = Buffer.prototype.compare

/**
 * A source with its hash indexes built once, to encode many targets against
 * it (the delta-encoding plugin encodes every new instance against the same
 * base). The source bytes must not change while the object is in use. The
 * indexes are read-only: encodes do not interfere with each other.
 */
export interface PreparedSource {
  readonly source: Uint8Array
  /**
   * Bytes held by the indexes (not counting the source): 1.6 to 1.9x the source above 512 KiB,
   * up to 5x below; for bounding a cache of prepared sources. It grows by up to a quarter of
   * the source (a half below 512 KiB) when a target first needs the indexes' filters; a
   * source prepared lazily holds none until a target needs the whole index.
   */
  readonly indexBytes: number
  /** Encode `target` as a VCDIFF delta against the prepared source (RFC 3284). */
  encode: (target: Uint8Array, options?: TargetOptions) => Uint8Array
  /**
   * As `encode`, but null as soon as it is clear that the delta would not be
   * smaller than `maxSize` (the caller then sends the target itself): the
   * match search stops early on a source that does not help.
   */
  tryEncode: (target: Uint8Array, options?: TryEncodeOptions) => Uint8Array | null
}

function checkInt (name: string, v: number | undefined, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`)
  return v
}

function checkOptions (options: TargetOptions): void {
  checkInt('windowSize', options.windowSize, 1, 64 * 1024 * 1024, DEFAULT_WINDOW_SIZE)
}

/**
 * Length of the common prefix of a and b: compared in native spans (memcmp), then
 * byte by byte in the span that differs.
 */
export function commonPrefix (a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i + SPAN <= n && compareRange.call(a, b, i, i + SPAN, i, i + SPAN) === 0) i += SPAN
  while (i + SPAN_SMALL <= n && compareRange.call(a, b, i, i + SPAN_SMALL, i, i + SPAN_SMALL) === 0) i += SPAN_SMALL
  while (i < n && a[i] === b[i]) i++
  return i
}

/** Length of the common suffix of a and b, at most `limit`. */
export function commonSuffix (a: Uint8Array, b: Uint8Array, limit: number): number {
  const al = a.length
  const bl = b.length
  const max = Math.min(limit, al, bl)
  let s = 0
  while (s + SPAN <= max && compareRange.call(a, b, bl - s - SPAN, bl - s, al - s - SPAN, al - s) === 0) s += SPAN
  while (s + SPAN_SMALL <= max && compareRange.call(a, b, bl - s - SPAN_SMALL, bl - s, al - s - SPAN_SMALL, al - s) === 0) s += SPAN_SMALL
  while (s < max && a[al - s - 1] === b[bl - s - 1]) s++
  return s
}

/** The short and long indexes of part of a source (either may be missing: too few bytes). */
interface Indexes { readonly long: SourceIndex | null, readonly short: SourceIndex | null }

const NO_INDEXES: Indexes = { long: null, short: null }

class Prepared implements PreparedSource {
  /** The indexes of the whole source, once built. */
  private whole: Indexes | null = null
  private readonly look: number
  private readonly maxProbes: number
  /** The fast level's cheaper search (a source over 512 KiB at level 'fast'). */
  private readonly fast: boolean

  constructor (readonly source: Uint8Array, readonly options: EncodeOptions, eager: boolean) {
    if (options.level !== undefined && !LEVELS.has(options.level)) throw new RangeError("level must be 'fast' or 'default'")
    this.fast = options.level === 'fast' && source.length > LARGE_SOURCE
    this.look = checkInt('hashLength', options.hashLength, 4, 64, 8)
    checkInt('sourceStep', options.sourceStep, 1, 64, 2)
    this.maxProbes = checkInt('maxProbes', options.maxProbes, 1, 1024, this.fast ? 1 : 4)
    checkOptions(options)
    if (eager) this.wholeIndexes()
  }

  get indexBytes (): number {
    const w = this.whole
    return w === null ? 0 : (w.long?.byteLength ?? 0) + (w.short?.byteLength ?? 0)
  }

  private wholeIndexes (): Indexes {
    this.whole ??= this.build(0, this.source.length)
    return this.whole
  }

  /** Indexes of source[start, end): sparser above 512 KiB (see the file header). */
  private build (start: number, end: number): Indexes {
    const source = this.source
    const len = end - start
    const part = start === 0 && end === source.length ? source : source.subarray(start, end)
    const large = len > LARGE_SOURCE
    const look = this.look
    // Every 2nd position (xdelta3 samples its source checksum finely); every 4th for large
    // sources, every 16th for the fast level over 4 MiB.
    const step = this.options.sourceStep ?? (this.fast && len > FAST_SPARSE_SOURCE ? FAST_SPARSE_STEP : large ? 4 : 2)
    const maxProbes = this.maxProbes
    // Long look on aligned blocks (whole blocks only for large sources) finds the long
    // matches reliably; the short look, sampled every `step` bytes, finds the short ones.
    // The short index's hashes are computed again if its filter is needed (see SourceIndex),
    // rather than kept (4 bytes an entry); the long index keeps its own (an eighth of the
    // source at most): computing them again would cost a pass over the whole source.
    const shortOf = (): Int32Array => entryHashes(part, look, step)
    const shortHashes = len >= look ? shortOf() : null
    // (The index of a smaller source builds its filter at the first lookup: it keeps its hashes till then.)
    const rehash = source.length > REHASH_SOURCE ? shortOf : null
    const short = shortHashes !== null ? new SourceIndex(source, look, step, maxProbes, shortHashes, start, rehash) : null
    let long: SourceIndex | null = null
    if (len >= LONG_LOOK) {
      const longStep = large ? LONG_LOOK : LONG_LOOK / 2
      // Blocks of the short index, joined when they tile the long look.
      const hashes = shortHashes !== null && LONG_LOOK % look === 0 && look % step === 0 && longStep % step === 0
        ? joinHashes(shortHashes, step, look, LONG_LOOK / look, longStep, len)
        : entryHashes(part, LONG_LOOK, longStep)
      long = new SourceIndex(source, LONG_LOOK, longStep, maxProbes, hashes, start)
    }
    return { long, short }
  }

  /**
   * The indexes to search target[from, to) with, the source and target agreeing
   * outside it (source[from, srcEnd) became target[from, to)): an index of the
   * source around the change when it is a small share of the source, else the
   * whole index.
   */
  private indexesFor (from: number, to: number, srcEnd: number, fixed: boolean): Indexes {
    if (to - from < MIN_MATCH) return NO_INDEXES
    const srcLen = this.source.length
    if (fixed) {
      const margin = Math.min(Math.max(4 * (to - from), MARGIN_MIN), MARGIN_MAX)
      // Aligned on the long look's blocks, as in the whole index.
      const start = Math.max(0, from - margin) & -LONG_LOOK
      const end = Math.min(srcLen, srcEnd + margin)
      if (end - start <= srcLen * LOCAL_SHARE) return this.build(start, end)
    }
    return this.wholeIndexes()
  }

  encode (target: Uint8Array, options: TargetOptions = {}): Uint8Array {
    return this.run(target, options, Infinity) as Uint8Array
  }

  tryEncode (target: Uint8Array, options: TryEncodeOptions = {}): Uint8Array | null {
    const maxSize = options.maxSize ?? target.length
    if (typeof maxSize !== 'number' || Number.isNaN(maxSize) || maxSize < 0) throw new RangeError('maxSize must be a non-negative number')
    return this.run(target, options, maxSize)
  }

  private run (target: Uint8Array, options: TargetOptions, maxSize: number): Uint8Array | null {
    const source = this.source
    const windowSize = options.windowSize ?? this.options.windowSize ?? DEFAULT_WINDOW_SIZE
    const targetMatches = options.targetMatches ?? this.options.targetMatches ?? true
    checkOptions(options)
    if (source.length > 0x7fffffff - windowSize) throw new RangeError('source is too large')

    // The common prefix and suffix: one COPY each (RFC 3284 section 3, source addresses), not searched.
    let prefix = commonPrefix(source, target)
    let suffix = commonSuffix(source, target, Math.min(source.length, target.length) - prefix)
    if (prefix < FIXED_MIN) prefix = 0
    if (suffix < FIXED_MIN) suffix = 0
    const tEnd = target.length - suffix
    // A target position in the suffix less this is its source position.
    const shift = target.length - source.length
    const { long, short } = this.indexesFor(prefix, tEnd, source.length - suffix, prefix + suffix > 0)

    const out = new Sink((Math.min(target.length, 1 << 20) >> 2) + 64)
    for (const b of HEADER) out.byte(b)
    const matcher = new Matcher(source, target, long, short, targetMatches, windowSize, maxSize, !this.fast)
    const m = new Matches()
    const w = new WindowWriter()
    let ws = 0
    do {
      const we = Math.min(ws + windowSize, target.length)
      m.count = 0
      // This window: the prefix's part, [from, to) searched, the suffix's part.
      const from = Math.min(Math.max(ws, prefix), we)
      const to = Math.max(from, Math.min(we, tEnd))
      if (from > ws) {
        m.push(ws, from - ws, ws, 1)
        matcher.estimate += 1 + varintSize(ws)
      }
      if (to > from && !matcher.scan(from, to, m, ws)) return null
      if (we > to) {
        m.push(to, we - to, to - shift, 1)
        matcher.estimate += 1 + varintSize(to - shift)
      }
      // An empty target still gets one (empty) window, which every decoder reads.
      w.write(out, target, ws, we, m)
      if (out.pos >= maxSize) return null
      ws = we
    } while (ws < target.length)
    return out.result()
  }
}

/** Build the source indexes once; `encode` of the result reuses them for each target. */
export function prepareSource (source: Uint8Array, options: EncodeOptions = {}): PreparedSource {
  return new Prepared(source, options, true)
}

/**
 * As `prepareSource`, but the whole index is built only when a target first
 * needs it (a target that differs from the source in a small middle does not):
 * for one-shot encodes and a cache of bases, where most targets are close
 * versions of their base.
 */
export function prepareLazily (source: Uint8Array, options: EncodeOptions = {}): PreparedSource {
  return new Prepared(source, options, false)
}
