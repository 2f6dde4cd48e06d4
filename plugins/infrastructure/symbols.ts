/**
 * Every symbol the suite's plugins put on Fastify's objects, in one place: what each marks,
 * and where. The kernel's own (the app's state on the root, each context's node, each
 * route's record) are in plugins/kernel/symbols.ts.
 */
/** On a context (a decorator): the media types whose parser there is one of the suite's. */
export const kReadBySuite = Symbol('http-conventions.read-by-suite')
/** On a request of a PATCH route: the resource its loader read. */
export const kLoaded = Symbol('http-conventions.patch.loaded')
/** On a request of a conditional route: the precondition decision. */
export const kOutcome = Symbol('http-conventions.conditional.outcome')
/** On a request of a conditional route: the current validators. */
export const kCurrent = Symbol('http-conventions.conditional.current')
/** On a request (a decorator): its Content-Type, parsed once. */
export const kMediaType = Symbol('http-conventions.media-type')
/** On a reply (a decorator, null until then): the suite error its route's handler passed on to the app's handlers. */
export const kPassedOn = Symbol('http-conventions.errors.passed-on')
/** On a context: httpConventionsErrors set its error handler there. */
export const kOwnHandler = Symbol('http-conventions.errors.handler')
