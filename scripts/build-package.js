'use strict'
// `npm run build` of a package under packages/ (run in its folder, by the root's build first):
// its src/ compiled by tsc into dist/, with declarations, from an empty dist/. A package's
// imports of the others resolve to their built dist/ through the workspace links, so the
// packages build in the order of the root's `workspaces` (each after those it imports).
const { rmSync } = require('node:fs')
const { execFileSync } = require('node:child_process')

rmSync('dist', { recursive: true, force: true })
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], { stdio: 'inherit' })
