/**
 * Hash index of a VCDIFF source (RFC 3284 leaves the search for matches to
 * the encoder; section 3 only defines what a COPY may address).
 *
 * The index holds the polynomial rolling hash of the `look` bytes starting at
 * every `step`-th source position, in chained buckets behind a two-bit
 * blocked filter. It is immutable once built, so one index serves any number
 * of targets, one after another or interleaved: the state of a scan (the hash
 * rolled along one target) lives in a `HashCursor`, one per encode.
 */

/** Rolling-hash multiplier and the bucket mixer (odd 32-bit constants). */
export const HASH_MUL = 0x01000193
export const MIX = 0x9e3779b1 | 0
/** Mixer of the filter (another odd constant, so filter and table buckets are independent). */
const FILTER_MIX = 0x85ebca6b | 0
/**
 * Head tables of at most 2^19 entries (2 MiB, within a core's L2 cache here): building
 * the index of a source of many MiB is one random access to the head table per entry,
 * and a table twice that size made it 1.5-2x slower on a loaded machine, for chains
 * of 4 entries a bucket instead of 2 (deltas within 0.5%).
 */
const MAX_TABLE_BITS = 19
/** Filter of at most 2^24 bits (2 MiB) ... */
const FILTER_BITS = 24
/** ... and at least 2^10 (its two bits are taken below the word index: see `filterMask`). */
const FILTER_MIN_BITS = 10
/** Chain links walked per candidate examined (collisions of the head table are skipped by hash). */
const LINKS_PER_PROBE = 2
/** Lookups a scan makes before it uses the filter: entries / 2^this (see `HashCursor`) ... */
const FILTER_AFTER_SHIFT = 4
/**
 * ... in an index of a source over 4 MiB. An index of a smaller source uses its filter
 * from the first lookup: building it costs little next to the scan, and heavily edited
 * 1 MB documents were 10% slower without it.
 */
const LAZY_FILTER_SOURCE = 4 * 1024 * 1024
/** A verified match this long ends the walk along a chain. */
const ENOUGH = 256
/** Smallest COPY the default code table has an opcode size for (RFC 3284 section 5.6). */
export const MIN_MATCH = 4

/** bytes[at, at + 4) as one integer (the caller ensures at + 4 <= length). */
function word (bytes: Uint8Array, at: number): number {
  return bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)
}

export function log2ceil (n: number): number {
  let b = 0
  while ((1 << b) < n) b++
  return b
}

/** HASH_MUL^n (mod 2^32). */
export function power (n: number): number {
  let m = 1
  for (let j = 0; j < n; j++) m = Math.imul(m, HASH_MUL)
  return m
}

/** Native comparison of two byte ranges (memcmp), for the long stretches of a match. */
const compareRange = Buffer.prototype.compare
/**
 * Bytes a match extends byte by byte before it is compared in chunks: a native
 * call costs about as much as a hundred bytes compared one by one, and most
 * verified candidates (repeated structure in JSON: 32 to 100 bytes) end before.
 */
const BYTEWISE = 128
/** Bytes compared at a time past `BYTEWISE`. */
const CHUNK = 256

/**
 * Length of the common run of a[ai, ai + max) and b[bi, bi + max): byte by
 * byte first (most candidates stop early), then in native chunks (a match
 * of many KiB costs a few comparisons), then byte by byte in the last chunk.
 */
export function matchLength (a: Uint8Array, ai: number, b: Uint8Array, bi: number, max: number, from = 0): number {
  let f = from
  const head = Math.min(max, BYTEWISE)
  while (f < head && a[ai + f] === b[bi + f]) f++
  if (f < head) return f
  while (f + CHUNK <= max && compareRange.call(a, b, bi + f, bi + f + CHUNK, ai + f, ai + f + CHUNK) === 0) f += CHUNK
  while (f < max && a[ai + f] === b[bi + f]) f++
  return f
}

/** HASH_MUL^4: joins the hashes of 4-byte blocks. */
const MUL4 = power(4)

/** The hash of bytes[at, at + 4) (as `hashAt`, unrolled). */
function hash4 (bytes: Uint8Array, at: number): number {
  return (Math.imul((Math.imul((Math.imul(bytes[at], HASH_MUL) + bytes[at + 1]) | 0, HASH_MUL) + bytes[at + 2]) | 0, HASH_MUL) + bytes[at + 3]) | 0
}

/**
 * The hash of bytes[at, at + look), computed afresh; by 4-byte blocks when
 * they tile the look (independent blocks, a quarter of the serial steps).
 */
export function hashAt (bytes: Uint8Array, at: number, look: number): number {
  let h = 0
  if ((look & 3) === 0) {
    for (let j = at; j < at + look; j += 4) h = (Math.imul(h, MUL4) + hash4(bytes, j)) | 0
    return h
  }
  for (let j = at; j < at + look; j++) h = (Math.imul(h, HASH_MUL) + bytes[j]) | 0
  return h
}

/**
 * Rolling hashes of src[k * step, k * step + look) for every entry k. Sparse
 * entries (step >= look) are hashed afresh: fewer loads than rolling over every byte.
 * When 4 bytes tile both the step and the look, each 4-byte block is hashed
 * once and an entry joins its blocks (H(ab) = H(a) * HASH_MUL^|b| + H(b)): about
 * one multiplication a byte, a third of rolling.
 */
export function entryHashes (src: Uint8Array, look: number, step: number): Int32Array {
  const hashes = new Int32Array(Math.floor((src.length - look) / step) + 1)
  if (step % 4 === 0 && look % 4 === 0 && look <= 16) {
    const mul = MUL4
    const n = look / 4
    if (step >= look) {
      for (let k = 0, p = 0; k < hashes.length; k++, p += step) {
        let h = hash4(src, p)
        for (let j = 1; j < n; j++) h = (Math.imul(h, mul) + hash4(src, p + 4 * j)) | 0
        hashes[k] = h
      }
      return hashes
    }
    if (step === 4 && n === 2) {
      // The default look every 4th byte: each block joins the entry before and the entry after it.
      let prev = hash4(src, 0)
      for (let k = 0, p = 4; k < hashes.length; k++, p += 4) {
        const next = hash4(src, p)
        hashes[k] = (Math.imul(prev, mul) + next) | 0
        prev = next
      }
      return hashes
    }
    // Entries overlap: hash every block once.
    const blocks = new Int32Array((hashes.length - 1) * step / 4 + n)
    for (let b = 0; b < blocks.length; b++) blocks[b] = hash4(src, 4 * b)
    const stride = step / 4
    for (let k = 0, b = 0; k < hashes.length; k++, b += stride) {
      let h = blocks[b]
      for (let j = 1; j < n; j++) h = (Math.imul(h, mul) + blocks[b + j]) | 0
      hashes[k] = h
    }
    return hashes
  }
  if (step >= look) {
    for (let k = 0, p = 0; k < hashes.length; k++, p += step) hashes[k] = hashAt(src, p, look)
    return hashes
  }
  const outMul = power(look - 1)
  let h = hashAt(src, 0, look)
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
 * so a long index costs no pass over the source.
 */
export function joinHashes (short: Int32Array, step: number, look: number, n: number, longStep: number, srcLen: number): Int32Array {
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
 * The best candidate so far at one target position, owned by one scan:
 * [0] length, [1] target start, [2] address (source position, or target
 * position for a self-reference), [3] estimated bytes of its address.
 */
export type Candidate = Int32Array

export function newCandidate (): Candidate {
  return new Int32Array(4)
}

/**
 * Estimated bytes of source address `a` (RFC 3284 section 5.3): a near mode
 * when it follows `ref` (the end of the last source COPY, which the near cache
 * holds close to), else VCD_SELF.
 */
export function addressCost (a: number, ref: number): number {
  const d = a - ref
  const v = d >= 0 ? d : a
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : 4
}

/** The two bits of mixed hash `f` in its filter word: the 10 bits below the word index (`shift` >= 13). */
function filterMask (f: number, shift: number): number {
  return (1 << ((f >>> (shift - 5)) & 31)) | (1 << ((f >>> (shift - 10)) & 31))
}

/**
 * Chained hash index of src[k * step, k * step + look) for every entry k.
 * open-vcdiff hashes aligned blocks (step = look); xdelta3 samples its source
 * checksum more finely. Any source match of at least look + step - 1 bytes is
 * found.
 */
export class SourceIndex {
  readonly shift: number
  readonly head: Int32Array
  /**
   * Per entry, the next entry of its chain (4 bytes an entry: a dense index
   * stays small). Entries of other hashes sharing a bucket are told apart by
   * their first 4 source bytes, compared with the target's as one integer.
   */
  readonly chain: Int32Array
  /** HASH_MUL^(look-1), to roll the oldest byte out. */
  readonly outMul: number
  /**
   * A blocked Bloom filter of 8 bits an entry (at most 2 MiB): each hash sets two
   * bits of one 32-bit word, so a test reads one word and lets about 1 absent hash
   * in 20 through (one bit alone: 1 in 8). Most absent hashes are rejected without
   * touching the head table or the chains, which do not fit in cache for large sources.
   * Built on first use (see `HashCursor`): for a target that needs few lookups
   * (a few edits in a large document) building it costs more than it saves.
   */
  private bloom: Int32Array | null = null
  /** The entries' hashes, kept until the filter is built from them (when they cannot be computed again: no `rehash`). */
  private hashes: Int32Array | null
  /** 32 less the bits of the filter's word index. */
  readonly filterShift: number

  /**
   * `hashes[k]`: the rolling hash of src[start + k * step, start + k * step + look), from
   * `entryHashes` or `joinHashes` of src.subarray(start). An index of part of the source
   * (`start` > 0, fewer entries) still verifies and extends its matches over the whole source.
   * `rehash` computes the same hashes again, for the filter: the index then does not keep them.
   */
  constructor (
    readonly src: Uint8Array, readonly look: number, readonly step: number, readonly maxProbes: number, hashes: Int32Array,
    readonly start = 0, private readonly rehash: (() => Int32Array) | null = null
  ) {
    const entries = hashes.length
    // A head table small enough to stay in cache: building the index is
    // otherwise one cache miss per entry. Chains absorb the collisions: 1 to 2
    // entries a bucket (the largest power of 2 not above the entries).
    const bits = Math.min(Math.max(log2ceil(entries + 1) - 1, 0), MAX_TABLE_BITS)
    this.head = new Int32Array(1 << bits).fill(-1)
    this.chain = new Int32Array(entries)
    this.shift = 32 - bits
    this.outMul = power(look - 1)
    const filterBits = Math.min(Math.max(log2ceil(entries) + 3, FILTER_MIN_BITS), FILTER_BITS)
    this.filterShift = 32 - (filterBits - 5)
    this.hashes = rehash === null ? hashes : null
    const { head, chain, shift } = this
    // Entries go in from the front; chains list the latest position first.
    for (let k = 0; k < entries; k++) {
      const b = Math.imul(hashes[k], MIX) >>> shift
      chain[k] = head[b]
      head[b] = k
    }
  }

  /** The filter, built on first use. */
  get filter (): Int32Array {
    if (this.bloom === null) {
      const hashes = this.hashes ?? (this.rehash as () => Int32Array)()
      const filterShift = this.filterShift
      const filter = new Int32Array(1 << (32 - filterShift))
      for (let k = 0; k < hashes.length; k++) {
        const f = Math.imul(hashes[k], FILTER_MIX)
        filter[f >>> filterShift] |= filterMask(f, filterShift)
      }
      this.bloom = filter
      this.hashes = null
    }
    return this.bloom
  }

  /** Bytes held by the tables (not counting the source): the filter once built, the hashes kept for it until then. */
  get byteLength (): number {
    return this.head.byteLength + this.chain.byteLength + (this.bloom?.byteLength ?? this.hashes?.byteLength ?? 0)
  }

  /** Whether the filter lets hash `h` through (false: no entry has it). */
  mayHold (h: number): boolean {
    const f = Math.imul(h, FILTER_MIX)
    const mask = filterMask(f, this.filterShift)
    return ((this.bloom ?? this.filter)[f >>> this.filterShift] & mask) === mask
  }
}

/**
 * One scan of one target against a `SourceIndex`: the hash rolled along the
 * target, and lookups that keep the longest verified match in a `Candidate`.
 */
export class HashCursor {
  /** Rolling hash of target[at, at + look). */
  h = 0
  at = -1
  /** Candidates compared with the target so far (work done, for tests and tuning). */
  verified = 0
  /**
   * Hashes looked up so far without the filter. The filter is used from the
   * `filterAfter`-th on (built then, if no earlier scan built it): a scan that looks
   * up few positions (a few edits in a large document) does not pay for building
   * it. The switch depends on this scan alone, so a delta does not depend on what
   * earlier encodes built. (Without the filter, an entry of another hash sharing a
   * head bucket and the first 4 bytes may be verified: a valid match all the same.)
   */
  unfiltered = 0
  readonly filterAfter: number

  constructor (readonly index: SourceIndex, readonly tgt: Uint8Array, readonly best: Candidate) {
    this.filterAfter = index.src.length > LAZY_FILTER_SOURCE ? index.chain.length >> FILTER_AFTER_SHIFT : 0
  }

  /** Whether hash `h` is to be looked up: always before `filterAfter` lookups, then as the filter says. */
  private passes (h: number): boolean {
    if (this.unfiltered < this.filterAfter) {
      this.unfiltered++
      return true
    }
    return this.index.mayHold(h)
  }

  /**
   * Look up target[i, i + look) and keep in `best` the verified match, extended
   * forwards (up to `we`) and backwards (down to `floor`), that saves the most:
   * its length less the estimated cost of its address near `ref` (see
   * `addressCost`). Returns whether `best` changed. `skip` is a source position
   * already tried.
   */
  lookup (i: number, we: number, floor: number, skip: number, maxProbes: number, ref = 0): boolean {
    const { index, tgt, best } = this
    if (this.at !== i) {
      // A short way on (after a short match): rolling reads 2 bytes a step, hashing afresh `look`.
      if (this.at >= 0 && this.at < i && 2 * (i - this.at) < index.look) {
        const outMul = index.outMul
        const look = index.look
        let h = this.h
        for (let j = this.at; j < i; j++) h = (Math.imul(h - Math.imul(tgt[j], outMul), HASH_MUL) + tgt[j + look]) | 0
        this.h = h
      } else {
        this.h = hashAt(tgt, i, index.look)
      }
      this.at = i
    }
    const h = this.h
    if (!this.passes(h)) return false
    const src = index.src
    const chain = index.chain
    const step = index.step
    const start = index.start
    const srcLen = src.length
    let k = index.head[Math.imul(h, MIX) >>> index.shift]
    let probes = maxProbes
    let links = probes * LINKS_PER_PROBE
    let changed = false
    // The first 4 bytes as one integer: most candidates that do not match differ there.
    const x = word(tgt, i)
    const max0 = we - i
    while (k >= 0 && links-- > 0) {
      const sp = start + k * step
      k = chain[k]
      if (sp === skip || word(src, sp) !== x) continue
      this.verified++
      const f = matchLength(tgt, i, src, sp, Math.min(max0, srcLen - sp), 4)
      if (f >= MIN_MATCH) {
        let b = 0
        while (i - b > floor && sp - b > 0 && tgt[i - b - 1] === src[sp - b - 1]) b++
        const cost = addressCost(sp - b, ref)
        if (f + b - cost > best[0] - best[3]) {
          best[0] = f + b
          best[1] = i - b
          best[2] = sp - b
          best[3] = cost
          changed = true
          // Long enough that another candidate could save at most its address bytes.
          if (f >= ENOUGH) break
        }
      }
      if (--probes === 0) break
    }
    return changed
  }

  /**
   * The first position in (j, end) whose hash the filter lets through, with the
   * hash rolled there; `end` when there is none. Cheaper than a lookup at every
   * position where most are absent (the caller ensures end - 1 + look <= target length).
   */
  nextPass (j: number, end: number): number {
    if (j + 1 >= end) return end
    const { index, tgt } = this
    const look = index.look
    const outMul = index.outMul
    let h = this.at === j ? this.h : hashAt(tgt, j, look)
    let pass = false
    while (!pass && j + 1 < end) {
      h = (Math.imul(h - Math.imul(tgt[j], outMul), HASH_MUL) + tgt[j + look]) | 0
      j++
      pass = this.passes(h)
    }
    this.h = h
    this.at = j
    return pass ? j : end
  }

  /** Move the hash from position i to i + 1 (when it is at i and i + look < we). */
  roll (i: number, we: number): void {
    const look = this.index.look
    if (this.at === i && i + look < we) {
      const tgt = this.tgt
      this.h = (Math.imul(this.h - Math.imul(tgt[i], this.index.outMul), HASH_MUL) + tgt[i + look]) | 0
      this.at = i + 1
    }
  }
}
