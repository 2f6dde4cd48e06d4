'use strict'
/*
 * The test files that need a real peer program (curl, python3, redis-server, xdelta3,
 * Chromium, PostgreSQL, wrk), run as on a machine with only Node: PATH is the folder of the
 * Node that runs this script and nothing else, CI is unset, and PG_BIN names an empty
 * folder (Debian installs PostgreSQL outside PATH). Every one of them must pass, and each
 * must have skipped at least one test with a message saying what to install.
 *
 *   npm run test:build && node scripts/only-node.js
 *
 * A file needs a peer when it calls a function that checks for one (`peer`, `peers`,
 * `postgresTestOptions`, or a helper of test/ that calls them, such as `startRedis`), or
 * starts one of the programs by name itself. Only those files run: this is not the whole
 * suite again.
 */
const { spawn } = require('node:child_process')
const { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { dirname, join, relative } = require('node:path')

const root = join(__dirname, '..')
const PEER_PROGRAMS = /\b(?:spawn|spawnSync|execFile|execFileSync)\(\s*'(?:curl|python3|redis-server|xdelta3|chromium|wrk|psql|initdb|pg_ctl)'/

function files (dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name)
    if (entry.isDirectory()) files(p, out)
    else if (entry.name.endsWith('.ts')) out.push(p)
  }
  return out
}

/**
 * The functions that check for a peer or start one: `peer`, `peers`, `requirePeer`,
 * `postgresTestOptions` and every exported helper of test/ whose body calls one of them
 * (`startRedis`, `plainRedis`, `startPostgres`, ...), found by reading the helpers' sources.
 */
function peerFunctions (sources) {
  const names = new Set(['peer', 'peers', 'requirePeer', 'postgresTestOptions', 'postgresMissing'])
  const exported = []
  for (const [file, text] of sources) {
    if (file.endsWith('.test.ts')) continue
    const parts = text.split(/^(?=export )/m)
    for (const part of parts) {
      const m = /^export (?:async )?function\s+(\w+)/.exec(part)
      // The body ends at the first `}` in column 0.
      if (m !== null) exported.push({ name: m[1], body: part.slice(m[0].length).split(/^\}/m)[0] })
    }
  }
  let grew = true
  while (grew) {
    grew = false
    for (const { name, body } of exported) {
      if (!names.has(name) && [...names].some((n) => calls(body, n))) { names.add(name); grew = true }
    }
  }
  return names
}

function calls (text, name) {
  return new RegExp(`(?<![.\\w])${name}\\s*\\(`).test(text)
}

/** Every test file of test/ and of each package (packages/<name>/test/) that needs a peer, as the compiled path tap runs. */
function peerTestFiles () {
  const dirs = [join(root, 'test'), ...readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'test'))]
  const sources = new Map(dirs.filter((d) => existsSync(d)).flatMap((d) => files(d)).map((f) => [f, readFileSync(f, 'utf8')]))
  const names = peerFunctions(sources)
  return [...sources]
    .filter(([f, text]) => f.endsWith('.test.ts') && !f.startsWith(join(root, 'test', 'types')) &&
      (PEER_PROGRAMS.test(text) || [...names].some((n) => calls(text, n))))
    .map(([f]) => join(root, '.test-build', relative(root, f)).replace(/\.ts$/, '.js'))
    .sort()
}

function main () {
  const tests = peerTestFiles()
  const missing = tests.filter((f) => !existsSync(f))
  if (missing.length > 0) {
    process.stderr.write(`only-node: not compiled (run \`npm run test:build\` first): ${missing.map((f) => relative(root, f)).join(', ')}\n`)
    process.exit(1)
  }
  const empty = mkdtempSync(join(tmpdir(), 'only-node-'))
  const env = { ...process.env, PATH: dirname(process.execPath), PG_BIN: empty }
  delete env.CI
  const tap = join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs')
  process.stdout.write(`only-node: ${tests.length} test files that need a peer, PATH=${env.PATH}, CI unset\n`)
  const child = spawn(process.execPath, [tap, '--disable-coverage', '--reporter=tap', ...tests.map((f) => relative(root, f))], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  child.on('exit', (code, signal) => {
    rmSync(empty, { recursive: true, force: true })
    process.stdout.write(output)
    const problems = []
    if (code !== 0) problems.push(`tap exited with ${signal ?? code}`)
    // tap's own TAP: each file is a subtest `# Subtest: .test-build/test/...`; a skip says what to install.
    const sections = output.split(/^# Subtest: /m).slice(1)
    for (const file of tests.map((f) => relative(root, f))) {
      const section = sections.find((s) => s.startsWith(file))
      if (section === undefined) { problems.push(`${file}: no output`); continue }
      const skips = [...section.matchAll(/# SKIP[^\n]*not installed[^\n]*/gi)].length
      if (skips === 0) problems.push(`${file}: nothing was skipped for a missing peer`)
      else process.stdout.write(`only-node: ${file}: ${skips} skipped for a missing peer\n`)
    }
    if (problems.length > 0) {
      process.stderr.write(`only-node: FAILED\n  ${problems.join('\n  ')}\n`)
      process.exit(1)
    }
    process.stdout.write(`only-node: all ${tests.length} files passed on a machine with only Node\n`)
  })
}

main()
