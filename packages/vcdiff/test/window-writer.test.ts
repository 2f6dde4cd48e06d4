import { test } from 'tap'
import { Matches, WindowWriter, HEADER } from '../src/window-writer'
import { Sink } from '../src/varint'
import { decode } from '../src'
import { ADD_OP, COPY_OP, COPY_ADD_OP, ADD_COPY_OP } from '../src/code-table'
import { equalBytes, inspect, xdelta3Decode, withXdelta3 } from './fixtures/helpers'

function delta (tgt: Uint8Array, m: Matches, windows: Array<[number, number]> = [[0, tgt.length]]): Uint8Array {
  const out = new Sink(16)
  for (const b of HEADER) out.byte(b)
  const w = new WindowWriter()
  for (const [ws, we] of windows) w.write(out, tgt, ws, we, m)
  return out.result()
}

test('window writer: a source segment spanning the copies, self-copies, ADDs between (RFC 3284 4.2, 4.3)', async (t) => {
  const src = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz')
  const tgt = Buffer.from('XXabcdefghYY0123456789ZZZZZZZZ')
  const m = new Matches()
  m.push(2, 8, 10, 1) // "abcdefgh" at source 10
  m.push(12, 10, 0, 1) // "0123456789" at source 0
  m.push(23, 7, 22, 0) // "ZZZZZZZ" from target 22 (overlapping self-copy)
  const d = delta(tgt, m)
  t.ok(equalBytes(decode(src, d), tgt))
  await withXdelta3(t, 'xdelta3', (t) => {
    t.ok(equalBytes(xdelta3Decode(src, d), tgt), 'xdelta3')
  })
  const stats = inspect(d)
  t.same(stats.winIndicators, [1], 'VCD_SOURCE')
  // Segment [0, 18): length 18, position 0, right after the indicator.
  t.same([...d.subarray(5, 8)], [1, 18, 0])
})

test('window writer: paired opcodes (RFC 3284 5.6) and a plain window', async (t) => {
  const src = Buffer.from('abcdefghijklmnop')
  const tgt = Buffer.from('Xabcd' + 'efghY')
  const m = new Matches()
  m.push(1, 4, 0, 1)
  m.push(5, 4, 4, 1)
  const d = delta(tgt, m)
  t.ok(equalBytes(decode(src, d), tgt))
  const ops = inspect(d).opcodes
  const used = ops.flatMap((n, op) => n > 0 ? [op] : [])
  t.ok(used.some((op) => ADD_COPY_OP.includes(op)), 'ADD 1 + COPY 4 in one opcode')
  t.ok(used.some((op) => COPY_ADD_OP.includes(op)), 'COPY 4 + ADD 1 in one opcode')
  const plain = new Matches()
  const long = Buffer.alloc(300, 0x61)
  const p = delta(long, plain)
  t.same(inspect(p).winIndicators, [0], 'no source segment without source copies')
  t.ok(inspect(p).opcodes[ADD_OP[0]] === 1, 'an ADD of 300 bytes: size 0 in the table, then the size')
  const big = new Matches()
  big.push(0, 300, 0, 1)
  const b = delta(long, big)
  t.equal(inspect(b).opcodes[COPY_OP[0]], 1, 'a COPY of 300 bytes: VCD_SELF, size follows')
  t.ok(equalBytes(decode(long, b), long))
})

test('window writer: consecutive windows reset the address caches', async (t) => {
  const src = Buffer.from('abcdefghijklmnopqrstuvwxyz0123456789')
  const tgt = Buffer.concat([src.subarray(10, 20), src.subarray(10, 20)])
  const m = new Matches()
  m.push(0, 10, 10, 1)
  const m2 = new Matches()
  m2.push(10, 10, 10, 1)
  const out = new Sink(16)
  for (const b of HEADER) out.byte(b)
  const w = new WindowWriter()
  w.write(out, tgt, 0, 10, m)
  w.write(out, tgt, 10, 20, m2)
  const d = out.result()
  t.equal(inspect(d).windows, 2)
  t.ok(equalBytes(decode(src, d), tgt))
  await withXdelta3(t, 'xdelta3', (t) => {
    t.ok(equalBytes(xdelta3Decode(src, d), tgt), 'xdelta3')
  })
  for (let i = 0; i < 300; i++) m.push(0, 0, 0, 1)
  t.equal(m.count, 301, 'Matches grows')
})
