import { test } from 'tap'
import { join } from 'node:path'
import { ROOT } from '../helpers/paths'

// bench/ is plain CommonJS JavaScript (no declarations): the shapes this test relies on.
interface Stack {
  check: () => Promise<string[]>
  REQUESTS: Record<string, unknown>
  ERROR_CHECKS: unknown[]
  CONTRACT_CHECKS: Array<{ title: string }>
}

const { check, REQUESTS, ERROR_CHECKS, CONTRACT_CHECKS } = require(join(ROOT, 'bench', 'stack.js')) as Stack

// The stack section compares the reference service with the same contract built by hand; the
// comparison is fair only while both answer alike. The bench refuses to time them otherwise,
// and this test says so before a bench is run: a change to the service's answers (a header,
// a body by Accept) that the hand-built stack does not follow fails here.
test('the hand-built stack answers every benchmarked request and every contract check as the reference service does', async (t) => {
  // check() rejects, listing every difference, when an answer differs.
  const lines = await check()
  t.ok(lines.length >= Object.keys(REQUESTS).length + ERROR_CHECKS.length + CONTRACT_CHECKS.length, 'every request and check was compared')
  t.same(lines.filter((l) => !l.endsWith('(same answer)')), [], 'every answer is the same')
  const titles = CONTRACT_CHECKS.map((c) => c.title)
  t.ok(titles.some((x) => /401 as JSON/.test(x)), 'the 401 by Accept is among the checks')
  t.ok(titles.some((x) => /405/.test(x)) && titles.some((x) => /OPTIONS/.test(x)), '405 and OPTIONS are among the checks')
  t.ok(titles.some((x) => /XML/.test(x)), 'XML by Accept is among the checks')
})
