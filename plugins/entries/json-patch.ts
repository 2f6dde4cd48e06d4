/**
 * `fastify-http-conventions/json-patch`: JSON Patch (RFC 6902) and JSON Merge Patch
 * (RFC 7396) as the PATCH plugin applies them, with its limits, as pure functions.
 *
 * @module fastify-http-conventions/json-patch
 */
export { applyJsonPatch, applyMergePatch } from '../../lib/json-patch'
export type { PatchLimits, PatchResult, PatchLimit } from '../../lib/json-patch'
