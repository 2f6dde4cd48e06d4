/**
 * The auditor's package entry (`@http-conventions/audit`): the command and the run as
 * functions, the rule registry and the reports, the same functions the bin uses.
 */
import { test } from 'tap'
import * as entry from '@http-conventions/audit'
import * as cli from '../src/cli'
import * as run from '../src/run'
import * as rules from '../src/rules'
import * as report from '../src/report'

test('the package entry exports the command, the run, the registry and the reports by name', async (t) => {
  t.equal(entry.main, cli.main)
  t.equal(entry.parseCliArgs, cli.parseCliArgs)
  t.equal(entry.USAGE, cli.USAGE)
  t.equal(entry.UsageError, cli.UsageError)
  t.equal(entry.audit, run.audit)
  t.equal(entry.RULES, rules.RULES)
  t.equal(entry.RULE_IDS, rules.RULE_IDS)
  t.equal(entry.coverageTable, rules.coverageTable)
  for (const name of ['formatTable', 'toJson', 'toJunit', 'exitCode'] as const) t.equal(entry[name], report[name], name)
  t.ok(entry.RULES.length > 10 && entry.RULE_IDS.every((id) => typeof id === 'string'))
})
