'use strict'
/*
 * Measures the upstream proposals (docs/architecture.md, "Reliances and upstream proposals")
 * against a locally patched Fastify: `node scripts/upstream.js` (after `npm run build` and
 * `npm run test:build`; `NODE_LINE=24 node scripts/node-line.js node scripts/upstream.js` on
 * an older Node).
 *
 * Each patch of scripts/upstream/ is applied (`patch -p1`) to a copy of the installed
 * node_modules/fastify, in a fresh temporary directory removed at the end:
 *
 * - fastify-routes.patch (`fastify.routes()`): the same app (the suite registered without
 *   await, then a route with `config.auth`) on stock Fastify and on the patched copy: a 500
 *   at request time, against `ready()` rejecting with the route and the fix.
 * - fastify-route-options.patch (`request.routeOptions` built once per route): bytes allocated
 *   per request for a POST through the whole suite (bench/allocation.js, "POST: + whole
 *   suite"), stock against patched, the rounds interleaved.
 * - fastify-contexts.patch (`fastify.isRoot`, `children()`, `hasErrorHandler()`): the
 *   reliances of plugins/infrastructure/adapter.ts the patched Fastify makes unneeded, and
 *   test/plugins/adapter.test.ts run on the patched copy.
 * - fastify-hook-runners.patch (the onRequest, preValidation, preHandler and preParsing hook
 *   runners make a hook's promise handlers only when the hook returned a promise): bytes
 *   allocated per GET for a no-op hook and for the suite's routes, stock against patched.
 *
 * The tree a patched Fastify runs in: `<tmp>/node_modules/fastify` (the patched copy), every
 * other package a link to the installed one (Fastify's own dependencies are found there). A
 * process started with `--require scripts/upstream/use-patched.js` loads the patched copy for
 * every `require('fastify')`, the suite's included (Node's module.registerHooks). Options: `--rounds N` (allocation rounds, default 3), `--only routes|route-options|contexts|hook-runners`.
 */
const { execFileSync, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const PATCHES = path.join(__dirname, 'upstream')
const PRELOAD = ['--require', path.join(__dirname, 'upstream', 'use-patched.js')]

/** Whether the `patch` program is on PATH. */
function hasPatch () {
  return spawnSync('patch', ['--version'], { stdio: 'ignore' }).status === 0
}

/**
 * A copy of the installed Fastify with `patches` (names of scripts/upstream/*.patch, without
 * the folder and extension) applied, in a fresh temporary tree (see the header). Returns its
 * paths and `remove()`, which deletes the tree.
 */
function buildPatched (patches) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fastify-upstream-'))
  try {
    const installed = fs.realpathSync(path.join(ROOT, 'node_modules'))
    const modules = path.join(dir, 'node_modules')
    const fastify = path.join(modules, 'fastify')
    fs.mkdirSync(modules)
    fs.cpSync(path.join(installed, 'fastify'), fastify, { recursive: true, dereference: true })
    for (const name of fs.readdirSync(installed)) {
      if (name !== 'fastify' && !name.startsWith('.')) fs.symlinkSync(path.join(installed, name), path.join(modules, name))
    }
    for (const name of patches) {
      execFileSync('patch', ['-p1', '--forward', '--silent', '-i', path.join(PATCHES, `fastify-${name}.patch`)], { cwd: fastify, stdio: ['ignore', 'pipe', 'pipe'] })
    }
    return { dir, fastify, env: { ...process.env, UPSTREAM_FASTIFY: fastify }, remove: () => fs.rmSync(dir, { recursive: true, force: true }) }
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw err
  }
}

/** The number of lines a patch file has (what its size is given as). */
function patchLines (name) {
  return fs.readFileSync(path.join(PATCHES, `fastify-${name}.patch`), 'utf8').split('\n').filter((l, i, all) => i < all.length - 1 || l !== '').length
}

/** Runs a script of scripts/upstream/ on stock Fastify (no `patched`) or on the patched copy; its JSON output. */
function runApp (file, patched) {
  const flags = patched === undefined ? [] : PRELOAD
  const out = execFileSync(process.execPath, [...flags, path.join(__dirname, 'upstream', file)], { encoding: 'utf8', env: patched?.env ?? process.env })
  return JSON.parse(out)
}

/** (a) `fastify.routes()`: the register-without-await app on stock Fastify, then on the patched copy. */
function measureRoutes () {
  const patched = buildPatched(['routes'])
  try {
    return { stock: runApp('register-without-await.js'), patched: runApp('register-without-await.js', patched) }
  } finally {
    patched.remove()
  }
}

/**
 * (b) `request.routeOptions` built once per route: bytes per POST through the whole suite,
 * stock and patched, rounds interleaved; bare Fastify (which never reads routeOptions) beside
 * it, as the control.
 */
async function measureRouteOptions (rounds) {
  const { POST_VARIANTS } = require(path.join(ROOT, 'bench', 'allocation.js'))
  return await bytesStockAndPatched(['route-options'], ['POST: bare Fastify', 'POST: + whole suite'], POST_VARIANTS, rounds)
}

/**
 * (d) Fastify's hook runners make a hook's promise handlers only for a hook that returned a
 * promise: bytes per GET of a no-op hook and of the suite's routes, stock and patched; bare
 * Fastify (no hook phase) beside them, as the control.
 */
async function measureHookRunners (rounds) {
  const { VARIANTS } = require(path.join(ROOT, 'bench', 'allocation.js'))
  const names = ['bare Fastify', '+ a no-op onRequest hook', '+ whole suite, route with every convention off', '+ whole suite, default route']
  return await bytesStockAndPatched(['hook-runners'], names, VARIANTS, rounds)
}

/** Bytes per request of the `names` rows of `table` (bench/allocation.js), on stock Fastify and with `patches`, the rounds interleaved: the median of each. */
async function bytesStockAndPatched (patches, names, table, rounds) {
  const { measure } = require(path.join(ROOT, 'bench', 'allocation.js'))
  const variants = names.map((name) => table.find((v) => v.name === name))
  const patched = buildPatched(patches)
  const server = { file: path.join(ROOT, 'bench', 'server.js'), flags: PRELOAD }
  // The server processes inherit this process's environment: the patched ones read the copy's folder from it.
  process.env.UPSTREAM_FASTIFY = patched.fastify
  try {
    assertLoads(patched)
    const rows = variants.map((v) => ({ name: v.name, stock: [], patched: [] }))
    for (let r = 0; r < rounds; r++) {
      for (const [i, v] of variants.entries()) {
        rows[i].stock.push((await measure(v)).bytes)
        rows[i].patched.push((await measure(v, { server })).bytes)
      }
    }
    return rows.map((row) => ({ name: row.name, stock: median(row.stock), patched: median(row.patched), rounds }))
  } finally {
    delete process.env.UPSTREAM_FASTIFY
    patched.remove()
  }
}

/** Fails unless a process started with the preload loads the patched copy (and the suite with it). */
function assertLoads (patched) {
  const probe = "require('./dist/plugins/index.js'); process.stdout.write(Object.keys(require.cache).filter((f) => f.endsWith('fastify.js')).join(' '))"
  const out = execFileSync(process.execPath, [...PRELOAD, '-e', probe], { encoding: 'utf8', cwd: ROOT, env: patched.env })
  if (out !== path.join(patched.fastify, 'fastify.js')) throw new Error(`the preload loads ${out}, not the patched copy ${patched.fastify}`)
}

function median (xs) {
  return Math.round(xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)])
}

/**
 * The adapter's reliances (`Relies on:` of plugins/infrastructure/adapter.ts) and those the
 * Fastify members present make unneeded: a function whose doc says "nothing where the Fastify
 * in use has the proposed `fastify.X`", and the patched app has X.
 */
function reliances (app) {
  const source = fs.readFileSync(path.join(ROOT, 'plugins', 'infrastructure', 'adapter.ts'), 'utf8')
  const all = []
  const gone = []
  // Each doc comment that says what it relies on, and the exported function after it.
  for (const m of source.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*?)\*\//g)) {
    const doc = m[1].replace(/\s*\n\s*\*\s?/g, ' ')
    if (!/Relies on: (?!nothing;)/.test(doc)) continue
    const name = /export function (\w+)/.exec(source.slice(m.index + m[0].length))[1]
    all.push(name)
    const member = /[Nn]othing where the Fastify in use has the proposed `fastify\.(\w+)/.exec(doc)?.[1]
    if (member !== undefined && member in app) gone.push(`${name} (fastify.${member})`)
  }
  return { all, gone }
}

/** (c) the contexts proposal, with the routes one: reliances before and after, and the adapter tests on the patched copy. */
function measureContexts () {
  const patched = buildPatched(['routes', 'contexts'])
  try {
    assertLoads(patched)
    const before = reliances(require('fastify')())
    const after = reliances(require(patched.fastify)())
    const test = path.join(ROOT, '.test-build', 'test', 'plugins', 'adapter.test.js')
    if (!fs.existsSync(test)) throw new Error('no .test-build/test/plugins/adapter.test.js: run `npm run test:build` first')
    const run = spawnSync(process.execPath, [...PRELOAD, test], { encoding: 'utf8', env: patched.env })
    // TAP: the plan, the failed tests, and the totals line (`# { total: 84, pass: 84 }`).
    const summary = run.stdout.split('\n').filter((l) => /^1\.\.\d+|^not ok \d+|^# \{ total/.test(l))
    return { before: before.all.length, after: before.all.length - after.gone.length, gone: after.gone, adapterTests: { status: run.status, summary } }
  } finally {
    patched.remove()
  }
}

async function main () {
  if (!hasPatch()) {
    console.error('upstream: the `patch` program is missing (install it, e.g. `apt-get install patch`)')
    process.exit(1)
  }
  const args = process.argv.slice(2)
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined
  const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : 3
  const fastifyVersion = require('fastify/package.json').version
  console.log(`Fastify ${fastifyVersion}, Node ${process.version}`)
  if (only === undefined || only === 'routes') {
    console.log(`\n(a) fastify-routes.patch (${patchLines('routes')} lines): register(suite) without await, then DELETE /admin with config.auth`)
    const r = measureRoutes()
    console.log(`stock:   ${JSON.stringify(r.stock)}`)
    console.log(`patched: ${JSON.stringify(r.patched)}`)
  }
  if (only === undefined || only === 'route-options') {
    console.log(`\n(b) fastify-route-options.patch (${patchLines('route-options')} lines): bytes per request, "POST: + whole suite" (bench/allocation.js)`)
    for (const r of await measureRouteOptions(rounds)) {
      console.log(`${r.name}: stock ${r.stock} B/request; patched ${r.patched} B/request; saved ${r.stock - r.patched} B (median of ${r.rounds} rounds each)`)
    }
  }
  if (only === undefined || only === 'contexts') {
    console.log(`\n(c) fastify-contexts.patch (${patchLines('contexts')} lines), with fastify-routes.patch: the adapter's reliances`)
    const r = measureContexts()
    console.log(`reliances: ${r.before} on stock Fastify, ${r.after} on the patched copy; unneeded there: ${r.gone.join(', ')}`)
    console.log(`test/plugins/adapter.test.ts on the patched copy: exit ${r.adapterTests.status}; ${r.adapterTests.summary.join('; ')}`)
    if (r.adapterTests.status !== 0) process.exitCode = 1
  }
  if (only === undefined || only === 'hook-runners') {
    console.log(`\n(d) fastify-hook-runners.patch (${patchLines('hook-runners')} lines): bytes per request, GET rows of bench/allocation.js`)
    for (const r of await measureHookRunners(rounds)) {
      console.log(`${r.name}: stock ${r.stock} B/request; patched ${r.patched} B/request; saved ${r.stock - r.patched} B (median of ${r.rounds} rounds each)`)
    }
  }
}

module.exports = { buildPatched, hasPatch }

if (require.main === module) {
  main().catch((err) => { console.error(err); process.exit(1) })
}
