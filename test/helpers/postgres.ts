/**
 * A real PostgreSQL 15 for tests: a fresh cluster in a temporary directory, on a free port,
 * listening on 127.0.0.1 only, its unix socket in that directory. PostgreSQL refuses to
 * run as root: as root, initdb and pg_ctl run as the `postgres` user (runuser).
 *
 * Debian installs the binaries outside PATH (/usr/lib/postgresql/15/bin, package
 * postgresql-15; PG_BIN overrides). When they are missing a test skips, except under
 * CI=true where it fails: CI installs them (.ci/run).
 */
import { execFile, execFileSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, startRedis, type RedisServer } from './redis'
import { startService, type RunningService } from './service'

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'
export const INSTALL_HINT = 'apt-get install -y postgresql'

export interface PostgresServer {
  port: number
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  dir: string
  /** The URL of another database of this server. */
  urlFor: (database: string) => string
  /** Creates a database; returns its URL. */
  createDatabase: (name: string) => Promise<string>
  /** Stops the server: 'fast' (clean) or 'immediate' (as after a crash). */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>
  /** Starts it again, same port and data. */
  start: () => Promise<void>
  running: () => boolean
  /** Stops it and removes its directory. */
  destroy: () => Promise<void>
}

/** Why PostgreSQL cannot be started here, or undefined when it can. */
export function postgresMissing (): string | undefined {
  for (const bin of ['initdb', 'pg_ctl']) {
    if (!existsSync(join(PG_BIN, bin))) return `PostgreSQL 15 is not installed (no ${join(PG_BIN, bin)}): ${INSTALL_HINT}`
  }
  return undefined
}

/**
 * Options for `test(name, options, fn)`: skip with the install hint when the binaries
 * are missing, unless CI=true, where the test runs and fails on the missing binary.
 */
export function postgresTestOptions (): { skip?: string } {
  const missing = postgresMissing()
  if (missing === undefined || process.env.CI === 'true') return {}
  return { skip: missing }
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0

function run (bin: string, args: string[], cwd: string): Promise<string> {
  const file = join(PG_BIN, bin)
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { cwd, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, timeout: 60000 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`))
      else resolve(stdout)
    })
  })
}

/** Initialises a cluster in a temporary directory and starts it. */
export async function startPostgres (): Promise<PostgresServer> {
  const missing = postgresMissing()
  if (missing !== undefined) throw new Error(missing)
  const dir = mkdtempSync(join(tmpdir(), 'pg-'))
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  const log = join(dir, 'postgres.log')
  const port = await freePort()
  let up = false
  try {
    await run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], dir)
    // Test data needs no durability: no fsync, no waiting for the WAL on commit.
    appendFileSync(join(data, 'postgresql.conf'), [
      '',
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 100',
      ''
    ].join('\n'))
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  const start = async (): Promise<void> => {
    try {
      await run('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '30', 'start'], dir)
    } catch (err) {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
      throw new Error(`${(err as Error).message}\n${text}`)
    }
    up = true
  }
  const stop = async (mode: 'fast' | 'immediate' = 'fast'): Promise<void> => {
    if (!up) return
    await run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop'], dir)
    up = false
  }
  try {
    await start()
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  const urlFor = (database: string): string => `postgres://postgres@127.0.0.1:${port}/${database}`
  return {
    port,
    url: urlFor('postgres'),
    dir,
    urlFor,
    async createDatabase (name) {
      const client = new pg.Client({ connectionString: urlFor('postgres') })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`)
      } finally {
        await client.end()
      }
      return urlFor(name)
    },
    stop,
    start,
    running: () => up,
    async destroy () {
      try {
        await stop('immediate')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

/**
 * A fleet for fault tests: `instances` compiled services (dist/example/server.js, as
 * `npm run fleet` runs them) on one PostgreSQL and one Redis, one Digest secret.
 * `restart(i)` starts instance i again on its port.
 */
export interface PgFleet {
  pg: PostgresServer
  redis: RedisServer
  instances: RunningService[]
  urls: string[]
  env: Record<string, string>
  restart: (i: number) => Promise<RunningService>
  /** Stops the instances, Redis (the one in `redis`) and PostgreSQL. */
  stop: () => Promise<void>
}

export async function startPgFleet (count: number, extraEnv: Record<string, string> = {}): Promise<PgFleet> {
  const pg = await startPostgres()
  const redis = await startRedis()
  const env = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    DIGEST_SECRET: 'pg-fleet-secret-0123456789abcdef',
    // Every request logged at info would cost the shared machine more than the service does.
    LOG_LEVEL: 'warn',
    ...extraEnv
  }
  const instances: RunningService[] = []
  try {
    for (let i = 0; i < count; i++) instances.push(await startService(env))
  } catch (err) {
    for (const s of instances) s.child.kill('SIGKILL')
    await redis.stop()
    await pg.destroy()
    throw err
  }
  const fleet: PgFleet = {
    pg,
    redis,
    instances,
    urls: instances.map((s) => s.url),
    env,
    async restart (i) {
      const s = await startService({ ...env, PORT: String(instances[i].port) })
      instances[i] = s
      return s
    },
    async stop () {
      // stop() rejects when a credential reached an instance's logs.
      try {
        await Promise.all(instances.map((s) => s.stop()))
      } finally {
        // The current Redis: a test may have replaced it (stopped, then started again).
        await fleet.redis.stop()
        await pg.destroy()
      }
    }
  }
  return fleet
}
