'use strict'
// Preloaded (`node --require scripts/upstream/use-patched.js`) by scripts/upstream.js: every
// `require('fastify')` (and `fastify/...`) of the process, the suite's included, loads the
// patched copy whose folder is in UPSTREAM_FASTIFY instead of the installed one. Node's
// documented module.registerHooks (Node 22.15 and later).
const { registerHooks } = require('node:module')

const patched = process.env.UPSTREAM_FASTIFY
if (typeof patched !== 'string' || patched === '') throw new Error('use-patched: UPSTREAM_FASTIFY names no folder')
if (typeof registerHooks !== 'function') throw new Error(`use-patched: Node ${process.version} has no module.registerHooks (Node 22.15 and later): run on a later line, e.g. NODE_LINE=24`)

registerHooks({
  resolve (specifier, context, next) {
    if (specifier === 'fastify' || specifier.startsWith('fastify/')) return next(patched + specifier.slice('fastify'.length), context)
    return next(specifier, context)
  }
})
