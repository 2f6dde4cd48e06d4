'use strict'
module.exports = require('neostandard')({
  ts: true,
  ignores: ['dist/**', 'packages/*/dist/**', '.test-build/**', 'node_modules/**', 'coverage/**', '.tap/**', 'data/**']
})
