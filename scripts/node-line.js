'use strict'
/*
 * Runs a command on a supported Node.js line: `node scripts/node-line.js <command> [args...]`.
 *
 * - `NODE_LINE=26 npm test` (or `NODE_LINE=24.21.0 npm start`) runs the command on that line.
 *   Its runtime comes from the npm registry (the `node-<platform>-<arch>` package, which holds
 *   `bin/node`), fetched once into node_modules/.cache/node-lines/<line>.
 * - Without NODE_LINE, the Node that runs this script, when the package supports it
 *   (`engines.node`); on an older Node, line 24, with a note saying so.
 *
 * The command runs with that runtime's bin folder first on PATH, so it and every `node` it
 * starts (npm's scripts, tap's test processes, the reference service) use the chosen line.
 * Signals sent to this process are passed on; its exit status is the command's.
 */
const { spawn, execFileSync } = require('node:child_process')
const { existsSync, mkdirSync } = require('node:fs')
const { delimiter, join } = require('node:path')

const root = join(__dirname, '..')
const FALLBACK_LINE = '24'
const MINIMUM = [22, 13]

function supported (version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number)
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1])
}

function fail (message) {
  process.stderr.write(`node-line: ${message}\n`)
  process.exit(1)
}

/** The bin folder of the runtime for `line` (`24`, `26.12.1`, ...), fetched once from the npm registry. */
function runtimeBin (line) {
  if (!/^\d+(\.\d+){0,2}$/.test(line)) fail(`NODE_LINE must be a Node.js version such as 24 or 24.21.0, not ${JSON.stringify(line)}`)
  const pkg = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`
  const dir = join(root, 'node_modules', '.cache', 'node-lines', line)
  const bin = join(dir, 'node_modules', pkg, 'bin')
  if (!existsSync(join(bin, process.platform === 'win32' ? 'node.exe' : 'node'))) {
    process.stderr.write(`node-line: fetching Node.js ${line} (${pkg}@${line}) from the npm registry into ${dir}\n`)
    mkdirSync(dir, { recursive: true })
    const npm = process.env.npm_execpath
    const args = ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${line}`]
    try {
      if (npm !== undefined && npm.endsWith('.js')) execFileSync(process.execPath, [npm, ...args], { stdio: 'inherit' })
      else execFileSync('npm', args, { stdio: 'inherit', shell: process.platform === 'win32' })
    } catch {
      fail(`could not fetch ${pkg}@${line}; install Node.js ${line} yourself and run the command with it`)
    }
  }
  return bin
}

function choose () {
  const wanted = process.env.NODE_LINE
  if (wanted !== undefined && wanted !== '') {
    const current = process.versions.node
    if (current === wanted || current.startsWith(`${wanted}.`)) return undefined
    return runtimeBin(wanted)
  }
  if (supported(process.versions.node)) return undefined
  process.stderr.write(`node-line: Node.js ${process.versions.node} is older than this package supports (>= ${MINIMUM.join('.')}); running on Node.js ${FALLBACK_LINE} instead (set NODE_LINE to choose)\n`)
  return runtimeBin(FALLBACK_LINE)
}

const [command, ...args] = process.argv.slice(2)
if (command === undefined) fail('usage: node scripts/node-line.js <command> [args...]')
const bin = choose()
const env = { ...process.env }
if (bin !== undefined) {
  env.PATH = `${bin}${delimiter}${process.env.PATH ?? ''}`
  // npm's scripts would otherwise keep the npm and node that started them.
  delete env.npm_node_execpath
  delete env.NODE
}
const child = spawn(command === 'node' && bin === undefined ? process.execPath : command, args, { stdio: 'inherit', env, shell: process.platform === 'win32' })
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  // A terminal's Ctrl-C reaches both processes; a signal sent to this one alone is passed on.
  process.on(signal, () => { child.kill(signal) })
}
child.on('error', (err) => fail(`${command}: ${err.message}`))
child.on('exit', (code, signal) => {
  if (signal !== null) {
    process.removeAllListeners(signal)
    process.kill(process.pid, signal)
  } else {
    process.exit(code ?? 1)
  }
})
