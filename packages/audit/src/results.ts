/** The outcome of each rule, built up while the probes run. */
import { RULES, type RuleId } from './rules'
import type { Exchange } from './transport'

export type Outcome = 'pass' | 'fail' | 'partial' | 'skipped'

export interface Finding {
  message: string
  exchange?: Exchange
}

export interface RuleResult {
  id: RuleId
  title: string
  section: string
  rfc?: string
  /** RFC behaviour beside the conventions: it sets the exit status only with --strict-rfc */
  advice?: true
  /** a departure the baseline (--baseline) lists: it does not set the exit status */
  known?: true
  outcome: Outcome
  /** why it was skipped, or what passed */
  reason?: string
  failures: Finding[]
  partials: Finding[]
  /** how many checks of the rule held */
  passed: number
  /** what the run could not check for this rule, a bound it hit (the rule goes on) */
  notes?: string[]
}

export class Results {
  private readonly byId = new Map<RuleId, RuleResult>()

  constructor () {
    for (const r of RULES) {
      const rfc: string | undefined = 'rfc' in r ? r.rfc : undefined
      this.byId.set(r.id, { id: r.id, title: r.title, section: r.section, ...(rfc === undefined ? {} : { rfc }), ...(r.advice === true ? { advice: true as const } : {}), outcome: 'skipped', failures: [], partials: [], passed: 0 })
    }
  }

  private get (id: RuleId): RuleResult {
    return this.byId.get(id) as RuleResult
  }

  pass (id: RuleId): void { this.get(id).passed++ }
  fail (id: RuleId, message: string, exchange?: Exchange): void { this.get(id).failures.push({ message, ...(exchange === undefined ? {} : { exchange }) }) }
  partial (id: RuleId, message: string, exchange?: Exchange): void { this.get(id).partials.push({ message, ...(exchange === undefined ? {} : { exchange }) }) }
  /** The reason a rule is skipped, kept when nothing else is recorded for it (the first one wins). */
  skipped (id: RuleId, reason: string): void {
    const r = this.get(id)
    if (r.reason === undefined) r.reason = reason
  }

  /** A bound this rule's checks hit, said in the report beside its outcome (each text once). */
  note (id: RuleId, text: string): void {
    const r = this.get(id)
    r.notes = [...new Set([...(r.notes ?? []), text])]
  }

  /** Checks `ok`; a pass, else a failure with `message`. */
  check (id: RuleId, ok: boolean, message: string, exchange?: Exchange): boolean {
    if (ok) this.pass(id)
    else this.fail(id, message, exchange)
    return ok
  }

  list (): RuleResult[] {
    return [...this.byId.values()].map((r) => {
      const outcome: Outcome = r.failures.length > 0 ? 'fail' : r.partials.length > 0 ? 'partial' : r.passed > 0 ? 'pass' : 'skipped'
      const out = { ...r, outcome }
      if (outcome !== 'skipped' && outcome !== 'pass') delete out.reason
      if (outcome === 'skipped' && out.reason === undefined) out.reason = 'nothing to check it on'
      return out
    })
  }
}
