/**
 * The run's verdict for CI: the exit status, the message that says why it is not 0, and the
 * baseline of known departures (`--baseline`), which do not fail the run.
 */
import { readFile } from 'node:fs/promises'
import { RULE_IDS } from './rules'
import type { AuditReport } from './run'

export const EXIT = {
  /** every rule checked holds (or fails only as the baseline says) */
  ok: 0,
  /** a rule of the conventions failed (or RFC advice, with --strict-rfc) */
  failed: 1,
  usage: 2,
  /** the run checked less than --min-checked of the rules it could check */
  tooLittle: 3,
  /** the service does not answer */
  unreachable: 4
} as const

function failing (outcome: string): boolean { return outcome === 'fail' || outcome === 'partial' }

/**
 * The rule ids of a baseline file: `{ "known": ["id", ...] }`, a list of ids, or a report
 * written by `--json` (its failed and partial rules).
 */
export async function loadBaseline (file: string): Promise<Set<string>> {
  let value: unknown
  try { value = JSON.parse(await readFile(file, 'utf8')) } catch (err) { throw new Error(`--baseline ${file}: ${(err as Error).message}`) }
  const v = value as { known?: unknown, rules?: Array<{ id?: unknown, outcome?: unknown }> } | null
  const ids = Array.isArray(value)
    ? value
    : Array.isArray(v?.known)
      ? v.known
      : Array.isArray(v?.rules) ? v.rules.filter((r) => failing(String(r?.outcome))).map((r) => r?.id) : undefined
  if (ids === undefined || !ids.every((id): id is string => typeof id === 'string')) throw new Error(`--baseline ${file}: expected {"known": ["rule id", ...]}, a list of rule ids, or a report of --json`)
  const unknown = ids.filter((id) => !RULE_IDS.includes(id))
  if (unknown.length > 0) throw new Error(`--baseline ${file}: no rule is ${unknown.map((id) => JSON.stringify(id)).join(', ')}`)
  return new Set(ids)
}

/** Marks the failures the baseline knows; returns the ids it lists that no longer fail. */
export function applyBaseline (report: AuditReport, known: ReadonlySet<string>): string[] {
  const stale: string[] = []
  for (const r of report.rules) {
    if (!known.has(r.id)) continue
    if (failing(r.outcome)) r.known = true
    else if (r.outcome === 'pass') stale.push(r.id)
  }
  return stale
}

/** The exit status: unreachable, then a failure, then too little checked. */
export function exitStatus (report: AuditReport, options: { strictRfc: boolean, minChecked: number }): number {
  if (report.unreachable !== undefined) return EXIT.unreachable
  if (report.rules.some((r) => failing(r.outcome) && r.known !== true && (r.advice !== true || options.strictRfc))) return EXIT.failed
  const { applicable, checked } = report.coverage
  if (checked * 100 < options.minChecked * applicable) return EXIT.tooLittle
  return EXIT.ok
}

/** Why the status is not 0 (a failure says so in the report itself). */
export function statusMessage (report: AuditReport, status: number, minChecked: number): string | undefined {
  if (status === EXIT.unreachable) return `cannot audit: ${report.unreachable as string}`
  if (status !== EXIT.tooLittle) return undefined
  const { applicable, checked } = report.coverage
  return `too little checked: ${checked} of the ${applicable} rules this run could check (under the minimum of ${minChecked}%); ` +
    'the auditor needs to know the service\'s resources: give --openapi or --config (collection, item, sample), or --write'
}
