import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { ROOT, childEnv } from './paths'

export interface RunningService { url: string, port: number, child: ChildProcess, output: () => string, stop: () => Promise<number | null> }

/**
 * The credentials a service knows (the defaults of docs/reference-service.md plus any given in
 * its environment), in every form a leak could take: plain, and Basic's base64.
 */
export function credentialsOf (env: Record<string, string>): string[] {
  const users = (env.AUTH_USERS ?? 'demo:demo-password').split(',').filter((p) => p.includes(':'))
  const tokens = (env.AUTH_TOKENS ?? 'demo-write-token:read write,demo-read-token:read').split(',').map((p) => p.slice(0, p.indexOf(':')))
  const out = new Set<string>()
  for (const pair of users) {
    out.add(pair.slice(pair.indexOf(':') + 1))
    out.add(Buffer.from(pair).toString('base64'))
  }
  for (const token of tokens) if (token.length > 0) out.add(token)
  if (env.DIGEST_SECRET !== undefined) out.add(env.DIGEST_SECRET)
  return [...out]
}

const root = ROOT

/** Starts the compiled reference service (`npm start` runs the same file) on a free port. */
export function startService (env: Record<string, string> = {}): Promise<RunningService> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'example', 'server.js')], {
      cwd: root,
      // Every request is logged (info), so the logs can be checked for credentials when it stops.
      env: childEnv({ HOST: '127.0.0.1', PORT: '0', DATABASE: ':memory:', LOG_LEVEL: 'info', ...env }),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('service did not start:\n' + out)) }, 60_000)
    const onData = (d: Buffer): void => {
      out += d.toString()
      const m = /listening on (http:\/\/[\d.]+:(\d+))/.exec(out)
      if (m !== null) {
        clearTimeout(timer)
        child.stdout?.off('data', onData)
        child.stdout?.on('data', (x: Buffer) => { out += x.toString() })
        resolve({
          url: m[1],
          port: Number(m[2]),
          child,
          output: () => out,
          // Resolves with the exit code; rejects when a credential appears in the service's output.
          stop: () => new Promise((resolve, reject) => {
            const settle = (code: number | null): void => {
              const leaked = credentialsOf(env).filter((c) => out.includes(c))
              if (leaked.length > 0) reject(new Error(`credentials in the service's logs: ${leaked.length} of them`))
              else resolve(code)
            }
            if (child.exitCode !== null) return settle(child.exitCode)
            child.once('exit', (code) => settle(code))
            child.kill('SIGTERM')
          })
        })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (d: Buffer) => { out += d.toString() })
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`service exited with ${String(code)}:\n${out}`)) })
  })
}
