'use strict'
// After `tsc -p tsconfig.test.json` (npm run test:build): the packages under packages/ are
// compiled into .test-build/packages/<name>/src/ with source maps, beside the plugins and the
// tests. This makes their names resolve there too, so that a test process loads each
// package's source once, whether a test imports it by its name, as the plugins do, or by
// path, and coverage is counted on its .ts sources:
//   .test-build/packages/<name>/package.json   the package's own, its dist/ paths read src/
//   .test-build/node_modules/@http-conventions/<name> -> ../../packages/<name>
// Without it, a name would resolve to the package's built dist/ through the workspace link.
const { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const root = join(__dirname, '..')
const out = join(root, '.test-build')
const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

for (const dir of workspaces) {
  const text = readFileSync(join(root, dir, 'package.json'), 'utf8')
  const pkg = JSON.parse(text.replaceAll('"./dist/', '"./src/'))
  writeFileSync(join(out, dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
  const link = join(out, 'node_modules', ...pkg.name.split('/'))
  mkdirSync(join(link, '..'), { recursive: true })
  rmSync(link, { force: true })
  symlinkSync(join('..', '..', dir), link, 'dir')
}
