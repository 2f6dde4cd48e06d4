/**
 * Linear work for every body reader (docs/conventions.md (Content-Type)): the JSON reader
 * (also the reader of JSON Patch and merge patch bodies, RFC 6902 and RFC 7396), the XML
 * reader, and the text and HTML readers do work proportional to the body, whatever it
 * holds. Adversarial bodies (escapes, nesting, repeated openers, long runs without the
 * closing token) are made at n and 8n characters:
 * - the checks of the suite's own code count the characters they examine (an optional
 *   counter argument), so the bound does not depend on the machine: at most a few
 *   examinations per character, and 8n costs at most 8 times n plus a constant;
 * - the XML reader's native searches (String.prototype.indexOf and includes, its own and
 *   fast-xml-parser's) are counted from outside it, by the characters they pass over, with
 *   the same bounds; and the parser is never handed more text than the body (XML 1.0 2.7:
 *   CDATA sections reach it as they are, never rewritten longer);
 * - the native and third-party work after them (JSON.parse, fast-xml-parser's tree, UTF-8
 *   decoding) cannot be counted from outside: `npm run bench` (the bodies section) measures
 *   its CPU time at 8n over n, never a test.
 * The header grammars are counted the same way in test/reliability/grammar-fuzz.test.ts.
 */
import { test, type Test } from 'tap'
import fc from 'fast-check'
import { XMLParser } from 'fast-xml-parser'
import { parseJsonBuffer, scanJsonText, type WorkCounter } from '../../lib/json-body'
import { parseXmlBody } from '../../lib/xml'

/** Most characters examined per character of input, and a constant for the shortest inputs. */
const PER_CHAR = 8
const CONSTANT = 64

// Pieces of hostile JSON: escapes (among them the surrogate escapes that call for a full
// scan), quotes that open strings never closed, brackets that nest, and plain runs.
const JSON_PIECES = ['\\n', '\\u0041', '\\uD800', '\\"', '\\\\', '"', '[', '{', '{"a":', ']', '}', ',', '1', 'a', ' ']
const JSON_PREFIXES = ['', '"', '"\\u0041', '[', '{"k":"', '['.repeat(63), '{"a":'.repeat(63) + '"']
// Pieces of hostile XML: empty elements, start and end tags, references (well-formed and
// not), comments, processing instructions and CDATA sections (closed and not, many of them,
// with "&", "<", white space and comment openers inside, between comments), quotes in tags.
const XML_PIECES = ['<x/>', '<a>', '</a>', '&amp;', '&', '&#65;', ';', '<!--c-->', '<!--', '-->', '<?p?>', '<![CDATA[x]]>', '<', '>', '"', "'", ' a="1"', 'text',
  '<![CDATA[', ']]>', '<![CDATA[&]]>', '<![CDATA[<]]>', '<![CDATA[ &amp; <b> ]]>', '<![CDATA[ ]]>', '<![CDATA[<!--]]>', '<!--<![CDATA[-->', '<!--c--><![CDATA[x]]>', ' ']
const XML_PREFIXES = ['', '<r>', '<r a="', '<r><!--', '<r><![CDATA[', '<r>' + '<a>'.repeat(63), '<r>' + '<![CDATA[x]]>'.repeat(63)]
// Whatever closes the body after the repeated unit: a document that reaches the parser whole.
const XML_SUFFIXES = ['', '</r>', ']]></r>', '--></r>']

type Shape = { prefix: string, unit: string, suffix: string }

const body = (prefixes: string[], pieces: string[], suffixes = ['']): fc.Arbitrary<Shape> => fc.record({
  prefix: fc.constantFrom(...prefixes),
  unit: fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 8 }).map((p) => p.join('')),
  suffix: fc.constantFrom(...suffixes)
})

/** The body of about `n` characters: the prefix, then the unit again and again, then the suffix. */
function make (shape: Shape, n: number): string {
  return shape.prefix + shape.unit.repeat(Math.ceil(n / shape.unit.length)) + shape.suffix
}

/** Runs of the properties (FUZZ_RUNS for more). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 60

function counted (run: (text: string, work: WorkCounter) => void, text: string): number {
  const work = { steps: 0 }
  run(text, work)
  return work.steps
}

const COUNTED: Record<string, { shapes: fc.Arbitrary<Shape>, run: (text: string, work: WorkCounter) => void }> = {
  // parseJsonBuffer is the reader of application/json, application/json-patch+json and
  // application/merge-patch+json bodies; scanJsonText its full scan, which the reader's
  // quick checks skip for most bodies.
  'JSON reader': { shapes: body(JSON_PREFIXES, JSON_PIECES), run: (text, work) => { parseJsonBuffer(Buffer.from(text), undefined, work) } },
  'JSON scan': { shapes: body(JSON_PREFIXES, JSON_PIECES), run: (text, work) => { scanJsonText(text, 64, work) } },
  'XML reader': { shapes: body(XML_PREFIXES, XML_PIECES, XML_SUFFIXES), run: (text, work) => { parseXmlBody(Buffer.from(text), undefined, undefined, undefined, work) } }
}

async function countedWork (t: Test): Promise<void> {
  for (const [name, { shapes, run }] of Object.entries(COUNTED)) {
    t.doesNotThrow(() => fc.assert(fc.property(shapes, fc.constantFrom(1024, 4096), (shape, n) => {
      const small = make(shape, n)
      const large = make(shape, 8 * n)
      const a = counted(run, small)
      const b = counted(run, large)
      const what = `${name} on ${JSON.stringify(shape)}: ${small.length} characters, ${a} steps; ${large.length} characters, ${b} steps`
      if (a < small.length || b < large.length) throw new Error(`${what}: the counter missed characters the reader must examine`)
      if (b > PER_CHAR * large.length + CONSTANT) throw new Error(`${what}: more than ${PER_CHAR} steps per character`)
      if (b > 8 * a + CONSTANT * 8) throw new Error(`${what}: 8 times the input cost ${(b / a).toFixed(1)} times the work`)
    }), { numRuns: RUNS, seed: 3 }), `${name}: at most ${PER_CHAR} steps per character, 8n costs at most 8 times n`)
  }
  // Shrunk from the property: a CDATA mark whose length grew with the number of sections made
  // the work per section grow with it (8n cost 8.03 times n).
  const marks = { prefix: '<r><!--', unit: '<!--c--><![CDATA[x]]>]]>"', suffix: '</r>' }
  const xml = COUNTED['XML reader'].run
  const [a, b] = [4096, 8 * 4096].map((n) => counted(xml, make(marks, n)))
  t.ok(b <= 8 * a, `XML reader, many CDATA sections: ${a} steps at n, ${b} at 8n`)
}

/**
 * What the XML reader's native searches pass over, counted from outside the reader: every
 * String.prototype.indexOf and includes call made while it runs (the suite's code and
 * fast-xml-parser's alike) adds the characters it searched, found or not; and the longest
 * text the parser was handed. This process is the test's alone, and nothing else runs while
 * the reader does.
 */
function searchedByXmlReader (text: string): { searched: number, parsed: number } {
  const proto = String.prototype as unknown as Record<'indexOf' | 'includes', (this: string, search: string, from?: number) => number | boolean>
  const { indexOf, includes } = proto
  const parse = XMLParser.prototype.parse
  let searched = 0
  let parsed = 0
  const start = (s: string, from?: number): number => Math.min(Math.max(Math.trunc(Number(from ?? 0)) || 0, 0), s.length)
  proto.indexOf = function countedIndexOf (search, from) {
    const at = indexOf.call(this, search, from) as number
    searched += (at === -1 ? this.length : at + search.length) - start(this, from)
    return at
  }
  proto.includes = function countedIncludes (search, from) {
    const found = includes.call(this, search, from) as boolean
    // Counted as a search to the end, found or not: more than it did.
    searched += this.length - start(this, from)
    return found
  }
  XMLParser.prototype.parse = function countedParse (this: XMLParser, xml: string | Buffer, validation?: boolean) {
    parsed = Math.max(parsed, xml.length)
    return parse.call(this, xml, validation as never)
  }
  try {
    parseXmlBody(Buffer.from(text), undefined)
  } finally {
    proto.indexOf = indexOf
    proto.includes = includes
    XMLParser.prototype.parse = parse
  }
  return { searched, parsed }
}

async function searchedWork (t: Test): Promise<void> {
  // CDATA sections by the thousand, "&" and "<" inside them, comments between them.
  const cdata = body(XML_PREFIXES, ['<![CDATA[x]]>', '<![CDATA[&]]>', '<![CDATA[<]]>', '<![CDATA[ & < ]]>', '<!--c-->', '<!--<![CDATA[-->', '<x/>', 'text', '&amp;', ' '], XML_SUFFIXES)
  t.doesNotThrow(() => fc.assert(fc.property(cdata, fc.constantFrom(1024, 4096), (shape, n) => {
    const small = make(shape, n)
    const large = make(shape, 8 * n)
    const a = searchedByXmlReader(small)
    const b = searchedByXmlReader(large)
    const what = `XML reader on ${JSON.stringify(shape)}: ${small.length} characters, ${a.searched} searched; ${large.length} characters, ${b.searched} searched`
    if (b.searched > PER_CHAR * large.length + CONSTANT) throw new Error(`${what}: more than ${PER_CHAR} characters searched per character`)
    if (b.searched > 8 * a.searched + CONSTANT * 8) throw new Error(`${what}: 8 times the input cost ${(b.searched / a.searched).toFixed(1)} times the searching`)
    if (b.parsed > large.length) throw new Error(`${what}: the parser was handed ${b.parsed} characters, more than the body's ${large.length}`)
  }), { numRuns: RUNS, seed: 5 }), 'native searches pass over each character a bounded number of times; the parser reads no more than the body')
  // The shapes of the attack, named: 64 KiB of sections, and a section of 64 KiB of "&".
  const KiB64 = 64 * 1024
  const sections = '<r>' + '<![CDATA[x]]>'.repeat(KiB64 / 13) + '</r>'
  const ampersands = '<r><![CDATA[' + '&'.repeat(KiB64) + ']]></r>'
  for (const [name, text] of [['<![CDATA[x]]> repeated', sections], ['"&" inside CDATA', ampersands]] as const) {
    const { searched, parsed } = searchedByXmlReader(text)
    t.ok(searched <= PER_CHAR * text.length, `${name}, ${text.length} characters: ${searched} searched`)
    t.ok(parsed <= text.length, `${name}: the parser read ${parsed} characters, no more than the body`)
  }
}

test('every body reader does work linear in its body: counted where the suite scans, and where fast-xml-parser searches', async (t) => {
  await t.test('characters examined by the suite\'s checks, counted', countedWork)
  await t.test('characters the XML reader\'s native searches pass over, counted from outside (XML 1.0 2.7: CDATA sections, comments)', searchedWork)
})
