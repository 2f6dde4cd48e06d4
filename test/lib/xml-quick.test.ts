/**
 * The quick XML reader (lib/xml.ts readXmlQuickly) against the full path it stands in for
 * (parseXmlFully: checkMarkup, fast-xml-parser's validator and parser with the reader's
 * options, then the references decoded): for every document, parseXml gives the same tree,
 * key order included, or the same refusal with the same message; and the quick reader
 * answers the plain documents itself, in work linear in their length (docs/conventions.md
 * (Content-Type): XML bodies; XML 1.0 2.4, 2.7, 3.1, 4.1 and 4.6).
 */
import { test } from 'tap'
import fc from 'fast-check'
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { parseXml, parseXmlBody, parseXmlFully, readXmlQuickly, xmlReader, type WorkCounter } from '../../lib/xml'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 200
const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261128
const reader = xmlReader()

/** What a reader makes of a document: its tree as JSON (key order included), or its refusal. */
function outcome (read: () => unknown): string {
  try {
    return 'tree ' + JSON.stringify(read())
  } catch (err) {
    return `refused ${(err as Error).name}: ${(err as Error).message}`
  }
}

/** A document in a test's name: quoted, every character past ASCII escaped (a line separator would end the name). */
const shown = (doc: string): string => JSON.stringify(doc).replace(/[\u0080-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'))

const full = (doc: string): string => outcome(() => parseXmlFully(doc, reader))
const now = (doc: string): string => outcome(() => parseXml(doc, reader))
const quick = (doc: string): Record<string, unknown> | undefined => readXmlQuickly(doc, reader.maxDepth, reader.maxElements)

// Pieces of plain documents: what the quick reader reads itself.
const PLAIN_TEXT = ['a', 'bc', ' ', '\n', '\t', '\r\n', '\rb', '&amp;', '&lt;', '&gt;', '&quot;', '&apos;', '&#65;', '&#x42;', '&#x1F600;', '&#32;', '&#x9;', '&#xD;', '&#38;', '&amp;amp;',
  '\u00a0', '\u3000', '\u2028', '\ufeff', 'é', '\u{1F600}', '>', ']]', '"', "'"]
const PLAIN_CDATA = ['', ' ', 'x', ' x ', '&amp;', '<b>', '&', ']]', '\n', '\r\n', 'x\ry', '\u00a0', '<!--']
const PLAIN_NAMES = ['a', 'b', 'r', 'x-y', 'n.1', '_z', 'ns:e', 'B9']
const PLAIN_ATTRIBUTES = [' a="1"', " b='x&amp;y'", ' c="<"', ' d = "it\'s"', '\tf="&#65;"\n', ' ns:e=""', ' e=">"']
const PLAIN_COMMENTS = ['<!--c-->', '<!---->', '<!-- & < <x> -->', '<!--<![CDATA[-->']
const PLAIN_DECLARATIONS = ['', '<?xml version="1.0"?>', "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n", '<?xml?>']
const OUTSIDE = ['', ' ', '\n', '<!--c-->', ' <!--c--> ']

// What sends a document the full way, or makes it refused: CR, other processing
// instructions, DOCTYPE, names and references the quick reader leaves, duplicates, stray
// text and tags.
const ODD_TEXT = ['\r', '&bogus;', '&', '&#0;', '&#X41;', '&#12345678;', '&#xFFFE;', '<?p x?>', '<!DOCTYPE r>', '<!-->', '<!--->', '<', 'x>', ']]>']
const ODD_NAMES = ['toString', 'constructor', '__proto__', 'prototype', 'é', '1a', ':a', 'valueOf']
const ODD_ATTRIBUTES = [' a="1" a="2"', 'a="1"', ' a', ' a=1', ' a="&bogus;"', ' a="1"b="2"', ' é="1"', ' a="1', ' a=\'1"', ' a="&#0;"']
const ODD_DECLARATIONS = ['<?xml constructor="1"?>', ' <?xml version="1.0"?>', '<?xml-stylesheet href="a"?>', '<?xml version="1.0" x="1"?>', '\ufeff']

type Node = { text: string } | { cdata: string } | { comment: string } | { element: string, attributes: string, empty: boolean, close: string | undefined, children: Node[] }

function nodes (text: string[], names: string[], attributes: string[]): fc.Arbitrary<Node> {
  return fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
      fc.array(fc.constantFrom(...text), { minLength: 1, maxLength: 4 }).map((p) => ({ text: p.join('') })),
      fc.array(fc.constantFrom(...PLAIN_CDATA), { maxLength: 3 }).map((p) => ({ cdata: p.join('').replaceAll(']]>', ']] >') })),
      fc.constantFrom(...PLAIN_COMMENTS).map((comment) => ({ comment })),
      fc.record({
        element: fc.constantFrom(...names),
        attributes: fc.subarray(attributes, { maxLength: 2 }).map((a) => a.join('')),
        empty: fc.boolean(),
        close: fc.constantFrom(undefined, undefined, undefined, ' ', '\n'),
        children: fc.array(tie('node'), { maxLength: 4 })
      })
    ) as fc.Arbitrary<Node>
  })).node
}

function write (node: Node): string {
  if ('text' in node) return node.text
  if ('cdata' in node) return `<![CDATA[${node.cdata}]]>`
  if ('comment' in node) return node.comment
  if (node.empty && node.children.length === 0) return `<${node.element}${node.attributes}${node.close === undefined ? '' : ' '}/>`
  return `<${node.element}${node.attributes}>${node.children.map(write).join('')}</${node.element}${node.close ?? ''}>`
}

/** A document: a declaration, what is outside the root, the root element (its name and attributes plain). */
function documents (text: string[], names: string[], attributes: string[], declarations: string[]): fc.Arbitrary<string> {
  return fc.record({
    declaration: fc.constantFrom(...declarations),
    before: fc.constantFrom(...OUTSIDE),
    root: fc.constantFrom(...PLAIN_NAMES),
    attributes: fc.constantFrom('', ...PLAIN_ATTRIBUTES),
    children: fc.array(nodes(text, names, attributes), { maxLength: 6 }),
    after: fc.constantFrom(...OUTSIDE)
  }).map((d) => `${d.declaration}${d.before}<${d.root}${d.attributes}>${d.children.map(write).join('')}</${d.root}>${d.after}`)
}

const plain = documents(PLAIN_TEXT, PLAIN_NAMES, PLAIN_ATTRIBUTES, PLAIN_DECLARATIONS)
const any = documents([...PLAIN_TEXT, ...ODD_TEXT], [...PLAIN_NAMES, ...ODD_NAMES], [...PLAIN_ATTRIBUTES, ...ODD_ATTRIBUTES], [...PLAIN_DECLARATIONS, ...ODD_DECLARATIONS])
  .chain((doc) => fc.constantFrom(doc, doc + '<b/>', 'x' + doc, doc + 'x', doc.replace(/<\/(\w+)>$/, '</$1x>'), doc.slice(0, -1)))

test('property: a plain document is read by the quick reader, into the tree the full path builds (XML 1.0 2.4, 2.7, 3.1, 4.1, 4.6)', async (t) => {
  const failure = fc.check(fc.property(plain, (doc) => {
    const tree = quick(doc)
    return tree !== undefined && 'tree ' + JSON.stringify(tree) === full(doc)
  }), { numRuns: RUNS, seed: SEED })
  const doc = failure.counterexample?.[0]
  t.notOk(failure.failed, doc === undefined ? 'every document' : `${shown(doc)}: quick ${shown(String(JSON.stringify(quick(doc))))}, full ${shown(full(doc))}`)
})

test('property: every document, plain or not, well-formed or not, is read as the full path reads it: the same tree or the same refusal', async (t) => {
  let answered = 0
  const failure = fc.check(fc.property(any, (doc) => {
    const tree = quick(doc)
    if (tree !== undefined) answered++
    return now(doc) === full(doc) && (tree === undefined || 'tree ' + JSON.stringify(tree) === full(doc))
  }), { numRuns: RUNS, seed: SEED + 1 })
  const doc = failure.counterexample?.[0]
  t.notOk(failure.failed, doc === undefined ? 'every document' : `${shown(doc)}: now ${shown(now(doc))}, full ${shown(full(doc))}`)
  t.ok(answered > 0 && answered < RUNS, `the quick reader answered ${answered} of ${RUNS} documents, the full path the rest`)
})

test('the documents the quick reader leaves to the full path: each read as before', async (t) => {
  const left = [
    '<r>a\r<![CDATA[\nb]]></r>', '<r><![CDATA[a\r]]><![CDATA[]]>\n</r>', // CR, then LF in the next piece: one line end in the full path
    '\ufeff<r/>', // a byte order mark left in the text
    ' <?xml version="1.0"?><r/>', // a declaration not at the start: refused
    '<?xml constructor="1"?><r/>', // a pseudo-attribute the parser refuses as a property name
    '<r><?p x?></r>', // a processing instruction: the parser splits the text there
    '<r><!--></r>', '<r>a<!--->b--></r>', // comments the checks and the parser end at different places
    '<r><toString/><constructor/></r>', '<__proto__/>', // names the parser renames or refuses
    '<r><é/></r>', '<r a="1" a="2"/>', '<r a="1"b="2"/>', '<r a/>', // names, attributes
    '<r/><r/>', 'x<r/>', '<r/>x', '<r></s>', '<r>', '<r>&bogus;</r>', '<r a="&#0;"/>', '<![CDATA[x]]><r/>'
  ]
  for (const doc of left) {
    t.equal(quick(doc), undefined, `${shown(doc)}: the full path`)
    t.equal(now(doc), full(doc), `${shown(doc)}: ${shown(full(doc))}`)
  }
  const bounded = xmlReader({ maxDepth: 2, maxElements: 3 })
  for (const doc of ['<r><a><b></b></a></r>', '<r><a/><b/><c/></r>']) {
    t.equal(readXmlQuickly(doc, bounded.maxDepth, bounded.maxElements), undefined, `${doc}: over a bound, the full path refuses`)
    t.equal(outcome(() => parseXml(doc, bounded)), outcome(() => parseXmlFully(doc, bounded)))
  }
})

test('XML 1.0 4.1, 4.6: the quick reader decodes references as the full path does, side by side, between short and long text, past U+FFFF', async (t) => {
  const docs = [
    '<r>' + '&amp;'.repeat(5000) + '</r>',
    '<r>' + '&#x1F600;x'.repeat(3000) + '</r>',
    '<r>' + ('y'.repeat(40) + '&lt;').repeat(300) + '</r>',
    '<r>' + '<![CDATA[x]]>'.repeat(5000) + '</r>',
    '<r>' + ' <![CDATA[ &amp; ]]> &#32;'.repeat(2000) + '</r>',
    '<r>\u3000 <![CDATA[\u00a0 a \u00a0]]> \u2028</r>',
    '<r>' + 'a\r\nb\rc&amp;\r'.repeat(2000) + '<![CDATA[ x\r\ny\r ]]>\r\n</r>', // XML 1.0 2.11: CR LF and CR are LF
    '<r\r\n  a="1"\r>\r\n<b\r/>' + 'line\r\n'.repeat(100) + '</r\r>'
  ]
  for (const doc of docs) {
    t.not(quick(doc), undefined, 'read by the quick reader')
    t.equal(now(doc), full(doc), `${shown(doc.slice(0, 40))}... (${doc.length} characters)`)
  }
})

/** The bench's hostile shapes (bench/bodies.js), as many times as fit in `n` characters. */
const HOSTILE: Record<string, (n: number) => string> = {
  '&amp; repeated': (n) => '<r>' + '&amp;'.repeat(n / 5) + '</r>',
  'character references repeated': (n) => '<r>' + '&#65;'.repeat(n / 5) + '</r>',
  'references beyond U+FFFF between letters': (n) => '<r>' + '&#x1F600;a'.repeat(n / 10) + '</r>',
  '<![CDATA[x]]> repeated': (n) => '<r>' + '<![CDATA[x]]>'.repeat(n / 13) + '</r>',
  'comments between text': (n) => '<r>' + 'a<!--c-->'.repeat(n / 9) + '</r>',
  'white space between sections': (n) => '<r>' + ' <![CDATA[ ]]> '.repeat(n / 15) + '</r>',
  'CR LF and CR between letters': (n) => '<r>' + 'a\r\nb\r'.repeat(n / 5) + '</r>',
  'attributes with references': (n) => '<r a="' + '&amp;'.repeat(n / 5) + '"/>',
  'elements, nested and side by side': (n) => '<r>' + '<a><b>x</b></a>'.repeat(Math.min(n / 15, 3000)) + '</r>'
}

function counted (doc: string): number {
  const work: WorkCounter = { steps: 0 }
  readXmlQuickly(doc, reader.maxDepth, reader.maxElements, work)
  return work.steps
}

test('linear work: the quick reader examines each character a bounded number of times, and 2n characters cost at most twice n', async (t) => {
  for (const [name, make] of Object.entries(HOSTILE)) {
    const small = make(8000)
    const large = make(16000)
    const a = counted(small)
    const b = counted(large)
    t.not(quick(large), undefined, `${name}: read by the quick reader`)
    t.ok(a >= small.length && b >= large.length, `${name}: every character counted (${a} steps for ${small.length})`)
    t.ok(b <= 8 * large.length, `${name}: ${b} steps for ${large.length} characters, at most 8 per character`)
    t.ok(b <= 2 * a + 64, `${name}: ${a} steps at n, ${b} at 2n`)
  }
})

test('the quick reader answers the plain bodies alone: fast-xml-parser neither validates nor parses them', async (t) => {
  const parse = XMLParser.prototype.parse
  const validate = XMLValidator.validate
  let calls = 0
  XMLParser.prototype.parse = function countedParse (this: XMLParser, ...args: Parameters<XMLParser['parse']>) {
    calls++
    return parse.apply(this, args)
  }
  const validator = XMLValidator as { validate: typeof XMLValidator.validate }
  try {
    validator.validate = (...args) => { calls++; return validate(...args) }
    for (const make of Object.values(HOSTILE)) t.match(parseXmlBody(Buffer.from(make(4000)), undefined), { ok: true })
    t.equal(calls, 0, 'no call into fast-xml-parser')
    t.match(parseXmlBody(Buffer.from('<r><?p?></r>'), undefined), { ok: true, value: '' })
    t.ok(calls > 0, 'a document with a processing instruction goes the full way')
  } finally {
    XMLParser.prototype.parse = parse
    validator.validate = validate
  }
})
