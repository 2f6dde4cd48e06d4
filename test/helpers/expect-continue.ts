/** A client of RFC 9110 10.1.1 over a real socket: headers with `Expect: 100-continue`, the body only after a 100. */
import net from 'node:net'
import { parseResponses } from './raw'

/** How long the client waits for a 100 or an answer: a safety net, never reached by a passing test. */
const DEADLINE_MS = 10_000

export interface Exchange {
  /** The statuses the server wrote, in order (100 for each `100 Continue`). */
  statuses: number[]
  /** The final answer's body. */
  body: string
  /** True when the client sent the body (after a 100). */
  sentBody: boolean
}

/**
 * Sends the headers of a POST of `length` bytes with `Expect: 100-continue`, sends the body
 * once a 100 arrives, and stops at the first complete final answer (or at the deadline, with
 * what arrived: a server that never sends the 100 leaves the body unsent).
 */
export function postExpecting (port: number, path: string, length: number, contentType = 'text/plain', headers = ''): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let raw = ''
    let sentBody = false
    const finish = (): void => {
      clearTimeout(timer)
      socket.destroy()
      const responses = parseResponses(raw)
      resolve({ statuses: responses.map((r) => r.status), body: responses.at(-1)?.body ?? '', sentBody })
    }
    const timer = setTimeout(finish, DEADLINE_MS)
    socket.on('connect', () => socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nContent-Length: ${length}\r\n${headers}Expect: 100-continue\r\n\r\n`))
    socket.on('data', (d: Buffer) => {
      raw += d.toString('latin1')
      const responses = parseResponses(raw)
      if (!sentBody && responses.some((r) => r.status === 100)) {
        sentBody = true
        socket.write('x'.repeat(length))
      }
      const last = responses.at(-1)
      if (last !== undefined && last.status >= 200 && Buffer.byteLength(last.body) === Number(last.headers['content-length'] ?? 0)) finish()
    })
    socket.on('error', finish)
    socket.on('close', finish)
  })
}
