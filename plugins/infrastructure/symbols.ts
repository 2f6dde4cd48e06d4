/** Every symbol the suite puts on Fastify's objects, in one place: what each marks, and where. */
/** On the root (a decorator): the app's state (records of compiled routes, boot problems). */
export const kApp = Symbol('http-conventions.app')
/** On every context (a decorator, replaced in each new context by onRegister): its node. */
export const kNode = Symbol('http-conventions.node')
/** On a route's config (Fastify copies it into the route, symbols included): its record. */
export const kRecord = Symbol('http-conventions.record')
/** On a context (a decorator): the media types whose parser there is one of the suite's. */
export const kReadBySuite = Symbol('http-conventions.read-by-suite')
/** A request slot (below) of a PATCH route: the resource its loader read (false: none), null until read. */
export const kLoaded = Symbol('http-conventions.patch.loaded')
/** A request slot of a conditional route: the precondition decision, null until decided. */
export const kOutcome = Symbol('http-conventions.conditional.outcome')
/** A request slot of a conditional route: the current validators, null until read. */
export const kCurrent = Symbol('http-conventions.conditional.current')
/**
 * The request slots: state a convention keeps on a request from one of its steps to the next.
 * Each is a request decorator (null) the kernel declares in the root when it installs, so every
 * request of the app is built with them, in every context, and keeps one object shape.
 */
export const REQUEST_SLOTS: readonly symbol[] = [kLoaded, kOutcome, kCurrent]
/** On a request (a decorator): its Content-Type, parsed once. */
export const kMediaType = Symbol('http-conventions.media-type')
/** On a reply: the suite error its route's handler passed on to the app's handlers. */
export const kPassedOn = Symbol('http-conventions.errors.passed-on')
/** On a context: httpConventionsErrors set its error handler there. */
export const kOwnHandler = Symbol('http-conventions.errors.handler')
