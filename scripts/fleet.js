'use strict'
/**
 * `npm run fleet`: N reference-service instances sharing one Redis (delta bases, Digest
 * nonce counts), one DIGEST_SECRET and one database, as a fleet behind a load balancer
 * would (docs/fleet.md).
 *
 *   npm run fleet                                # two instances, one SQLite file
 *   npm run fleet -- --instances 3 --postgres    # three instances on one PostgreSQL
 *
 * --instances N   how many instances (default: as many as FLEET_PORTS lists, else 2)
 * --postgres      the articles in PostgreSQL: DATABASE_URL when set, else a PostgreSQL 15
 *                 this script initialises in a temporary directory and removes on exit
 *
 * Starts its own redis-server on 127.0.0.1 unless REDIS_URL is set. FLEET_PORTS (default
 * 3001, 3002, ...), DATABASE (default data/fleet.db), DATABASE_URL, DIGEST_SECRET (default:
 * random, shared by all) and every variable of the service are honoured. Ctrl-C stops
 * the instances, then Redis and PostgreSQL.
 */
const { execFile, execFileSync, spawn } = require('node:child_process')
const { randomBytes } = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const { join } = require('node:path')

const root = join(__dirname, '..')
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'
const children = []
const cleanups = []
let stopping = false

function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.unref()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
  })
}

function waitFor (child, pattern, name) {
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 15000)
    const onData = (d) => {
      out += d.toString()
      const m = pattern.exec(out)
      if (m !== null) { clearTimeout(timer); resolve(m) }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.once('exit', (code) => { clearTimeout(timer); if (!stopping) reject(new Error(`${name} exited with ${code}:\n${out}`)) })
  })
}

async function startRedis () {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  await waitFor(child, /Ready to accept connections/, 'redis-server')
  return `redis://127.0.0.1:${port}`
}

/**
 * Initialises a PostgreSQL 15 cluster in a temporary directory and starts it on a free
 * port, on 127.0.0.1 only, its unix socket in that directory. PostgreSQL refuses to run
 * as root: as root, initdb and pg_ctl run as the `postgres` user. `settings` are added
 * to postgresql.conf. Returns { url, port, dir, stop() }; stop() also removes the directory.
 */
async function startPostgres ({ settings = {} } = {}) {
  for (const bin of ['initdb', 'pg_ctl']) {
    if (!fs.existsSync(join(PG_BIN, bin))) throw new Error(`PostgreSQL 15 is not installed (no ${join(PG_BIN, bin)}): apt-get install -y postgresql`)
  }
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0
  const dir = fs.mkdtempSync(join(os.tmpdir(), 'fleet-pg-'))
  if (asRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres']).toString().trim())
    fs.chownSync(dir, id('-u'), id('-g'))
  }
  const run = (bin, args) => new Promise((resolve, reject) => {
    const file = join(PG_BIN, bin)
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]
    execFile(cmd, argv, { cwd: dir, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, timeout: 60000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} failed: ${err.message}\n${stdout}${stderr}`))
      else resolve(stdout)
    })
  })
  const data = join(dir, 'data')
  const port = await freePort()
  let up = false
  const stop = async () => {
    try {
      // Ctrl-C in a terminal reaches the postmaster too: it may be gone already.
      if (up && fs.existsSync(join(data, 'postmaster.pid'))) await run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'])
      up = false
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'])
    const conf = { port, listen_addresses: "'127.0.0.1'", unix_socket_directories: `'${dir}'`, max_connections: 100, ...settings }
    fs.appendFileSync(join(data, 'postgresql.conf'), '\n' + Object.entries(conf).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n')
    await run('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '30', 'start'])
    up = true
  } catch (err) {
    await stop()
    throw err
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, stop }
}

/** The URL without its password, for printing. */
function masked (url) {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return '(DATABASE_URL)'
  }
}

function parseArgs (argv) {
  const out = { instances: undefined, postgres: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--postgres') out.postgres = true
    else if (a === '--instances' || a.startsWith('--instances=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i]
      const n = Number(v)
      if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error('--instances takes a number from 1 to 64')
      out.instances = n
    } else throw new Error(`unknown argument ${a}; usage: npm run fleet -- [--instances N] [--postgres]`)
  }
  return out
}

/** A variable of the environment; empty counts as unset. */
function env (name) {
  const v = process.env[name]
  return v === undefined || v === '' ? undefined : v
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const listed = env('FLEET_PORTS')?.split(',').map((p) => p.trim())
  const count = args.instances ?? listed?.length ?? 2
  const ports = listed ?? Array.from({ length: count }, (_, i) => String(3001 + i))
  if (ports.length !== count) throw new Error(`FLEET_PORTS lists ${ports.length} ports for ${count} instances`)
  const redisUrl = env('REDIS_URL') ?? await startRedis()
  let databaseUrl = env('DATABASE_URL')
  if (args.postgres && databaseUrl === undefined) {
    const pg = await startPostgres()
    cleanups.push(pg.stop)
    databaseUrl = pg.url
  }
  const shared = {
    ...process.env,
    REDIS_URL: redisUrl,
    DIGEST_SECRET: env('DIGEST_SECRET') ?? randomBytes(32).toString('hex'),
    DATABASE: env('DATABASE') ?? 'data/fleet.db',
    DATABASE_URL: databaseUrl ?? ''
  }
  // The instances start one after the other: each is listening before the next starts.
  const urls = []
  for (const port of ports) {
    const child = spawn(process.execPath, [join(root, 'dist', 'example', 'server.js')], { cwd: root, env: { ...shared, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    const m = await waitFor(child, /listening on (http:\/\/\S+)/, `instance on port ${port}`)
    urls.push(m[1])
    child.stdout.pipe(process.stdout)
    child.stderr.pipe(process.stderr)
  }
  const database = databaseUrl === undefined ? `sqlite ${shared.DATABASE}` : `postgres ${masked(databaseUrl)}`
  console.log(`fleet ready: ${urls.join(' ')} redis ${redisUrl} ${database}`)
}

async function cleanup () {
  for (const fn of cleanups.splice(0)) {
    try { await fn() } catch (err) { console.error(err.message) }
  }
}

function stop (code) {
  if (stopping) return
  stopping = true
  const done = () => { cleanup().finally(() => process.exit(code)) }
  let left = children.filter((c) => c.exitCode === null && c.signalCode === null).length
  if (left === 0) return done()
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    child.once('exit', () => { if (--left === 0) done() })
    child.kill('SIGTERM')
  }
}

if (require.main === module) {
  process.on('SIGINT', () => stop(0))
  process.on('SIGTERM', () => stop(0))
  main().catch((err) => { console.error(err.message); stop(1) })
}

module.exports = { startPostgres, freePort }
