'use strict'
/**
 * `npm run fleet`: two reference-service instances sharing one Redis (delta bases, Digest
 * nonce counts), one DIGEST_SECRET and one SQLite file, as a fleet behind a load balancer
 * would. Starts its own redis-server on 127.0.0.1 unless REDIS_URL is set.
 *
 * FLEET_PORTS (default "3001,3002"), DATABASE (default data/fleet.db), DIGEST_SECRET
 * (default: random, shared by both), and every variable of the service are honoured.
 */
const { spawn } = require('node:child_process')
const { randomBytes } = require('node:crypto')
const net = require('node:net')
const { join } = require('node:path')

const root = join(__dirname, '..')
const children = []
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

async function main () {
  const ports = (process.env.FLEET_PORTS ?? '3001,3002').split(',').map((p) => p.trim())
  if (ports.length !== 2) throw new Error('FLEET_PORTS holds two ports, e.g. 3001,3002')
  const redisUrl = process.env.REDIS_URL ?? await startRedis()
  const env = {
    ...process.env,
    REDIS_URL: redisUrl,
    DIGEST_SECRET: process.env.DIGEST_SECRET ?? randomBytes(32).toString('hex'),
    DATABASE: process.env.DATABASE ?? 'data/fleet.db'
  }
  const urls = []
  for (const port of ports) {
    const child = spawn(process.execPath, [join(root, 'dist', 'example', 'server.js')], { cwd: root, env: { ...env, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    const m = await waitFor(child, /listening on (http:\/\/\S+)/, `instance on port ${port}`)
    urls.push(m[1])
    child.stdout.pipe(process.stdout)
    child.stderr.pipe(process.stderr)
  }
  console.log(`fleet ready: ${urls.join(' ')} redis ${redisUrl}`)
}

function stop (code) {
  if (stopping) return
  stopping = true
  let left = children.filter((c) => c.exitCode === null).length
  if (left === 0) process.exit(code)
  for (const child of children) {
    if (child.exitCode !== null) continue
    child.once('exit', () => { if (--left === 0) process.exit(code) })
    child.kill('SIGTERM')
  }
}

process.on('SIGINT', () => stop(0))
process.on('SIGTERM', () => stop(0))
main().catch((err) => { console.error(err.message); stop(1) })
