/** Waiting in tests: poll a condition with a deadline, never a fixed sleep. */
import { setTimeout as pause } from 'node:timers/promises'

/**
 * Resolves with the first value `check` returns that is neither undefined nor false, asking
 * every `everyMs`; rejects after `withinMs` (a safety net, not a timing), naming `what`.
 */
export async function until<T> (what: string, check: () => T | undefined | false | Promise<T | undefined | false>, withinMs = 60_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + withinMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`)
    await pause(everyMs)
  }
}
