'use strict'
/**
 * The largest functions of plugins/ and lib/: name, file:line and line count, largest first.
 *
 *   node scripts/largest-functions.js              the 20 largest
 *   node scripts/largest-functions.js --top 50     the 50 largest
 *   node scripts/largest-functions.js --over 60    only those over 60 lines; exit 1 if any
 *
 * Then the line count of each file in plugins/kernel/, when that folder exists.
 * A function's lines run from its first token (its name, or `async`, not the comment above
 * it) to its closing brace; a nested function is counted on its own and within its parent.
 */
const fs = require('node:fs')
const path = require('node:path')
const ts = require('typescript')

const ROOT = path.resolve(__dirname, '..')
const FOLDERS = ['plugins', 'lib']
const KERNEL = path.join('plugins', 'kernel')

function parseArgs (argv) {
  const options = { top: 20, over: undefined }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const n = Number(argv[++i])
      if (!Number.isInteger(n) || n < 0) throw new Error(`${arg} needs a whole number`)
      return n
    }
    if (arg === '--over') options.over = value()
    else if (arg === '--top') options.top = value()
    else throw new Error(`unknown argument ${arg} (use --top N or --over N)`)
  }
  return options
}

function sourceFiles (dir) {
  const full = path.join(ROOT, dir)
  if (!fs.existsSync(full)) return []
  const files = []
  for (const entry of fs.readdirSync(full, { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) files.push(...sourceFiles(rel))
    else if (/\.(ts|mts|cts|js)$/.test(entry.name) && !/\.d\.[mc]?ts$/.test(entry.name)) files.push(rel)
  }
  return files.sort()
}

function nameText (name, sourceFile) {
  if (name === undefined) return undefined
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text
  return name.getText(sourceFile)
}

/** The name a function is known by: its own, or that of the variable, property or argument holding it. */
function functionName (node, sourceFile) {
  if (ts.isConstructorDeclaration(node)) return className(node.parent, sourceFile) + '.constructor'
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    const owner = ts.isClassLike(node.parent) ? className(node.parent, sourceFile) + '.' : ''
    const prefix = ts.isGetAccessor(node) ? 'get ' : ts.isSetAccessor(node) ? 'set ' : ''
    return prefix + owner + nameText(node.name, sourceFile)
  }
  const own = nameText(node.name, sourceFile)
  if (own !== undefined) return own
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return nameText(parent.name, sourceFile)
  }
  if (ts.isBinaryExpression(parent) && parent.right === node) return parent.left.getText(sourceFile)
  if (ts.isCallExpression(parent)) return `<argument of ${parent.expression.getText(sourceFile).slice(0, 40)}>`
  return '<anonymous>'
}

function className (node, sourceFile) {
  return nameText(node.name, sourceFile) ?? '<class>'
}

function isFunction (node) {
  return ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)
}

function functionsOf (file) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found = []
  const visit = (node) => {
    if (isFunction(node) && node.body !== undefined) {
      const start = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line
      const end = sourceFile.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({ name: functionName(node, sourceFile), file: file.split(path.sep).join('/'), line: start + 1, lines: end - start + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return found
}

function largestFunctions () {
  const all = FOLDERS.flatMap(sourceFiles).flatMap(functionsOf)
  return all.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line)
}

function kernelFiles () {
  return sourceFiles(KERNEL).map((file) => ({
    file: file.split(path.sep).join('/'),
    lines: fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1
  }))
}

function print (rows, kernel, options) {
  const heading = options.over === undefined
    ? `The ${Math.min(options.top, rows.length)} largest functions of ${FOLDERS.join('/ and ')}/:`
    : `Functions of ${FOLDERS.join('/ and ')}/ over ${options.over} lines: ${rows.length}`
  console.log(heading)
  for (const row of rows) console.log(`${String(row.lines).padStart(5)}  ${row.name}  ${row.file}:${row.line}`)
  if (kernel !== undefined) {
    console.log(`\nLines of the files in ${KERNEL.split(path.sep).join('/')}/:`)
    for (const row of kernel) console.log(`${String(row.lines).padStart(5)}  ${row.file}`)
    console.log(`${String(kernel.reduce((sum, row) => sum + row.lines, 0)).padStart(5)}  total`)
  }
}

function main () {
  const options = parseArgs(process.argv.slice(2))
  const all = largestFunctions()
  const rows = options.over === undefined ? all.slice(0, options.top) : all.filter((row) => row.lines > options.over)
  const kernel = fs.existsSync(path.join(ROOT, KERNEL)) ? kernelFiles() : undefined
  print(rows, kernel, options)
  if (options.over !== undefined && rows.length > 0) process.exitCode = 1
}

if (require.main === module) main()

module.exports = { largestFunctions, parseArgs }
