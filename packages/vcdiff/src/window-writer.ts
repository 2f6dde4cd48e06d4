/**
 * RFC 3284 sections 4.2, 4.3 and 5.6: one window's three sections (data,
 * instructions, addresses), written with the default code table, paired
 * opcodes included, and laid out after the window header.
 */
import {
  ADD, COPY, NOOP, ADD_OP, COPY_OP, ADD_COPY_OP, COPY_ADD_OP, MAX_ADD_SIZE, MAX_COPY_SIZE, MAX_PAIR_ADD
} from './code-table'
import { AddressCache, isSameMode } from './address-cache'
import { Sink, varintSize } from './varint'

/** RFC 3284 section 4.1: "VCD" with the high bits set, version 0, Hdr_Indicator 0. */
export const HEADER: readonly number[] = [0xd6, 0xc3, 0xc4, 0x00, 0x00]
/** RFC 3284 section 4.2: Win_Indicator bit for a source segment. */
const VCD_SOURCE = 0x01

/** Matches found in one window, as parallel typed arrays (no per-match objects). */
export class Matches {
  count = 0
  tPos = new Int32Array(256)
  len = new Int32Array(256)
  addr = new Int32Array(256)
  /** 1: from the source, 0: from the target. */
  fromSource = new Uint8Array(256)

  push (tPos: number, len: number, addr: number, fromSource: number): void {
    if (this.count === this.tPos.length) {
      const cap = this.count * 2
      const grow = <T extends Int32Array | Uint8Array>(a: T, b: T): T => { b.set(a); return b }
      this.tPos = grow(this.tPos, new Int32Array(cap))
      this.len = grow(this.len, new Int32Array(cap))
      this.addr = grow(this.addr, new Int32Array(cap))
      this.fromSource = grow(this.fromSource, new Uint8Array(cap))
    }
    const i = this.count++
    this.tPos[i] = tPos
    this.len[i] = len
    this.addr[i] = addr
    this.fromSource[i] = fromSource
  }
}

/** One window's sections and address caches (RFC 3284 sections 4.3 and 5.1); reused window after window. */
export class WindowWriter {
  readonly data = new Sink(1024)
  readonly inst = new Sink(1024)
  readonly addr = new Sink(1024)
  readonly cache = new AddressCache()
  /** The last single instruction written, which the next may pair with (section 5.6). */
  lastOpPos = -1
  lastType = NOOP
  lastSize = 0
  lastMode = 0

  reset (): void {
    this.data.pos = 0
    this.inst.pos = 0
    this.addr.pos = 0
    this.cache.reset()
    this.lastType = NOOP
  }

  add (tgt: Uint8Array, start: number, len: number): void {
    this.data.bytes(tgt, start, start + len)
    // RFC 3284 section 5.6: a COPY of size 4 followed by an ADD of size 1 share one opcode.
    if (this.lastType === COPY && len <= MAX_PAIR_ADD) {
      const op = COPY_ADD_OP[(this.lastMode * 19 + this.lastSize) * 5 + len]
      if (op >= 0) {
        this.inst.buf[this.lastOpPos] = op
        this.lastType = NOOP
        return
      }
    }
    if (len <= MAX_ADD_SIZE) {
      this.lastOpPos = this.inst.pos
      this.inst.byte(ADD_OP[len])
      this.lastType = ADD
      this.lastSize = len
    } else {
      // RFC 3284 section 5.4: size 0 in the table, the size follows.
      this.inst.byte(ADD_OP[0])
      this.inst.int(len)
      this.lastType = NOOP
    }
  }

  /** COPY of `len` bytes from address `a` (RFC 3284 section 3), `here` being the current address. */
  copy (len: number, a: number, here: number): void {
    const cache = this.cache
    cache.encode(a, here)
    const mode = cache.mode
    if (isSameMode(mode)) this.addr.byte(cache.value)
    else this.addr.int(cache.value)

    // RFC 3284 section 5.6: an ADD of size 1..4 followed by a short COPY share one opcode.
    if (this.lastType === ADD && this.lastSize <= MAX_PAIR_ADD && len <= MAX_COPY_SIZE) {
      const op = ADD_COPY_OP[(mode * 5 + this.lastSize) * 19 + len]
      if (op >= 0) {
        this.inst.buf[this.lastOpPos] = op
        this.lastType = NOOP
        return
      }
    }
    const op = len <= MAX_COPY_SIZE ? COPY_OP[mode * 19 + len] : -1
    if (op >= 0) {
      this.lastOpPos = this.inst.pos
      this.inst.byte(op)
      this.lastType = COPY
      this.lastSize = len
      this.lastMode = mode
    } else {
      this.inst.byte(COPY_OP[mode * 19])
      this.inst.int(len)
      this.lastType = NOOP
    }
  }

  /**
   * Write one window for target[ws, we) from its matches into `out` (RFC 3284
   * sections 4.2 and 4.3). Source addresses in `m` are source positions, target
   * addresses target positions; the window header maps them into the window's
   * address space (the source segment, then the target window).
   */
  write (out: Sink, tgt: Uint8Array, ws: number, we: number, m: Matches): void {
    this.reset()
    // The source segment spans every source address the window copies from.
    let segStart = 0x7fffffff
    let segEnd = 0
    for (let j = 0; j < m.count; j++) {
      if (m.fromSource[j] === 1) {
        const a = m.addr[j]
        if (a < segStart) segStart = a
        if (a + m.len[j] > segEnd) segEnd = a + m.len[j]
      }
    }
    const segLen = segEnd > segStart ? segEnd - segStart : 0
    let t = ws
    for (let j = 0; j < m.count; j++) {
      const p = m.tPos[j]
      if (p > t) this.add(tgt, t, p - t)
      const len = m.len[j]
      const a = m.fromSource[j] === 1 ? m.addr[j] - segStart : segLen + m.addr[j] - ws
      this.copy(len, a, segLen + p - ws)
      t = p + len
    }
    if (we > t) this.add(tgt, t, we - t)

    const targetLen = we - ws
    const dataLen = this.data.pos
    const instLen = this.inst.pos
    const addrLen = this.addr.pos
    // RFC 3284 section 4.3: the length of the delta encoding counts from the target window length on.
    const deltaLen = varintSize(targetLen) + 1 + varintSize(dataLen) + varintSize(instLen) + varintSize(addrLen) +
      dataLen + instLen + addrLen
    out.ensure(32 + deltaLen)
    if (segLen > 0) {
      out.byte(VCD_SOURCE)
      out.int(segLen)
      out.int(segStart)
    } else {
      out.byte(0)
    }
    out.int(deltaLen)
    out.int(targetLen)
    out.byte(0) // Delta_Indicator: no compressed sections (section 4.3)
    out.int(dataLen)
    out.int(instLen)
    out.int(addrLen)
    out.bytes(this.data.buf, 0, dataLen)
    out.bytes(this.inst.buf, 0, instLen)
    out.bytes(this.addr.buf, 0, addrLen)
  }
}
