/**
 * docs/client.md (The facade): `maxResponseBytes` bounds what the delta interceptor reads,
 * gunzips and decodes, so a small hostile 226 is refused while it is decoded (RFC 3284
 * 4.3: its window sizes are declared before the target is allocated), not once the whole
 * instance was built. Real sockets; memory is counted in ArrayBuffer bytes, never timed.
 */
import { test, type Test } from 'tap'
import { gzipSync } from 'node:zlib'
import { recorder, type Recorder } from '../../../test/helpers/client-peers'
import { createConventionsClient } from '../src/client'
import { ConventionsClientError, clientErrorCodes } from '../src/errors'

const MiB = 1024 * 1024

/** RFC 3284 section 2: base-128, most significant digit first. */
function varint (n: number): number[] {
  const out = [n & 0x7f]
  for (n = Math.floor(n / 128); n > 0; n = Math.floor(n / 128)) out.unshift((n & 0x7f) | 0x80)
  return out
}

/** A VCDIFF of `windows` windows, each a RUN (opcode 0, size in the instruction section) of `each` bytes. */
function runs (windows: number, each: number): Buffer {
  const body = [...varint(each), 0, 1, 1 + varint(each).length, 0, 0x61, 0, ...varint(each)]
  const window = [0, ...varint(body.length), ...body]
  return Buffer.from([0xd6, 0xc3, 0xc4, 0, 0, ...Array.from({ length: windows }, () => window).flat()])
}

/** A resource whose first read is a 200 with a strong ETag, and whose next read is `next` (a 226). */
async function deltaServer (next: { im: string, body: Buffer }): Promise<Recorder> {
  return await recorder((req, res) => {
    if (req.headers['if-none-match'] === '"v1"') return res.writeHead(226, { im: next.im, etag: '"v2"', 'delta-base': '"v1"', 'content-type': 'application/json' }).end(next.body)
    res.writeHead(200, { etag: '"v1"', 'content-type': 'application/json' }).end('{"a":1}')
  })
}

async function refusedAllocating (t: Test, read: () => Promise<unknown>): Promise<{ err: ConventionsClientError, grown: number }> {
  const before = process.memoryUsage().arrayBuffers
  const err = await read().then(() => { throw new Error('expected a refusal') }, (e: unknown) => e as ConventionsClientError)
  const grown = process.memoryUsage().arrayBuffers - before
  t.ok(err instanceof ConventionsClientError, String(err))
  return { err, grown }
}

test('RFC 3284 4.3: a 226 of under 200 bytes declaring a 60 MiB target is refused while it is decoded, over maxResponseBytes, without allocating the target', async (t) => {
  // 12 windows of 5 MiB each: every window within the bound, the sum past it.
  const bomb = runs(12, 5 * MiB)
  t.ok(bomb.length < 200, `${bomb.length} bytes on the wire`)
  const server = await deltaServer({ im: 'vcdiff', body: bomb })
  t.teardown(() => server.close())
  const client = createConventionsClient()
  t.teardown(() => client.close())
  t.same((await client.get(`${server.origin}/doc`)).body, { a: 1 })
  const { err, grown } = await refusedAllocating(t, () => client.get(`${server.origin}/doc`))
  t.equal(err.code, clientErrorCodes.HTTP_STATUS)
  t.match(err.message, /: the response body is over maxResponseBytes \(16777216 bytes\)$/)
  t.ok(grown < 4 * MiB, `${grown} bytes allocated (the target would be ${60 * MiB})`)
  t.equal(server.requests.length, 2, 'the whole instance is not asked for again: it would be as large')
})

test('RFC 1952: a small gzip 226 inflating past maxResponseBytes is refused while it is inflated', async (t) => {
  const bomb = gzipSync(Buffer.alloc(8 * MiB, 0x20), { level: 9 })
  t.ok(bomb.length < 16 * 1024, `${bomb.length} bytes on the wire`)
  const server = await deltaServer({ im: 'gzip', body: bomb })
  t.teardown(() => server.close())
  const client = createConventionsClient({ maxResponseBytes: MiB })
  t.teardown(() => client.close())
  await client.get(`${server.origin}/doc`)
  const { err, grown } = await refusedAllocating(t, () => client.get(`${server.origin}/doc`))
  t.equal(err.code, clientErrorCodes.HTTP_STATUS)
  t.match(err.message, /over maxResponseBytes \(1048576 bytes\)$/)
  t.ok(grown < 4 * MiB, `${grown} bytes allocated (inflated: ${8 * MiB})`)
})

test('the smaller of maxResponseBytes and the delta options bounds an instance, and the error names it', async (t) => {
  const server = await recorder((_req, res) => { res.writeHead(200, { etag: '"big"', 'content-type': 'text/plain' }).end('x'.repeat(5000)) })
  t.teardown(() => server.close())
  for (const [options, named] of [
    [{ maxResponseBytes: 1000 }, 'maxResponseBytes (1000 bytes)'],
    [{ maxResponseBytes: 100_000, delta: { maxInstanceBytes: 2000 } }, 'delta.maxInstanceBytes (2000 bytes)'],
    [{ maxResponseBytes: 100_000, delta: { maxBytes: 3000 } }, 'delta.maxBytes (3000 bytes)']
  ] as const) {
    const client = createConventionsClient(options)
    t.teardown(() => client.close())
    const err = await client.get(`${server.origin}/big`).catch((e: unknown) => e) as ConventionsClientError
    t.equal(err.code, clientErrorCodes.HTTP_STATUS, named)
    t.match(err.message, new RegExp(`over ${named.replace(/[()]/g, '\\$&')}$`))
  }
  const roomy = createConventionsClient({ maxResponseBytes: 5000, delta: { maxBytes: 6000 } })
  t.teardown(() => roomy.close())
  t.equal((await roomy.get(`${server.origin}/big`)).body, 'x'.repeat(5000), 'exactly the bound is read')
  for (const bad of [0, -1, 1.5, Number.NaN]) t.throws(() => createConventionsClient({ maxResponseBytes: bad }), { name: 'RangeError', message: 'maxResponseBytes must be a positive integer' })
})

test('a response the facade reads itself (delta: false, or a write) is refused past maxResponseBytes while it is read', async (t) => {
  const server = await recorder((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('x'.repeat(64 * 1024))
    res.end('x'.repeat(64 * 1024))
  })
  t.teardown(() => server.close())
  const plain = createConventionsClient({ delta: false, maxResponseBytes: 1000 })
  t.teardown(() => plain.close())
  const read = await plain.get(`${server.origin}/big`).catch((e: unknown) => e) as ConventionsClientError
  t.same([read.code, read.status], [clientErrorCodes.HTTP_STATUS, 200])
  t.match(read.message, /over maxResponseBytes \(1000 bytes\)$/)
  const client = createConventionsClient({ maxResponseBytes: 1000 })
  t.teardown(() => client.close())
  const written = await client.create(`${server.origin}/big`, { a: 1 }).catch((e: unknown) => e) as ConventionsClientError
  t.same([written.code, written.status], [clientErrorCodes.HTTP_STATUS, 200], 'a POST does not pass through the delta interceptor')
})
