/**
 * RFC 3284 section 2 integers and the growable byte sink the encoder writes
 * every section into.
 *
 * An integer is written in base 128, most significant digit first, with bit 7
 * set on every byte but the last. Values are non-negative and below 2^35 here
 * (five bytes at most): window and section lengths, sizes and addresses.
 */

/** Bytes `v` takes as an RFC 3284 section 2 integer. */
export function varintSize (v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5
}

/** Growable byte sink; `int` writes an RFC 3284 section 2 integer. */
export class Sink {
  buf: Uint8Array
  pos = 0
  constructor (cap: number) {
    this.buf = new Uint8Array(Math.max(cap, 16))
  }

  /** Room for `n` more bytes (the capacity doubles). */
  ensure (n: number): void {
    if (this.pos + n <= this.buf.length) return
    let cap = this.buf.length * 2
    while (cap < this.pos + n) cap *= 2
    const next = new Uint8Array(cap)
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
  }

  byte (b: number): void {
    if (this.pos >= this.buf.length) this.ensure(1)
    this.buf[this.pos++] = b
  }

  /** RFC 3284 section 2: base 128, most significant digit first, bit 7 on all but the last byte. */
  int (v: number): void {
    if (v < 0x80) {
      this.byte(v)
      return
    }
    const n = varintSize(v)
    this.ensure(n)
    const buf = this.buf
    let p = this.pos + n - 1
    buf[p] = v & 0x7f
    v = Math.floor(v / 128)
    while (p > this.pos) {
      buf[--p] = (v & 0x7f) | 0x80
      v = Math.floor(v / 128)
    }
    this.pos += n
  }

  /** Copies src[start, end). */
  bytes (src: Uint8Array, start: number, end: number): void {
    this.ensure(end - start)
    this.buf.set(src.subarray(start, end), this.pos)
    this.pos += end - start
  }

  /** The bytes written so far, copied out. */
  result (): Uint8Array {
    return this.buf.slice(0, this.pos)
  }
}
