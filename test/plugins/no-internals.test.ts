/**
 * No Fastify, Node or plugin internals outside the adapter file: the suite works through
 * public hooks and `routeOptions`. Where Fastify or Node truly has no public way, the
 * workaround lives in one adapter file whose test pins the behaviour it relies on.
 */
import { test } from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ROOT } from '../helpers/paths'

const ADAPTERS = new Set(['plugins/infrastructure/adapter.ts'])

function sources (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

const PATTERNS: Array<[RegExp, string]> = [
  [/getPrototypeOf\s*\(/, 'a walk of prototype chains'],
  [/defineProperty\([^)]*['"]bind['"]/, 'a replaced bind'],
  [/\.bind\s*=/, 'a replaced bind'],
  [/destroySoon/, 'a replaced socket.destroySoon'],
  [/addHook\s*\(\s*_?name\s*:\s*string/, 'a fake addHook capturing another plugin\'s hook'],
  [/Symbol\.for\(\s*['"]fastify\./, 'a Fastify internal symbol'],
  [/kRouteContext|kReply|kRequest\b|\[kHooks\]/, 'a Fastify internal symbol'],
  [/require\(['"]fastify\/lib\//, 'a Fastify internal module'],
  [/printRoutes\(/, 'the text of printRoutes()'],
  [/Fastify\(\)\.errorHandler/, 'the identity of Fastify\'s default error handler'],
  [/['"]checkContinue['"]\s*[,)]/, 'a \'checkContinue\' listener'],
  [/\.emit\(\s*['"]request['"]/, 'a request emitted on the server\'s \'request\' event'],
  [/['"]checkExpectation['"]\s*[,)]/, 'a \'checkExpectation\' listener'],
  [/\bbytesParsed\b\s*[?:;)\]]|\.bytesParsed\b/, 'where Node\'s parser stopped (bytesParsed)'],
  [/['"]corsPreflightEnabled['"]/, '@fastify/cors\'s request decorator'],
  [/\btypeof\s+\w+\.(?:statusCode|error|message)\s*[!=]==\s*['"](?:number|string)['"][^\n]*\btypeof\s+\w+\.(?:statusCode|error|message)\b/, 'the shape of Fastify\'s default error body'],
  [/['"]statusCode['"][^\n]*['"](?:error|message)['"]/, 'the members of Fastify\'s default error body'],
  [/\.listeners\(\s*['"]/, 'another listener of a server event'],
  [/\.description\s*===/, 'a symbol found by its description']
]

/** What each pattern above must catch: the reliances that once lived outside the adapter file, as they were written. */
const FORMER: Array<[string, string]> = [
  ["server.on('checkContinue', function handOverContinue (request, response) {", 'a \'checkContinue\' listener'],
  ["if (server.listenerCount('checkContinue') > 1) return", 'a \'checkContinue\' listener'],
  ["server.emit('request', request, response)", 'a request emitted on the server\'s \'request\' event'],
  ["server.on('checkExpectation', function answerExpectation (request, response) {", 'a \'checkExpectation\' listener'],
  ['function refusedMajorVersion (error: Error & { rawPacket?: unknown, bytesParsed?: unknown }): number | null {', 'where Node\'s parser stopped (bytesParsed)'],
  ['const at = error.bytesParsed', 'where Node\'s parser stopped (bytesParsed)'],
  ["return (url === '*' || url === '/*') && fastify.hasRequestDecorator('corsPreflightEnabled')", '@fastify/cors\'s request decorator'],
  ["if (typeof b.statusCode !== 'number' || typeof b.message !== 'string' || typeof b.error !== 'string') return false", 'the shape of Fastify\'s default error body'],
  ["if (key !== 'statusCode' && key !== 'message' && key !== 'error' && key !== 'code') return false", 'the members of Fastify\'s default error body'],
  ["return fastify.server.listeners('clientError').some((listener) => listener.name === name)", 'another listener of a server event'],
  ["const key = Object.getOwnPropertySymbols(instance).find((s) => s.description === 'fastify.children')", 'a symbol found by its description']
]

test('no internals: each pattern catches the reliance it is for, as it was once written outside the adapter file', async (t) => {
  for (const [line, what] of FORMER) {
    t.ok(PATTERNS.some(([pattern, name]) => name === what && pattern.test(line)), `${what}: ${line}`)
  }
})

/** The sources of plugins/, lib/ and the packages (packages/<name>/src). */
function ownSources (): string[] {
  const packages = readdirSync(join(ROOT, 'packages')).map((name) => join(ROOT, 'packages', name, 'src'))
  return [...sources(join(ROOT, 'plugins')), ...sources(join(ROOT, 'lib')), ...packages.flatMap((dir) => sources(dir))]
}

test('no internals: plugins/, lib/ and packages/ reach Fastify, Node and other plugins only through public APIs, outside the adapter file', async (t) => {
  const files = ownSources()
  t.ok(files.length > 20, 'the sources were found')
  const found: string[] = []
  for (const file of files) {
    const rel = relative(ROOT, file).split('\\').join('/')
    if (ADAPTERS.has(rel)) continue
    const text = readFileSync(file, 'utf8')
    for (const [pattern, what] of PATTERNS) if (pattern.test(text)) found.push(`${rel}: ${what}`)
  }
  t.same(found, [], 'none found')
})

test('no plugin imports another convention plugin\'s module: they meet through the kernel', async (t) => {
  // Every plugin of plugins/conventions/ (a folder such as auth/ by its index).
  const folder = join(ROOT, 'plugins', 'conventions')
  const conventionFiles = readdirSync(folder, { withFileTypes: true }).map((e) => e.isDirectory() ? `${e.name}/index` : e.name.replace(/\.ts$/, ''))
  t.ok(conventionFiles.length >= 11, `the conventions are found (${conventionFiles.join(', ')})`)
  const found: string[] = []
  for (const name of conventionFiles) {
    const text = readFileSync(join(folder, `${name}.ts`), 'utf8')
    for (const other of conventionFiles) {
      if (other === name) continue
      const base = other.split('/')[0]
      const re = new RegExp(`from '\\.{1,2}/(?:plugins/)?${base}(?:/index)?'`)
      // The one declared need: a PATCH route brings the conditional convention with its
      // defaults where it is not registered (patch's own declaration, not the kernel, says so).
      if (name === 'patch' && other === 'conditional') continue
      if (re.test(text)) found.push(`plugins/conventions/${name}.ts imports ${other}`)
    }
  }
  t.same(found, [], 'none found')
})

/** What a file imports: every `from '...'`, `import('...')` and `require('...')`. */
function importsOf (text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|\brequire\(\s*'([^']+)'\s*\)/g)) out.push(m[1] ?? m[2] ?? m[3])
  return out
}

test('docs/architecture.md (The kernel): the kernel knows no feature: plugins/kernel/ imports only its own files, lib/, fastify and Node', async (t) => {
  const kernel = join(ROOT, 'plugins', 'kernel')
  const files = sources(kernel)
  t.ok(files.length >= 6, 'the kernel\'s files were found')
  const found: string[] = []
  for (const file of files) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (spec === 'fastify' || spec.startsWith('node:')) continue
      const target = relative(ROOT, resolve(dirname(file), spec)).split('\\').join('/')
      if (spec.startsWith('.') && (target.startsWith('plugins/kernel/') || target.startsWith('lib/'))) continue
      found.push(`${relative(ROOT, file).split('\\').join('/')} imports ${spec}`)
    }
  }
  t.same(found, [], 'none found')
  t.same(importsOf("import a from '../x'\nconst b = import('./y')\nrequire('z')"), ['../x', './y', 'z'], 'the reader finds every form')
})

test('docs/architecture.md (Errors): one renderer: no file but lib/render.ts serializes an envelope, problem details or a rendering itself', async (t) => {
  const files = ownSources()
  const found: string[] = []
  for (const file of files) {
    const rel = relative(ROOT, file).split('\\').join('/')
    if (rel === 'lib/render.ts') continue
    const text = readFileSync(file, 'utf8')
    for (const [pattern, what] of [[/\bserializeEnvelope\(/, 'serializes an envelope'], [/\bproblemBody\(/, 'writes problem details'], [/\brender\(/, 'renders an error']] as const) {
      if (pattern.test(text)) found.push(`${rel}: ${what}`)
    }
  }
  t.same(found, [], 'none found')
})
