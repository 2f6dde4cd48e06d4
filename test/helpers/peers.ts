/**
 * Real peer programs some tests run against: redis-server, xdelta3, curl, python3 and
 * Chromium. On a machine with only Node, a test that needs one of them is skipped with one
 * message naming what is missing and how to install it; under CI (`CI=true`, set by
 * `.ci/run`) a missing peer fails the test instead, so CI never passes by skipping.
 *
 *   const xdelta3 = peer(t, 'xdelta3')
 *   if (xdelta3 === undefined) return     // skipped (or failed under CI)
 *
 * Call it before the test's first assertion: a skip is the test's plan of zero assertions.
 */
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

export type PeerName = 'redis-server' | 'xdelta3' | 'curl' | 'python3' | 'chromium'

/** The one command that installs every peer on Debian or Ubuntu. */
export const PEERS_INSTALL = 'apt-get install -y redis-server xdelta3 curl python3 chromium'

/** Executable names tried for each peer, in order. */
const NAMES: Record<PeerName, string[]> = {
  'redis-server': ['redis-server'],
  xdelta3: ['xdelta3'],
  curl: ['curl'],
  python3: ['python3'],
  chromium: ['chromium', 'chromium-browser']
}

/** Minimal slice of a tap test that `peer` uses. */
export interface PeerTest {
  plan: (n: number, comment?: string) => void
  fail: (message: string) => unknown
}

const found = new Map<string, string | undefined>()

function executable (file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/** The absolute path of `name` on PATH, or `undefined`. Looked up once per process. */
export function which (name: string): string | undefined {
  if (found.has(name)) return found.get(name)
  let path: string | undefined
  if (isAbsolute(name)) {
    path = executable(name) ? name : undefined
  } else {
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      if (dir === '') continue
      const candidate = join(dir, name)
      if (executable(candidate)) { path = candidate; break }
    }
  }
  found.set(name, path)
  return path
}

/** Where the peer is installed, or `undefined`. */
export function findPeer (name: PeerName): string | undefined {
  for (const candidate of NAMES[name]) {
    const path = which(candidate)
    if (path !== undefined) return path
  }
  return undefined
}

/** True when missing peers must fail tests rather than skip them. */
export function strictPeers (): boolean {
  return process.env.CI === 'true'
}

/** The message of a skip (or, under CI, of a failure) for these missing peers. */
export function missingPeersMessage (missing: readonly PeerName[]): string {
  const what = missing.length === 1 ? `${missing[0]} is` : `${missing.join(', ')} are`
  return `${what} not installed (not found on PATH); install the test peers with: ${PEERS_INSTALL}` +
    (strictPeers() ? ' (CI=true: a missing peer fails the test)' : ' (skipped; with CI=true this fails)')
}

/**
 * The path of `name`, or `undefined` after skipping the test (or failing it under CI)
 * with a message naming the missing program and the install command.
 */
export function peer (t: PeerTest, name: PeerName): string | undefined {
  const all = peers(t, name)
  return all?.[name]
}

/** Every peer's path, or `undefined` after one skip (or failure) naming all that are missing. */
export function peers<N extends PeerName> (t: PeerTest, ...names: N[]): Record<N, string> | undefined {
  const paths = {} as Record<N, string>
  const missing: PeerName[] = []
  for (const name of names) {
    const path = findPeer(name)
    if (path === undefined) missing.push(name)
    else paths[name] = path
  }
  if (missing.length === 0) return paths
  const message = missingPeersMessage(missing)
  if (strictPeers()) t.fail(message)
  else t.plan(0, message)
  return undefined
}

/** For helpers without a test at hand: throws the same message when the peer is missing. */
export function requirePeer (name: PeerName): string {
  const path = findPeer(name)
  if (path === undefined) throw new Error(missingPeersMessage([name]))
  return path
}
