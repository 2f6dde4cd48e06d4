/**
 * The lifecycle example of docs/client.md (create, read, ten conflicting updates with none
 * lost, a patch, delta reads, a redirected write, a Digest login) is compiled under `strict`
 * as an app that installed the package would compile it, then run against the reference
 * service in both profiles over real sockets; the same lifecycle written with plain `fetch`
 * (./plain-fetch-lifecycle.ts) runs beside it, and the two line counts are printed.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { ROOT, childEnv } from '../../../test/helpers/paths'
import { startService } from '../../../test/helpers/service'
import { plainFetchLifecycle } from './plain-fetch-lifecycle'

const PAGE = 'docs/client.md'
const markdown = readFileSync(join(ROOT, PAGE), 'utf8')
/** The first ```ts block under the heading "The lifecycle". */
const example = (/\n## The lifecycle\n[\s\S]*?\n```ts\n([\s\S]*?)\n```\n/.exec(markdown) as RegExpExecArray)[1]

/** Lines that hold code: neither blank nor only a comment. */
function codeLines (text: string): number {
  return text.split('\n').filter((l) => l.trim() !== '' && !/^\s*(\/\/|\/\*\*?|\*)/.test(l)).length
}

const dir = join(ROOT, '.tap', `lifecycle-${process.pid}`)

test('the lifecycle example compiles under strict, as an ES module importing the package by name', async (t) => {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'lifecycle.mts')
  writeFileSync(file, example + '\n')
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')]
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.same(diagnostics, [], 'no error')
  const js = ts.transpileModule(example, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText
  writeFileSync(join(dir, 'lifecycle.mjs'), js)
})

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`${profile}: the example and the plain-fetch version run the lifecycle against the reference service, with the same outcome`, async (t) => {
    const svc = await startService({ CONVENTIONS_PROFILE: profile })
    t.teardown(() => svc.stop())
    const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'lifecycle.mjs')], { cwd: ROOT, env: childEnv({ ARTICLES_URL: svc.url }) })
    const client = JSON.parse(stdout) as Record<string, unknown>
    t.same(client, {
      created: 201,
      read: 'count 0',
      counted: 'count 10',
      tags: ['intro'],
      body: 'Moved',
      login: { type: 'challenge-answered', origin: svc.url, scheme: 'digest', algorithm: 'SHA-256', reason: 'challenge' },
      deltas: client.deltas
    }, 'created, read, ten updates and none lost, patched, read, moved; Digest SHA-256')
    t.ok(Number(client.deltas) >= 10, `${String(client.deltas)} reads came as 226 deltas`)
    const plain = await plainFetchLifecycle(svc.url)
    t.same({ ...plain, login: undefined, deltas: undefined }, { ...client, login: undefined, deltas: undefined }, 'plain fetch: the same outcome')
    t.equal(plain.login, 'digest SHA-256')
    t.ok(Number(plain.deltas) >= 10)
  })
}

test('line counts: the example beside the same lifecycle with plain fetch', async (t) => {
  const plain = readFileSync(join(ROOT, 'packages', 'client', 'test', 'plain-fetch-lifecycle.ts'), 'utf8')
  const counts = { example: codeLines(example), plainFetch: codeLines(plain) }
  t.comment(`lines of code (blank and comment lines left out): example ${counts.example}, plain fetch ${counts.plainFetch}; in all: ${example.split('\n').length} and ${plain.trimEnd().split('\n').length}`)
  t.ok(counts.example * 2 < counts.plainFetch, 'the example is less than half as long')
  rmSync(dir, { recursive: true, force: true })
})
