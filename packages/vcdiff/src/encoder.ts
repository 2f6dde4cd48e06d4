/**
 * RFC 3284 VCDIFF encoder (interoperable subset).
 *
 * Output: the plain header (section 4.1: no secondary compressor, no code
 * table, no application header), then VCD_SOURCE or plain windows (section
 * 4.2) of at most `windowSize` target bytes, each with uncompressed sections
 * (section 4.3), encoded with the default code table (section 5.6, paired
 * instructions included) and the default address caches (section 5.1,
 * s_near = 4, s_same = 3). No checksum bits, no VCD_TARGET windows.
 *
 * Two levels (`level` option): 'default', deltas about the size of `xdelta3 -3`'s, and
 * 'fast', a cheaper search over 512 KiB of source (prepared-source.ts says what it drops).
 *
 * The work is split along these seams:
 * - varint.ts: section 2 integers and the byte sink;
 * - block-hash.ts: the source hash index and the cursor rolling it along a target;
 * - matcher.ts: the match search of one encode;
 * - address-cache.ts: section 5.1-5.3 caches and address modes;
 * - window-writer.ts: sections 4.2-4.3 and 5.6, one window from its matches;
 * - prepared-source.ts: options, the indexes built once, the common prefix and
 *   suffix (one COPY each), the encode loop.
 * No module holds mutable state: encodes are re-entrant.
 */
import { prepareLazily, type EncodeOptions, type TryEncodeOptions } from './prepared-source'

export { prepareSource, DEFAULT_WINDOW_SIZE } from './prepared-source'
export type { EncodeLevel, EncodeOptions, PreparedSource, TargetOptions, TryEncodeOptions } from './prepared-source'

/** Encode `target` as a VCDIFF delta against `source` (RFC 3284). */
export function encode (source: Uint8Array, target: Uint8Array, options: EncodeOptions = {}): Uint8Array {
  return prepareLazily(source, options).encode(target)
}

/**
 * As `encode`, but null as soon as it is clear that the delta would not be
 * smaller than `options.maxSize` (default: the target's length), so that the
 * caller sends the target itself without paying for the whole search.
 */
export function tryEncode (source: Uint8Array, target: Uint8Array, options: EncodeOptions & TryEncodeOptions = {}): Uint8Array | null {
  return prepareLazily(source, options).tryEncode(target, options)
}
