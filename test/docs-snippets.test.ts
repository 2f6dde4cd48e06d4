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
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { transform } from 'esbuild'
import ts from 'typescript'
import { ROOT, childEnv } from './helpers/paths'
import { findPeer, missingPeersMessage, strictPeers } from './helpers/peers'
import { startService } from './helpers/service'
import { until } from './helpers/until'

const PACKAGE = 'fastify-http-conventions'
export const PARTIAL = '<!-- snippet: partial -->'
export const FRAGMENT = /^<!--\s*fragment:\s*(.*?)\s*-->$/

export interface Snippet { page: string, line: number, code: string, partial: boolean }

/**
 * The ```ts / ```typescript blocks of a Markdown text, each with the line of its first line
 * of code; indented blocks (inside a list item) lose their indent. A block is partial when
 * the line before its fence (blank lines skipped) is the partial marker.
 */
export function tsBlocks (page: string, markdown: string): Snippet[] {
  return allBlocks(page, markdown)
    .filter((b) => b.lang === 'ts' || b.lang === 'typescript')
    .map(({ page, line, code, partial }) => ({ page, line, code, partial }))
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

// ---------------------------------------------------------------------------------------------
// Every block, not only TypeScript: each fenced block of README.md and docs/*.md is checked, or
// marked on the line before its fence as a fragment with the reason it cannot be:
//
//   <!-- fragment: the layout of the repository, not a program -->
//
// - ts / typescript / js: compiled (above); a whole program (it imports what it uses and needs
//   neither `app` nor `handler` from the quick start) is also run, with Node, against the
//   reference service (ARTICLES_URL) and PORT=0; one that listens is stopped once the shell
//   block after it was checked against it.
// - sh: `npm i` names this package or a dependency of it; `npm start`, `npm test`,
//   `npm run <script>` name scripts of package.json; `curl` lines are run (against the program
//   just run on the page when it listens, else the reference service; ID and ETAG stand for the
//   id and ETag of the article the block created) and the answer is compared with the `#`
//   lines under them: a status line, `name: value` headers, a JSON body.
// - http: the request is sent to the reference service and the status line compared.
// - anything else fails: mark it a fragment, or make it one of the above.

export interface Block { page: string, line: number, lang: string, code: string, fragment?: string, partial: boolean }

/** Every fenced block of a Markdown text (the outer one when fences nest), with its marker. */
export function allBlocks (page: string, markdown: string): Block[] {
  const out: Block[] = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)(`{3,})\s*([\w-]*)/.exec(lines[i])
    if (fence === null) continue
    const closing = new RegExp(`^\\s*\`{${fence[2].length},}\\s*$`)
    const start = i + 1
    let end = start
    while (end < lines.length && !closing.test(lines[end])) end++
    i = end
    let before = start - 2
    while (before >= 0 && lines[before].trim() === '') before--
    const marker = before >= 0 ? lines[before].trim() : ''
    const indent = fence[1].length
    const code = lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n')
    const fragment = FRAGMENT.exec(marker)?.[1]
    out.push({ page, line: start + 1, lang: fence[3], code, partial: marker === PARTIAL, ...(fragment === undefined ? {} : { fragment }) })
  }
  return out
}

export type Check = 'program' | 'compiled' | 'shell' | 'http' | 'fragment' | 'unchecked'

/** What the test does with a block. */
export function classify (block: Block, exported: Set<string>): Check {
  if (block.fragment !== undefined) return 'fragment'
  if (['ts', 'typescript', 'js', 'javascript'].includes(block.lang)) {
    const whole = !block.partial && /^\s*import\b/m.test(block.code) && !/declare const (app|handler)\b/.test(preamble(block.code, exported))
    return whole ? 'program' : 'compiled'
  }
  if (['sh', 'bash', 'shell', 'console'].includes(block.lang)) return 'shell'
  if (block.lang === 'http') return 'http'
  return 'unchecked'
}

/** The commands of a shell block, `\`-continued lines joined, each with the `#` lines under it. */
export function commands (code: string): Array<{ command: string, expect: string[] }> {
  const out: Array<{ command: string, expect: string[] }> = []
  let pending = ''
  for (const raw of code.split('\n')) {
    const line = raw.trimEnd()
    if (/^\s*#/.test(line)) {
      if (out.length > 0) out[out.length - 1].expect.push(line.replace(/^\s*#\s?/, ''))
      continue
    }
    if (line.trim() === '') continue
    pending += line.replace(/\\$/, ' ')
    if (line.endsWith('\\')) continue
    out.push({ command: pending.replace(/\s+#.*$/, '').trim(), expect: [] })
    pending = ''
  }
  return out
}

/** Splits a shell command line into words (single and double quotes, no expansion). */
export function words (command: string): string[] {
  const out: string[] = []
  const re = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\S+)/g
  let m: RegExpExecArray | null
  let last = -1
  while ((m = re.exec(command)) !== null) {
    const piece = m[1] ?? (m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3])
    if (last === m.index && out.length > 0) out[out.length - 1] += piece
    else out.push(piece)
    last = re.lastIndex
  }
  return out
}

/** Problems of an `npm` command: unknown scripts, packages that are not this one or a dependency. */
export function npmProblems (argv: string[], pkg: { name: string, scripts: Record<string, string>, dependencies?: Record<string, string>, peerDependencies?: Record<string, string>, devDependencies?: Record<string, string> }): string[] {
  const [verb, ...rest] = argv
  const args = rest.filter((a) => !a.startsWith('-'))
  if (verb === 'i' || verb === 'install' || verb === 'ci') {
    const known = new Set([pkg.name, ...Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.devDependencies })])
    return args.map((a) => a.replace(/(?<=.)@.*$/, '')).filter((a) => !known.has(a)).map((a) => `npm ${verb} ${a}: not this package or a dependency of it`)
  }
  if (verb === 'start' || verb === 'test') return verb in pkg.scripts ? [] : [`npm ${verb}: no "${verb}" script`]
  if (verb === 'run' || verb === 'run-script') {
    const name = rest.find((a) => !a.startsWith('-'))
    return name !== undefined && name in pkg.scripts ? [] : [`npm run ${String(name)}: no such script`]
  }
  return [`npm ${String(verb)}: not a command the docs check`]
}

interface Answer { status: number, headers: Record<string, string>, body: string }

/** `curl -i`-style output: status line, headers, blank line, body (curl -s -D - prints the same). */
function parseAnswer (text: string): Answer {
  const split = text.indexOf('\r\n\r\n')
  const head = (split === -1 ? text : text.slice(0, split)).split('\r\n')
  const headers: Record<string, string> = {}
  for (const h of head.slice(1)) {
    const i = h.indexOf(':')
    if (i > 0) headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim()
  }
  const body = split === -1 ? '' : text.slice(split + 4)
  // An answered challenge (curl --digest) or a 100 Continue: the last head is the answer.
  if (/^HTTP\/[\d.]+ \d{3}/.test(body)) return parseAnswer(body)
  return { status: Number(/^HTTP\/[\d.]+ (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0), headers, body }
}

/** What the `#` lines under a command expect of its answer, as problems (none when it matches). */
export function expectationProblems (expect: string[], answer: Answer): string[] {
  const problems: string[] = []
  const json = expect.filter((l) => /^\s*[[{]/.test(l) || (/^\s+/.test(l) && expect.some((e) => /^\s*[[{]/.test(e))))
  for (const line of expect.filter((l) => !json.includes(l))) {
    const status = /^HTTP\/[\d.]+ (\d{3})/.exec(line)
    const header = /^([\w-]+): (.*)$/.exec(line)
    if (status !== null && Number(status[1]) !== answer.status) problems.push(`status ${answer.status}, the docs say ${status[1]}`)
    else if (status === null && header !== null && !(answer.headers[header[1].toLowerCase()] ?? '').startsWith(header[2])) {
      problems.push(`${header[1]}: ${answer.headers[header[1].toLowerCase()] ?? '(none)'}, the docs say ${header[2]}`)
    }
  }
  if (json.length > 0) {
    const want = JSON.stringify(JSON.parse(json.map((l) => l.trim()).join('')))
    let got: string
    try { got = JSON.stringify(JSON.parse(answer.body)) } catch { got = answer.body }
    if (got !== want) problems.push(`body ${got}, the docs say ${want}`)
  }
  return problems
}

interface Program { url?: string, stop: () => Promise<void> }

/** Runs a whole program of the docs with Node: to its end (status 0), or until it listens. */
async function runProgram (file: string, env: Record<string, string>): Promise<{ status: number | null, output: string, program?: Program }> {
  const child = spawn(process.execPath, [file], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>
  const listening = until(`${file} to listen or exit`, () => /listening at (http:\/\/[\d.:[\]a-z]+)/i.exec(output)?.[1] ?? (child.exitCode !== null || child.signalCode !== null), 60_000)
  const first = await listening
  if (typeof first === 'string') {
    return {
      status: null,
      output,
      program: { url: first, stop: async () => { child.kill('SIGTERM'); await exited } }
    }
  }
  const [status] = await exited
  return { status, output }
}

test('every code block of README.md and docs/ is checked, or marked a fragment with its reason', { timeout: 600_000 }, async (t) => {
  if (!existsSync(join(ROOT, 'dist', 'esm', 'index.d.mts'))) {
    t.fail('dist/ is missing: run `npm run build` first (npm test does)')
    return
  }
  const exported = rootExports()
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const blocks = pages().flatMap((page) => allBlocks(page, readFileSync(join(ROOT, page), 'utf8')))
  // Inside the repository, out of node_modules: the package resolves by its own name (self-reference).
  const dir = join(ROOT, '.test-build', `docs-run-${process.pid}`)
  mkdirSync(dir, { recursive: true })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const service = await startService()
  t.teardown(() => service.stop())
  const curlPath = findPeer('curl')
  let running: Program | undefined
  const counts: Record<Check, number> = { program: 0, compiled: 0, shell: 0, http: 0, fragment: 0, unchecked: 0 }
  for (const block of blocks) {
    const where = `${block.page}:${block.line}`
    const kind = classify(block, exported)
    counts[kind]++
    if (running !== undefined && (kind !== 'shell' || !block.code.includes('curl'))) { await running.stop(); running = undefined }
    if (kind === 'fragment') {
      t.ok((block.fragment ?? '').length >= 10, `${where} is a fragment: ${block.fragment ?? ''}`)
    } else if (kind === 'unchecked') {
      t.fail(`${where}: a \`\`\`${block.lang} block is neither checked nor marked <!-- fragment: reason -->`)
    } else if (kind === 'program') {
      const file = join(dir, `${block.page.replace(/[/.]/g, '-')}-${block.line}.mjs`)
      writeFileSync(file, (await transform(block.code, { loader: 'ts', format: 'esm', target: 'es2022' })).code)
      const ran = await runProgram(file, { ARTICLES_URL: service.url, PORT: '0', HOST: '127.0.0.1' })
      if (ran.program !== undefined) {
        running = ran.program
        t.match(String(ran.program.url), /^http:\/\/127\.0\.0\.1:\d+/, `${where} runs, and listens at ${String(ran.program.url)}`)
      } else {
        t.equal(ran.status, 0, `${where} runs to its end with status 0`, { output: ran.output.slice(-4000) })
      }
    } else if (kind === 'shell') {
      let created: { id?: string, etag?: string } = {}
      for (const { command, expect } of commands(block.code)) {
        const argv = words(command)
        if (argv[0] === 'npm') {
          t.same(npmProblems(argv.slice(1), pkg), [], `${where}: ${command}`)
        } else if (argv[0] === 'curl') {
          if (curlPath === undefined) {
            if (strictPeers()) t.fail(`${where}: ${missingPeersMessage(['curl'])}`)
            else t.comment(`${where}: not run: ${missingPeersMessage(['curl'])}`)
            continue
          }
          const origin = running?.url ?? service.url
          const args = argv.slice(1).map((a) => a
            .replace(/^(?:https?:\/\/)?localhost:3000/, origin)
            .replace(/\bID\b/g, created.id ?? 'ID')
            .replace(/"ETAG"/g, created.etag ?? '"ETAG"'))
          // The answer's head too, whatever the docs' own flags: compared with the # lines.
          const { stdout } = await promisify(execFile)(curlPath, ['-s', '-D', '-', ...args.filter((a) => a !== '-i' && a !== '-s')], { encoding: 'latin1' })
          const answer = parseAnswer(stdout)
          t.ok(answer.status >= 200 && answer.status < 500, `${where}: ${command} is answered (${answer.status})`)
          t.same(expectationProblems(expect, answer), [], `${where}: ${command} answers what the docs say`)
          const location = answer.headers.location
          if (location !== undefined) created = { id: location.split('/').pop(), etag: answer.headers.etag }
        } else {
          t.fail(`${where}: \`${argv[0]}\` is not a command the docs check; mark the block a fragment`)
        }
      }
    } else if (kind === 'http') {
      const [request] = block.code.split(/\n\s*\n/)
      const [line, ...headerLines] = request.split('\n')
      const [method, path] = line.split(' ')
      const headers = Object.fromEntries(headerLines.map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()]))
      const res = await fetch(new URL(path, service.url), { method, headers, redirect: 'manual' })
      const status = /^HTTP\/[\d.]+ (\d{3})/m.exec(block.code)?.[1]
      t.equal(String(res.status), status, `${where}: ${line} is answered ${String(status)}`)
    }
  }
  if (running !== undefined) await running.stop()
  t.equal(counts.unchecked, 0, 'no block left unchecked')
  t.comment(`blocks: ${JSON.stringify(counts)}`)
})

test('blocks are classified, and shell blocks read, as the docs test needs them', async (t) => {
  const md = [
    '<!-- fragment: the layout of the repository -->', '', '```', 'a/', '```',
    '```text', 'x', '```',
    '```ts', "import x from 'y'", 'x()', '```',
    '```ts', 'app.get("/", handler)', '```',
    '```sh', 'npm start', '```',
    '```http', 'GET / HTTP/1.1', '```'
  ].join('\n')
  const kinds = allBlocks('x.md', md).map((b) => classify(b, new Set()))
  t.same(kinds, ['fragment', 'unchecked', 'program', 'compiled', 'shell', 'http'])
  t.equal(allBlocks('x.md', md)[0].fragment, 'the layout of the repository')
  t.same(commands("curl -i a \\\n  -d '{\"a\":1}'   # the comment\n# HTTP/1.1 201 Created\n# {\"a\":\n#   1}\nnpm test"), [
    { command: "curl -i a    -d '{\"a\":1}'", expect: ['HTTP/1.1 201 Created', '{"a":', '  1}'] },
    { command: 'npm test', expect: [] }
  ])
  t.same(words('curl -H \'if-match: "E"\' -d "{\\"a\\":1}" x'), ['curl', '-H', 'if-match: "E"', '-d', '{"a":1}', 'x'])
  const pkg = { name: 'p', scripts: { start: 's', fleet: 'f' }, dependencies: { undici: '1' } }
  t.same(npmProblems(['i', 'p', 'undici@7'], pkg), [])
  t.same(npmProblems(['i', 'left-pad'], pkg), ['npm i left-pad: not this package or a dependency of it'])
  t.same(npmProblems(['test'], pkg), ['npm test: no "test" script'])
  t.same(npmProblems(['run', 'fleet', '--', '--instances', '3'], pkg), [])
  const answer = { status: 422, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"errors":[]}' }
  t.same(expectationProblems(['HTTP/1.1 422 Unprocessable Entity', 'content-type: application/json', '{"errors":', '  []}'], answer), [])
  t.same(expectationProblems(['HTTP/1.1 201 Created', '{"errors":[1]}'], answer), ['status 422, the docs say 201', 'body {"errors":[]}, the docs say {"errors":[1]}'])
})
