'use strict'
// Writes the API reference, docs/api/, from the TSDoc of every entry point of the package
// (the root and each subpath of package.json `exports`), with TypeDoc and its Markdown
// output (typedoc-plugin-markdown): one page per entry point, one entry per export (its
// kind, signature or type, and summary).
//
//   node scripts/api-reference.js                 writes docs/api/ (npm run docs:api)
//   node scripts/api-reference.js --out DIR       writes DIR instead (the test compares it)
//   node scripts/api-reference.js --entry FILE --tsconfig FILE --out DIR
//                                                 documents FILE alone (the test's fixture)
//
// The sources are read through tsconfig.api.json: the packages of packages/ that the subpaths
// re-export (/vcdiff, /client, /headers) from their TypeScript sources, not their built
// declarations, so that defaults and literals read as written.
//
// Fails, naming them, when an export has no TSDoc summary. The output holds no date and no
// absolute path: the same sources give the same bytes.
const { existsSync, readFileSync, rmSync, writeFileSync } = require('node:fs')
const { join, relative, resolve } = require('node:path')
const { pathToFileURL } = require('node:url')

const root = join(__dirname, '..')

/** The source file of each entry point: the root, then the subpaths in the order of `exports`. */
function entryPoints () {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const files = []
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (key === '.') files.push('plugins/index.ts')
    else if (typeof target === 'object' && typeof target.default === 'string') {
      const file = target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')
      if (existsSync(join(root, file))) files.push(file)
    }
  }
  return files
}

function parseArgs (argv) {
  const args = { out: join(root, 'docs', 'api'), entries: [], tsconfig: join(root, 'tsconfig.api.json') }
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1]
    if (argv[i] === '--out') args.out = resolve(value)
    else if (argv[i] === '--entry') args.entries.push(resolve(value))
    else if (argv[i] === '--tsconfig') args.tsconfig = resolve(value)
    else throw new Error(`unknown argument ${argv[i]}`)
    i++
  }
  if (args.entries.length === 0) args.entries = entryPoints().map((f) => join(root, f))
  return args
}

/** Said under the title of the reference's first page. */
const NOTE = 'Every export of the package, by entry point: the root (`fastify-http-conventions`) and each\n' +
  'subpath of its `exports`. Written from the TSDoc of the sources by `npm run docs:api`: do not edit.'

/** Exports without a TSDoc summary, as `module: name (kind)`. */
function undocumented (td, project) {
  const missing = []
  const summary = (comment) => comment !== undefined && comment.summary.some((part) => part.text.trim() !== '')
  // One entry point: the project is the module (TypeDoc then has no module below it).
  const modules = (project.children ?? []).filter((c) => c.kindOf(td.ReflectionKind.Module))
  for (const mod of modules.length > 0 ? modules : [project]) {
    for (const child of mod.children ?? []) {
      if (child.kindOf(td.ReflectionKind.Reference)) continue
      const signatures = child.signatures ?? child.type?.declaration?.signatures ?? []
      if (summary(child.comment) || signatures.some((s) => summary(s.comment))) continue
      missing.push(`${mod.name}: ${child.name} (${td.ReflectionKind.singularString(child.kind)})`)
    }
  }
  return missing
}

/** A devDependency's entry file, or an error that says how to get it. */
function tool (name) {
  try {
    return require.resolve(name)
  } catch {
    throw new Error(`${name} is not installed: run npm install (it is a devDependency)`)
  }
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const td = await import(pathToFileURL(tool('typedoc')).href)
  const app = await td.Application.bootstrapWithPlugins({
    name: 'fastify-http-conventions: API reference',
    entryPoints: args.entries,
    tsconfig: args.tsconfig,
    plugin: [tool('typedoc-plugin-markdown')],
    out: args.out,
    router: 'module',
    entryFileName: 'README.md',
    readme: 'none',
    disableSources: true,
    excludeExternals: true,
    excludePrivate: true,
    hidePageHeader: true,
    hideBreadcrumbs: true,
    parametersFormat: 'table',
    interfacePropertiesFormat: 'table',
    classPropertiesFormat: 'table',
    typeAliasPropertiesFormat: 'table',
    typeDeclarationFormat: 'table',
    propertyMembersFormat: 'table',
    enumMembersFormat: 'table',
    sort: ['kind', 'alphabetical'],
    logLevel: 'Warn',
    validation: { notExported: false, invalidLink: true, notDocumented: false }
  }, [new td.TSConfigReader()])
  const project = await app.convert()
  if (project === undefined || app.logger.hasErrors()) throw new Error('TypeDoc could not read the sources')
  const missing = undocumented(td, project)
  if (missing.length > 0) {
    process.stderr.write(`Every export needs a TSDoc summary; these have none:\n${missing.map((m) => `  ${m}\n`).join('')}`)
    process.exitCode = 1
    return
  }
  rmSync(args.out, { recursive: true, force: true })
  await app.generateOutputs(project)
  if (app.logger.hasErrors()) throw new Error('TypeDoc could not write the reference')
  const index = join(args.out, 'README.md')
  writeFileSync(index, readFileSync(index, 'utf8').replace(/\n/, `\n\n${NOTE}\n`))
  process.stdout.write(`API reference written to ${relative(process.cwd(), args.out) || '.'}\n`)
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`)
  process.exitCode = 1
})
