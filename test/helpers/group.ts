import { readdirSync } from 'node:fs'
import { extname, join } from 'node:path'

/**
 * Runs every test file under `dir` in this one process, in name order, each file's tests
 * after the previous file's. A test process costs a fresh Node, tap and its coverage hook
 * (about 0.8 s of CPU), and most unit test files run in less, so a directory of them runs as
 * one process. Each file still runs alone too: `npx tap .test-build/test/lib/x.test.js`.
 *
 * Left out, and run by tap in processes of their own (.taprc excludes everything else under
 * a grouped directory):
 * - a file named `*.alone.test.ts`: one that needs a fresh process, such as a test that a
 *   once-per-process warning was not emitted, or one that replaces a module in `require`'s
 *   cache before something loads it;
 * - the subdirectories named in `groups` (ending in `/`), which are groups of their own.
 */
export function runEvery (dir: string, groups: readonly string[] = []): void {
  const ext = extname(__filename)
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter((f) => f.endsWith(`.test${ext}`) && !f.endsWith(`.alone.test${ext}`))
    .filter((f) => !groups.some((g) => f.startsWith(g)))
    .sort()
  for (const file of files) require(join(dir, file))
}
