import { readdirSync } from 'node:fs'
import { extname, join } from 'node:path'

/**
 * Runs every test file under `dir` in this one process, in name order, each file's tests
 * after the previous file's. A test process costs a fresh Node, tap and its coverage hook
 * (about 0.8 s of CPU), and most unit test files run in less, so a directory of them runs as
 * one process. Each file still runs alone too: `node .test-build/test/lib/x.test.js`.
 *
 * `alone` names files (relative to `dir`, without extension: `x.test`) that need a process
 * of their own, such as a test that a once-per-process warning was not emitted, and
 * subdirectories (ending in `/`) that run as a group of their own. tap runs those by
 * themselves: the exclusions of .taprc leave them out of nothing but the group.
 */
export function runEvery (dir: string, alone: readonly string[] = []): void {
  const ext = extname(__filename)
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split('\\').join('/'))
    .filter((f) => f.endsWith(`.test${ext}`))
    .filter((f) => !alone.some((a) => a.endsWith('/') ? f.startsWith(a) : f === a + ext))
    .sort()
  for (const file of files) require(join(dir, file))
}
