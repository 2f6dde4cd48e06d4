/**
 * VCDIFF (RFC 3284) delta encoding: a framework-free core for the A-IM: vcdiff
 * instance manipulation (docs/conventions.md (Delta encoding), RFC 3229).
 */
export { encode, tryEncode, prepareSource, DEFAULT_WINDOW_SIZE } from './encoder'
export type { EncodeLevel, EncodeOptions, PreparedSource, TargetOptions, TryEncodeOptions } from './encoder'
export { decode, VcdiffError, DEFAULT_MAX_TARGET_SIZE, VCDIFF_TARGET_TOO_LARGE, VCDIFF_INVALID } from './decoder'
export type { DecodeOptions } from './decoder'
export { createEncoderPool } from './pool'
export type { EncoderPool, EncoderPoolOptions, EncoderPoolStats, PoolEncodeOptions } from './pool'
