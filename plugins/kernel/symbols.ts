/** The symbols the kernel puts on Fastify's objects (plugins/infrastructure/symbols.ts lists them with the others). */
/** On the root (a decorator): the app's state (records of compiled routes, boot problems). */
export const kApp = Symbol('http-conventions.app')
/** On every context (a decorator, replaced in each new context by onRegister): its node. */
export const kNode = Symbol('http-conventions.node')
/** On a route's config (Fastify copies it into the route, symbols included): its record. */
export const kRecord = Symbol('http-conventions.record')
