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
 */
import { SourceIndex, entryHashes, joinHashes } from './block-hash'
import { Matcher } from './matcher'
import { Sink } from './varint'
import { HEADER, Matches, WindowWriter } from './window-writer'

export interface EncodeOptions {
  /** Largest target window in bytes, 1..64 MiB (default 8 MiB). */
  windowSize?: number
  /** Bytes covered by the short rolling hash, 4..64 (default 8). */
  hashLength?: number
  /** Distance between indexed source positions, 1..64 (default 2, 4 for sources over 512 KiB). */
  sourceStep?: number
  /** Source candidates examined per lookup in each index, 1..1024 (default 4). */
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

export const DEFAULT_WINDOW_SIZE = 8 * 1024 * 1024
/** Bytes hashed by the long source index. */
const LONG_LOOK = 32
/** Sources above this size get sparser indexes: building them is most of the work. */
const LARGE_SOURCE = 512 * 1024

/**
 * A source with its hash indexes built once, to encode many targets against
 * it (the delta-encoding plugin encodes every new instance against the same
 * base). The source bytes must not change while the object is in use. The
 * indexes are read-only: encodes do not interfere with each other.
 */
export interface PreparedSource {
  readonly source: Uint8Array
  /** Bytes held by the indexes (not counting the source): 2 to 2.7x the source above 512 KiB, up to 5.5x below; for bounding a cache of prepared sources. */
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

class Prepared implements PreparedSource {
  readonly long: SourceIndex | null
  readonly short: SourceIndex | null
  readonly indexBytes: number

  constructor (readonly source: Uint8Array, readonly options: EncodeOptions) {
    const large = source.length > LARGE_SOURCE
    const look = checkInt('hashLength', options.hashLength, 4, 64, 8)
    // Every 2nd position (xdelta3 samples its source checksum finely); every 4th for large sources.
    const step = checkInt('sourceStep', options.sourceStep, 1, 64, large ? 4 : 2)
    const maxProbes = checkInt('maxProbes', options.maxProbes, 1, 1024, 4)
    checkOptions(options)
    // Long look on aligned blocks (whole blocks only for large sources) finds the long
    // matches reliably; the short look, sampled every `step` bytes, finds the short ones.
    const shortHashes = source.length >= look ? entryHashes(source, look, step) : null
    this.short = shortHashes !== null ? new SourceIndex(source, look, step, maxProbes, shortHashes) : null
    let long: SourceIndex | null = null
    if (source.length >= LONG_LOOK) {
      const longStep = large ? LONG_LOOK : LONG_LOOK / 2
      // Blocks of the short index, joined when they tile the long look.
      const hashes = shortHashes !== null && LONG_LOOK % look === 0 && look % step === 0 && longStep % step === 0
        ? joinHashes(shortHashes, step, look, LONG_LOOK / look, longStep, source.length)
        : entryHashes(source, LONG_LOOK, longStep)
      long = new SourceIndex(source, LONG_LOOK, longStep, maxProbes, hashes)
    }
    this.long = long
    this.indexBytes = (long?.byteLength ?? 0) + (this.short?.byteLength ?? 0)
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

    const out = new Sink((Math.min(target.length, 1 << 20) >> 2) + 64)
    for (const b of HEADER) out.byte(b)
    const matcher = new Matcher(source, target, this.long, this.short, targetMatches, windowSize, maxSize)
    const m = new Matches()
    const w = new WindowWriter()
    let ws = 0
    do {
      const we = Math.min(ws + windowSize, target.length)
      m.count = 0
      if (!matcher.scan(ws, we, m)) return null
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
  return new Prepared(source, options)
}
