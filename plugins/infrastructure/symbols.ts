/** Every symbol the suite puts on Fastify's objects, in one place: what each marks, and where. */
/** On the root (a decorator): the app's state (records of compiled routes, boot problems). */
export const kApp = Symbol('http-conventions.app')
/** On every context (a decorator, replaced in each new context by onRegister): its node. */
export const kNode = Symbol('http-conventions.node')
/** On a route's config (Fastify copies it into the route, symbols included): its record. */
export const kRecord = Symbol('http-conventions.record')
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
/** On a reply: the suite error its route's handler passed on to the app's handlers. */
export const kPassedOn = Symbol('http-conventions.errors.passed-on')
/** On a context: httpConventionsErrors set its error handler there. */
export const kOwnHandler = Symbol('http-conventions.errors.handler')
