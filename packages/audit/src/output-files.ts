/**
 * The files a run writes (`--junit`) are checked before the run starts: a path that cannot be
 * written fails at once, with its own exit status, not after minutes of probes.
 */
import { access, open, rm } from 'node:fs/promises'

/** The exit status of a run whose output file cannot be written. */
export const EXIT_OUTPUT = 5

export class OutputPathError extends Error {}

/**
 * Opens `path` for appending, as the run will write it: a missing folder, a directory, a file
 * without write permission fail here. A file this check creates is removed again.
 */
export async function checkWritable (path: string, flag: string): Promise<void> {
  const existed = await access(path).then(() => true, () => false)
  try {
    const handle = await open(path, 'a')
    await handle.close()
  } catch (err) {
    throw new OutputPathError(`${flag} ${path} cannot be written: ${(err as Error).message}`)
  }
  if (!existed) await rm(path, { force: true })
}
