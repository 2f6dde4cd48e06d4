/**
 * XML bodies (docs/conventions.md (Content-Type): application/xml): plain documents read in one
 * pass (readXmlQuickly), the others through fast-xml-parser into the same tree, with the tricks XML
 * allows refused: no DOCTYPE, hence no entity declarations, expansion bombs or
 * external entities; only the five predefined entities and character references.
 * Conversion to and from JSON is schema-driven so `<published>true</published>` becomes
 * a boolean and `<tags><tag>a</tag></tags>` an array.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { malformedBody, unsupportedMediaType, type ConventionError } from './errors'

/** The parts of a JSON Schema the XML mapping reads: types, properties, items and `xml.name`. */
export interface JsonSchemaLike {
  type?: string | string[]
  properties?: Record<string, JsonSchemaLike>
  items?: JsonSchemaLike
  xml?: { name?: string }
  [k: string]: unknown
}

export class XmlSyntaxError extends Error {
  override name = 'XmlSyntaxError'
}

/** The body names an encoding (charset parameter or encoding declaration) this module does not decode. */
export class XmlEncodingError extends XmlSyntaxError {
  override name = 'XmlEncodingError'
}

/** Bounds of an XML body: depth and number of elements. */
export interface XmlParseOptions {
  /** Deepest element nesting accepted (default 64; the root element is depth 1). */
  maxDepth?: number
  /**
   * Most elements accepted (default 10,000): more is a 400 before the tree is built.
   * Building a tree costs far more per element than the checks (a 1 MiB body of `<x/>`,
   * 262,000 elements, takes fast-xml-parser some 300 ms; the checks, 5 ms).
   */
  maxElements?: number
}

const DEFAULT_XML_MAX_DEPTH = 64
export const DEFAULT_XML_MAX_ELEMENTS = 10_000

/**
 * What parsing needs, checked and built once: the bounds and a parser made for them. The
 * content-type plugin makes one per registration (xmlReader), so no parser or bound is
 * shared between apps; the helpers make one per call from their options.
 */
export interface XmlReader {
  readonly maxDepth: number
  readonly maxElements: number
  readonly parser: XMLParser
}

/** An XmlReader for `options`; throws RangeError for a bound that is not a positive integer. */
export function xmlReader (options?: XmlParseOptions): XmlReader {
  const maxDepth = depthOf(options)
  return { maxDepth, maxElements: elementsOf(options), parser: parserFor(maxDepth) }
}

function parserFor (maxDepth: number): XMLParser {
  return new XMLParser({
    ignoreAttributes: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    // References are decoded by decodeReferences, one pass over each text value: the
    // parser's own decoding runs one regular expression per entity it knows over every
    // value (some 200 ms for 1 MiB of `&amp;`). Named entities other than the five
    // predefined ones never reach the parser (checkMarkup refuses them).
    processEntities: false,
    htmlEntities: false,
    // A second bound behind checkMarkup's.
    maxNestedTags: maxDepth + 1
  })
}

/** XML 1.0 2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]. */
function isXmlChar (cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff)
}

/** Code units that are never XML 1.0 characters (XML 1.0 2.2); surrogates are checked as pairs apart. */
// eslint-disable-next-line no-control-regex -- these control characters are exactly what is refused
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/
// eslint-disable-next-line no-control-regex -- likewise, replaced on output
const NOT_XML_CHAR_GLOBAL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

function hex (cp: number): string {
  return 'U+' + cp.toString(16).toUpperCase().padStart(4, '0')
}

/** XML 1.0 4.6: the predefined entities, the only ones a document without a DTD may use. */
const PREDEFINED = new Set(['lt', 'gt', 'amp', 'apos', 'quot'])

/** A counter of the characters a pass examined, for tests that bound the work per byte of input. */
export interface WorkCounter { steps: number }

/** The longest reference read (XML 1.0 4.1: "&#1114111;", the longest legal one, is 10 characters long). */
const LONGEST_REFERENCE = 12

/**
 * XML 1.0 4.1: CharRef ::= '&#' [0-9]+ ';' | '&#x' [0-9a-fA-F]+ ';', to a legal character
 * (WFC: Legal Character), at `amp` and ending before `to`, of at most 7 decimal or 6
 * hexadecimal digits (the longest that can name a character): its code point times 16 plus
 * its length (at most 10), or -1 when there is none.
 */
function characterReferenceAt (text: string, amp: number, to: number): number {
  const hexadecimal = text.charCodeAt(amp + 2) === 0x78
  const base = hexadecimal ? 16 : 10
  const first = amp + (hexadecimal ? 3 : 2)
  const last = Math.min(to, first + (hexadecimal ? 6 : 7))
  let cp = 0
  let k = first
  for (; k < last; k++) {
    const c = text.charCodeAt(k)
    const lower = c | 0x20
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : hexadecimal && lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1
    if (digit < 0) break
    cp = cp * base + digit
  }
  return k > first && k < to && text.charCodeAt(k) === 0x3b && isXmlChar(cp) ? cp * 16 + k + 1 - amp : -1
}

function checkReference (text: string, amp: number, to: number): void {
  // Most references are the predefined entities or character references: recognised in
  // place, without making a string; anything else is checked again below for its message.
  const first = text.charCodeAt(amp + 1)
  if (first === 0x23) {
    if (characterReferenceAt(text, amp, to) >= 0) return
  } else {
    const ref = first === 0x61 ? (text.charCodeAt(amp + 2) === 0x6d ? '&amp;' : '&apos;') : first === 0x6c ? '&lt;' : first === 0x67 ? '&gt;' : '&quot;'
    if (amp + ref.length <= to && text.startsWith(ref, amp)) return
  }
  const last = Math.min(to, amp + LONGEST_REFERENCE + 1)
  let semi = amp + 1
  while (semi < last && text.charCodeAt(semi) !== 0x3b) semi++
  if (semi >= last) throw new XmlSyntaxError('XML body is not well-formed: "&" must start a reference ending with ";" (XML 1.0 4.1)')
  const ref = text.slice(amp + 1, semi)
  if (ref.charCodeAt(0) === 0x23) {
    const cp = /^#x[0-9a-fA-F]{1,6}$/.test(ref) ? parseInt(ref.slice(2), 16) : /^#[0-9]{1,7}$/.test(ref) ? parseInt(ref.slice(1), 10) : -1
    if (cp < 0) throw new XmlSyntaxError(`XML body is not well-formed: "&${ref};" is not a character reference (XML 1.0 4.1)`)
    if (!isXmlChar(cp)) throw new XmlSyntaxError(`XML body refers to ${hex(cp)}, which is not an XML 1.0 character (XML 1.0 2.2, 4.1)`)
  } else if (!PREDEFINED.has(ref)) {
    throw new XmlSyntaxError(`XML body uses the entity "&${ref};", which is not declared (XML 1.0 4.1: only lt, gt, amp, apos and quot without a DTD)`)
  }
}

/**
 * The references of a document, checked in one forward pass: `check(from, to)` checks
 * every "&" in [from, to). The position of the next "&" is kept, and searched for again
 * only once the ranges have passed it, so the searches together pass over the text once
 * whatever the number of tags, comments and processing instructions between references.
 */
function referenceChecker (text: string): { check: (from: number, to: number) => void, steps: () => number } {
  const n = text.length
  let next = -1
  let steps = 0
  function check (from: number, to: number): void {
    for (;;) {
      if (next < from) {
        next = text.indexOf('&', from)
        if (next === -1) next = n
        steps += next - from
      }
      if (next >= to) return
      checkReference(text, next, to)
      steps += LONGEST_REFERENCE
      from = next + 1
    }
  }
  return { check, steps: () => steps }
}

/**
 * One linear pass over the document, before the validator and the parser see it:
 * refuses characters outside XML 1.0 2.2, markup declarations (no DOCTYPE, hence no
 * entity expansion or external entities), references to undeclared entities or illegal
 * characters, element nesting deeper than `maxDepth`, and more than `maxElements` elements
 * (default 10,000). Comments, CDATA sections and
 * processing instructions are skipped whole; syntax proper is left to the validator.
 * Every search starts where the previous one of its kind ended (`work` counts the
 * characters examined). `cdata`, when given, receives the start and end offsets of the
 * content of every CDATA section (XML 1.0 2.7), in pairs, in document order.
 */
export function checkMarkup (text: string, maxDepth: number, work?: WorkCounter, maxElements = DEFAULT_XML_MAX_ELEMENTS, cdata?: number[]): void {
  const bad = NOT_XML_CHAR.exec(text)
  if (bad !== null) throw new XmlSyntaxError(`XML body contains ${hex(bad[0].charCodeAt(0))}, which is not an XML 1.0 character (XML 1.0 2.2)`)
  if (!(text as unknown as { isWellFormed: () => boolean }).isWellFormed()) throw new XmlSyntaxError('XML body contains a lone surrogate, which is not an XML 1.0 character (XML 1.0 2.2)')
  const n = text.length
  const references = referenceChecker(text)
  // The two native passes above examined every character.
  let steps = 2 * n
  let depth = 0
  let elements = 0
  let i = 0
  try {
    for (;;) {
      let lt = text.indexOf('<', i)
      if (lt === -1) lt = n
      steps += lt - i
      references.check(i, lt)
      if (lt === n) return
      const next = text.charCodeAt(lt + 1)
      if (next === 0x21 || next === 0x3f) {
        let close: string
        if (text.startsWith('<!--', lt)) close = '-->'
        else if (text.startsWith('<![CDATA[', lt)) close = ']]>'
        else if (next === 0x3f) close = '?>'
        else throw new XmlSyntaxError('XML body must not contain a DOCTYPE or other markup declarations')
        const end = text.indexOf(close, lt + 2)
        if (end === -1) throw new XmlSyntaxError('XML body is not well-formed: a comment, CDATA section or processing instruction is not closed')
        if (close === ']]>' && cdata !== undefined) cdata.push(lt + 9, end)
        i = end + close.length
        steps += i - lt
        continue
      }
      // A tag: up to the first ">" outside a quoted attribute value (XML 1.0 3.1).
      let j = lt + 1
      let quote = 0
      for (; j < n; j++) {
        const c = text.charCodeAt(j)
        if (quote !== 0) {
          if (c === quote) quote = 0
        } else if (c === 0x22 || c === 0x27) {
          quote = c
        } else if (c === 0x3e) {
          break
        }
      }
      steps += j - lt
      if (j >= n) throw new XmlSyntaxError('XML body is not well-formed: a tag is not closed')
      references.check(lt, j)
      if (next === 0x2f) {
        depth--
      } else {
        if (++elements > maxElements) throw new XmlSyntaxError(`XML body has more than ${maxElements} elements`)
        if (text.charCodeAt(j - 1) !== 0x2f && ++depth > maxDepth) throw new XmlSyntaxError(`XML body is nested deeper than ${maxDepth} elements`)
      }
      i = j + 1
    }
  } finally {
    if (work !== undefined) work.steps += steps + references.steps()
  }
}

function isReader (options: XmlParseOptions | XmlReader | undefined): options is XmlReader {
  return options !== undefined && 'parser' in options
}

function depthOf (options: XmlParseOptions | undefined): number {
  const max = options?.maxDepth ?? DEFAULT_XML_MAX_DEPTH
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxDepth must be a positive integer')
  return max
}

function elementsOf (options: XmlParseOptions | undefined): number {
  const max = options?.maxElements ?? DEFAULT_XML_MAX_ELEMENTS
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError('maxElements must be a positive integer')
  return max
}

const PREDEFINED_TEXT: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const REFERENCE = /&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g

/** XML 1.0 4.1 and 4.6: character references and the five predefined entities, in one pass. */
function decodeReferences (text: string): string {
  if (!text.includes('&')) return text
  return text.replace(REFERENCE, (_m, hexDigits: string | undefined, decimal: string | undefined, name: string | undefined) =>
    name !== undefined ? PREDEFINED_TEXT[name] : String.fromCodePoint(parseInt(hexDigits ?? decimal as string, hexDigits !== undefined ? 16 : 10)))
}

/**
 * CDATA sections (XML 1.0 2.7) reach the parser as marks, never as their content: a mark is
 * U+0001 and the section's number in base 16, in MARK_DIGITS digits, each a character from
 * U+0010 to U+001F: 12 characters, fewer than the shortest section that needs one (13). No
 * document that checkMarkup let through holds these characters (XML 1.0 2.2), so a mark never
 * meets the document's own text; none is white space, "<" or "&", so the parser keeps each
 * where its section was, inside the text around it, as it keeps other characters. Every mark
 * has the same length: the work per section does not grow with the number of sections.
 */
const MARK = '\u0001'
const MARK_DIGITS = 11
const FIRST_DIGIT = 0x10

function mark (n: number): string {
  let digits = ''
  for (let i = 0; i < MARK_DIGITS; i++) {
    digits = String.fromCharCode(FIRST_DIGIT + (n % 16)) + digits
    n = Math.floor(n / 16)
  }
  return MARK + digits
}

/**
 * The document with every CDATA section (its content at `sections`, offsets in pairs) put as
 * its content's leading white space, a mark, then its trailing white space, and the content
 * each mark stands for, less that white space: what the parser reads is never longer than
 * the document (a mark of 12 characters stands for a section of at least 13), in one pass
 * from left to right. The white space is written where it was so that the parser trims
 * a text value exactly as it would trim the section's characters written as text; a section
 * of white space only is written as that white space (no mark).
 */
function markCdata (text: string, sections: number[], work?: WorkCounter): { text: string, contents: string[] } {
  const contents: string[] = []
  let out = ''
  let from = 0
  let steps = 0
  for (let k = 0; k < sections.length; k += 2) {
    const start = sections[k]
    const end = sections[k + 1]
    out += text.slice(from, start - 9)
    const content = text.slice(start, end)
    // The white space the parser's trim (trimValues: String.prototype.trim) would see at either end.
    const lead = content.length - content.trimStart().length
    const core = lead === content.length ? 0 : content.trimEnd().length - lead
    // The text before the section and the section, copied or examined; its content once more
    // for the search for CR below.
    steps += end + 3 - from + content.length
    if (core === 0) {
      out += content
    } else {
      out += content.slice(0, lead) + mark(contents.length) + content.slice(lead + core)
      // XML 1.0 2.11: CR LF and a lone CR are LF, as the parser makes them in the rest of the text.
      const chars = content.slice(lead, lead + core)
      contents.push(chars.includes('\r') ? chars.replace(/\r\n?/g, '\n') : chars)
    }
    from = end + 3
  }
  if (work !== undefined) work.steps += steps + text.length - from
  return { text: out + text.slice(from), contents }
}

/**
 * A text value of the parsed tree: references decoded (decodeReferences) between marks, and
 * each mark replaced by its section's content as written. No reference spans a mark:
 * checkMarkup refuses an "&" whose ";" is not before the next "<".
 */
function decodeText (value: string, contents: string[], work?: WorkCounter): string {
  let at = contents.length === 0 ? -1 : value.indexOf(MARK)
  if (at === -1) {
    if (work !== undefined && contents.length > 0) work.steps += value.length
    return decodeReferences(value)
  }
  let out = ''
  let from = 0
  while (at !== -1) {
    out += decodeReferences(value.slice(from, at))
    let n = 0
    const j = at + 1 + MARK_DIGITS
    for (let d = at + 1; d < j; d++) n = n * 16 + value.charCodeAt(d) - FIRST_DIGIT
    const content = contents[n]
    out += content
    if (work !== undefined) work.steps += j - from + content.length
    from = j
    at = value.indexOf(MARK, from)
  }
  if (work !== undefined) work.steps += value.length - from
  return out + decodeReferences(value.slice(from))
}

/** Decodes every text value of a parsed tree (its depth is bounded by maxDepth). */
function decodeTree (node: unknown, contents: string[], work?: WorkCounter): unknown {
  if (typeof node === 'string') return decodeText(node, contents, work)
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) node[i] = decodeTree(node[i], contents, work)
  } else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>
    for (const key of Object.keys(record)) record[key] = decodeTree(record[key], contents, work)
  }
  return node
}

/**
 * The names fast-xml-parser refuses (prototype pollution) or renames (the properties of every
 * object): a document using one as an element name is read by the full path, as before.
 */
const PARSER_RESERVED = new Set(['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__'])

/** XML 1.0 2.3, ASCII only: NameStartChar less ":" (the quick reader's names; others take the full path). */
function isQuickNameStart (c: number): boolean {
  const lower = c | 0x20
  return (lower >= 0x61 && lower <= 0x7a) || c === 0x5f
}

/** XML 1.0 2.3, ASCII only: NameChar (":" included, as a namespace prefix separator). */
function isQuickNameChar (c: number): boolean {
  return isQuickNameStart(c) || (c >= 0x30 && c <= 0x3a) || c === 0x2d || c === 0x2e
}

/** XML 1.0 2.3: S. */
function isSpace (c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d
}

/** White space as String.prototype.trim sees it (ECMAScript WhiteSpace and LineTerminator): what the parser trims. */
function isTrimmed (c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0xa0 && (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff))
}

/** The XML declaration at the very start (XML 1.0 2.8), plain: pseudo-attributes of letters, quoted values without markup. */
const PLAIN_DECLARATION = /^<\?xml(?:[ \t\r\n]+(?:version|encoding|standalone)[ \t\r\n]*=[ \t\r\n]*(?:"[^"<>?&]*"|'[^'<>?&]*'))*[ \t\r\n]*\?>/

/**
 * The reference at `amp` (XML 1.0 4.1 CharRef to a legal character, 4.6 the predefined
 * entities), as its code point times 16 plus its length; -1 when it is none of these (the
 * full path then gives the refusal). The rules are checkReference's: at most 7 decimal or 6
 * hexadecimal digits.
 */
function referenceAt (text: string, amp: number): number {
  const first = text.charCodeAt(amp + 1)
  if (first === 0x23) return characterReferenceAt(text, amp, text.length)
  if (first === 0x61) {
    if (text.startsWith('amp;', amp + 1)) return 0x26 * 16 + 5
    if (text.startsWith('apos;', amp + 1)) return 0x27 * 16 + 6
  } else if (first === 0x6c) {
    if (text.startsWith('lt;', amp + 1)) return 0x3c * 16 + 4
  } else if (first === 0x67) {
    if (text.startsWith('gt;', amp + 1)) return 0x3e * 16 + 4
  } else if (first === 0x71) {
    if (text.startsWith('quot;', amp + 1)) return 0x22 * 16 + 6
  }
  return -1
}

/** Code units gathered before they are made a string: under the engine's limit on arguments, with room for a pair and a stretch. */
const CHUNK = 4096
/** Text between two references at most this long is gathered with them rather than sliced. */
const SHORT_STRETCH = 32

const TEXT_PIECE = 0
const CDATA_PIECE = 1

/** The text of an element while its document is read: its pieces, [kind, from, to] each, decoded at the end. */
class PendingText {
  readonly pieces: number[] = []
}

/**
 * The quick reader: the checks of checkMarkup and the tree fast-xml-parser builds (with the
 * options of parserFor, text values decoded as decodeTree decodes them), in one pass from
 * left to right, for the documents most bodies are: ASCII element names, attributes written
 * plainly, no processing instruction but the XML declaration at the start, one root element.
 * It returns undefined for any other document, and for every document the full path
 * refuses, before or after it has built anything: parseXml then reads it the full way, which
 * gives the same tree or the same refusal as before. The markup is found with native
 * searches, each starting where the last one ended; the text values are decoded once the
 * document has been read (a document left to the full path costs no decoding), each piece in
 * one loop, long stretches sliced and the rest gathered as code units made a string a chunk
 * at a time, never a string per reference.
 */
export function readXmlQuickly (text: string, maxDepth: number, maxElements: number, work?: WorkCounter): Record<string, unknown> | undefined {
  const reader = new QuickReader(text, maxDepth, maxElements)
  const tree = reader.read()
  if (work !== undefined) work.steps += reader.steps
  return tree
}

/** The quick reader over one document: where it is, the open elements, the text being made. */
class QuickReader {
  readonly text: string
  readonly n: number
  readonly maxDepth: number
  readonly maxElements: number
  /** The characters looked at so far (WorkCounter). */
  steps = 0
  /** Where reading goes on. */
  i = 0
  // Open elements, the document at 0: name, child elements so far, text so far (pieces, decoded at the end).
  readonly names: string[] = ['']
  readonly kids: Array<Record<string, unknown> | undefined> = [undefined]
  readonly texts: Array<PendingText | undefined> = [undefined]
  depth = 0
  elements = 0
  /** The root element is closed: only white space and comments may follow. */
  rooted = false
  /** The run of character data since the last tag: [kind, from, to] per piece (XML 1.0 2.4, 2.7). */
  readonly pieces: number[] = []
  /** The last piece of the run ended with CR (see push). */
  crBefore = false
  // The text being made: strings, then code units not yet made a string. Decoded characters and
  // short stretches of text gather as code units and become a string a chunk at a time: a
  // string per reference or per CDATA section would cost far more.
  readonly codes: number[] = []
  out = ''
  units = 0

  constructor (text: string, maxDepth: number, maxElements: number) {
    this.text = text
    this.n = text.length
    this.maxDepth = maxDepth
    this.maxElements = maxElements
  }

  /** The tree of the document, or undefined where the full path decides. */
  read (): Record<string, unknown> | undefined {
    const text = this.text
    if (text.charCodeAt(0) === 0xfeff) return undefined
    // A document that cannot end as a plain one does (a tag or a comment, then white space) takes
    // the full path at once, rather than after a pass that would be wasted.
    let end = this.n
    while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--
    this.steps += this.n - end
    if (text.charCodeAt(end - 1) !== 0x3e || text.startsWith(']]>', end - 3) || text.startsWith('?>', end - 2)) return undefined
    if (text.startsWith('<?')) {
      const declaration = PLAIN_DECLARATION.exec(text)
      if (declaration === null) return undefined
      this.i = declaration[0].length
      this.steps += this.i
    }
    if (!this.readMarkup()) return undefined
    // Last, as a document that gets this far is most often taken: the native passes of
    // checkMarkup (XML 1.0 2.2).
    this.steps += 2 * this.n
    if (NOT_XML_CHAR.test(text) || !(text as unknown as { isWellFormed: () => boolean }).isWellFormed()) return undefined
    const tree = this.kids[0] as Record<string, unknown>
    return this.decodeAll(tree) ? tree : undefined
  }

  /**
   * The markup, from left to right, found with native searches each starting where the last
   * one ended; false where the full path decides. A comment does not end a run of character
   * data; a tag does.
   */
  readMarkup (): boolean {
    const text = this.text
    const n = this.n
    for (;;) {
      let lt = text.indexOf('<', this.i)
      if (lt === -1) lt = n
      if (!this.readCharacterData(lt)) return false
      if (lt === n) return this.rooted && this.depth === 0
      const next = text.charCodeAt(lt + 1)
      let read: boolean
      if (next === 0x21) read = this.readCommentOrCdata(lt)
      else if (next === 0x3f) read = false
      else {
        // A tag ends the run of character data before it.
        this.flush()
        read = next === 0x2f ? this.readEndTag(lt) : this.readStartTag(lt, next)
      }
      if (!read) return false
    }
  }

  /** The character data from `i` to `lt`: only white space outside the root element (XML 1.0 2.1, 2.8), else a piece of the run. */
  readCharacterData (lt: number): boolean {
    const i = this.i
    this.steps += lt - i
    if (lt === i) return true
    if (this.depth === 0) {
      for (let k = i; k < lt; k++) if (!isSpace(this.text.charCodeAt(k))) return false
      return true
    }
    return this.push(TEXT_PIECE, i, lt)
  }

  /** A comment (XML 1.0 2.5), skipped, or a CDATA section (2.7), a piece of the run, at `lt`. */
  readCommentOrCdata (lt: number): boolean {
    const text = this.text
    if (text.startsWith('<!--', lt)) {
      // "<!-->" and "<!--->" are read differently by the checks, the validator and the parser.
      if (text.startsWith('-->', lt + 2) || text.startsWith('-->', lt + 3)) return false
      const end = text.indexOf('-->', lt + 4)
      if (end === -1) return false
      this.i = end + 3
      this.steps += this.i - lt
      return true
    }
    if (this.depth === 0 || !text.startsWith('<![CDATA[', lt)) return false
    const end = text.indexOf(']]>', lt + 9)
    if (end === -1 || !this.push(CDATA_PIECE, lt + 9, end)) return false
    this.i = end + 3
    this.steps += this.i - lt
    return true
  }

  /** An end tag at `lt` (XML 1.0 3.1 ETag): the open element's name, white space, ">". */
  readEndTag (lt: number): boolean {
    if (this.depth === 0) return false
    const text = this.text
    const name = this.names[this.depth]
    if (!text.startsWith(name, lt + 2)) return false
    let j = lt + 2 + name.length
    while (isSpace(text.charCodeAt(j))) j++
    if (text.charCodeAt(j) !== 0x3e) return false
    this.steps += j + 1 - lt
    this.close()
    this.i = j + 1
    return true
  }

  /** A start tag at `lt` whose name starts with `next` (XML 1.0 3.1 STag, EmptyElemTag): Name (S Attribute)* S? "/"? ">". */
  readStartTag (lt: number, next: number): boolean {
    if (this.rooted || !isQuickNameStart(next)) return false
    const text = this.text
    let j = lt + 2
    while (isQuickNameChar(text.charCodeAt(j))) j++
    const name = text.slice(lt + 1, j)
    if (PARSER_RESERVED.has(name)) return false
    const gt = this.readAttributes(j)
    if (gt === -1) return false
    this.steps += gt + 1 - lt
    if (++this.elements > this.maxElements) return false
    // "/>" ends an empty element: after a name or an attribute value, "/" comes only there.
    if (text.charCodeAt(gt - 1) === 0x2f) {
      this.add(name, '')
      if (this.depth === 0) this.rooted = true
    } else {
      if (this.depth === this.maxDepth) return false
      this.depth++
      this.names[this.depth] = name
      this.kids[this.depth] = undefined
      this.texts[this.depth] = undefined
    }
    this.i = gt + 1
    return true
  }

  /**
   * The attributes of a start tag, from `j` after its name to its ">": ignored, but checked
   * (Attribute ::= Name Eq AttValue after white space, XML 1.0 3.1; WFC: Unique Att Spec; each
   * "&" of a value starts a reference, 4.1). The index of the ">", or -1 where the full path decides.
   */
  readAttributes (j: number): number {
    const text = this.text
    // The attribute names of the tag: the first alone, then a set.
    let firstAttribute: string | undefined
    let attributes: Set<string> | undefined
    for (;;) {
      const space = j
      while (isSpace(text.charCodeAt(j))) j++
      const c = text.charCodeAt(j)
      if (c === 0x3e) return j
      if (c === 0x2f) return text.charCodeAt(j + 1) === 0x3e ? j + 1 : -1
      if (j === space || !isQuickNameStart(c)) return -1
      const start = j
      while (isQuickNameChar(text.charCodeAt(j))) j++
      const attribute = text.slice(start, j)
      while (isSpace(text.charCodeAt(j))) j++
      if (text.charCodeAt(j) !== 0x3d) return -1
      j++
      while (isSpace(text.charCodeAt(j))) j++
      const quote = text.charCodeAt(j)
      if (quote !== 0x22 && quote !== 0x27) return -1
      const end = text.indexOf(quote === 0x22 ? '"' : "'", j + 1)
      if (end === -1) return -1
      if (firstAttribute === undefined) {
        firstAttribute = attribute
      } else {
        attributes ??= new Set([firstAttribute])
        if (attributes.has(attribute)) return -1
        attributes.add(attribute)
      }
      for (let k = j + 1; k < end; k++) if (text.charCodeAt(k) === 0x26 && referenceAt(text, k) < 0) return -1
      this.steps += end - j
      j = end + 1
    }
  }

  /**
   * Adds a piece to the run; false for a CR at the end of one piece and LF at the start of the
   * next, which the full path (where CDATA sections' white space is written as text) reads as
   * one line end: that document takes the full path.
   */
  push (kind: number, from: number, to: number): boolean {
    if (from === to) return true
    const text = this.text
    if (this.crBefore && text.charCodeAt(from) === 0x0a) return false
    this.crBefore = text.charCodeAt(to - 1) === 0x0d
    this.pieces.push(kind, from, to)
    return true
  }

  /**
   * The run of character data before a tag, as the parser keeps it: trimmed as one string
   * (trimValues), CDATA sections' white space included, and kept only when something is
   * left; added to the text of the element at `depth`, decoded once the document is read.
   */
  flush (): void {
    const text = this.text
    const pieces = this.pieces
    const last = pieces.length
    this.crBefore = false
    if (last === 0) return
    let p = 0
    let from = -1
    for (; p < last; p += 3) {
      let k = pieces[p + 1]
      const end = pieces[p + 2]
      while (k < end && isTrimmed(text.charCodeAt(k))) k++
      this.steps += k - pieces[p + 1]
      if (k < end) { from = k; break }
    }
    if (from === -1) {
      pieces.length = 0
      return
    }
    let q = last - 3
    let to = from
    for (; q >= p; q -= 3) {
      const start = q === p ? from : pieces[q + 1]
      let k = pieces[q + 2]
      while (k > start && isTrimmed(text.charCodeAt(k - 1))) k--
      this.steps += pieces[q + 2] - k
      if (k > start) { to = k; break }
    }
    let pending = this.texts[this.depth]
    if (pending === undefined) {
      pending = new PendingText()
      this.texts[this.depth] = pending
    }
    const runs = pending.pieces
    runs.push(pieces[p], from, p === q ? to : pieces[p + 2])
    for (let r = p + 3; r < q; r += 3) runs.push(pieces[r], pieces[r + 1], pieces[r + 2])
    if (q > p) runs.push(pieces[q], pieces[q + 1], to)
    pieces.length = 0
  }

  /** Adds an element's value to the element at `depth`: a second one of a name makes an array. */
  add (name: string, value: unknown): void {
    let into = this.kids[this.depth]
    if (into === undefined) {
      into = {}
      this.kids[this.depth] = into
    }
    if (Object.hasOwn(into, name)) {
      const before = into[name]
      if (Array.isArray(before)) before.push(value)
      else into[name] = [before, value]
    } else {
      into[name] = value
    }
  }

  /** Closes the element at `depth` and adds its value to its parent: '' when empty, its text alone, or its children and "#text". */
  close (): void {
    const depth = this.depth
    const into = this.kids[depth]
    const value = this.texts[depth]
    let result: unknown
    if (into === undefined) {
      result = value ?? ''
    } else {
      if (value !== undefined) into['#text'] = value
      result = into
    }
    const name = this.names[depth]
    this.kids[depth] = undefined
    this.texts[depth] = undefined
    this.depth = depth - 1
    this.add(name, result)
    if (this.depth === 0) this.rooted = true
  }

  /** Every text value of the tree decoded in place (its depth is bounded by maxDepth); false for a reference the full path refuses. */
  decodeAll (node: Record<string, unknown> | unknown[]): boolean {
    const keys = Object.keys(node)
    for (let k = 0; k < keys.length; k++) {
      const value = (node as Record<string, unknown>)[keys[k]]
      if (value instanceof PendingText) {
        const decoded = this.decode(value)
        if (decoded === null) return false
        ;(node as Record<string, unknown>)[keys[k]] = decoded
      } else if (typeof value === 'object' && !this.decodeAll(value as Record<string, unknown>)) {
        return false
      }
    }
    return true
  }

  /** The text of `pending`, decoded; null for a reference the full path refuses. */
  decode (pending: PendingText): string | null {
    const runs = pending.pieces
    this.out = ''
    this.units = 0
    for (let r = 0; r < runs.length; r += 3) if (!this.appendPiece(runs[r + 1], runs[r + 2], runs[r] === CDATA_PIECE)) return null
    if (this.units > 0) this.flushUnits()
    const value = this.out
    this.out = ''
    return value
  }

  /**
   * [from, to) added to the text, read once from left to right: CR LF and a lone CR as LF
   * (XML 1.0 2.11), and, unless `cdata` (a CDATA section's content, XML 1.0 2.7), references
   * decoded (XML 1.0 4.1, 4.6). False for a reference the full path refuses.
   */
  appendPiece (from: number, to: number, cdata: boolean): boolean {
    const text = this.text
    const codes = this.codes
    let at = from
    this.steps += to - from
    for (let k = from; k < to; k++) {
      const c = text.charCodeAt(k)
      if (c === 0x0d) {
        this.appendPlain(at, k)
        codes[this.units++] = 0x0a
        if (text.charCodeAt(k + 1) === 0x0a) k++
      } else if (c === 0x26 && !cdata) {
        this.appendPlain(at, k)
        const ref = referenceAt(text, k)
        if (ref < 0) return false
        const length = ref & 15
        const cp = (ref - length) / 16
        if (cp > 0xffff) {
          // A character beyond U+FFFF: its surrogate pair (UTF-16).
          codes[this.units++] = 0xd7c0 + (cp >> 10)
          codes[this.units++] = 0xdc00 + (cp & 0x3ff)
        } else {
          codes[this.units++] = cp
        }
        k += length - 1
      } else {
        continue
      }
      if (this.units >= CHUNK) this.flushUnits()
      at = k + 1
    }
    if (at === from && this.units === 0 && this.out === '') this.out = text.slice(from, to)
    else this.appendPlain(at, to)
    return true
  }

  /** [from, to) of the document, which holds no CR and no reference, added to the text: sliced when long, else gathered. */
  appendPlain (from: number, to: number): void {
    if (to - from > SHORT_STRETCH) {
      if (this.units > 0) this.flushUnits()
      this.out += this.text.slice(from, to)
    } else {
      const text = this.text
      const codes = this.codes
      let units = this.units
      for (let k = from; k < to; k++) codes[units++] = text.charCodeAt(k)
      this.units = units
      if (units >= CHUNK) this.flushUnits()
    }
  }

  /** The code units gathered, added to the text as a string. */
  flushUnits (): void {
    const codes = this.codes
    codes.length = this.units
    this.out += String.fromCharCode.apply(null, codes)
    this.units = 0
  }
}

/**
 * Parses an XML document into the plain tree fast-xml-parser builds: by the quick reader
 * (readXmlQuickly), else by the full path (parseXmlFully); throws XmlSyntaxError when not
 * well-formed.
 */
export function parseXml (text: string, options?: XmlParseOptions | XmlReader, work?: WorkCounter): Record<string, unknown> {
  const reader = isReader(options) ? options : xmlReader(options)
  return readXmlQuickly(text, reader.maxDepth, reader.maxElements, work) ?? parseXmlFully(text, reader, work)
}

/**
 * The full path, for every document the quick reader leaves: checkMarkup, fast-xml-parser's
 * validator and parser, then the text values decoded; the refusals' messages are made here.
 */
export function parseXmlFully (text: string, reader: XmlReader, work?: WorkCounter): Record<string, unknown> {
  const sections: number[] = []
  checkMarkup(text, reader.maxDepth, work, reader.maxElements, sections)
  const valid = XMLValidator.validate(text)
  if (valid !== true) {
    throw new XmlSyntaxError(`XML body is not well-formed: ${valid.err.msg} (line ${valid.err.line})`)
  }
  const marked = sections.length === 0 ? { text, contents: [] } : markCdata(text, sections, work)
  const tree = decodeTree(reader.parser.parse(marked.text), marked.contents, work) as Record<string, unknown>
  const roots = Object.keys(tree)
  if (roots.length !== 1) throw new XmlSyntaxError('XML body must have exactly one root element')
  return tree
}

type Decoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'latin1' | 'ascii'

/** Encoding names (IANA charset names and aliases, lower case) this module decodes. */
const ENCODINGS: Record<string, Decoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'utf-16le': 'utf-16le',
  'utf-16be': 'utf-16be',
  'iso-8859-1': 'latin1',
  'iso_8859-1': 'latin1',
  'iso_8859-1:1987': 'latin1',
  latin1: 'latin1',
  l1: 'latin1',
  'iso-ir-100': 'latin1',
  ibm819: 'latin1',
  cp819: 'latin1',
  csisolatin1: 'latin1',
  'us-ascii': 'ascii',
  ascii: 'ascii',
  'iso646-us': 'ascii',
  'ansi_x3.4-1968': 'ascii',
  csascii: 'ascii'
}

const decoders: Record<'utf-8' | 'utf-16le' | 'utf-16be', { decode: (bytes: Uint8Array) => string }> = {
  'utf-8': new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }),
  'utf-16le': new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true }),
  'utf-16be': new TextDecoder('utf-16be', { fatal: true, ignoreBOM: true })
}

/** The encoding an ASCII-compatible document declares (XML 1.0 4.3.3, EncodingDecl), or undefined. */
function declaredEncoding (bytes: Uint8Array): string | undefined {
  // XML 1.0 2.8: the declaration, if any, is the very first thing in the document.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 256)).toString('latin1')
  const decl = /^<\?xml\s+version\s*=\s*(["'])[^"']*\1\s+encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\2/.exec(head)
  return decl === null ? undefined : decl[3]
}

function decodeAs (bytes: Uint8Array, decoding: Decoding, name: string): string {
  if (decoding === 'latin1') return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')
  if (decoding === 'ascii') {
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] > 0x7f) throw new XmlSyntaxError(`XML body is not valid ${name}: byte 0x${bytes[i].toString(16)} at offset ${i}`)
    }
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')
  }
  try {
    return decoders[decoding].decode(bytes)
  } catch {
    // XML 1.0 4.3.3: a byte sequence not legal in the encoding is a fatal error.
    throw new XmlSyntaxError(`XML body is not valid ${name} (XML 1.0 4.3.3)`)
  }
}

/**
 * Decodes an XML body from its bytes: never into U+FFFD. The encoding is, in order:
 * the byte order mark (RFC 7303 3.3, XML 1.0 4.3.3); else the `charset` parameter of
 * the Content-Type (RFC 7303 3.2: authoritative when present); else, when there is no
 * charset parameter, the document's own encoding declaration (RFC 7303 3.2, XML 1.0
 * 4.3.3); else UTF-8. Decoded: UTF-8, UTF-16 (LE/BE), ISO-8859-1 and US-ASCII.
 * Throws XmlEncodingError for another encoding, XmlSyntaxError for bytes that are not
 * legal in the encoding.
 */
export function decodeXmlBody (bytes: Uint8Array, charset?: string): string {
  let decoding: Decoding | undefined
  let name: string
  let skip = 0
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    decoding = 'utf-8'; name = 'UTF-8'; skip = 3
  } else if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) {
    decoding = 'utf-16be'; name = 'UTF-16'; skip = 2
  } else if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) {
    decoding = 'utf-16le'; name = 'UTF-16'; skip = 2
  } else if (charset !== undefined && charset !== '') {
    name = charset
    const label = charset.toLowerCase()
    // RFC 7303 3.2 / RFC 2781 4.3: "utf-16" without a byte order mark is big-endian.
    decoding = label === 'utf-16' ? 'utf-16be' : ENCODINGS[label]
    if (decoding === undefined) throw new XmlEncodingError(`charset ${JSON.stringify(charset)} is not supported for XML; send UTF-8`)
  } else if (bytes.length >= 4 && bytes[0] === 0x3c && bytes[1] === 0 && bytes[2] === 0x3f && bytes[3] === 0) {
    // XML 1.0 Appendix F.1: "<?" in UTF-16LE without a byte order mark.
    decoding = 'utf-16le'; name = 'UTF-16LE'
  } else if (bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 0x3c && bytes[2] === 0 && bytes[3] === 0x3f) {
    decoding = 'utf-16be'; name = 'UTF-16BE'
  } else {
    const declared = declaredEncoding(bytes)
    name = declared ?? 'UTF-8'
    if (declared === undefined) {
      decoding = 'utf-8'
    } else {
      const label = declared.toLowerCase()
      decoding = ENCODINGS[label]
      // XML 1.0 4.3.3: UTF-16 needs a byte order mark; these bytes are ASCII-compatible.
      if (label === 'utf-16') throw new XmlSyntaxError('XML body declares UTF-16 but has no byte order mark (XML 1.0 4.3.3)')
      if (decoding === undefined) throw new XmlEncodingError(`the XML encoding declaration names ${JSON.stringify(declared)}, which is not supported; send UTF-8`)
    }
  }
  return decodeAs(skip === 0 ? bytes : bytes.subarray(skip), decoding, name)
}

/**
 * Parses an XML body from its bytes and the Content-Type's charset parameter (undefined
 * when absent) into JSON shaped by `schema`, or returns the catalogue error: 415 for an
 * encoding that is not supported, 400 (field `body`) for bytes not legal in their
 * encoding, characters outside XML 1.0, nesting deeper than `maxDepth`, more elements
 * than `maxElements`, or a document that is not well-formed.
 */
export function parseXmlBody (bytes: Uint8Array, charset: string | undefined, schema?: JsonSchemaLike, options?: XmlParseOptions | XmlReader, work?: WorkCounter): { ok: true, value: unknown } | { ok: false, error: ConventionError } {
  const reader = isReader(options) ? options : xmlReader(options)
  try {
    const tree = parseXml(decodeXmlBody(bytes, charset), reader, work)
    return { ok: true, value: xmlToJson(tree[Object.keys(tree)[0]], schema) }
  } catch (err) {
    if (err instanceof XmlEncodingError) return { ok: false, error: unsupportedMediaType(err.message) }
    return { ok: false, error: malformedBody(err instanceof XmlSyntaxError ? err.message : 'body is not well-formed XML') }
  }
}

function typeOf (schema: JsonSchemaLike | undefined): string | undefined {
  const t = schema?.type
  return Array.isArray(t) ? t.find((x) => x !== 'null') : t
}

/** Converts a parsed element to the JSON shape `schema` describes; unknown shapes stay as parsed. */
export function xmlToJson (node: unknown, schema: JsonSchemaLike | undefined): unknown {
  const type = typeOf(schema)
  if (type === 'array') {
    // <tags><tag>a</tag><tag>b</tag></tags>: the wrapper holds one kind of child element.
    if (node === '' || node === undefined) return []
    if (typeof node !== 'object' || node === null) return node
    const keys = Object.keys(node)
    if (keys.length !== 1) return node
    const items = (node as Record<string, unknown>)[keys[0]]
    const list = Array.isArray(items) ? items : [items]
    return list.map((item) => xmlToJson(item, schema?.items))
  }
  if (type === 'object' || (type === undefined && schema?.properties !== undefined)) {
    if (node === '') return {}
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      out[key] = xmlToJson(value, schema?.properties?.[key])
    }
    return out
  }
  if (typeof node !== 'string') return node
  if (type === 'boolean') return node === 'true' ? true : node === 'false' ? false : node
  if (type === 'integer' || type === 'number') {
    const n = Number(node)
    return node.trim() !== '' && Number.isFinite(n) ? n : node
  }
  if (type === 'null' && node === '') return null
  return node
}

/** Parses an XML body and returns the root element's content converted by `schema`. */
export function xmlBodyToJson (text: string, schema?: JsonSchemaLike, options?: XmlParseOptions): unknown {
  const tree = parseXml(text, options)
  const root = Object.keys(tree)[0]
  return xmlToJson(tree[root], schema)
}

function singular (name: string): string {
  return name.length > 1 && name.endsWith('s') ? name.slice(0, -1) : 'item'
}

// XML 1.0 2.3: NameStartChar and NameChar, less the colon (reserved for namespaces) and the
// characters beyond U+FFFF (not Name characters before XML 1.0 fifth edition, and not to
// every parser's liking): names that any XML 1.0 parser accepts.
const NAME_START = /[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/u
// eslint-disable-next-line no-misleading-character-class -- combining marks are NameChars, tested one code point at a time
const NAME_CHAR = /[-.0-9\u00B7\u0300-\u036F\u203F-\u2040A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/u
const SIMPLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/

/**
 * An XML 1.0 Name (2.3) for a JSON member name: characters a Name cannot hold become
 * "_", and a name that cannot start as it does gets a leading "_" ("1st" -> "_1st",
 * "a b" -> "a_b", "" -> "_"). Markup can never be injected through a member name.
 */
export function xmlName (name: string): string {
  let out = ''
  if (SIMPLE_NAME.test(name)) {
    out = name
  } else {
    for (const ch of name) {
      if (out === '') out = NAME_START.test(ch) ? ch : NAME_CHAR.test(ch) ? '_' + ch : '_'
      else out += NAME_CHAR.test(ch) ? ch : '_'
    }
  }
  if (out === '') return '_'
  // Names that XML parsers refuse as prototype pollution (`__proto__`, `constructor`,
  // `prototype`) get a trailing underscore, so every document written parses again.
  return RESERVED_NAMES.has(out) ? out + '_' : out
}

const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype'])

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#xD;' }

/**
 * Character data for XML 1.0: markup characters escaped (2.4), CR as a character
 * reference so that it survives end-of-line handling (2.11), and every character that
 * XML 1.0 does not allow (2.2: U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, lone
 * surrogates, U+FFFE, U+FFFF) replaced by U+FFFD. These cannot be escaped: XML 1.0 4.1
 * (WFC: Legal Character) forbids them even as character references, so the output
 * replaces them rather than refuse a response the application already built.
 */
export function xmlText (s: string): string {
  return s.replace(NOT_XML_CHAR_GLOBAL, '\uFFFD').replace(/[&<>"'\r]/g, (c) => ESCAPES[c])
}

/**
 * Serializes JSON data as an XML document with root element `root`. Arrays become a
 * wrapper element holding one child per item, named by `itemNames[wrapper]` or the
 * wrapper's singular (`tags` -> `tag`). Names are made XML Names (xmlName), text is
 * escaped and cleaned (xmlText): the output is always well-formed XML 1.0. Iterative,
 * so the depth of the data does not matter.
 */
export function jsonToXml (value: unknown, root: string, itemNames: Record<string, string> = {}): string {
  let out = '<?xml version="1.0" encoding="UTF-8"?>'
  // Work list, last first: a value to write as an element of the given name, or a closing tag.
  const stack: Array<[unknown, string] | string> = [[value, root]]
  while (stack.length > 0) {
    const top = stack.pop() as [unknown, string] | string
    if (typeof top === 'string') {
      out += top
      continue
    }
    const [v, name] = top
    const tag = xmlName(name)
    if (Array.isArray(v)) {
      const item = Object.prototype.hasOwnProperty.call(itemNames, name) ? itemNames[name] : singular(name)
      out += `<${tag}>`
      stack.push(`</${tag}>`)
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], item])
    } else if (v !== null && typeof v === 'object') {
      out += `<${tag}>`
      stack.push(`</${tag}>`)
      const keys = Object.keys(v)
      for (let i = keys.length - 1; i >= 0; i--) {
        const child = (v as Record<string, unknown>)[keys[i]]
        if (child !== undefined) stack.push([child, keys[i]])
      }
    } else {
      out += `<${tag}>${v === null || v === undefined ? '' : xmlText(String(v))}</${tag}>`
    }
  }
  return out
}
