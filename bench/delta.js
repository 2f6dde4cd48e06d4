'use strict'
/**
 * Delta encoding benchmark (RFC 3229):
 *
 *   npm run build && node bench/delta.js
 *
 * 1. Bytes on the wire for a one-paragraph edit of a 100 KB JSON article, over a real
 *    socket (status line, headers and body): the 200 against the 226 (A-IM vcdiff; and
 *    vcdiff, gzip; and gzip alone). Target: 226 <= 2% of the 200. Also the time one
 *    request takes (the 226 pays for the encoder).
 * 2. Memory of the in-memory instance store under 10k distinct instances against its
 *    byte bound: the bytes it charges, and what the process holds (heap + array buffers,
 *    measured after a full GC) before and after.
 */
const net = require('node:net')
const v8 = require('node:v8')
const vm = require('node:vm')
const Fastify = require('fastify')
const { httpConventions, serverOptions } = require('../dist/plugins/index.js')
const { MemoryInstanceStore } = require('../dist/plugins/entries/stores.js')
const { decode } = require('../packages/vcdiff/dist/index.js')

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc')

function paragraphs (seed = 42) {
  const words = ('the of and to in is that for it as was with be by on not this are or from at which request response ' +
    'header server client cache delta encoding instance version resource entity validator window source target address').split(' ')
  let s = seed
  const next = () => { s = (s * 1103515245 + 12345) & 0x7fffffff; return s >>> 4 }
  const out = []
  let size = 0
  while (size < 100 * 1024) {
    const w = []
    for (let i = 0; i < 60 + (next() % 40); i++) w.push(words[next() % words.length])
    const p = w.join(' ') + '.'
    out.push(p)
    size += p.length + 2
  }
  return out
}

/** One request on a fresh connection; returns the status and every byte the server wrote. */
function exchange (port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks = []
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', reject)
    socket.on('end', () => {
      const raw = Buffer.concat(chunks)
      const end = raw.indexOf('\r\n\r\n')
      const head = raw.subarray(0, end).toString('latin1')
      resolve({ status: Number(head.split(' ')[1]), head, body: raw.subarray(end + 4), bytes: raw.length })
    })
    const lines = [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
    // Written, not ended: a client that half-closes right after its request gets no answer
    // from Node's HTTP server to a response produced asynchronously (gzip runs in zlib's pool).
    socket.write(lines.join('\r\n') + '\r\n\r\n')
  })
}

async function wire () {
  const paras = paragraphs()
  let article = { id: 'a1', title: 'A long article', body: paras.join('\n\n'), tags: ['bench'] }
  let etag = 'v1'
  const app = Fastify(serverOptions)
  await app.register(httpConventions)
  app.get('/articles/:id', { config: { conditional: { validators: () => ({ etag }) }, deltaEncoding: true } }, async () => article)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = app.server.address().port
  try {
    // A delta client's first GET: it names the manipulations it reads and holds no instance
    // yet, so it gets the whole one (200), which the route keeps as a base from then on.
    const first = await exchange(port, '/articles/a1', { 'A-IM': 'vcdiff' })
    if (first.status !== 200) throw new Error(`the first GET with A-IM: expected 200, got ${first.status}`)
    const edited = [...paras]
    edited[Math.floor(paras.length / 2)] = 'This paragraph was rewritten: the delta carries these words and little else.'
    article = { ...article, body: edited.join('\n\n') }
    etag = 'v2'
    const full = await exchange(port, '/articles/a1')
    const rows = [['200 (whole instance)', full]]
    for (const aim of ['vcdiff', 'vcdiff, gzip', 'gzip']) {
      const res = await exchange(port, '/articles/a1', { 'A-IM': aim, 'If-None-Match': '"v1"' })
      if (res.status !== 226) throw new Error(`A-IM ${aim}: expected 226, got ${res.status}`)
      rows.push([`226 A-IM: ${aim}`, res])
    }
    const check = Buffer.from(decode(first.body, rows[1][1].body))
    if (!check.equals(full.body)) throw new Error('the delta does not decode to the new instance')

    console.log(`one-paragraph edit of a ${(full.body.length / 1024).toFixed(1)} KB JSON article; bytes on the wire (status line + headers + body):`)
    console.log('| response | body B | wire B | % of the 200 |')
    console.log('|---|---:|---:|---:|')
    for (const [name, r] of rows) console.log(`| ${name} | ${r.body.length} | ${r.bytes} | ${(100 * r.bytes / full.bytes).toFixed(2)}% |`)
    const ratio = rows[1][1].bytes / full.bytes
    console.log(`target 226 <= 2% of the 200: ${(ratio * 100).toFixed(2)}% ${ratio <= 0.02 ? 'MET' : 'MISSED'}`)

    const N = 200
    const time = async (headers) => {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < N; i++) await exchange(port, '/articles/a1', headers)
      return Number(process.hrtime.bigint() - t0) / 1e6 / N
    }
    const plain = await time({})
    const delta = await time({ 'A-IM': 'vcdiff', 'If-None-Match': '"v1"' })
    console.log(`\nlatency, sequential requests on fresh connections (n=${N}): 200 ${plain.toFixed(2)} ms, 226 vcdiff ${delta.toFixed(2)} ms`)
    return { ratio, full: full.bytes, delta: rows[1][1].bytes, plainMs: plain, deltaMs: delta }
  } finally {
    await app.close()
  }
}

function held () {
  gc()
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

async function memory () {
  const MiB = 1024 * 1024
  const maxBytes = 64 * MiB
  const before = held()
  const store = new MemoryInstanceStore({ maxBytes })
  let peak = 0
  let offered = 0
  for (let i = 0; i < 10000; i++) {
    // articles from 2 KB to 14 KB: 10k of them is about 80 MiB, over the bound
    const size = 2048 + ((i * 7919) % (12 * 1024))
    const body = Buffer.alloc(size, i & 0xff)
    offered += size
    await store.set(`/articles/${i}\napplication/json; charset=utf-8\n${i.toString(16).padStart(16, '0')}`, body)
    if (store.bytes > peak) peak = store.bytes
  }
  const after = held()
  const measured = after - before
  console.log(`\ninstance store (MemoryInstanceStore, bound ${maxBytes / MiB} MiB) under 10k distinct instances (${(offered / MiB).toFixed(1)} MiB offered):`)
  console.log('| metric | value |')
  console.log('|---|---:|')
  console.log(`| instances kept | ${store.size} |`)
  console.log(`| bytes charged (peak) | ${(peak / MiB).toFixed(2)} MiB |`)
  console.log(`| process memory held by the store (heap + array buffers, after GC) | ${(measured / MiB).toFixed(2)} MiB |`)
  console.log(`| held / bound | ${(100 * measured / maxBytes).toFixed(1)}% |`)
  console.log(`target: within the bound: charged ${peak <= maxBytes ? 'MET' : 'MISSED'}, measured ${measured <= maxBytes ? 'MET' : 'MISSED'}`)
  // keep the store alive until measured
  if (store.size === 0) throw new Error('empty store')
  return { kept: store.size, peak, measured, maxBytes }
}

async function run () {
  const w = await wire()
  const m = await memory()
  return { wire: w, memory: m }
}

module.exports = { run }

if (require.main === module) {
  run().catch((err) => { console.error(err); process.exit(1) })
}
