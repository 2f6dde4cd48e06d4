'use strict'
// Writes the ESM entry (dist/esm/index.mjs) that re-exports the CommonJS build,
// so `import` and `require` share one instance of every module.
const { mkdirSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..')
const cjs = require(join(root, 'dist', 'plugins', 'index.js'))
const names = Object.keys(cjs).filter((n) => n !== 'default' && n !== '__esModule')
const lines = [
  "import cjs from '../plugins/index.js'",
  'export default cjs.default',
  ...names.map((n) => `export const ${n} = cjs.${n}`)
]
mkdirSync(join(root, 'dist', 'esm'), { recursive: true })
writeFileSync(join(root, 'dist', 'esm', 'index.mjs'), lines.join('\n') + '\n')
