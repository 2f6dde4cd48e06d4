import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

export interface RunningService { url: string, port: number, child: ChildProcess, output: () => string, stop: () => Promise<number | null> }

const root = join(__dirname, '..', '..')

/** Starts the compiled reference service (`npm start` runs the same file) on a free port. */
export function startService (env: Record<string, string> = {}): Promise<RunningService> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'example', 'server.js')], {
      cwd: root,
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATABASE: ':memory:', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('service did not start:\n' + out)) }, 15000)
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
          stop: () => new Promise((resolve) => {
            if (child.exitCode !== null) return resolve(child.exitCode)
            child.once('exit', (code) => resolve(code))
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
