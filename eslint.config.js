'use strict'
module.exports = require('neostandard')({
  ts: true,
  ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tap/**', 'data/**']
})
