/**
 * `fastify-http-conventions/logging`: redaction of credentials in logged URLs, and pino
 * serializers that log requests without them.
 *
 * @module fastify-http-conventions/logging
 */
export { redactUrl, createRedactingSerializers, SECRET_QUERY_NAMES } from '@http-conventions/grammar'
export type { RedactingSerializersOptions, RequestLike, SerializedRequest } from '@http-conventions/grammar'
