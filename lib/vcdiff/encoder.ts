/**
 * RFC 3284 VCDIFF encoder (interoperable subset).
 *
 * Output: the plain header (no secondary compressor, no code table, no
 * application header), then VCD_SOURCE or plain windows of at most
 * `windowSize` target bytes, each with uncompressed sections, encoded with the
 * default code table (paired instructions included) and the default address
 * caches (s_near = 4, s_same = 3). No checksum bits, no VCD_TARGET windows.
 *
 * Matching: rolling hashes of source positions go into two chained tables, a
 * long look (32 bytes, open-vcdiff's block hash) and a short one (8 bytes,
 * xdelta3's source checksum), each behind a one-bit-per-bucket filter. Small
 * sources are indexed finely (every 2nd / 16th position); sources over 512 KiB
 * sparsely (every 8th position / whole 32-byte blocks, whose hashes are joined
 * from the short ones), as building the index is then most of the work:
 * matches are extended backwards, so a sparse index loses only short matches.
 * `prepareSource` builds the indexes once for many targets. The target is
 * scanned with the same rolling hashes; candidates are verified and extended
 * forwards and backwards; the long index is probed inside every short match so
 * that it cannot hide a long one; a 4-byte hash of earlier target positions
 * finds self-references (the xdelta3 small-match checksum).
 */
import {
  ADD, COPY, NOOP, S_NEAR, S_SAME,
  ADD_OP, COPY_OP, ADD_COPY_OP, COPY_ADD_OP, MAX_ADD_SIZE, MAX_COPY_SIZE, MAX_PAIR_ADD
} from './code-table'

export interface EncodeOptions {
  /** Largest target window in bytes (default 8 MiB). */
  windowSize?: number
  /** Bytes covered by the rolling hash, 4..64 (default 8). */
  hashLength?: number
  /** Distance between indexed source positions, 1..64 (default 2, 8 for sources over 512 KiB). */
  sourceStep?: number
  /** Source candidates examined per lookup in each index (default 8). */
  maxProbes?: number
  /** Look for COPY instructions into the target already written (default true). */
  targetMatches?: boolean
}

export const DEFAULT_WINDOW_SIZE = 8 * 1024 * 1024

/** RFC 3284 section 4.1: "VCD" with the high bits set, version 0, Hdr_Indicator 0. */
const HEADER = [0xd6, 0xc3, 0xc4, 0x00, 0x00]
/** RFC 3284 section 4.2: Win_Indicator bit for a source segment. */
const VCD_SOURCE = 0x01

/** Smallest COPY the default code table has an opcode size for (RFC 3284 section 5.6). */
const MIN_MATCH = 4
/** Rolling-hash multiplier and the bucket mixer (odd 32-bit constants). */
const HASH_MUL = 0x01000193
const MIX = 0x9e3779b1 | 0
const SAME_SIZE = S_SAME * 256
/** Bytes hashed by the long source index. */
const LONG_LOOK = 32
/** Head tables of at most 2^20 entries (4 MiB): builds stay mostly in cache, chains stay short. */
const MAX_TABLE_BITS = 20
/** Filter of at most 2^24 bits (2 MiB), and its bucket mixer (another odd constant). */
const FILTER_BITS = 24
const FILTER_MIX = 0x85ebca6b | 0
/** Chain links walked per candidate examined (collisions of the head table are skipped by hash). */
const LINKS_PER_PROBE = 2

function varintSize (v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5
}

function log2ceil (n: number): number {
  let b = 0
  while ((1 << b) < n) b++
  return b
}

/** Growable byte sink. RFC 3284 section 2 integers are written by `int`. */
class Sink {
  buf: Uint8Array
  pos = 0
  constructor (cap: number) {
    this.buf = new Uint8Array(Math.max(cap, 16))
  }

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

  bytes (src: Uint8Array, start: number, end: number): void {
    this.ensure(end - start)
    this.buf.set(src.subarray(start, end), this.pos)
    this.pos += end - start
  }
}

/** Matches found in one window, as parallel typed arrays (no per-match objects). */
class Matches {
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

/** Best candidate so far at one target position: [length, target start, address]. */
const best = new Int32Array(3)

/** HASH_MUL^n (mod 2^32). */
function power (n: number): number {
  let m = 1
  for (let j = 0; j < n; j++) m = Math.imul(m, HASH_MUL)
  return m
}

/**
 * Rolling hashes of src[k * step, k * step + look) for every entry k. Sparse
 * entries (step >= look) are hashed afresh: fewer loads than rolling over every byte.
 */
function entryHashes (src: Uint8Array, look: number, step: number): Int32Array {
  const hashes = new Int32Array(Math.floor((src.length - look) / step) + 1)
  if (step >= look) {
    for (let k = 0, p = 0; k < hashes.length; k++, p += step) {
      let h = 0
      for (let j = p; j < p + look; j++) h = (Math.imul(h, HASH_MUL) + src[j]) | 0
      hashes[k] = h
    }
    return hashes
  }
  const outMul = power(look - 1)
  let h = 0
  for (let j = 0; j < look; j++) h = (Math.imul(h, HASH_MUL) + src[j]) | 0
  for (let k = 0, p = 0; k < hashes.length; k++, p += step) {
    hashes[k] = h
    if (k + 1 < hashes.length) {
      for (let j = p; j < p + step; j++) h = (Math.imul(h - Math.imul(src[j], outMul), HASH_MUL) + src[j + look]) | 0
    }
  }
  return hashes
}

/**
 * Hashes of `n` blocks of `look` bytes laid end to end, every `longStep` bytes,
 * from the hashes of the short entries (every `step` bytes, `look` a multiple
 * of it): the polynomial hash of a concatenation is H(a) * HASH_MUL^|b| + H(b),
 * so the long index costs no pass over the source.
 */
function joinHashes (short: Int32Array, step: number, look: number, n: number, longStep: number, srcLen: number): Int32Array {
  const hashes = new Int32Array(Math.floor((srcLen - n * look) / longStep) + 1)
  const mul = power(look)
  const stride = look / step
  for (let k = 0; k < hashes.length; k++) {
    let h = 0
    for (let j = 0, e = k * longStep / step; j < n; j++, e += stride) h = (Math.imul(h, mul) + short[e]) | 0
    hashes[k] = h
  }
  return hashes
}

/**
 * Hash index of the source: the rolling hash of the `look` bytes starting at
 * every `step`-th source position. open-vcdiff hashes aligned blocks
 * (step = look); xdelta3 samples its source checksum more finely. Any source
 * match of at least look + step - 1 bytes is found.
 *
 * The index also rolls the same hash along the target (`roll`), so each target
 * position costs one multiply-add per index.
 */
class SourceIndex {
  readonly shift: number
  readonly head: Int32Array
  /** Per entry, side by side (one cache line per link): the next entry of the chain, then the entry's full hash. */
  readonly chain: Int32Array
  /** HASH_MUL^(look-1), to roll the oldest byte out. */
  readonly outMul: number
  /**
   * One bit per hash bucket of a table 8 times the entries (a one-hash Bloom
   * filter, at most 2 MiB): most absent hashes are rejected without touching
   * the head table or the chains, which do not fit in cache for large sources.
   */
  readonly filter: Int32Array
  readonly filterShift: number
  /** Rolling hash of target[hAt, hAt + look). */
  h = 0
  hAt = -1

  /** `hashes[k]`: the rolling hash of src[k * step, k * step + look), from `entryHashes` or `joinHashes`. */
  constructor (readonly src: Uint8Array, readonly look: number, readonly step: number, readonly maxProbes: number, hashes: Int32Array) {
    const entries = hashes.length
    // A head table small enough to stay in cache: building the index is
    // otherwise one cache miss per entry. Chains absorb the collisions.
    const bits = Math.min(log2ceil(entries), MAX_TABLE_BITS)
    this.head = new Int32Array(1 << bits).fill(-1)
    this.chain = new Int32Array(entries * 2)
    this.shift = 32 - bits
    this.outMul = power(look - 1)
    const filterBits = Math.min(Math.max(log2ceil(entries) + 3, 5), FILTER_BITS)
    this.filter = new Int32Array(1 << (filterBits - 5))
    this.filterShift = 32 - filterBits
    const { head, chain, shift, filter, filterShift } = this
    // Entries go in from the front; chains list the latest position first.
    for (let k = 0; k < entries; k++) {
      const h = hashes[k]
      const b = Math.imul(h, MIX) >>> shift
      chain[2 * k] = head[b]
      chain[2 * k + 1] = h
      head[b] = k
      const fb = Math.imul(h, FILTER_MIX) >>> filterShift
      filter[fb >>> 5] |= 1 << (fb & 31)
    }
  }

  /**
   * Look up target[i, i + look) and keep in `best` the longest verified match,
   * extended forwards (up to `we`) and backwards (down to `floor`). Returns
   * whether `best` changed. `skip` is a source position already tried.
   */
  lookup (tgt: Uint8Array, i: number, we: number, floor: number, skip: number, maxProbes = this.maxProbes): boolean {
    const src = this.src
    const look = this.look
    if (this.hAt !== i) {
      let h = 0
      for (let j = 0; j < look; j++) h = (Math.imul(h, HASH_MUL) + tgt[i + j]) | 0
      this.h = h
      this.hAt = i
    }
    const h = this.h
    const fb = Math.imul(h, FILTER_MIX) >>> this.filterShift
    if ((this.filter[fb >>> 5] & (1 << (fb & 31))) === 0) return false
    const chain = this.chain
    const srcLen = src.length
    let k = this.head[Math.imul(h, MIX) >>> this.shift]
    let probes = maxProbes
    let links = probes * LINKS_PER_PROBE
    let changed = false
    while (k >= 0 && links-- > 0) {
      if (chain[2 * k + 1] !== h) {
        k = chain[2 * k]
        continue
      }
      const sp = k * this.step
      k = chain[2 * k]
      if (sp === skip) continue
      const max = Math.min(we - i, srcLen - sp)
      let f = 0
      while (f < max && tgt[i + f] === src[sp + f]) f++
      if (f >= MIN_MATCH) {
        let b = 0
        while (i - b > floor && sp - b > 0 && tgt[i - b - 1] === src[sp - b - 1]) b++
        if (f + b > best[0]) {
          best[0] = f + b
          best[1] = i - b
          best[2] = sp - b
          changed = true
        }
      }
      if (--probes === 0) break
    }
    return changed
  }

  /** Move the target hash from position i to i + 1 (when it is at i and i + look < we). */
  roll (tgt: Uint8Array, i: number, we: number): void {
    if (this.hAt === i && i + this.look < we) {
      this.h = (Math.imul(this.h - Math.imul(tgt[i], this.outMul), HASH_MUL) + tgt[i + this.look]) | 0
      this.hAt = i + 1
    }
  }
}

interface Tuning {
  targetMatches: boolean
}

/** Longest match that stops the search for others at a position. */
const LONG_ENOUGH = 64
/** How far before the end of the previous match a long match may reach back. */
const REACH_BACK = 64
/** Candidates examined per position probed inside a short match. */
const LOOKAHEAD_PROBES = 2
/** Bytes a long match found inside a short one must add to replace it. */
const LOOKAHEAD_GAIN = 8

/**
 * Scan target[ws, we) and record COPY candidates into `m`. Bytes not covered
 * by a match become ADDs when the window is written.
 */
function findMatches (
  src: Uint8Array, tgt: Uint8Array, ws: number, we: number,
  long: SourceIndex | null, short: SourceIndex | null, tTable: Int32Array, tShift: number,
  m: Matches, tune: Tuning
): void {
  const srcLen = src.length
  const longLast = long !== null ? we - long.look : -1
  const shortLast = short !== null ? we - short.look : -1
  const useTarget = tune.targetMatches

  let i = ws
  let pend = ws
  // Matches ending after `keep` may be cut back by a longer source match that
  // extends backwards over them (xdelta3 erases instructions the same way).
  let keep = ws
  // Source position minus target position of the last source match: the diagonal to try first.
  let diag = 0
  let lastSrcEnd = 0
  while (i <= we - MIN_MATCH) {
    best[0] = 0
    let bestSrc = 0
    let bestCost = 0
    const floor = Math.max(keep, pend - REACH_BACK)

    // 1. The diagonal of the previous source match (an edit usually leaves it intact).
    const sp = i + diag
    if (sp >= 0 && sp < srcLen && src[sp] === tgt[i]) {
      const max = Math.min(we - i, srcLen - sp)
      let f = 1
      while (f < max && tgt[i + f] === src[sp + f]) f++
      if (f >= MIN_MATCH) {
        let b = 0
        while (i - b > floor && sp - b > 0 && tgt[i - b - 1] === src[sp - b - 1]) b++
        best[0] = f + b
        best[1] = i - b
        best[2] = sp - b
        bestSrc = 1
      }
    }

    // 2. The source hash indexes, long look first (RFC 3284 leaves matching to the encoder).
    if (i <= longLast && best[0] < LONG_ENOUGH && (long as SourceIndex).lookup(tgt, i, we, floor, sp)) bestSrc = 1
    if (i <= shortLast && best[0] < LONG_ENOUGH && (short as SourceIndex).lookup(tgt, i, we, floor, sp)) bestSrc = 1
    if (bestSrc === 1) {
      // Estimated address cost: near the last source copy, or absolute.
      const d = best[2] - lastSrcEnd
      bestCost = varintSize(d >= 0 ? d : best[2])
    }

    // 3. Earlier target bytes (a self-referencing COPY, RFC 3284 section 3).
    if (useTarget) {
      const x = tgt[i] | (tgt[i + 1] << 8) | (tgt[i + 2] << 16) | (tgt[i + 3] << 24)
      const tb = Math.imul(x, MIX) >>> tShift
      const c = tTable[tb]
      tTable[tb] = i
      if (c >= ws && best[0] < LONG_ENOUGH) {
        const max = we - i
        let f = 0
        while (f < max && tgt[i + f] === tgt[c + f]) f++
        if (f >= MIN_MATCH) {
          let b = 0
          while (i - b > floor && c - b > ws && tgt[i - b - 1] === tgt[c - b - 1]) b++
          const cost = varintSize(i - c)
          if (f + b - cost > best[0] - bestCost) {
            best[0] = f + b
            best[1] = i - b
            best[2] = c - b
            bestSrc = 0
            bestCost = cost
          }
        }
      }
    }

    // 4. A short match must not hide a long one on another diagonal: the long
    // index is sampled, so probe it at every position the short match covers.
    if (best[0] >= MIN_MATCH && best[0] < LONG_ENOUGH && long !== null) {
      const end = Math.min(best[1] + best[0], longLast + 1)
      const b0 = best[0]
      const b1 = best[1]
      const b2 = best[2]
      for (let j = i; j + 1 < end;) {
        long.roll(tgt, j, we)
        j++
        if (long.lookup(tgt, j, we, floor, -1, Math.min(LOOKAHEAD_PROBES, long.maxProbes))) {
          if (best[0] >= b0 + LOOKAHEAD_GAIN) {
            // The short match keeps the bytes before the long one (from `pend` on), if they pay for a COPY.
            const ps = Math.max(b1, pend)
            if (best[1] - ps >= MIN_MATCH && best[1] - ps >= bestCost + 3) {
              m.push(ps, best[1] - ps, b2 + ps - b1, bestSrc)
              pend = best[1]
            }
            bestSrc = 1
            const d = best[2] - lastSrcEnd
            bestCost = varintSize(d >= 0 ? d : best[2])
            break
          }
          best[0] = b0
          best[1] = b1
          best[2] = b2
        }
      }
    }

    // A COPY pays for its opcode and address, and may split an ADD in two.
    let len = best[0]
    let start = best[1]
    if (start < pend && len < LONG_ENOUGH) {
      // Only a long match may reach back over earlier matches.
      best[2] += pend - start
      len -= pend - start
      start = pend
    }
    if (len >= MIN_MATCH && len >= bestCost + 3) {
      if (start < pend) {
        // Erase the matches the new one covers; trim the one it overlaps.
        while (m.count > 0 && m.tPos[m.count - 1] >= start) m.count--
        const last = m.count - 1
        if (last >= 0 && m.tPos[last] + m.len[last] > start) {
          m.len[last] = start - m.tPos[last]
          if (m.len[last] < MIN_MATCH) m.count--
        }
      }
      m.push(start, len, best[2], bestSrc)
      if (len >= LONG_ENOUGH) keep = start + len
      i = start + len
      pend = i
      if (bestSrc === 1) {
        diag = best[2] - start
        lastSrcEnd = best[2] + len
      }
      continue
    }
    // No match here: roll the hashes one byte on.
    if (long !== null) long.roll(tgt, i, we)
    if (short !== null) short.roll(tgt, i, we)
    i++
  }
}

/** State of one window's sections and address caches (RFC 3284 sections 4.3 and 5.1). */
class WindowWriter {
  data = new Sink(1024)
  inst = new Sink(1024)
  addr = new Sink(1024)
  near = new Int32Array(S_NEAR)
  same = new Int32Array(SAME_SIZE)
  nextSlot = 0
  lastOpPos = -1
  lastType = NOOP
  lastSize = 0
  lastMode = 0

  reset (): void {
    this.data.pos = 0
    this.inst.pos = 0
    this.addr.pos = 0
    this.near.fill(0)
    this.same.fill(0)
    this.nextSlot = 0
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

  copy (len: number, a: number, here: number): void {
    // RFC 3284 section 5.3: pick the address mode with the shortest encoding.
    const near = this.near
    let mode = 0
    let value = a
    let size = varintSize(a)
    let s = varintSize(here - a)
    if (s < size) {
      mode = 1
      value = here - a
      size = s
    }
    for (let j = 0; j < S_NEAR; j++) {
      const d = a - near[j]
      if (d >= 0) {
        s = varintSize(d)
        if (s < size) {
          mode = 2 + j
          value = d
          size = s
        }
      }
    }
    const sameIdx = a % SAME_SIZE
    if (size > 1 && this.same[sameIdx] === a) {
      mode = 2 + S_NEAR + (sameIdx >> 8)
      value = sameIdx & 0xff
    }
    // RFC 3284 section 5.1: cache update after every COPY.
    near[this.nextSlot] = a
    this.nextSlot = (this.nextSlot + 1) % S_NEAR
    this.same[sameIdx] = a

    if (mode >= 2 + S_NEAR) this.addr.byte(value)
    else this.addr.int(value)

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
}

/** Write one window for target[ws, we) from its matches (RFC 3284 section 4.2 and 4.3). */
function writeWindow (out: Sink, w: WindowWriter, tgt: Uint8Array, ws: number, we: number, m: Matches): void {
  w.reset()
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
    if (p > t) w.add(tgt, t, p - t)
    const len = m.len[j]
    const a = m.fromSource[j] === 1 ? m.addr[j] - segStart : segLen + m.addr[j] - ws
    w.copy(len, a, segLen + p - ws)
    t = p + len
  }
  if (we > t) w.add(tgt, t, we - t)

  const targetLen = we - ws
  const dataLen = w.data.pos
  const instLen = w.inst.pos
  const addrLen = w.addr.pos
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
  out.byte(0) // Delta_Indicator: no compressed sections
  out.int(dataLen)
  out.int(instLen)
  out.int(addrLen)
  out.bytes(w.data.buf, 0, dataLen)
  out.bytes(w.inst.buf, 0, instLen)
  out.bytes(w.addr.buf, 0, addrLen)
}

function checkInt (name: string, v: number | undefined, min: number, max: number, dflt: number): number {
  if (v === undefined) return dflt
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}`)
  return v
}

/** Options fixed when a source is prepared may not change per target; these may. */
export type TargetOptions = Pick<EncodeOptions, 'windowSize' | 'targetMatches'>

/**
 * A source with its hash indexes built once, to encode many targets against
 * it (the delta-encoding plugin encodes every new instance against the same
 * base). The source bytes must not change while the object is in use.
 */
export interface PreparedSource {
  readonly source: Uint8Array
  /** Bytes held by the indexes (not counting the source): about 2.7x the source above 512 KiB, up to 10x below; for bounding a cache of prepared sources. */
  readonly indexBytes: number
  /** Encode `target` as a VCDIFF delta against the prepared source (RFC 3284). */
  encode: (target: Uint8Array, options?: TargetOptions) => Uint8Array
}

/** Sources above this size get sparser indexes: building them is most of the work. */
const LARGE_SOURCE = 512 * 1024

class Prepared implements PreparedSource {
  readonly long: SourceIndex | null
  readonly short: SourceIndex | null
  readonly indexBytes: number

  constructor (readonly source: Uint8Array, readonly options: EncodeOptions) {
    const large = source.length > LARGE_SOURCE
    const look = checkInt('hashLength', options.hashLength, 4, 64, 8)
    // Every 2nd position (xdelta3 samples its source checksum finely); every 8th for large sources, as xdelta3 -3 does.
    const step = checkInt('sourceStep', options.sourceStep, 1, 64, large ? 8 : 2)
    const maxProbes = checkInt('maxProbes', options.maxProbes, 1, 1024, 4)
    checkOptions(options)
    // Long look on aligned blocks (open-vcdiff's block hash, whole blocks only for large sources)
    // finds the long matches reliably; the short look, sampled every `step` bytes, finds the
    // short ones (xdelta3's source checksum).
    const shortHashes = source.length >= look ? entryHashes(source, look, step) : null
    this.short = shortHashes !== null ? new SourceIndex(source, look, step, maxProbes, shortHashes) : null
    let long: SourceIndex | null = null
    if (source.length >= LONG_LOOK) {
      const longStep = large ? LONG_LOOK : LONG_LOOK / 2
      // Blocks of the short index, joined when they tile the long look.
      const hashes = shortHashes !== null && LONG_LOOK % look === 0 && look % step === 0 && longStep % step === 0
        ? joinHashes(shortHashes, step, look, LONG_LOOK / look, longStep, source.length)
        : entryHashes(source, LONG_LOOK, longStep)
      long = new SourceIndex(source, LONG_LOOK, longStep, maxProbes, hashes)
    }
    this.long = long
    this.indexBytes = [long, this.short].reduce((n, x) => x === null ? n : n + x.head.byteLength + x.chain.byteLength + x.filter.byteLength, 0)
  }

  encode (target: Uint8Array, options: TargetOptions = {}): Uint8Array {
    const { source, long, short } = this
    const windowSize = options.windowSize ?? this.options.windowSize ?? DEFAULT_WINDOW_SIZE
    const targetMatches = options.targetMatches ?? this.options.targetMatches ?? true
    checkOptions(options)
    if (source.length > 0x7fffffff - windowSize) throw new RangeError('source is too large')

    const out = new Sink((Math.min(target.length, 1 << 20) >> 2) + 64)
    for (const b of HEADER) out.byte(b)
    // The rolling hashes follow one target at a time.
    if (long !== null) long.hAt = -1
    if (short !== null) short.hAt = -1
    const tBits = Math.min(Math.max(log2ceil(Math.min(target.length, windowSize)), 10), 18)
    const tTable = new Int32Array(1 << tBits).fill(-1)
    const tune: Tuning = { targetMatches }
    const m = new Matches()
    const w = new WindowWriter()

    let ws = 0
    do {
      const we = Math.min(ws + windowSize, target.length)
      m.count = 0
      findMatches(source, target, ws, we, long, short, tTable, 32 - tBits, m, tune)
      // An empty target still gets one (empty) window, which every decoder reads.
      writeWindow(out, w, target, ws, we, m)
      ws = we
    } while (ws < target.length)
    return out.buf.slice(0, out.pos)
  }
}

function checkOptions (options: TargetOptions): void {
  checkInt('windowSize', options.windowSize, 1, 64 * 1024 * 1024, DEFAULT_WINDOW_SIZE)
}

/** Build the source indexes once; `encode` of the result reuses them for each target. */
export function prepareSource (source: Uint8Array, options: EncodeOptions = {}): PreparedSource {
  return new Prepared(source, options)
}

/** Encode `target` as a VCDIFF delta against `source` (RFC 3284). */
export function encode (source: Uint8Array, target: Uint8Array, options: EncodeOptions = {}): Uint8Array {
  return new Prepared(source, options).encode(target)
}
