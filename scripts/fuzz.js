'use strict'
/*
 * `npm run fuzz`: the property tests (the test files that read FUZZ_RUNS) with a larger number
 * of generated cases than `npm test` runs. FUZZ_RUNS sets it (default 2000 a
 * property), FUZZ_SEED another seed (the tests print theirs with a counterexample).
 */
const { spawnSync } = require('node:child_process')
const { readdirSync, readFileSync } = require('node:fs')
const { join, relative } = require('node:path')

const root = join(__dirname, '..')
const built = join(root, '.test-build', 'test')
const files = readdirSync(built, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.js') && readFileSync(join(built, f), 'utf8').includes('FUZZ_RUNS'))
  .map((f) => relative(root, join(built, f)))
  .sort()
if (files.length === 0) {
  process.stderr.write('fuzz: no property test found under .test-build/test (run npm run test:build)\n')
  process.exit(1)
}
const env = { ...process.env, FUZZ_RUNS: process.env.FUZZ_RUNS ?? '2000' }
process.stdout.write(`fuzz: ${files.length} files, FUZZ_RUNS=${env.FUZZ_RUNS}${env.FUZZ_SEED === undefined ? '' : `, FUZZ_SEED=${env.FUZZ_SEED}`}\n`)
const run = spawnSync('npx', ['tap', '--disable-coverage', '--timeout=0', ...files], { cwd: root, env, stdio: 'inherit' })
process.exit(run.status ?? 1)
