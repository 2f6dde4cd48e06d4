/**
 * RFC 3284 VCDIFF decoder for the default code table.
 *
 * Every length and address read from the delta is checked before use, so a
 * malformed delta ends in an Error (never an out-of-bounds read or a hang).
 * Memory is bounded by `maxTargetSize` before it is spent: a first pass reads every
 * window header and the sizes its instructions claim, sums the declared target sizes
 * against the limit, and only then is the target allocated, once, at its exact size.
 */
import { DEFAULT_CODE_TABLE, NOOP, ADD, RUN, S_NEAR, S_SAME } from './code-table'

/** Options of `decode`. */
export interface DecodeOptions {
  /**
   * Largest total target the decoder will produce, in bytes (default 256 MiB): the sum of
   * the declared window sizes is checked against it as each window header is read, before
   * anything is allocated (a VcdiffError with code VCDIFF_TARGET_TOO_LARGE past it), and
   * the decoder allocates no more than the target itself.
   */
  maxTargetSize?: number
}

/** The decoder's default bound of a target, in bytes (256 MiB; `DecodeOptions.maxTargetSize`). */
export const DEFAULT_MAX_TARGET_SIZE = 256 * 1024 * 1024

/** RFC 3284 section 4.1: header magic "VCD" with the high bits set, then version 0. */
const MAGIC0 = 0xd6
const MAGIC1 = 0xc3
const MAGIC2 = 0xc4

/** RFC 3284 section 4.1: Hdr_Indicator bits. */
const VCD_DECOMPRESS = 0x01
const VCD_CODETABLE = 0x02
/** xdelta3 extension: an application header follows (length-prefixed). */
const VCD_APPHEADER = 0x04

/** RFC 3284 section 4.2: Win_Indicator bits. */
const VCD_SOURCE = 0x01
const VCD_TARGET = 0x02
/** xdelta3 extension: a 4-byte Adler-32 of the target window follows the section lengths. */
const VCD_ADLER32 = 0x04

/** The code of a VcdiffError for a delta whose target is over `maxTargetSize` (nothing was allocated for it). */
export const VCDIFF_TARGET_TOO_LARGE = 'ERR_VCDIFF_TARGET_TOO_LARGE'
/** The code of a VcdiffError for a malformed delta. */
export const VCDIFF_INVALID = 'ERR_VCDIFF_INVALID'

/** A delta `decode` refused: malformed (RFC 3284), or its target over `maxTargetSize`. */
export class VcdiffError extends Error {
  /** VCDIFF_TARGET_TOO_LARGE when the target is over `maxTargetSize`, else VCDIFF_INVALID. */
  readonly code: typeof VCDIFF_TARGET_TOO_LARGE | typeof VCDIFF_INVALID
  constructor (message: string, code: VcdiffError['code'] = VCDIFF_INVALID) {
    super(`Invalid VCDIFF delta: ${message}`)
    this.name = 'VcdiffError'
    this.code = code
  }
}

/**
 * Cursor over one section of the delta, bounded by `end`.
 * RFC 3284 section 2: integers are base-128, most significant digit first,
 * bit 7 set on every byte but the last.
 */
class Reader {
  constructor (public readonly data: Uint8Array, public pos: number, public end: number, public readonly what: string) {}

  byte (): number {
    if (this.pos >= this.end) throw new VcdiffError(`${this.what} is truncated`)
    return this.data[this.pos++]
  }

  int (): number {
    let value = 0
    for (let n = 0; n < 5; n++) {
      const b = this.byte()
      value = value * 128 + (b & 0x7f)
      if ((b & 0x80) === 0) {
        // Sizes and addresses are kept below 2^32 (RFC 3284 section 2 leaves the width to the implementation).
        if (value > 0xffffffff) break
        return value
      }
    }
    throw new VcdiffError(`integer in ${this.what} is too large`)
  }
}

/**
 * Decode `delta` against `source` and return the target (RFC 3284 section 4).
 * Accepts VCD_SOURCE and VCD_TARGET windows, every default-table instruction and
 * address mode, and the xdelta3 checksum and application-header extensions (skipped).
 */
export function decode (source: Uint8Array, delta: Uint8Array, options: DecodeOptions = {}): Uint8Array {
  const maxTarget = options.maxTargetSize ?? DEFAULT_MAX_TARGET_SIZE
  // A bound that is not a number would compare false with every size, and bound nothing.
  if (!Number.isSafeInteger(maxTarget) || maxTarget < 0) throw new RangeError('maxTargetSize must be a non-negative integer')
  // First pass, before any allocation: every window header, its section lengths and the
  // sizes its instructions claim are checked, and the target sizes summed against the limit.
  const windows = readWindows(delta, readHeader(delta), source.length, maxTarget)
  let total = 0
  for (const w of windows) total += w.targetLen
  // Exactly the declared target (at most maxTarget), allocated once: no growth, no final copy.
  const buf = new Uint8Array(total)
  const caches: AddressCaches = { near: new Int32Array(S_NEAR), same: new Int32Array(S_SAME * 256), nextSlot: 0 }
  let outLength = 0
  for (const w of windows) {
    decodeWindow(source, delta, buf, w, outLength, caches)
    outLength += w.targetLen
  }
  return buf
}

/** RFC 3284 section 4.1: reads and checks the header (magic, version, indicator); returns where the first window starts. */
function readHeader (delta: Uint8Array): number {
  const head = new Reader(delta, 0, delta.length, 'header')
  if (delta.length < 4 || delta[0] !== MAGIC0 || delta[1] !== MAGIC1 || delta[2] !== MAGIC2) {
    throw new VcdiffError('bad magic (expected 0xD6 0xC3 0xC4)')
  }
  if (delta[3] !== 0) throw new VcdiffError(`unsupported version ${delta[3]}`)
  head.pos = 4
  const hdrIndicator = head.byte()
  if ((hdrIndicator & ~(VCD_DECOMPRESS | VCD_CODETABLE | VCD_APPHEADER)) !== 0) {
    throw new VcdiffError('reserved bits set in Hdr_Indicator')
  }
  // RFC 3284 section 4.1: secondary compressors and application-defined code tables are not supported.
  if ((hdrIndicator & VCD_DECOMPRESS) !== 0) throw new VcdiffError('secondary compression (VCD_DECOMPRESS) is not supported')
  if ((hdrIndicator & VCD_CODETABLE) !== 0) throw new VcdiffError('application-defined code tables (VCD_CODETABLE) are not supported')
  if ((hdrIndicator & VCD_APPHEADER) !== 0) {
    const len = head.int()
    if (len > head.end - head.pos) throw new VcdiffError('application header is truncated')
    head.pos += len
  }
  return head.pos
}

/** The address caches of RFC 3284 section 5.1 (near and same), reset at the start of each window. */
interface AddressCaches { near: Int32Array, same: Int32Array, nextSlot: number }

/**
 * RFC 3284 section 5.3 and 5.4: the address of a COPY in mode `mode`, decoded with the
 * caches, which it then updates (5.1); it must precede the current position `here` in U.
 */
function copyAddress (mode: number, here: number, addr: Reader, caches: AddressCaches): number {
  const { near, same } = caches
  let a: number
  if (mode === 0) {
    a = addr.int() // VCD_SELF
  } else if (mode === 1) {
    a = here - addr.int() // VCD_HERE
  } else if (mode < 2 + S_NEAR) {
    a = near[mode - 2] + addr.int() // near cache
  } else {
    a = same[(mode - 2 - S_NEAR) * 256 + addr.byte()] // same cache
  }
  if (a < 0 || a >= here) throw new VcdiffError('COPY address is out of range')
  near[caches.nextSlot] = a
  caches.nextSlot = (caches.nextSlot + 1) % S_NEAR
  same[a % (S_SAME * 256)] = a
  return a
}

/**
 * RFC 3284 section 5.3: COPY of `size` bytes from address `a` of U (the segment `seg`
 * then the target window from `tStart`) to `tPos` of `buf`; returns the new position.
 */
function copyBytes (buf: Uint8Array, seg: Uint8Array, w: Window, tStart: number, tPos: number, a: number, size: number): number {
  const { segLen, segPos } = w
  let n = size
  if (a < segLen) {
    // From the source (or earlier target) segment; may run on into the target window.
    const fromSeg = Math.min(n, segLen - a)
    buf.set(seg.subarray(segPos + a, segPos + a + fromSeg), tPos)
    tPos += fromSeg
    n -= fromSeg
    a = segLen
  }
  if (n > 0) {
    // From the target window itself; overlapping copies repeat earlier output (RFC 3284 section 3).
    let from = tStart + (a - segLen)
    if (from + n <= tPos) {
      buf.copyWithin(tPos, from, from + n)
      tPos += n
    } else {
      const end = tPos + n
      while (tPos < end) buf[tPos++] = buf[from++]
    }
  }
  return tPos
}

/** Decodes window `w` into `buf` from `tStart` (RFC 3284 section 5): its instructions, with their data and addresses. */
function decodeWindow (source: Uint8Array, delta: Uint8Array, buf: Uint8Array, w: Window, tStart: number, caches: AddressCaches): void {
  const t = DEFAULT_CODE_TABLE
  // VCD_SOURCE: the segment comes from the source file; VCD_TARGET: from the target decoded so far (`buf`).
  const seg = w.fromSource ? source : buf
  const data = new Reader(delta, w.dataStart, w.instStart, 'data section')
  const inst = new Reader(delta, w.instStart, w.addrStart, 'instruction section')
  const addr = new Reader(delta, w.addrStart, w.end, 'address section')
  let tPos = tStart
  // RFC 3284 section 5.1: caches are reset at the start of each window.
  caches.near.fill(0)
  caches.same.fill(0)
  caches.nextSlot = 0
  while (inst.pos < inst.end) {
    const op = inst.data[inst.pos++]
    for (let half = 0; half < 2; half++) {
      const type = half === 0 ? t.type1[op] : t.type2[op]
      if (type === NOOP) continue
      let size = half === 0 ? t.size1[op] : t.size2[op]
      // RFC 3284 section 5.4: size 0 in the table means the size follows in the instruction
      // section. readWindows checked that these sizes fill the window exactly.
      if (size === 0) size = inst.int()
      if (type === ADD) {
        // RFC 3284 section 5.3: ADD copies `size` bytes from the data section.
        if (size > data.end - data.pos) throw new VcdiffError('data section is truncated')
        buf.set(delta.subarray(data.pos, data.pos + size), tPos)
        data.pos += size
        tPos += size
      } else if (type === RUN) {
        // RFC 3284 section 5.3: RUN repeats one byte of the data section.
        const b = data.byte()
        buf.fill(b, tPos, tPos + size)
        tPos += size
      } else {
        const a = copyAddress(half === 0 ? t.mode1[op] : t.mode2[op], w.segLen + (tPos - tStart), addr, caches)
        tPos = copyBytes(buf, seg, w, tStart, tPos, a, size)
      }
    }
  }
  if (data.pos !== data.end || addr.pos !== addr.end) throw new VcdiffError('unused bytes in the data or address section')
}

/** One window of the delta, its header read and checked (RFC 3284 section 4.2, 4.3). */
interface Window {
  fromSource: boolean
  segLen: number
  segPos: number
  targetLen: number
  dataStart: number
  instStart: number
  addrStart: number
  end: number
}

/**
 * Reads and checks every window header from `pos` to the end of the delta, without
 * decoding: the segment ranges, the section lengths, and that the instruction sizes add
 * up to the declared target length (RFC 3284 section 5.4: sizes are in the code table or
 * in the instruction section, so this needs neither data nor addresses). The declared
 * target lengths are summed as they are read, and the sum checked against `maxTarget`,
 * so that a small delta declaring a huge target is refused before anything is allocated.
 */
function readWindows (delta: Uint8Array, start: number, sourceLength: number, maxTarget: number): Window[] {
  const windows: Window[] = []
  let total = 0
  let pos = start
  while (pos < delta.length) {
    const w = readWindowHeader(delta, pos, sourceLength, total, maxTarget)
    checkInstructionSizes(delta, w)
    windows.push(w)
    total += w.targetLen
    pos = w.end
  }
  return windows
}

/** RFC 3284 section 4.2: Win_Indicator and the source or target segment it names, checked against what precedes it (`total`). */
function readSegment (win: Reader, sourceLength: number, total: number): { winIndicator: number, segLen: number, segPos: number } {
  const winIndicator = win.byte()
  if ((winIndicator & ~(VCD_SOURCE | VCD_TARGET | VCD_ADLER32)) !== 0) {
    throw new VcdiffError('reserved bits set in Win_Indicator')
  }
  if ((winIndicator & VCD_SOURCE) !== 0 && (winIndicator & VCD_TARGET) !== 0) {
    throw new VcdiffError('VCD_SOURCE and VCD_TARGET are both set')
  }
  let segPos = 0
  let segLen = 0
  if ((winIndicator & (VCD_SOURCE | VCD_TARGET)) !== 0) {
    segLen = win.int()
    segPos = win.int()
    if ((winIndicator & VCD_SOURCE) !== 0) {
      if (segPos + segLen > sourceLength) throw new VcdiffError('source segment is out of range')
    } else if (segPos + segLen > total) {
      // VCD_TARGET: the segment must lie in the target decoded by the earlier windows.
      throw new VcdiffError('target segment is out of range')
    }
  }
  return { winIndicator, segLen, segPos }
}

/** The header of the window at `pos` (RFC 3284 section 4.2, 4.3), its target length checked against what is left of `maxTarget`. */
function readWindowHeader (delta: Uint8Array, pos: number, sourceLength: number, total: number, maxTarget: number): Window {
  const win = new Reader(delta, pos, delta.length, 'window header')
  const { winIndicator, segLen, segPos } = readSegment(win, sourceLength, total)
  // RFC 3284 section 4.3: the delta encoding of the window.
  const deltaLen = win.int()
  if (deltaLen > delta.length - win.pos) throw new VcdiffError('window is truncated')
  const windowEnd = win.pos + deltaLen
  win.end = windowEnd
  const targetLen = win.int()
  if (targetLen > maxTarget - total) throw new VcdiffError(`target exceeds the limit of ${maxTarget} bytes`, VCDIFF_TARGET_TOO_LARGE)
  const deltaIndicator = win.byte()
  if (deltaIndicator !== 0) throw new VcdiffError('compressed sections (Delta_Indicator) are not supported')
  const dataLen = win.int()
  const instLen = win.int()
  const addrLen = win.int()
  // xdelta3: Adler-32 of the target window, placed before the data section; not verified.
  if ((winIndicator & VCD_ADLER32) !== 0) {
    if (windowEnd - win.pos < 4) throw new VcdiffError('window checksum is truncated')
    win.pos += 4
  }
  if (win.pos + dataLen + instLen + addrLen !== windowEnd) {
    throw new VcdiffError('section lengths do not match the delta encoding length')
  }
  return {
    fromSource: (winIndicator & VCD_SOURCE) !== 0,
    segLen,
    segPos,
    targetLen,
    dataStart: win.pos,
    instStart: win.pos + dataLen,
    addrStart: win.pos + dataLen + instLen,
    end: windowEnd
  }
}

/** RFC 3284 section 5.4: the sizes the instructions of `w` claim must fill its target window exactly. */
function checkInstructionSizes (delta: Uint8Array, w: Window): void {
  const t = DEFAULT_CODE_TABLE
  const { targetLen } = w
  const inst = new Reader(delta, w.instStart, w.addrStart, 'instruction section')
  let filled = 0
  while (inst.pos < inst.end) {
    const op = inst.data[inst.pos++]
    for (let half = 0; half < 2; half++) {
      const type = half === 0 ? t.type1[op] : t.type2[op]
      if (type === NOOP) continue
      let size = half === 0 ? t.size1[op] : t.size2[op]
      if (size === 0) size = inst.int()
      if (size > targetLen - filled) throw new VcdiffError('instruction overflows the target window')
      filled += size
    }
  }
  if (filled !== targetLen) throw new VcdiffError('instructions do not fill the target window')
}
