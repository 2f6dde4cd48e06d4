/**
 * Every rule the auditor checks, as a registry (packages/audit/src/rule.ts says what a rule is): one
 * rule a statement of the conventions (docs/conventions.md, packages/audit/src/statements.ts), and the
 * RFC behaviour a client relies on beside them (`advice`). The coverage table of docs/audit.md
 * is generated from it (`coverageTable`).
 */
import type { Need, Rule } from './rule'
import { AUTH_RULES } from './rules/auth'
import { CONDITIONAL_RULES } from './rules/conditional'
import { CONTENT_RULES } from './rules/content'
import { DELTA_RULES } from './rules/delta'
import { ERROR_RULES } from './rules/errors'
import { PATCH_RULES } from './rules/patch'
import { REDIRECT_RULES } from './rules/redirect'
import { RFC_RULES } from './rules/rfc'
import { STATEMENTS } from './statements'

export type { Rule } from './rule'

export const RULES: readonly Rule[] = [...CONTENT_RULES, ...ERROR_RULES, ...PATCH_RULES, ...CONDITIONAL_RULES, ...DELTA_RULES, ...REDIRECT_RULES, ...AUTH_RULES, ...RFC_RULES]

export type RuleId = string

export const RULE_IDS: readonly RuleId[] = RULES.map((r) => r.id)

/**
 * Whether `pattern` (a `--rule` or `--skip` value) names the rule: its id, a prefix of its id
 * ending at a dot (`conditional`), or its section by number or name (`4.4`, `Redirects`).
 */
export function matches (rule: Rule, pattern: string): boolean {
  const p = pattern.trim().toLowerCase()
  if (p === '') return false
  const id = rule.id.toLowerCase()
  if (id === p || id.startsWith(p + '.')) return true
  return rule.section.toLowerCase().split(',').some((s) => {
    const part = s.trim()
    return part === p || part.startsWith(p + ' ') || part.slice(part.indexOf(' ') + 1) === p
  })
}

/** The patterns of `--rule` and `--skip` that name no rule (a usage error: a typo would select nothing). */
export function unknownPatterns (patterns: readonly string[]): string[] {
  return patterns.filter((p) => !RULES.some((r) => matches(r, p)))
}

/** Whether the rule runs: named by `--rule` (when given), and not by `--skip`. */
export function selected (rule: Rule, only: readonly string[], skip: readonly string[]): boolean {
  return (only.length === 0 || only.some((p) => matches(rule, p))) && !skip.some((p) => matches(rule, p))
}

const NEED_WORDS: Record<Need, string> = {
  write: '`--write`',
  credentials: 'credentials',
  basic: '`--basic`',
  bearer: '`--bearer`',
  digest: '`--digest`',
  'insufficient-token': '`--bearer-insufficient`',
  'unique-field': '`--unique`',
  'spec-profile': 'spec profile',
  collection: 'a collection',
  schema: 'a body schema',
  resource: 'a resource',
  redirect: 'a redirect',
  protected: 'protected writes',
  patch: 'PATCH',
  put: 'PUT'
}

function cell (s: string): string { return s.replace(/\|/g, '\\|').replace(/\n/g, ' ') }

/** The coverage table of docs/audit.md: each statement of the conventions and the rules that check it, then the advice. */
export function coverageTable (): string {
  const lines = ['| section | the conventions say | checked by | needs |', '|---|---|---|---|']
  for (const s of Object.values(STATEMENTS)) {
    const rules = RULES.filter((r) => r.statement === s.text)
    const needs = [...new Set(rules.flatMap((r) => r.needs))].map((n) => NEED_WORDS[n])
    lines.push(`| ${s.section} | ${cell(s.text)} | ${rules.map((r) => `\`${r.id}\``).join(', ')} | ${needs.join(', ') || 'nothing'} |`)
  }
  lines.push('', '| RFC advice (reported apart; fails the run only with `--strict-rfc`) | checks | needs |', '|---|---|---|')
  for (const r of RULES.filter((x) => x.advice === true)) lines.push(`| \`${r.id}\` | ${cell(r.title)} (${r.rfc ?? ''}) | ${r.needs.map((n) => NEED_WORDS[n]).join(', ') || 'nothing'} |`)
  const mapped = Object.values(STATEMENTS).filter((s) => RULES.some((r) => r.statement === s.text)).length
  lines.push('', `${mapped} of ${Object.keys(STATEMENTS).length} statements checked, by ${RULES.filter((r) => r.advice !== true).length} rules; ${RULES.filter((r) => r.advice === true).length} rules of RFC advice.`)
  return lines.join('\n') + '\n'
}
