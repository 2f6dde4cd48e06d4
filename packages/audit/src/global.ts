/**
 * The rules that hold for every answer of the run (a rule with `each`), checked once all the
 * probes are done. An answer the service gave because it was throttling the run (429, 503,
 * retried or not) is no answer to judge.
 */
import { throttled } from './context'
import type { Results } from './results'
import type { Rule, Verdict } from './rule'
import type { Exchange } from './transport'

/** The verdict of one rule, recorded in `results`. */
export function verdictOf (results: Results, id: string): Verdict {
  return {
    check: (ok, message, exchange) => results.check(id, ok, message, exchange),
    fail: (message, exchange) => results.fail(id, message, exchange),
    partial: (message, exchange) => results.partial(id, message, exchange),
    skip: (reason) => results.skipped(id, reason),
    note: (text) => { results.note(id as never, text) }
  }
}

export function checkGlobal (results: Results, exchanges: readonly Exchange[], profile: string, rules: readonly Rule[]): void {
  const each = rules.filter((r) => r.each !== undefined)
  for (const ex of exchanges) {
    const res = ex.response
    if (res === null || throttled(ex)) continue
    for (const rule of each) (rule.each as NonNullable<Rule['each']>)(ex, res, verdictOf(results, rule.id), profile)
  }
}
