/**
 * The API reference (docs/api/) is what `npm run docs:api` writes from the sources' TSDoc
 * today, every export has a summary there, and every export of every entry point (the root
 * and each subpath of package.json `exports`) is an entry of its page. The guides name every
 * plugin, and the README's options table every option of the umbrella.
 */
import { test, type Test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { ROOT, childEnv } from '../helpers/paths'

const API = join(ROOT, 'docs', 'api')
const SCRIPT = join(ROOT, 'scripts', 'api-reference.js')

interface Run { code: number, stdout: string, stderr: string }

async function generate (args: string[]): Promise<Run> {
  return await promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env: childEnv(), maxBuffer: 16 << 20 })
    .then((r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }), (err: { code?: number, stdout?: string, stderr?: string }) => ({ code: err.code ?? 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }))
}

/** Every file below `dir`, by its path from `dir`, with its text. */
function tree (dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const file = join(d, name)
      if (statSync(file).isDirectory()) walk(file)
      else out.set(relative(dir, file), readFileSync(file, 'utf8'))
    }
  }
  walk(dir)
  return out
}

/** Differences between the reference as committed and as written now, as the files that differ. */
export function staleFiles (committed: Map<string, string>, fresh: Map<string, string>): string[] {
  const names = [...new Set([...committed.keys(), ...fresh.keys()])].sort()
  return names.filter((n) => committed.get(n) !== fresh.get(n)).map((n) => `${n}: ${!committed.has(n) ? 'missing' : !fresh.has(n) ? 'no longer written' : 'differs'}`)
}

function scratch (t: Test): string {
  const base = join(ROOT, '.tap')
  mkdirSync(base, { recursive: true })
  const dir = mkdtempSync(join(base, 'api-reference-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('docs/api is the reference the sources give today (else: run npm run docs:api)', { timeout: 600_000 }, async (t) => {
  const out = join(scratch(t), 'api')
  const run = await generate(['--out', out])
  t.equal(run.code, 0, `scripts/api-reference.js succeeds, every export documented: ${run.stderr}`)
  if (run.code !== 0) return
  const stale = staleFiles(tree(API), tree(out))
  t.same(stale, [], stale.length === 0 ? 'docs/api is up to date' : `docs/api is out of date: run npm run docs:api (${stale.join('; ')})`)
})

test('staleFiles names what is missing, gone or changed', async (t) => {
  const a = new Map([['a.md', 'x'], ['b.md', 'y'], ['c.md', 'z']])
  const b = new Map([['a.md', 'x'], ['b.md', 'y2'], ['d.md', 'w']])
  t.same(staleFiles(a, b), ['b.md: differs', 'c.md: no longer written', 'd.md: missing'])
  t.same(staleFiles(a, new Map(a)), [])
})

test('an export without a TSDoc summary fails the reference, and is named', { timeout: 300_000 }, async (t) => {
  const dir = scratch(t)
  writeFileSync(join(dir, 'entry.ts'), [
    '/**', ' * A fixture entry point.', ' *', ' * @module fixture', ' */',
    '/** Documented: it has a summary. */',
    'export function documented (): number { return 1 }',
    'export function bare (): number { return 2 }',
    '/** @deprecated a tag, but no summary */',
    'export const tagged = 3',
    ''
  ].join('\n'))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'node16', target: 'ES2022', types: [], skipLibCheck: true }, files: ['entry.ts'] }))
  const run = await generate(['--entry', join(dir, 'entry.ts'), '--tsconfig', join(dir, 'tsconfig.json'), '--out', join(dir, 'out')])
  t.equal(run.code, 1, 'the script fails')
  t.match(run.stderr, /Every export needs a TSDoc summary/)
  t.match(run.stderr, /: bare \(Function\)/)
  t.match(run.stderr, /: tagged \(Variable\)/)
  t.notMatch(run.stderr, /documented/, 'a documented export is not named')
})

interface Entry { page: string, file: string, names: string[] }

/** The entry points of package.json `exports`, each with its source, its page of docs/api and its exports. */
function entries (): { list: Entry[], program: ts.Program, checker: ts.TypeChecker } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string, exports: Record<string, string | { default?: string }> }
  const specs: Array<{ page: string, file: string }> = []
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (key === '.') specs.push({ page: `${pkg.name}.md`, file: join(ROOT, 'plugins', 'index.ts') })
    else if (typeof target === 'object' && target.default?.startsWith('./dist/plugins/entries/') === true) {
      const sub = key.slice(2)
      specs.push({ page: join(pkg.name, `${sub}.md`), file: join(ROOT, 'plugins', 'entries', `${sub}.ts`) })
    }
  }
  const program = ts.createProgram(specs.map((s) => s.file), { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, resolveJsonModule: true, esModuleInterop: true, types: ['node'] })
  const checker = program.getTypeChecker()
  const list = specs.map(({ page, file }) => {
    const source = program.getSourceFile(file)
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    return { page, file, names: symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name).sort() }
  })
  return { list, program, checker }
}

/** The names a page of the reference has an entry for (its `###` headings). */
function entriesOf (markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^### (.+)$/gm)].map((m) => m[1].replace(/\\(.)/g, '$1').replace(/\(\)$/, '').trim()))
}

test('every export of every entry point is an entry of its page of the API reference', async (t) => {
  const { list } = entries()
  t.ok(list.length >= 10, `${list.length} entry points: the root and every subpath`)
  for (const { page, file, names } of list) {
    t.ok(names.length > 0, `${relative(ROOT, file)} exports something`)
    const listed = entriesOf(readFileSync(join(API, page), 'utf8'))
    t.same(names.filter((n) => !listed.has(n)), [], `docs/api/${page} lists every export of ${relative(ROOT, file)}`)
  }
  const index = readFileSync(join(API, 'README.md'), 'utf8')
  for (const { page } of list) t.ok(index.includes(`](${page.split('\\').join('/')})`), `docs/api/README.md links to ${page}`)
})

test('README.md or a guide names every plugin; the README\'s options table has every option of the umbrella', async (t) => {
  const { list, program, checker } = entries()
  const root = list[0]
  const plugins = root.names.filter((n) => /^httpConventions[A-Z]?/.test(n))
  t.ok(plugins.length >= 12, `${plugins.length} plugins`)
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const guides = [readme, ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => readFileSync(join(ROOT, 'docs', f), 'utf8'))].join('\n')
  t.same(plugins.filter((p) => !guides.includes('`' + p)), [], 'every plugin is named, in code, by README.md or a page of docs/')
  const source = program.getSourceFile(root.file) as ts.SourceFile
  const options = checker.getExportsOfModule(checker.getSymbolAtLocation(source) as ts.Symbol).find((s) => s.name === 'HttpConventionsOptions')
  t.ok(options !== undefined, 'the root exports HttpConventionsOptions')
  const keys = options === undefined ? [] : checker.getDeclaredTypeOfSymbol(options).getProperties().map((p) => p.name)
  t.ok(keys.includes('errorFormat') && keys.length >= 14, `${keys.length} options`)
  const table = readme.slice(readme.indexOf('\n## Options\n'), readme.indexOf('\n### ', readme.indexOf('\n## Options\n')))
  t.same(keys.filter((k) => !table.includes(`\n| \`${k}\` |`)), [], 'the README\'s options table has a row for every option')
})
