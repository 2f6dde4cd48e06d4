/**
 * `npm start` (README, "The reference service"): SIGTERM or SIGINT sent to the npm process
 * alone, or SIGTERM to its whole process group (what a terminal's Ctrl-C, a container
 * runtime or a process manager sends), stops the service cleanly: a request in flight gets
 * its answer, the database is closed, every process exits with status 0, none is left
 * behind, and the port is closed. Over a real socket, with the real npm. The answer to the
 * request in flight says `Connection: close` (RFC 9112 9.6): a keep-alive connection would
 * hold the shutdown until the client left or keepAliveTimeout (72 s) passed.
 *
 * npm runs a script through `sh -c`; a shell that does not replace itself with the command
 * (dash, Debian's sh) dies of the signal npm passes on and leaves the launcher and the
 * service running: `start` therefore `exec`s the launcher, which passes signals on.
 */
import { test, type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, childEnv } from '../helpers/paths'
import { until } from '../helpers/until'

/** npm as the test was started with it (npm_execpath), else the one on PATH. */
function npmCommand (): [string, string[]] {
  const execpath = process.env.npm_execpath
  if (execpath !== undefined && /\.c?js$/.test(execpath)) return [process.execPath, [execpath]]
  return [process.platform === 'win32' ? 'npm.cmd' : 'npm', []]
}

/** The pids below `pid` (Linux /proc), children first. */
function descendants (pid: number): number[] {
  const parents = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // Fields after the command (which may hold spaces) in its parentheses: state, ppid.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)])
    } catch {}   // the process ended while /proc was read
  }
  const out: number[] = []
  const walk = (p: number): void => { for (const c of parents.get(p) ?? []) { out.push(c); walk(c) } }
  walk(pid)
  return out
}

/** A process has exited when it is gone or a zombie (exited, not yet reaped). */
function alive (pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

function commandOf (pid: number): string {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() } catch { return '(gone)' }
}

interface Started { npm: ChildProcess, url: URL, output: () => string, dir: string, database: string }

async function npmStart (t: Test): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'npm-start-'))
  const database = join(dir, 'articles.db')
  const [cmd, pre] = npmCommand()
  const npm = spawn(cmd, [...pre, 'start'], {
    cwd: ROOT,
    // A group of its own, so the group can be signalled as a terminal would.
    detached: true,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', DATABASE: database, LOG_LEVEL: 'info', NODE_LINE: '' }),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  npm.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  npm.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  t.teardown(() => {
    // Only if the test failed: nothing of this group may outlive it.
    try { process.kill(-(npm.pid as number), 'SIGKILL') } catch {}
    rmSync(dir, { recursive: true, force: true })
  })
  const line = await until('the "listening on" line of npm start', () => /listening on (http:\/\/\S+)/.exec(out)?.[1], 120_000)
  return { npm, url: new URL(line), output: () => out, dir, database }
}

/** A POST of an article whose body is half sent: in flight until `finish()`. */
async function halfSentPost (url: URL): Promise<{ finish: () => Promise<string> }> {
  const body = JSON.stringify({ slug: `in-flight-${process.pid}`, title: 'In flight', body: 'Sent in two parts' })
  const socket: Socket = connect(Number(url.port), url.hostname)
  await once(socket, 'connect')
  let answer = ''
  socket.on('data', (d: Buffer) => { answer += d.toString('latin1') })
  const ended = once(socket, 'close')
  socket.write(`POST /articles HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Basic ${Buffer.from('demo:demo-password').toString('base64')}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`)
  return {
    finish: async () => {
      socket.write(body.slice(10))
      await ended
      return answer
    }
  }
}

async function portClosed (url: URL): Promise<boolean> {
  const socket = connect(Number(url.port), url.hostname)
  try {
    await once(socket, 'connect')
    socket.destroy()
    return false
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ECONNREFUSED'
  }
}

for (const [signal, target] of [['SIGTERM', 'npm'], ['SIGINT', 'npm'], ['SIGTERM', 'group']] as const) {
  test(`npm start: ${signal} to ${target === 'npm' ? 'the npm process alone' : 'its process group'} finishes the request in flight, closes the database, leaves no process and exits 0`, { timeout: 300_000 }, async (t) => {
    const started = await npmStart(t)
    const npmPid = started.npm.pid as number
    const tree = descendants(npmPid)
    t.ok(tree.some((pid) => commandOf(pid).includes('dist/example/server.js')), 'the service runs below npm')
    const received = (): number => started.output().split('incoming request').length
    const before = received()
    const inFlight = await halfSentPost(started.url)
    // In flight means the service has the request: its log says so before the signal is sent
    // (a request that reaches the server once it is closing is Fastify's 503, rightly).
    await until('the service to log the POST it received', () => received() > before)
    const exited = once(started.npm, 'exit')
    process.kill(target === 'npm' ? npmPid : -npmPid, signal)
    // The service says it got the signal; the rest of the body is sent only then.
    await until(`the service logs ${signal}`, () => started.output().includes(`${signal}: finishing in-flight requests`))
    const answer = await inFlight.finish()
    t.match(answer, /^HTTP\/1\.1 201 /, 'the request in flight is answered 201 Created')
    t.match(answer, /\r\nconnection: close\r\n/i, 'with Connection: close, so its connection does not hold the shutdown (RFC 9112 9.6)')
    const [code, killedBy] = await exited
    t.same({ code, signal: killedBy }, { code: 0, signal: null }, 'npm exits with status 0')
    await until('every process below npm to exit', () => tree.every((pid) => !alive(pid)), 60_000)
      .catch(() => t.fail(`processes left behind: ${tree.filter(alive).map((pid) => `${pid} ${commandOf(pid)}`).join('; ')}`))
    t.ok(await portClosed(started.url), 'the port is closed')
    t.notOk(existsSync(`${started.database}-wal`), 'the database was closed (SQLite removes its WAL file on a clean close)')
    t.ok(existsSync(started.database), 'the database file is there')
  })
}
