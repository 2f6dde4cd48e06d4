import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { once } from 'node:events'
import { requirePeer } from './peers'

export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo
      s.close(() => resolve(port))
    })
  })
}

export interface RedisServer { port: number, url: string, proc: ChildProcess, stop: () => Promise<void> }

/**
 * Starts redis-server on 127.0.0.1 (a free port, or `port` to restart on the same one),
 * without persistence. Tests call `peer(t, 'redis-server')` (./peers) first, so that a
 * machine without it skips them; called without that check, a missing redis-server
 * throws an error naming the install command.
 */
export async function startRedis (port?: number): Promise<RedisServer> {
  const bin = requirePeer('redis-server')
  const p = port ?? await freePort()
  const proc = spawn(bin, ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  await new Promise<void>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 60_000)
    proc.once('error', reject)
    proc.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('Ready to accept connections')) { clearTimeout(timer); resolve() }
    })
  })
  proc.stdout?.resume()
  proc.stderr?.resume()
  return {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    proc,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return // stopped already (SIGKILL leaves no exit code)
      const exited = once(proc, 'exit')
      proc.kill('SIGKILL')
      await exited
    }
  }
}
