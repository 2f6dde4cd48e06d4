/**
 * Docs that run: every ```ts (or ```typescript) snippet of README.md and docs/*.md compiles
 * under `strict`, as an ES module of an app that installed the package.
 *
 * Each snippet is written to its own `.mts` file in a directory inside the repository, so
 * `fastify-http-conventions` and its subpaths resolve through the package's own name and
 * its `exports` (the built dist/ types a user gets), and `fastify`, `ioredis`, ... from its
 * node_modules. One `tsc --noEmit --strict` run (module NodeNext) checks them all; a failure
 * names the page and the line of the snippet it is on.
 *
 * A snippet continues the README's quick start: `app` (a Fastify instance), `handler` (a route
 * handler) and the package root's exports it uses are in scope without being declared. Any
 * other name it uses, it declares. A snippet preceded by `<!-- snippet: partial -->` is a
 * fragment that names things it does not declare: it is compiled all the same, and only
 * "Cannot find name" is forgiven.
 */
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { ROOT } from './helpers/paths'

const PACKAGE = 'fastify-http-conventions'
export const PARTIAL = '<!-- snippet: partial -->'

export interface Snippet { page: string, line: number, code: string, partial: boolean }

/**
 * The ```ts / ```typescript blocks of a Markdown text, each with the line of its first line
 * of code; indented blocks (inside a list item) lose their indent. A block is partial when
 * the line before its fence (blank lines skipped) is the partial marker.
 */
export function tsBlocks (page: string, markdown: string): Snippet[] {
  const out: Snippet[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,})\s*([\w-]*)/.exec(lines[i])
    if (fence === null) continue
    // The block ends at a fence of at least as many backticks and nothing else (CommonMark).
    const closing = new RegExp(`^\\s*\`{${fence[2].length},}\\s*$`)
    const start = i + 1
    let end = start
    while (end < lines.length && !closing.test(lines[end])) end++
    i = end
    if (fence[3] !== 'ts' && fence[3] !== 'typescript') continue   // another language's block
    let before = start - 2
    while (before >= 0 && lines[before].trim() === '') before--
    const indent = fence[1].length
    const code = lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n')
    out.push({ page, line: start + 1, code, partial: before >= 0 && lines[before].trim() === PARTIAL })
  }
  return out
}

/** Names exported by the package root, as the type checker sees the built ESM entry. */
function rootExports (): Set<string> {
  const entry = join(ROOT, 'dist', 'esm', 'index.d.mts')
  const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true, types: [] })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(entry)
  const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
  return new Set(symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name).filter((n) => n !== 'default'))
}

function declares (code: string, name: string): boolean {
  return new RegExp(`\\b(?:const|let|var|function|class|interface|type)\\s+${name}\\b`).test(code) ||
    new RegExp(`^\\s*import\\b[^;]*?\\b${name}\\b[^;]*?\\bfrom\\b`, 'ms').test(code)
}

function uses (code: string, name: string): boolean {
  return new RegExp(`(?<![.\\w$'"\`])${name.replace(/\$/g, '\\$')}\\b(?!\\s*:)`).test(code.replace(/\/\/.*$/gm, ''))
}

/** The lines a snippet gets before its own: what the quick start already has in scope. */
export function preamble (code: string, exported: Set<string>): string {
  const lines: string[] = []
  const fromRoot = [...exported].filter((name) => uses(code, name) && !declares(code, name))
  if (fromRoot.length > 0) lines.push(`import { ${fromRoot.join(', ')} } from '${PACKAGE}'`)
  if (uses(code, 'app') && !declares(code, 'app')) lines.push("declare const app: import('fastify').FastifyInstance")
  if (uses(code, 'handler') && !declares(code, 'handler')) lines.push("declare const handler: import('fastify').RouteHandlerMethod")
  lines.push('export {}')
  return lines.join('\n') + '\n'
}

/** README.md and every page of docs/. */
export function pages (): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)
  return ['README.md', ...docs]
}

interface Diagnostic { file: string, line: number, code: number, message: string }

/** tsc's `--pretty false` output: `file(line,col): error TSnnnn: message`, continuation lines indented. */
export function parseTsc (output: string): Diagnostic[] {
  const out: Diagnostic[] = []
  for (const line of output.split('\n')) {
    const m = /^(.+?)\((\d+),\d+\): error TS(\d+): (.*)$/.exec(line)
    if (m !== null) out.push({ file: resolve(ROOT, m[1]), line: Number(m[2]), code: Number(m[3]), message: m[4] })
    else if (out.length > 0 && /^\s/.test(line)) out[out.length - 1].message += '\n' + line.trim()
  }
  return out
}

/** "Cannot find name" (and its "did you mean" form): all a partial snippet may leave open. */
const MISSING_NAME = new Set([2304, 2552])

test('every TypeScript snippet of README.md and docs/ compiles under strict as an ES module', async (t) => {
  if (!existsSync(join(ROOT, 'dist', 'esm', 'index.d.mts'))) {
    t.fail('dist/ is missing: run `npm run build` first (npm test does)')
    return
  }
  const snippets = pages().flatMap((page) => tsBlocks(page, readFileSync(join(ROOT, page), 'utf8')))
  t.ok(snippets.length >= 20, `${snippets.length} snippets found`)
  // Inside the repository: the package resolves by its own name, its dependencies from node_modules.
  const dir = join(ROOT, 'node_modules', '.cache', `docs-snippets-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const exported = rootExports()
  const files = snippets.map((s, i) => {
    const head = preamble(s.code, exported)
    const file = join(dir, `${s.page.replace(/[/.]/g, '-')}-${s.line}-${i}.mts`)
    writeFileSync(file, head + s.code + '\n')
    return { file, snippet: s, offset: head.split('\n').length - 1 }
  })
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')]
    },
    files: files.map((f) => f.file)
  }))
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const output = await promisify(execFile)(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { cwd: ROOT, maxBuffer: 16 << 20 })
    .then((r) => r.stdout, (err: { stdout?: string }) => err.stdout ?? String(err))
  const diagnostics = parseTsc(output)
  const known = new Set(files.map((f) => f.file))
  t.same(diagnostics.filter((d) => !known.has(d.file)).map((d) => `${d.file}: TS${d.code} ${d.message}`), [], 'no error outside the snippets')
  for (const f of files) {
    const where = `${f.snippet.page}:${f.snippet.line}`
    const mine = diagnostics.filter((d) => d.file === f.file)
    const errors = mine
      .filter((d) => !(f.snippet.partial && MISSING_NAME.has(d.code)))
      .map((d) => `${f.snippet.page}:${f.snippet.line + d.line - f.offset - 1}: TS${d.code} ${d.message}`)
    t.same(errors, [], `the snippet at ${where} compiles${f.snippet.partial ? ' (partial)' : ''}`)
    // The marker is for fragments only: a marked snippet that names nothing undeclared is complete.
    if (f.snippet.partial) t.ok(mine.some((d) => MISSING_NAME.has(d.code)), `the snippet at ${where} is marked partial and needs to be`)
  }
})

test('snippets are found where the Markdown has them', async (t) => {
  const md = [
    '```ts', 'const a = 1', '```',
    '```sh', '```ts', '```',
    '- item', '', '  ```typescript', '  const b = 2', '    .toString()', '  ```',
    PARTIAL, '', '```ts', 'c()', '```',
    '````md', '```ts', 'not()', '```', '````'
  ].join('\n')
  t.same(tsBlocks('x.md', md), [
    { page: 'x.md', line: 2, code: 'const a = 1', partial: false },
    { page: 'x.md', line: 10, code: 'const b = 2\n  .toString()', partial: false },
    { page: 'x.md', line: 16, code: 'c()', partial: true }
  ])
  t.equal(preamble('await app.register(httpConventions)', new Set(['httpConventions', 'unprocessable'])),
    "import { httpConventions } from 'fastify-http-conventions'\ndeclare const app: import('fastify').FastifyInstance\nexport {}\n")
  t.equal(preamble("import { httpConventions } from 'fastify-http-conventions'\nconst app = Fastify()", new Set(['httpConventions'])), 'export {}\n')
  t.same(parseTsc('a.mts(3,5): error TS2304: Cannot find name \'db\'.\n  more\nother'), [
    { file: resolve(ROOT, 'a.mts'), line: 3, code: 2304, message: "Cannot find name 'db'.\nmore" }
  ])
})
