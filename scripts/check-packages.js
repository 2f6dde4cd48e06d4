'use strict'
// `npm run test:package` for each package of packages/: its types resolve for every module
// system (attw, from its packed tarball) and its package.json is as npm and bundlers read it
// (publint --strict). The root's own are checked by the same script before this one.
const { execFileSync } = require('node:child_process')
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
for (const dir of JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).workspaces) {
  const cwd = join(root, dir)
  execFileSync(bin('attw'), ['--pack', '.'], { cwd, stdio: 'inherit' })
  execFileSync(bin('publint'), ['--strict'], { cwd, stdio: 'inherit' })
}
