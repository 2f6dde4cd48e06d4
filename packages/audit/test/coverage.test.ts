/**
 * The auditor's coverage of the conventions (docs/audit.md, "The rules"): every statement of
 * the list is in docs/conventions.md and is checked by a rule, every rule of the conventions
 * checks a statement of the list, and the table of docs/audit.md is the registry's.
 */
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../../test/helpers/paths'
import { RULES, coverageTable, matches, selected, unknownPatterns } from '../src/rules'
import { STATEMENTS } from '../src/statements'

const words = (s: string): string => s.replace(/\s+/g, ' ')
const conventions = words(readFileSync(join(ROOT, 'docs', 'conventions.md'), 'utf8'))

test('every statement of the list is in docs/conventions.md, word for word', async (t) => {
  for (const [key, s] of Object.entries(STATEMENTS)) t.ok(conventions.includes(words(s.text)), key)
})

test('every statement is checked by a rule, and every rule of the conventions checks one', async (t) => {
  const texts: string[] = Object.values(STATEMENTS).map((s) => s.text)
  t.same(Object.entries(STATEMENTS).filter(([, s]) => !RULES.some((r) => r.statement === s.text)).map(([k]) => k), [], 'no statement without a rule')
  t.same(RULES.filter((r) => r.advice !== true && !texts.includes(r.statement)).map((r) => r.id), [], 'no rule of the conventions outside the list')
  t.same(RULES.filter((r) => (r.probe === undefined) === (r.each === undefined)).map((r) => r.id), [], 'each rule has a probe or a verdict on every answer, not both')
})

test('the coverage table of docs/audit.md is the registry\'s', async (t) => {
  const doc = readFileSync(join(ROOT, 'docs', 'audit.md'), 'utf8')
  const start = '<!-- coverage: generated from packages/audit/src/rules.ts by scripts/audit-coverage.js -->\n'
  const table = doc.slice(doc.indexOf(start) + start.length, doc.indexOf('<!-- coverage end -->'))
  t.equal(table, '\n' + coverageTable() + '\n', 'run node scripts/audit-coverage.js after npm run build')
})

test('--rule and --skip name rules by id, id prefix or section', async (t) => {
  const ids = (only: string[], skip: string[] = []): string[] => RULES.filter((r) => selected(r, only, skip)).map((r) => r.id)
  t.same(ids(['conditional.if-match']), ['conditional.if-match'])
  t.ok(ids(['conditional']).every((id) => id.startsWith('conditional.')))
  t.same(ids(['4.6']), ids(['Redirects']), 'a section by number or name')
  t.same(ids([], ['delta', 'rfc', 'auth']).filter((id) => /^(delta|rfc|auth)\./.test(id)), [])
  t.notOk(matches(RULES[0], ' '))
  t.same(unknownPatterns(['conditional', 'nope']), ['nope'])
})
