/**
 * The command as a process (docs/audit.md): `fastify-http-conventions audit <url>` prints the
 * table or JSON, writes JUnit XML, and exits 0, 1 or 2.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { ROOT, childEnv } from '../../../test/helpers/paths'
import { main } from '../src/cli'

const BIN = join(ROOT, '.test-build', 'packages', 'audit', 'src', 'bin.js')

function run (args: string[]): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: childEnv() }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code), stdout, stderr })
    })
  })
}

test('usage errors exit 2 with a message naming the problem, in the process and as a process', async (t) => {
  const dir = mkdtempSync(join(os.tmpdir(), 'audit-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ collection: 'things' }))
  writeFileSync(join(dir, 'unknown.json'), JSON.stringify({ known: ['no.such-rule'] }))
  const cases: Array<[string[], RegExp]> = [
    [[], /a command is needed/],
    [['scan', 'http://x'], /unknown command "scan"/],
    [['audit'], /needs the URL/],
    [['audit', 'not a url'], /is not a URL/],
    [['audit', 'http://127.0.0.1:1', '--profile', 'http2'], /--profile is spec or rfc9110/],
    [['audit', 'http://127.0.0.1:1', '--rate', 'fast'], /--rate takes a whole number/],
    [['audit', 'http://127.0.0.1:1', '--basic', 'nopassword'], /--basic takes user:password/],
    [['audit', 'http://127.0.0.1:1', '--nope'], /Unknown option '--nope'/],
    [['audit', 'http://127.0.0.1:1', 'extra'], /unexpected argument "extra"/],
    [['audit', 'http://127.0.0.1:1', '--config', join(dir, 'bad.json')], /\/collection must match pattern/],
    [['audit', 'http://127.0.0.1:1', '--config', join(dir, 'missing.json')], /--config .*missing\.json: ENOENT/],
    [['audit', 'http://127.0.0.1:1', '--rule', 'conditional', '--skip', 'nope'], /no rule is "nope"/],
    [['audit', 'http://127.0.0.1:1', '--min-checked', '120'], /--min-checked is a percentage/],
    [['audit', 'http://127.0.0.1:1', '--baseline', join(dir, 'missing.json')], /--baseline .*missing\.json: ENOENT/],
    [['audit', 'http://127.0.0.1:1', '--baseline', join(dir, 'bad.json')], /--baseline .*: expected \{"known"/],
    [['audit', 'http://127.0.0.1:1', '--baseline', join(dir, 'unknown.json')], /--baseline .*: no rule is "no.such-rule"/]
  ]
  for (const [args, message] of cases) {
    let stderr = ''
    const code = await main(args, { stdout: { write: () => true }, stderr: { write: (s: string) => { stderr += s } } })
    t.equal(code, 2, args.join(' '))
    t.match(stderr, message)
    t.match(stderr, /Usage: fastify-http-conventions audit <url>/)
  }
  // as a process: the same exit code and message
  const res = await run(['audit', 'ftp://x'])
  t.equal(res.code, 2)
  t.match(res.stderr, /only http: URLs can be audited/)
  const help = await run(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /--junit <file>/)
})

test('a run: the table, --json, --junit, exit 1 when a rule fails, no progress line off a TTY', async (t) => {
  const app = Fastify()
  app.get('/', async () => 'hello')
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const dir = mkdtempSync(join(os.tmpdir(), 'audit-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ paths: ['/'] }))
  const table = await run(['audit', url, '--config', join(dir, 'config.json'), '--rate', '0'])
  t.equal(table.code, 1, 'a plain app misses CORP')
  t.match(table.stdout, /^FAIL\s+corp\.every-answer\s+4\.7 Cross-Origin-Resource-Policy/m)
  t.match(table.stdout, /FAIL corp\.every-answer: .*\n {2}200 answer without Cross-Origin-Resource-Policy\n {2}request:\n {4}GET \/ HTTP\/1\.1\n/)
  t.equal(table.stderr, '', 'no progress line when stderr is not a terminal')
  const junit = join(dir, 'audit.xml')
  const json = await run(['audit', url, '--config', join(dir, 'config.json'), '--rate', '0', '--json', '--junit', junit])
  t.equal(json.code, 1)
  const parsed = JSON.parse(json.stdout) as { rules: Array<{ id: string, outcome: string }>, requests: number }
  t.equal(parsed.rules.find((r) => r.id === 'corp.every-answer')?.outcome, 'fail')
  t.match(readFileSync(junit, 'utf8'), /<testcase classname="4\.7 Cross-Origin-Resource-Policy" name="corp\.every-answer: [^"]*">\n {6}<failure type="fail"/)
})

test('--baseline: known departures are shown and do not fail the run; one that passes now is named', async (t) => {
  const app = Fastify()
  app.get('/', async () => 'hello')
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const dir = mkdtempSync(join(os.tmpdir(), 'audit-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ paths: ['/'] }))
  const base = ['audit', url, '--config', join(dir, 'config.json'), '--rate', '0', '--rule', 'corp', '--rule', 'content-type.response', '--min-checked', '0']
  const first = await run([...base, '--json'])
  t.equal(first.code, 1, 'CORP missing fails the run')
  writeFileSync(join(dir, 'report.json'), first.stdout)
  const known = await run([...base, '--baseline', join(dir, 'report.json')])
  t.equal(known.code, 0, 'a baseline of the report: the known departure does not fail the run')
  t.match(known.stdout, /^FAIL \(known\)\s+corp\.every-answer/m)
  writeFileSync(join(dir, 'ids.json'), JSON.stringify(['corp.every-answer', 'content-type.response']))
  const stale = await run([...base, '--baseline', join(dir, 'ids.json')])
  t.equal(stale.code, 0)
  t.match(stale.stderr, /the baseline lists content-type\.response, which no longer fails: remove it from/)
  writeFileSync(join(dir, 'known.json'), JSON.stringify({ known: ['corp.every-answer'] }))
  const listed = await run([...base, '--baseline', join(dir, 'known.json')])
  t.equal(listed.code, 0, 'a baseline of { "known": [ids] } (docs/audit.md\'s shape)')
  t.match(listed.stdout, /^FAIL \(known\)\s+corp\.every-answer/m)
})
