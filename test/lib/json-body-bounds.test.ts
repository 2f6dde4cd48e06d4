/**
 * Memory that grows with the bytes received, never with the bytes declared
 * (docs/security-model.md, Memory per body byte): the collectors of request bodies
 * (BodyBytes for the suite's parsers, BlockJoiner for every other parser) size their buffers
 * from what arrived, capped by the declared length, and an allocation that fails leaves them
 * as they were and is an answer (503), never an exception that ends the process.
 */
import { test } from 'tap'
import fc from 'fast-check'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { BlockJoiner, BodyBytes, isAllocationFailure, noRoomForBody, type Allocate } from '../../lib/json-body'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** At most this many bytes held per byte received, plus FIRST_BYTES (lib/json-body.ts). */
const PER_BYTE = 2
const FIRST_BYTES = 1024
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 200

/**
 * An allocator that records each size it was asked for, the bytes received at the time, and
 * the memory it gave: a test can check that what a collector hands on lies in that memory
 * (or in a piece it was given), so no memory escapes the count.
 */
function recording (received: () => number): { allocate: Allocate, sizes: Array<{ size: number, received: number }>, given: Set<ArrayBufferLike> } {
  const sizes: Array<{ size: number, received: number }> = []
  const given = new Set<ArrayBufferLike>()
  return {
    sizes,
    given,
    allocate: (size) => {
      sizes.push({ size, received: received() })
      const buffer = Buffer.allocUnsafeSlow(size)
      given.add(buffer.buffer)
      return buffer
    }
  }
}

/** A body, cut into pieces at random places, and the length a client declared for it (honest or not). */
const chunkedBody = fc.record({
  bytes: fc.uint8Array({ minLength: 0, maxLength: 6000 }),
  cuts: fc.array(fc.nat({ max: 6000 }), { maxLength: 40 }),
  declared: fc.oneof(fc.constant(-1), fc.constant(0), fc.nat({ max: 8000 }), fc.constant(2 ** 40))
}).map(({ bytes, cuts, declared }) => {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const pieces: Buffer[] = []
  let from = 0
  for (const c of [...at, bytes.length]) {
    pieces.push(Buffer.from(bytes.subarray(from, c)))
    from = c
  }
  // -1: the declared length is the body's own.
  return { bytes: Buffer.from(bytes), pieces, declared: declared === -1 ? bytes.length : declared }
})

test('property, docs/security-model.md (Memory per body byte): BodyBytes holds at most twice the bytes received plus 1 KiB whatever length was declared, copies less than twice the body, and gives the pieces joined in order', async (t) => {
  const failure = fc.check(fc.property(chunkedBody, ({ bytes, pieces, declared }) => {
    let received = 0
    const { allocate, sizes, given } = recording(() => received)
    const body = new BodyBytes(declared, allocate)
    for (const piece of pieces) {
      received += piece.length
      body.push(piece)
    }
    const result = body.bytes()
    const whole = pieces.filter((p) => p.length > 0)
    if (whole.length > 1 && !given.has(result.buffer)) throw new Error('the body lies in memory the allocator did not give')
    for (const { size, received: at } of sizes) {
      if (size > PER_BYTE * at + FIRST_BYTES) throw new Error(`${size} bytes allocated after ${at} bytes received (declared ${declared})`)
    }
    const copied = sizes.reduce((n, s) => n + s.size, 0)
    if (copied > 2 * PER_BYTE * received + 2 * FIRST_BYTES) throw new Error(`${copied} bytes allocated in all for ${received} bytes`)
    return body.length === bytes.length && result.equals(bytes)
  }), { numRuns: RUNS, seed: 17 })
  t.notOk(failure.failed, failure.failed ? `${String(failure.errorInstance)} ${JSON.stringify(failure.counterexample)}` : `${RUNS} bodies`)
})

test('property, docs/security-model.md (Memory per body byte): BlockJoiner holds at most twice the bytes of its block plus 1 KiB, emits blocks of at most 16 KiB (or large pieces as they are), and every byte in order', async (t) => {
  const failure = fc.check(fc.property(chunkedBody, ({ bytes, pieces, declared }) => {
    let pending = 0
    const { allocate, sizes, given } = recording(() => pending)
    const joiner = new BlockJoiner(declared, allocate)
    const out: Buffer[] = []
    const emit = (block: Buffer): void => { out.push(block); pending = 0 }
    for (const piece of pieces) {
      // The bytes this piece may add to the block being filled, at most.
      pending += piece.length
      joiner.add(piece, emit)
    }
    joiner.end(emit)
    for (const { size, received: at } of sizes) {
      if (size > PER_BYTE * at + FIRST_BYTES || size > 16 * 1024) throw new Error(`a block of ${size} bytes for ${at} bytes (declared ${declared})`)
    }
    const own = new Set(pieces.map((p) => p.buffer))
    if (out.some((b) => !given.has(b.buffer) && !own.has(b.buffer))) throw new Error('a block lies in memory the allocator did not give')
    if (joiner.received !== bytes.length) return false
    return Buffer.concat(out).equals(bytes)
  }), { numRuns: RUNS, seed: 19 })
  t.notOk(failure.failed, failure.failed ? `${String(failure.errorInstance)} ${JSON.stringify(failure.counterexample)}` : `${RUNS} bodies`)
})

test('a declared length sets no memory aside: 1 GiB declared and two bytes received hold about 1 KiB, in the process\'s own figures', async (t) => {
  const buffers = (): number => { gc(); return process.memoryUsage().arrayBuffers }
  const before = buffers()
  const bodies: BodyBytes[] = []
  const joiners: BlockJoiner[] = []
  for (let i = 0; i < 100; i++) {
    const body = new BodyBytes(2 ** 30)
    body.push(Buffer.from('{'))
    body.push(Buffer.from('"'))
    bodies.push(body)
    const joiner = new BlockJoiner(2 ** 30)
    joiner.add(Buffer.from('a'), () => {})
    joiner.add(Buffer.from('b'), () => {})
    joiners.push(joiner)
  }
  const held = buffers() - before
  t.ok(held < 200 * 2 * FIRST_BYTES, `100 bodies and 100 blocks, each declared 1 GiB and two bytes received, hold ${held} bytes of buffers`)
  t.equal(bodies[0].bytes().toString(), '{"')
  const out: Buffer[] = []
  joiners[0].end((b) => out.push(b))
  t.equal(Buffer.concat(out).toString(), 'ab')
})

test('a body as long as declared, in a few pieces, is collected into one buffer of that length (no growth, no final copy)', async (t) => {
  let received = 0
  const { allocate, sizes } = recording(() => received)
  const body = new BodyBytes(100 * 1024, allocate)
  for (const size of [64 * 1024, 36 * 1024]) {
    received += size
    body.push(Buffer.alloc(size, 'x'))
  }
  t.same(sizes.map((s) => s.size), [100 * 1024], 'one allocation, of the declared length')
  t.equal(body.bytes().length, 100 * 1024)
})

test('an allocation that fails is thrown by push and add, which hold what they held before; it is an allocation failure, answered 503 with Retry-After and a closed connection (RFC 9110 15.6.4)', async (t) => {
  const failing: Allocate = () => { throw new RangeError('Array buffer allocation failed') }
  const body = new BodyBytes(10, failing)
  body.push(Buffer.from('a'))
  t.throws(() => body.push(Buffer.from('b')), RangeError)
  t.equal(body.length, 1, 'the piece that found no room is not counted')
  t.equal(body.bytes().toString(), 'a')
  const joiner = new BlockJoiner(0, failing)
  t.throws(() => joiner.add(Buffer.from('a'), () => {}), RangeError)
  for (const err of [new RangeError('Array buffer allocation failed'), Object.assign(new Error('Failed to allocate memory'), { code: 'ERR_OUT_OF_MEMORY' })]) {
    t.ok(isAllocationFailure(err), err.message)
  }
  for (const err of [new TypeError('x'), undefined, null, 'RangeError']) t.notOk(isAllocationFailure(err), String(err))
  // What Buffer.allocUnsafeSlow throws on this machine for a size it cannot have.
  let real: unknown
  try { Buffer.allocUnsafeSlow(2 ** 50) } catch (err) { real = err }
  t.ok(isAllocationFailure(real), `Buffer.allocUnsafeSlow(2 ** 50): ${String(real)}`)
  const answer = noRoomForBody()
  t.match(answer, { statusCode: 503, closeConnection: true, headers: { 'retry-after': '5' } })
})
