/** The symbols the kernel puts on Fastify's objects (plugins/services/symbols.ts lists them with the others). */
/** On the root (a decorator): the app's state (records of compiled routes, boot problems). */
export const kApp = Symbol('http-conventions.app')
/** On every context (a decorator, replaced in each new context by onRegister): its node. */
export const kNode = Symbol('http-conventions.node')
/** On a route's config (Fastify copies it into the route, symbols included): its record. */
export const kRecord = Symbol('http-conventions.record')
/** On a route's config: the route's preParsing hook, which the context's first hook runs for a request that declares a body. */
export const kPreParsing = Symbol('http-conventions.pre-parsing')
/**
 * On every request (a decorator, null until then): the route's options, read once by the
 * context's first preParsing hook for a request that declares a body (Fastify builds a new
 * object at each read of `request.routeOptions`); set, it also says that hook ran the route's
 * preParsing hook already, first of the phase. The body reader reads the body limit from it.
 */
export const kOptionsRead = Symbol('http-conventions.options-read')
