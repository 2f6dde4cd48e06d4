/**
 * The RFC 3284 default instruction code table (section 5.6) and the lookups the
 * encoder derives from it once, at module load.
 *
 * Each of the 256 entries holds two halves (type, size, mode); a half with type
 * NOOP is absent. A size of 0 means the size follows as an integer in the
 * instruction section (RFC 3284 section 5.4).
 */

/** RFC 3284 section 5.4: instruction types. */
export const NOOP = 0
export const ADD = 1
export const RUN = 2
export const COPY = 3

/** RFC 3284 section 5.1: default cache sizes. */
export const S_NEAR = 4
export const S_SAME = 3
/** Number of address modes: VCD_SELF, VCD_HERE, s_near near modes, s_same same modes. */
const MODES = 2 + S_NEAR + S_SAME

export interface CodeTable {
  type1: Uint8Array
  size1: Uint8Array
  mode1: Uint8Array
  type2: Uint8Array
  size2: Uint8Array
  mode2: Uint8Array
}

function buildDefaultCodeTable (): CodeTable {
  const t: CodeTable = {
    type1: new Uint8Array(256),
    size1: new Uint8Array(256),
    mode1: new Uint8Array(256),
    type2: new Uint8Array(256),
    size2: new Uint8Array(256),
    mode2: new Uint8Array(256)
  }
  let i = 0
  // RFC 3284 section 5.6, index 0: RUN, size 0.
  t.type1[i++] = RUN
  // Indexes 1-18: ADD, sizes 0, 1..17.
  for (let size = 0; size <= 17; size++) {
    t.type1[i] = ADD
    t.size1[i++] = size
  }
  // Indexes 19-162: COPY, modes 0..8, sizes 0, 4..18.
  for (let mode = 0; mode < MODES; mode++) {
    for (let size = 0; size <= 18; size = size === 0 ? 4 : size + 1) {
      t.type1[i] = COPY
      t.size1[i] = size
      t.mode1[i++] = mode
    }
  }
  // Indexes 163-234: ADD sizes 1..4 then COPY sizes 4..6, modes 0..5.
  // Indexes 235-246: ADD sizes 1..4 then COPY size 4, modes 6..8.
  for (let mode = 0; mode < MODES; mode++) {
    const maxCopy = mode < 6 ? 6 : 4
    for (let addSize = 1; addSize <= 4; addSize++) {
      for (let copySize = 4; copySize <= maxCopy; copySize++) {
        t.type1[i] = ADD
        t.size1[i] = addSize
        t.type2[i] = COPY
        t.size2[i] = copySize
        t.mode2[i++] = mode
      }
    }
  }
  // Indexes 247-255: COPY size 4 then ADD size 1, modes 0..8.
  for (let mode = 0; mode < MODES; mode++) {
    t.type1[i] = COPY
    t.size1[i] = 4
    t.mode1[i] = mode
    t.type2[i] = ADD
    t.size2[i++] = 1
  }
  /* c8 ignore next */
  if (i !== 256) throw new Error('default code table does not have 256 entries')
  return t
}

export const DEFAULT_CODE_TABLE: Readonly<CodeTable> = buildDefaultCodeTable()

/** Largest ADD size with a single-instruction opcode of its own. */
export const MAX_ADD_SIZE = 17
/** Largest COPY size with a single-instruction opcode of its own. */
export const MAX_COPY_SIZE = 18
/** Largest ADD size that can open a paired opcode. */
export const MAX_PAIR_ADD = 4

/**
 * Encoder lookups, inverted from the table above (never hand-numbered):
 * - ADD_OP[size], size 0..17: the single ADD opcode (size 0: size follows).
 * - COPY_OP[mode * 19 + size], size 0..18: the single COPY opcode or -1.
 * - ADD_COPY_OP[(mode * 5 + addSize) * 19 + copySize]: the paired ADD+COPY opcode or -1.
 * - COPY_ADD_OP[(mode * 19 + copySize) * 5 + addSize]: the paired COPY+ADD opcode or -1.
 */
export const ADD_OP = new Int16Array(MAX_ADD_SIZE + 1).fill(-1)
export const COPY_OP = new Int16Array(MODES * 19).fill(-1)
export const ADD_COPY_OP = new Int16Array(MODES * 5 * 19).fill(-1)
export const COPY_ADD_OP = new Int16Array(MODES * 19 * 5).fill(-1)
/** The RUN opcode (size always follows). */
export let RUN_OP = -1

{
  const t = DEFAULT_CODE_TABLE
  for (let op = 0; op < 256; op++) {
    if (t.type2[op] === NOOP) {
      if (t.type1[op] === ADD) ADD_OP[t.size1[op]] = op
      else if (t.type1[op] === COPY) COPY_OP[t.mode1[op] * 19 + t.size1[op]] = op
      else RUN_OP = op
    } else if (t.type1[op] === ADD) {
      ADD_COPY_OP[(t.mode2[op] * 5 + t.size1[op]) * 19 + t.size2[op]] = op
    } else {
      COPY_ADD_OP[(t.mode1[op] * 19 + t.size1[op]) * 5 + t.size2[op]] = op
    }
  }
}
