import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The repository's root: the nearest directory above this file that holds `package.json`.
 * Tests run from the compiled tree `npm run test:build` writes (`.test-build/test/...`), or
 * from their TypeScript source under a loader; either way, files of the repository
 * (README.md, docs/, dist/, fixtures) are read from here, never relative to the test's own
 * directory.
 */
export const ROOT = findRoot(__dirname)

function findRoot (from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    /* c8 ignore next: only reached when the tests are copied out of a repository */
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`)
  }
}

/**
 * The environment for a child `node` process that runs the built package (`dist/`, the
 * reference service, scripts/, bench/): the parent's, without `NODE_OPTIONS`. The test runner
 * passes its coverage hook through `NODE_OPTIONS`; coverage counts plugins/ and lib/ only, so
 * a child running `dist/` would pay for a measurement nobody reads.
 */
export function childEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  delete env.NODE_OPTIONS
  return env
}
