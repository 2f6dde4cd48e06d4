'use strict'
// `npm start` builds first (the packages, then the suite) when dist/ is missing or older than
// a source file.
const { statSync, readdirSync, existsSync } = require('node:fs')
const { join } = require('node:path')
const { execSync } = require('node:child_process')

const root = join(__dirname, '..')
const out = join(root, 'dist', 'example', 'server.js')

function newest (dir) {
  let max = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // a package's own build output and installed modules are not its sources
    if (entry.name === 'dist' || entry.name === 'node_modules') continue
    const p = join(dir, entry.name)
    const m = entry.isDirectory() ? newest(p) : statSync(p).mtimeMs
    if (m > max) max = m
  }
  return max
}

const sources = ['packages', 'plugins', 'lib', 'schemas', 'example'].map((d) => join(root, d))
const built = existsSync(out) ? statSync(out).mtimeMs : 0
if (sources.some((d) => existsSync(d) && newest(d) > built)) {
  execSync('npm run build', { cwd: root, stdio: 'inherit' })
}
