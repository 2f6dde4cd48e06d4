import { test } from 'tap'
import fc from 'fast-check'
import { AddressCache, isSameMode } from '../src/address-cache'
import { S_NEAR, S_SAME } from '../src/code-table'
import { varintSize } from '../src/varint'

/** RFC 3284 section 5.3: the decoder's side, with its own caches. */
class Decoder {
  near = new Array<number>(S_NEAR).fill(0)
  same = new Array<number>(S_SAME * 256).fill(0)
  next = 0
  decode (mode: number, value: number, here: number): number {
    let a: number
    if (mode === 0) a = value
    else if (mode === 1) a = here - value
    else if (mode < 2 + S_NEAR) a = this.near[mode - 2] + value
    else a = this.same[(mode - 2 - S_NEAR) * 256 + value]
    this.near[this.next] = a
    this.next = (this.next + 1) % S_NEAR
    this.same[a % (S_SAME * 256)] = a
    return a
  }
}

test('RFC 3284 sections 5.1-5.3: every mode chosen decodes to the address, and is the shortest', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(fc.tuple(fc.nat({ max: 1 << 22 }), fc.nat({ max: 1 << 10 })), { maxLength: 200 }), (pairs) => {
    const enc = new AddressCache()
    const dec = new Decoder()
    let here = 0
    for (const [raw, gap] of pairs) {
      here += gap + 1
      const a = raw % here
      const cost = enc.cost(a, here)
      const size = enc.encode(a, here)
      if (cost !== size) return false
      if (size !== (isSameMode(enc.mode) ? 1 : varintSize(enc.value))) return false
      if (size > Math.min(varintSize(a), varintSize(here - a))) return false
      if (dec.decode(enc.mode, enc.value, here) !== a) return false
    }
    return true
  }), { numRuns: 200 }))
})

test('address modes: VCD_SELF, VCD_HERE, near and same; reset empties the caches', async (t) => {
  const c = new AddressCache()
  c.encode(5, 1_000_000)
  t.same([c.mode, c.value], [0, 5], 'VCD_SELF for a small address')
  c.encode(999_990, 1_000_000)
  t.same([c.mode, c.value], [1, 10], 'VCD_HERE just behind')
  c.encode(500_000, 1_000_000)
  c.encode(500_010, 1_000_000)
  t.equal(c.mode, 2 + 2, 'near: 10 after the third cached address')
  t.equal(c.value, 10)
  for (let k = 0; k < 4; k++) c.encode(2_000_000 + k * 1000, 2_500_000)
  t.equal(c.encode(500_000, 3_000_000), 1)
  t.ok(isSameMode(c.mode), 'same: the address again, out of the near cache')
  t.equal(c.value, 500_000 % 768 % 256)
  c.reset()
  t.same([...c.near], [0, 0, 0, 0])
  c.encode(500_000, 1_000_000)
  t.notOk(isSameMode(c.mode), 'no longer cached')
})
