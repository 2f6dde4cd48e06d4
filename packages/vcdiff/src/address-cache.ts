/**
 * RFC 3284 section 5.1-5.3: the address caches of the encoder, and the choice
 * of the address mode with the shortest encoding for each COPY.
 *
 * Modes: 0 VCD_SELF (the address itself), 1 VCD_HERE (here minus the
 * address), 2 .. 2 + s_near - 1 near modes (the address minus a recent
 * address), then s_same same modes (one byte: the address is in the same
 * cache, at bucket address mod (s_same * 256)). Default sizes: s_near = 4,
 * s_same = 3 (section 5.1).
 */
import { S_NEAR, S_SAME } from './code-table'
import { varintSize } from './varint'

const SAME_SIZE = S_SAME * 256

export class AddressCache {
  readonly near = new Int32Array(S_NEAR)
  readonly same = new Int32Array(SAME_SIZE)
  nextSlot = 0
  /** The mode and the value to write, set by `encode`. */
  mode = 0
  value = 0

  /** RFC 3284 section 5.1: both caches start zeroed in every window. */
  reset (): void {
    this.near.fill(0)
    this.same.fill(0)
    this.nextSlot = 0
  }

  /**
   * Picks the mode with the shortest encoding of address `a` at position
   * `here` (section 5.3) into `mode` and `value`, then updates the caches as
   * the decoder will (section 5.1). Returns the bytes the value takes.
   */
  encode (a: number, here: number): number {
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
      size = 1
    }
    this.update(a)
    this.mode = mode
    this.value = value
    return size
  }

  /** Bytes the best mode would take for `a` at `here`, the caches left as they are. */
  cost (a: number, here: number): number {
    let size = Math.min(varintSize(a), varintSize(here - a))
    if (size === 1) return 1
    if (this.same[a % SAME_SIZE] === a) return 1
    for (let j = 0; j < S_NEAR; j++) {
      const d = a - this.near[j]
      if (d >= 0) size = Math.min(size, varintSize(d))
    }
    return size
  }

  /** RFC 3284 section 5.1: the update after every COPY. */
  update (a: number): void {
    this.near[this.nextSlot] = a
    this.nextSlot = (this.nextSlot + 1) % S_NEAR
    this.same[a % SAME_SIZE] = a
  }
}

/** True when `mode` writes its value as one byte rather than an integer (a same mode, section 5.3). */
export function isSameMode (mode: number): boolean {
  return mode >= 2 + S_NEAR
}
