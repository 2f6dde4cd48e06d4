/**
 * `fastify-http-conventions/vcdiff`: the VCDIFF (RFC 3284) encoder and decoder behind the
 * A-IM: vcdiff deltas, usable without Fastify.
 *
 * @module fastify-http-conventions/vcdiff
 */
export { encode, tryEncode, prepareSource, decode, createEncoderPool, VcdiffError, DEFAULT_WINDOW_SIZE, DEFAULT_MAX_TARGET_SIZE } from '@http-conventions/vcdiff'
export type {
  EncodeLevel, EncodeOptions, PreparedSource, TargetOptions, TryEncodeOptions, DecodeOptions,
  EncoderPool, EncoderPoolOptions, EncoderPoolStats, PoolEncodeOptions
} from '@http-conventions/vcdiff'
