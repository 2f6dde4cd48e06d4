/**
 * The match search of one encode: scans target windows and records COPY
 * candidates (RFC 3284 section 3: a COPY addresses the source segment or the
 * target window already decoded, in one address space). Bytes not covered by
 * a match become ADDs when the window is written.
 *
 * Per position, in order: the diagonal of the previous source match, the
 * long then the short source index, earlier target bytes (a 4-byte hash, the
 * xdelta3 small-match idea). A short match is compared with the match one
 * byte later (lazy matching, as in deflate), then the long index is probed
 * inside it so that it cannot hide a long one; a long match found there
 * replaces it only if the head it leaves pays for its own COPY or the gain
 * outweighs the ADD it creates. All state lives in the `Matcher`, one per
 * encode: encodes are re-entrant and may share a `SourceIndex`.
 */
import { HashCursor, MIN_MATCH, MIX, addressCost, log2ceil, matchLength, newCandidate, type SourceIndex } from './block-hash'
import { varintSize } from './varint'
import type { Matches } from './window-writer'

/** Longest match that stops the search for others at a position. */
const LONG_ENOUGH = 64
/** How far before the end of the previous match a long match may reach back. */
const REACH_BACK = 64
/** Candidates examined per position probed inside a short match. */
const LOOKAHEAD_PROBES = 1
/** Matches shorter than this are compared with the match one byte later (lazy matching). */
const LAZY_BELOW = 36
/** Positions a match may be deferred by, one byte each (lazy matching). */
const MAX_LAZY = 4
/**
 * Shorter matches are not searched for a long match starting inside them: the
 * scan resumes a few bytes on, where the long match still runs and is found and
 * extended back over them (a COPY may overlap the ones before it only so).
 */
const AHEAD_MIN = 8
/** Bytes a long match found inside a short one must add to replace it. */
const LOOKAHEAD_GAIN = 8
/** Target bytes between two checks of the running size estimate (giving up early). */
const CHECK_EVERY = 16 * 1024

/**
 * Gives up when, after at least this share of a window (and `MIN_PROBE_BYTES`),
 * the estimated delta extrapolated over the window reaches the size limit.
 */
const GIVE_UP_SHARE = 1 / 8
const MIN_PROBE_BYTES = 32 * 1024

/** Bytes of a match [start, start + len) after `pend` (what an earlier match has not covered), unless it is long enough to cut back earlier matches. */
function covered (len: number, start: number, pend: number): number {
  return start < pend && len < LONG_ENOUGH ? len - (pend - start) : len
}

export class Matcher {
  private readonly best = newCandidate()
  private readonly long: HashCursor | null
  private readonly short: HashCursor | null
  private readonly tTable: Int32Array
  private readonly tShift: number
  /** Estimated bytes of the delta so far (window headers not counted), for giving up early. */
  estimate = 0

  /** Positions a match may be deferred by: MAX_LAZY, 0 without lazy matching. */
  private readonly maxLazy: number

  /**
   * `limit`: give up (`scan` returns false) once the delta is estimated to reach
   * this many bytes; Infinity never gives up. `lazy`: false for the fast level.
   */
  constructor (
    readonly src: Uint8Array, readonly tgt: Uint8Array, long: SourceIndex | null, short: SourceIndex | null,
    readonly targetMatches: boolean, windowSize: number, readonly limit: number, lazy = true
  ) {
    this.maxLazy = lazy ? MAX_LAZY : 0
    this.long = long === null ? null : new HashCursor(long, tgt, this.best)
    this.short = short === null ? null : new HashCursor(short, tgt, this.best)
    const tBits = Math.min(Math.max(log2ceil(Math.min(tgt.length, windowSize)), 10), 16)
    this.tTable = new Int32Array(1 << tBits).fill(-1)
    this.tShift = 32 - tBits
  }

  /**
   * Scan target[from, to) of the window that starts at `ws` and record COPY
   * candidates into `m`: matches stay inside [from, to) (the bytes around it are
   * covered otherwise), self-references may address the window from `ws` on.
   * Returns false when it gave up: the delta would not come under `limit`.
   */
  scan (from: number, to: number, m: Matches, ws = from): boolean {
    const { best, long, short } = this
    const longLast = long !== null ? to - long.index.look : -1
    const { limit, maxLazy } = this
    const startEstimate = this.estimate
    let estimate = startEstimate
    let nextCheck = limit === Infinity ? 0x7fffffff : from + CHECK_EVERY

    let i = from
    let pend = from
    // Matches ending after `keep` may be cut back by a longer source match that
    // extends backwards over them (xdelta3 erases instructions the same way).
    let keep = from
    // Source position minus target position of the last source match: the diagonal to try first.
    let diag = 0
    // The diagonal of the last source match of at least LONG_ENOUGH bytes.
    let mainDiag = 0
    let lastSrcEnd = 0
    while (i <= to - MIN_MATCH) {
      if (i >= nextCheck) {
        // ADD bytes since the last match count in full; each COPY about its address and opcode.
        const sofar = estimate + (i - pend)
        const done = i - from
        if (sofar >= limit || (done >= MIN_PROBE_BYTES && done >= (to - from) * GIVE_UP_SHARE &&
            sofar - startEstimate + (sofar - startEstimate) / done * (to - i) + startEstimate >= limit)) {
          this.estimate = sofar
          return false
        }
        nextCheck = i + CHECK_EVERY
      }
      const floor = Math.max(keep, pend - REACH_BACK)
      let bestSrc = this.probe(i, ws, to, floor, diag, mainDiag, lastSrcEnd)
      // Lazy matching: a short match may start one byte later and save more
      // (its length less its address cost, once trimmed to what is not yet covered).
      for (let lazy = 0; lazy < maxLazy && best[0] >= MIN_MATCH && best[0] < LAZY_BELOW && i + 1 <= to - MIN_MATCH; lazy++) {
        const b0 = best[0]
        const b1 = best[1]
        const b2 = best[2]
        const b3 = best[3]
        const gain = covered(b0, b1, pend) - b3
        if (gain < 3) break
        const s = this.probe(i + 1, ws, to, floor, diag, mainDiag, lastSrcEnd)
        if (best[0] >= MIN_MATCH && covered(best[0], best[1], pend) - best[3] > gain) {
          bestSrc = s
          i++
          continue
        }
        best[0] = b0
        best[1] = b1
        best[2] = b2
        best[3] = b3
        break
      }
      let bestCost = best[3]

      // 4. A short match must not hide a long one on another diagonal: the long
      // index is sampled, so probe it at every position the short match covers.
      if (best[0] >= AHEAD_MIN && best[0] < LONG_ENOUGH && long !== null) {
        const end = Math.min(best[1] + best[0], longLast + 1)
        const b0 = best[0]
        const b1 = best[1]
        const b2 = best[2]
        const b3 = best[3]
        const probes = Math.min(LOOKAHEAD_PROBES, long.index.maxProbes)
        for (let j = long.nextPass(i, end); j < end; j = long.nextPass(j, end)) {
          if (long.lookup(j, to, floor, -1, probes, lastSrcEnd)) {
            // The short match keeps the bytes before the long one (from `pend` on), if they pay for a COPY;
            // a long match that would leave them to an ADD must gain that much more.
            const ps = Math.max(b1, pend)
            const prefix = best[1] - ps
            const keepPrefix = prefix >= MIN_MATCH && prefix >= bestCost + 3
            if (best[0] >= b0 + LOOKAHEAD_GAIN + (keepPrefix || prefix <= 0 ? 0 : LOOKAHEAD_GAIN * prefix)) {
              if (keepPrefix) {
                m.push(ps, best[1] - ps, b2 + ps - b1, bestSrc)
                estimate += (ps - pend) + 1 + bestCost
                pend = best[1]
              }
              bestSrc = 1
              bestCost = best[3]
              break
            }
            best[0] = b0
            best[1] = b1
            best[2] = b2
            best[3] = b3
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
        } else {
          estimate += start - pend
        }
        m.push(start, len, best[2], bestSrc)
        estimate += 1 + bestCost
        if (len >= LONG_ENOUGH) keep = start + len
        i = start + len
        pend = i
        if (bestSrc === 1) {
          diag = best[2] - start
          lastSrcEnd = best[2] + len
          if (len >= LONG_ENOUGH) mainDiag = diag
        }
        continue
      }
      // No match here: roll the hashes one byte on.
      if (long !== null) long.roll(i, to)
      if (short !== null) short.roll(i, to)
      i++
    }
    this.estimate = estimate + (to - pend)
    return this.estimate < limit
  }

  /**
   * The best match at target position i into `best` (length, start, address,
   * address cost), extended backwards down to `floor`. Returns 1 for a source
   * match, 0 for a match in the target (or none: best[0] = 0).
   */
  private probe (i: number, ws: number, we: number, floor: number, diag: number, mainDiag: number, lastSrcEnd: number): number {
    const { src, tgt, best, long, short } = this
    const srcLen = src.length
    const longLast = long !== null ? we - long.index.look : -1
    const shortLast = short !== null ? we - short.index.look : -1
    const useTarget = this.targetMatches
    best[0] = 0
    best[3] = 0
    let bestSrc = 0
    let bestCost = 0

    // 1. The diagonal of the previous source match (an edit usually leaves it intact), then
    // that of the last long one: a short match from elsewhere must not lose the document's alignment.
    const sp = i + diag
    for (let k = 0, q = sp; k < 2; k++, q = i + mainDiag) {
      if (k === 1 && (mainDiag === diag || best[0] >= LONG_ENOUGH)) break
      if (q >= 0 && q < srcLen && src[q] === tgt[i]) {
        const f = matchLength(tgt, i, src, q, Math.min(we - i, srcLen - q), 1)
        if (f >= MIN_MATCH) {
          let b = 0
          while (i - b > floor && q - b > 0 && tgt[i - b - 1] === src[q - b - 1]) b++
          if (f + b > best[0]) {
            best[0] = f + b
            best[1] = i - b
            best[2] = q - b
            best[3] = addressCost(q - b, lastSrcEnd)
            bestSrc = 1
          }
        }
      }
    }

    // 2. The source hash indexes, long look first.
    if (i <= longLast && best[0] < LONG_ENOUGH && (long as HashCursor).lookup(i, we, floor, sp, (long as HashCursor).index.maxProbes, lastSrcEnd)) bestSrc = 1
    if (i <= shortLast && best[0] < LONG_ENOUGH && (short as HashCursor).lookup(i, we, floor, sp, (short as HashCursor).index.maxProbes, lastSrcEnd)) bestSrc = 1
    if (bestSrc === 1) bestCost = best[3]

    // 3. Earlier target bytes (a self-referencing COPY, RFC 3284 section 3).
    if (useTarget && this.probeTarget(i, ws, we, floor, bestCost)) bestSrc = 0

    return bestSrc
  }

  /**
   * Step 3 of `probe`: the earlier target byte with the same 4-byte hash as position i (a
   * self-referencing COPY, RFC 3284 section 3), extended backwards down to `floor`; into
   * `best` when it saves more than the match there (`bestCost` its address cost). True when
   * it replaced it.
   */
  private probeTarget (i: number, ws: number, we: number, floor: number, bestCost: number): boolean {
    const { tgt, best, tTable, tShift } = this
    const x = tgt[i] | (tgt[i + 1] << 8) | (tgt[i + 2] << 16) | (tgt[i + 3] << 24)
    const tb = Math.imul(x, MIX) >>> tShift
    const c = tTable[tb]
    tTable[tb] = i
    if (c < ws || c >= i || best[0] >= LONG_ENOUGH) return false
    const f = matchLength(tgt, i, tgt, c, we - i)
    if (f < MIN_MATCH) return false
    let b = 0
    while (i - b > floor && c - b > ws && tgt[i - b - 1] === tgt[c - b - 1]) b++
    const cost = varintSize(i - c)
    if (f + b - cost <= best[0] - bestCost) return false
    best[0] = f + b
    best[1] = i - b
    best[2] = c - b
    best[3] = cost
    return true
  }
}
