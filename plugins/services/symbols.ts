/**
 * Every symbol the suite's plugins put on Fastify's objects, in one place: what each marks,
 * and where. The kernel's own (the app's state on the root, each context's node, each
 * route's record) are in plugins/kernel/symbols.ts.
 */
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
/** On a reply (a decorator, null until then): the suite error its route's handler passed on to the app's handlers. */
export const kPassedOn = Symbol('http-conventions.errors.passed-on')
/** On a context: httpConventionsErrors set its error handler there. */
export const kOwnHandler = Symbol('http-conventions.errors.handler')
