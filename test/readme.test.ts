/**
 * The README's TypeScript compiles as written: every ```ts block of README.md is written
 * to its own module, with a small preamble for the names it uses without declaring them
 * (`app`, `handler`, the package's exports), and type-checked with the TypeScript compiler
 * API under `strict`. The package name resolves to the sources through `paths`, subpaths
 * (`fastify-http-conventions/stores`, ...) through package.json `exports`.
 *
 * Also: every relative link of README.md and of the docs written for it points to a file
 * that exists, and to a heading that exists when it names one.
 */
import { test } from 'tap'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

const ROOT = resolve(__dirname, '..')
const PACKAGE = 'fastify-http-conventions'
const README = join(ROOT, 'README.md')

interface Snippet { line: number, code: string }

/** The ```ts (or ```typescript) blocks of a Markdown text, with the line of their first line of code. */
export function tsBlocks (markdown: string): Snippet[] {
  const out: Snippet[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```(ts|typescript)\s*$/.test(lines[i])) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++
    out.push({ line: start + 1, code: lines.slice(start, end).join('\n') })
    i = end
  }
  return out
}

/** Names exported by the package root (plugins/index.ts), read from its export lists. */
function rootExports (): Set<string> {
  const source = readFileSync(join(ROOT, 'plugins', 'index.ts'), 'utf8')
  const names = new Set<string>()
  for (const m of source.matchAll(/^export\s+(?:const|function|class)\s+([A-Za-z_$][\w$]*)/gm)) names.add(m[1])
  for (const m of source.matchAll(/^export\s+(type\s+)?\{([^}]*)\}/gm)) {
    for (const part of m[2].split(',')) {
      const name = part.trim().split(/\s+as\s+/).pop()?.trim()
      if (name !== undefined && /^[A-Za-z_$][\w$]*$/.test(name)) names.add(name)
    }
  }
  return names
}

/** `paths` for the package: the root to plugins/index.ts, each subpath export to its source file. */
function packagePaths (): Record<string, string[]> {
  const paths: Record<string, string[]> = { [PACKAGE]: [join(ROOT, 'plugins', 'index.ts')] }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }
  for (const [key, target] of Object.entries(pkg.exports ?? {})) {
    if (key === '.' || key.includes('*') || !key.startsWith('./')) continue
    const built = typeof target === 'string' ? target : JSON.stringify(target).match(/"(\.\/dist\/[^"]+\.js)"/)?.[1]
    if (built === undefined) continue
    const source = join(ROOT, built.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'))
    if (existsSync(source)) paths[`${PACKAGE}/${key.slice(2)}`] = [source]
  }
  return paths
}

function declares (code: string, name: string): boolean {
  return new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b`).test(code) ||
    new RegExp(`^\\s*import\\b[^\\n]*\\b${name}\\b`, 'm').test(code)
}

function uses (code: string, name: string): boolean {
  return new RegExp(`(?<![.\\w$'"])${name.replace(/\$/g, '\\$')}\\b`).test(code)
}

/** The preamble a snippet needs: the names it uses without declaring them. */
export function preamble (code: string, exported: Set<string>): string {
  const lines: string[] = []
  if (uses(code, 'Fastify') && !declares(code, 'Fastify')) lines.push("import Fastify from 'fastify'")
  const fromRoot = [...exported].filter((name) => uses(code, name) && !declares(code, name))
  if (fromRoot.length > 0) lines.push(`import { ${fromRoot.join(', ')} } from '${PACKAGE}'`)
  if (uses(code, 'app') && !declares(code, 'app')) lines.push("declare const app: import('fastify').FastifyInstance")
  if (uses(code, 'handler') && !declares(code, 'handler')) lines.push("declare const handler: import('fastify').RouteHandlerMethod")
  lines.push('export {}')
  return lines.join('\n') + '\n'
}

test('every TypeScript snippet of README.md compiles under strict', async (t) => {
  const snippets = tsBlocks(readFileSync(README, 'utf8'))
  t.ok(snippets.length >= 3, `${snippets.length} snippets`)
  // Inside the repository, so that `fastify` and the @types resolve from its node_modules.
  const dir = join(ROOT, 'node_modules', '.cache', `readme-snippets-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const exported = rootExports()
  const files = snippets.map((s, i) => {
    const head = preamble(s.code, exported)
    const file = join(dir, `snippet-${i + 1}.ts`)
    writeFileSync(file, head + s.code + '\n')
    return { file, readmeLine: s.line, offset: head.split('\n').length - 1 }
  })
  const program = ts.createProgram(files.map((f) => f.file), {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    baseUrl: ROOT,
    paths: packagePaths()
  })
  for (const f of files) {
    const sourceFile = program.getSourceFile(f.file)
    const diagnostics = sourceFile === undefined ? [] : [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)]
    const messages = diagnostics.map((d) => {
      const where = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line - f.offset : -1
      const at = where >= 0 ? `README.md:${f.readmeLine + where}` : relative(ROOT, d.file?.fileName ?? f.file)
      return `${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
    t.same(messages, [], `the snippet at README.md:${f.readmeLine} compiles`)
  }
})

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

function anchorsOf (file: string): Set<string> {
  const out = new Set<string>()
  let fenced = false
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced
    const m = /^#{1,6}\s+(.*)$/.exec(line)
    if (!fenced && m !== null) out.add(anchorOf(m[1]))
  }
  return out
}

test('relative links of README.md and docs/ point to files and headings that exist', async (t) => {
  const pages = ['README.md', 'docs/conventions.md', 'docs/plugins.md', 'docs/reference-service.md']
  for (const page of pages) {
    const file = join(ROOT, page)
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
    const broken: string[] = []
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = m[1]
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue
      const [path, anchor] = link.split('#')
      const target = path === '' ? file : resolve(dirname(file), path)
      if (!existsSync(target)) { broken.push(`${link}: no such file`); continue }
      if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(`${link}: no such heading`)
    }
    t.same(broken, [], `${page}: every relative link resolves`)
  }
})

test('the anchors follow GitHub\'s rule', async (t) => {
  t.equal(anchorOf('PATCH (JSON Patch, merge patch, 415)'), 'patch-json-patch-merge-patch-415')
  t.equal(anchorOf('Profiles: `spec` and `rfc9110`'), 'profiles-spec-and-rfc9110')
  t.equal(anchorOf('Validation errors (422 and the `errors[]` body)'), 'validation-errors-422-and-the-errors-body')
})
