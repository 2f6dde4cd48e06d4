import { test } from 'tap'
import fc from 'fast-check'
import { XMLBuilder, XMLValidator } from 'fast-xml-parser'
import { decodeXmlBody, jsonToXml, parseXml, parseXmlBody, xmlBodyToJson, xmlName, xmlReader, xmlText, xmlToJson, XmlEncodingError } from '../../lib/xml'

test('schema-driven conversion: booleans, numbers, nulls, arrays, nested objects', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      b: { type: 'boolean' },
      n: { type: 'number' },
      i: { type: ['integer', 'null'] },
      z: { type: 'null' },
      list: { type: 'array', items: { type: 'integer' } },
      empty: { type: 'array' },
      obj: { type: 'object' },
      s: { type: 'string' }
    }
  }
  t.same(xmlBodyToJson('<r><b>false</b><n>1.5</n><i>7</i><z/><list><x>1</x><x>2</x></list><empty/><obj/><s>  </s></r>', schema), {
    b: false, n: 1.5, i: 7, z: null, list: [1, 2], empty: [], obj: {}, s: ''
  })
  t.same(xmlBodyToJson('<r><b>yes</b><n>abc</n><i> </i></r>', schema), { b: 'yes', n: 'abc', i: '' }, 'unconvertible values stay strings for validation to refuse')
  t.same(xmlToJson('text', { type: 'array' }), 'text')
  t.same(xmlToJson({ a: 1, b: 2 }, { type: 'array' }), { a: 1, b: 2 }, 'an array wrapper with two kinds of children is left alone')
  t.same(xmlToJson(['x'], { type: 'object' }), ['x'])
  t.same(xmlToJson({ a: { b: '1' } }, { properties: { a: { properties: { b: { type: 'integer' } } } } }), { a: { b: 1 } })
  t.same(xmlBodyToJson('<r><a>1</a></r>'), { a: '1' }, 'without a schema, values stay strings')
})

test('well-formedness, one root, and no markup declarations', async (t) => {
  t.throws(() => parseXml('<a>'), { name: 'XmlSyntaxError' })
  t.throws(() => parseXml('<a/><b/>'), /exactly one root/)
  t.throws(() => parseXml('<!DOCTYPE a><a/>'), /DOCTYPE/)
  t.throws(() => parseXml('<a><!ELEMENT x ANY></a>'), /DOCTYPE/)
  t.same(parseXml('<!-- c --><a><![CDATA[<b>]]></a>'), { a: '<b>' })
})

test('jsonToXml escapes text and wraps arrays in singular child elements', async (t) => {
  t.equal(jsonToXml({ t: '<&>"', tags: ['a'], items: [{ x: 1 }], q: [true], u: undefined, n: null }, 'root', { items: 'entry' }),
    '<?xml version="1.0" encoding="UTF-8"?><root><t>&lt;&amp;&gt;&quot;</t><tags><tag>a</tag></tags><items><entry><x>1</x></entry></items><q><item>true</item></q><n></n></root>')
  t.equal(jsonToXml([1, 2], 'numbers'), '<?xml version="1.0" encoding="UTF-8"?><numbers><number>1</number><number>2</number></numbers>')
})

test('XML depth limit: elements nested deeper than maxDepth (default 64) are refused before parsing, without recursion', async (t) => {
  const deep = (n: number, inner = 'x'): string => '<a>'.repeat(n) + inner + '</a>'.repeat(n)
  t.doesNotThrow(() => parseXml(deep(64)))
  t.throws(() => parseXml(deep(65)), { name: 'XmlSyntaxError', message: 'XML body is nested deeper than 64 elements' })
  t.throws(() => xmlBodyToJson(deep(100_000)), { name: 'XmlSyntaxError', message: /nested deeper than 64/ })
  t.doesNotThrow(() => parseXml(deep(10, '<b/><c x="a>b"/><!-- <a><a><a> --><![CDATA[<a><a>]]>'), { maxDepth: 11 }), 'empty elements, ">" in attribute values, comments and CDATA do not nest')
  t.throws(() => parseXml(deep(12), { maxDepth: 11 }), /nested deeper than 11/)
  t.throws(() => parseXml('<a>', { maxDepth: 0 }), RangeError)
  t.throws(() => parseXml('<a x="1'), /a tag is not closed/)
  t.throws(() => parseXml('<a><!-- x </a>'), /not closed/)
})

test('XML element bound: more than maxElements elements (default 10,000) are refused by the one-pass check, before any tree is built', async (t) => {
  const many = (n: number): string => '<r>' + '<x/>'.repeat(n - 1) + '</r>'
  t.doesNotThrow(() => parseXml(many(10_000)), 'the root and 9,999 children: 10,000 elements')
  t.throws(() => parseXml(many(10_001)), { name: 'XmlSyntaxError', message: 'XML body has more than 10000 elements' })
  t.throws(() => parseXml('<r><a>1</a><b>2</b></r>', { maxElements: 2 }), /more than 2 elements/, 'start tags count, end tags do not')
  t.doesNotThrow(() => parseXml('<r><!-- <a/><a/> --><![CDATA[<a/>]]></r>', { maxElements: 1 }), 'comments and CDATA hold no elements')
  t.throws(() => parseXml('<a/>', { maxElements: 0 }), RangeError)
  const refused = parseXmlBody(Buffer.from(many(262_000)), undefined)
  t.match(refused, { ok: false, error: { statusCode: 400 } }, 'a 1 MiB body of <x/> is a 400')
  t.match(parseXmlBody(Buffer.from(many(5)), undefined, undefined, { maxElements: 5 }), { ok: true })
})

test('XML 1.0 2.7 and 4.6: references are decoded once, in text; a CDATA section keeps its characters as written, in order with the text around it', async (t) => {
  t.same(parseXml('<r>a &amp;amp; &lt;b&gt; &quot;&apos; &#65;&#x1F600;</r>'), { r: 'a &amp; <b> "\' A\u{1F600}' }, '&amp;amp; is decoded once')
  t.same(parseXml('<r>x &amp; <![CDATA[a &amp; <b>]]> y</r>'), { r: 'x & a &amp; <b> y' })
  t.same(parseXml('<r><!-- <![CDATA[ --><a>1</a><![CDATA[]]></r>'), { r: { a: '1' } }, 'a CDATA opener inside a comment opens nothing')
  t.same(parseXml('<r><a>&lt;<![CDATA[&]]>&gt;</a><a><![CDATA[<x/>]]></a></r>'), { r: { a: ['<&>', '<x/>'] } })
})

test('XML 1.0 2.2 and 4.1: characters outside XML 1.0, raw or as references, are refused; character references are decoded', async (t) => {
  for (const [doc, why] of [
    ['<a>\u0001</a>', /U\+0001, which is not an XML 1.0 character/],
    ['<a>\u0000</a>', /U\+0000/],
    ['<a>\uFFFE</a>', /U\+FFFE/],
    ['<a>\ud800</a>', /lone surrogate/],
    ['<a>&#0;</a>', /refers to U\+0000/],
    ['<a>&#x1;</a>', /refers to U\+0001/],
    ['<a>&#xD800;</a>', /refers to U\+D800/],
    ['<a>&#x110000;</a>', /refers to U\+110000/],
    ['<a>&#xZZ;</a>', /is not a character reference/],
    ['<a>&nbsp;</a>', /"&nbsp;", which is not declared/],
    ['<a x="&copy;"/>', /"&copy;", which is not declared/],
    ['<a>AT&T</a>', /must start a reference/]
  ] as Array<[string, RegExp]>) {
    t.throws(() => parseXml(doc), { name: 'XmlSyntaxError', message: why }, JSON.stringify(doc))
  }
  t.same(xmlBodyToJson('<r><a>&#65;&#x42;&#x1F600;&lt;&amp;#67;&amp;nbsp;</a><b><![CDATA[&nbsp; & <x>]]></b></r>'), { a: 'AB\u{1F600}<&#67;&nbsp;', b: '&nbsp; & <x>' })
  t.same(xmlBodyToJson('<r><t>\ttab&#x9;</t></r>'), { t: 'tab\t' }, 'a reference to a tab is a character (raw white space is trimmed)')
})

const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1')

test('RFC 7303 3.2: without a charset parameter the encoding declaration governs; never decoded into U+FFFD', async (t) => {
  const doc = '<?xml version="1.0" encoding="ISO-8859-1"?><r><t>caf\u00e9 \u00a9</t></r>'
  t.same(parseXmlBody(latin1(doc), undefined), { ok: true, value: { t: 'caf\u00e9 \u00a9' } })
  t.same(parseXmlBody(latin1(doc.replace('ISO-8859-1', 'latin1')), ''), { ok: true, value: { t: 'caf\u00e9 \u00a9' } }, 'an empty charset is no charset')
  t.same(parseXmlBody(latin1("<?xml version='1.0' encoding='us-ascii'?><r><t>plain</t></r>"), undefined), { ok: true, value: { t: 'plain' } })
  t.same(parseXmlBody(Buffer.from('<r><t>caf\u00e9</t></r>', 'utf8'), undefined), { ok: true, value: { t: 'caf\u00e9' } }, 'no declaration: UTF-8 (XML 1.0 4.3.3)')
  // RFC 7303 3.2: a charset parameter is authoritative over the declaration.
  t.same(parseXmlBody(Buffer.from(doc, 'utf8'), 'UTF-8'), { ok: true, value: { t: 'caf\u00e9 \u00a9' } })
  t.same(parseXmlBody(latin1('<r><t>caf\u00e9</t></r>'), 'iso-8859-1'), { ok: true, value: { t: 'caf\u00e9' } })
  const refused = (r: ReturnType<typeof parseXmlBody>): unknown => r.ok ? r : { status: r.error.statusCode, errors: r.error.errors }
  t.match(refused(parseXmlBody(latin1(doc), 'utf-8')), { status: 400, errors: [{ field: 'body', message: /not valid utf-8/ }] }, 'ISO-8859-1 bytes sent as UTF-8')
  t.match(refused(parseXmlBody(latin1('<r><t>caf\u00e9</t></r>'), undefined)), { status: 400, errors: [{ field: 'body', message: /not valid UTF-8/ }] })
  t.match(refused(parseXmlBody(latin1('<?xml version="1.0" encoding="us-ascii"?><r>\u00e9</r>'), undefined)), { status: 400, errors: [{ message: /not valid us-ascii: byte 0xe9/ }] })
  t.match(refused(parseXmlBody(latin1('<?xml version="1.0" encoding="Shift_JIS"?><r/>'), undefined)), { status: 415, errors: [{ field: 'Content-Type', message: /"Shift_JIS", which is not supported/ }] })
  t.match(refused(parseXmlBody(latin1('<r/>'), 'koi8-r')), { status: 415, errors: [{ message: /charset "koi8-r" is not supported/ }] })
  t.match(refused(parseXmlBody(latin1('<?xml version="1.0" encoding="UTF-16"?><r/>'), undefined)), { status: 400, errors: [{ message: /UTF-16 but has no byte order mark/ }] })
  t.match(refused(parseXmlBody(latin1('<r><t>x\u0001</t></r>'), undefined)), { status: 400, errors: [{ message: /U\+0001/ }] })
  t.match(refused(parseXmlBody(latin1('<r>'), undefined)), { status: 400, errors: [{ field: 'body', message: /not well-formed/ }] })
})

test('RFC 7303 3.3 and XML 1.0 4.3.3: a byte order mark decides; UTF-16 is decoded strictly', async (t) => {
  const text = '<?xml version="1.0" encoding="UTF-16"?><r><t>\u00e9\u{1F600}</t></r>'
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
  const be = Buffer.from(le.subarray(2)).swap16()
  t.same(parseXmlBody(le, undefined), { ok: true, value: { t: '\u00e9\u{1F600}' } })
  t.same(parseXmlBody(Buffer.concat([Buffer.from([0xfe, 0xff]), be]), 'utf-16'), { ok: true, value: { t: '\u00e9\u{1F600}' } })
  t.same(parseXmlBody(be, 'utf-16'), { ok: true, value: { t: '\u00e9\u{1F600}' } }, 'RFC 2781 4.3: utf-16 without a BOM is big-endian')
  t.same(parseXmlBody(le.subarray(2), undefined), { ok: true, value: { t: '\u00e9\u{1F600}' } }, 'XML 1.0 Appendix F: "<?" in UTF-16LE')
  t.same(parseXmlBody(be, undefined), { ok: true, value: { t: '\u00e9\u{1F600}' } }, 'XML 1.0 Appendix F: "<?" in UTF-16BE')
  t.same(parseXmlBody(Buffer.from('\ufeff<r><t>x</t></r>', 'utf8'), 'iso-8859-1'), { ok: true, value: { t: 'x' } }, 'a UTF-8 BOM wins over the charset parameter')
  const lone = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<r>', 'utf16le'), Buffer.from([0x00, 0xd8]), Buffer.from('</r>', 'utf16le')])
  t.match(parseXmlBody(lone, undefined), { ok: false, error: { statusCode: 400 } }, 'an unpaired surrogate is not UTF-16')
  t.throws(() => decodeXmlBody(Buffer.from([0xc3, 0x28])), { name: 'XmlSyntaxError' })
  t.throws(() => decodeXmlBody(latin1('<?xml version="1.0" encoding="ebcdic-x"?><r/>')), XmlEncodingError)
})

test('XML 1.0 2.2 and 2.3 on output: names are XML Names and disallowed characters are replaced, so the output is always well-formed', async (t) => {
  const xml = jsonToXml({ 'a b': 1, 'x><y': 2, '@_attr': 3, '#text': 4, '1st': 5, '': 6, 'ns:k': 7, caf\u00e9: 8, '\u{10000}': 9, ctl: 'a\u0000b\u0001\ud800\uFFFE\tok\r\n\u{1F600}' }, 'root')
  t.equal(xml, '<?xml version="1.0" encoding="UTF-8"?><root><a_b>1</a_b><x__y>2</x__y><__attr>3</__attr><_text>4</_text><_1st>5</_1st><_>6</_><ns_k>7</ns_k><caf\u00e9>8</caf\u00e9><_>9</_><ctl>a\ufffdb\ufffd\ufffd\ufffd\tok&#xD;\n\u{1F600}</ctl></root>')
  t.doesNotThrow(() => parseXml(xml))
  t.equal(xmlName('\u0300x'), '_\u0300x', 'a NameChar that cannot start a Name gets a leading "_"')
  t.equal(xmlText('\ud83d\ude00 \udc00'), '\ud83d\ude00 \ufffd')
  // Deep data serializes without recursion.
  let deep: unknown = 'x'
  for (let i = 0; i < 100_000; i++) deep = { a: deep }
  t.equal(jsonToXml(deep, 'r').length, 38 + 7 + 100_000 * 7 + 1)
})

test('property: jsonToXml always produces well-formed XML 1.0, whatever the data', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(
    fc.jsonValue({ maxDepth: 4 }),
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 8 }), { maxKeys: 3 }),
    (value, root, itemNames) => {
      const xml = jsonToXml(value, root, itemNames)
      return XMLValidator.validate(xml) === true && typeof parseXml(xml, { maxDepth: 200 }) === 'object'
    }
  ), { numRuns: 300 }))
})

test('property: for plain names and text, jsonToXml writes what fast-xml-parser\'s builder wrote', async (t) => {
  const builder = new XMLBuilder({ format: false, suppressEmptyNode: false, processEntities: true })
  const toTree = (value: unknown, name: string): unknown => {
    if (Array.isArray(value)) {
      const item = name.length > 1 && name.endsWith('s') ? name.slice(0, -1) : 'item'
      return { [item]: value.map((v) => toTree(v, item)) }
    }
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toTree(v, k)]))
    return value === null ? '' : String(value)
  }
  const name = fc.stringMatching(/^[a-z][a-z0-9]{0,5}s?$/)
  const leaf = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null))
  const data = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('node'), { maxLength: 3 }), fc.dictionary(name, tie('node'), { maxKeys: 3 }))
  })).node
  t.doesNotThrow(() => fc.assert(fc.property(data, name, (value, root) => {
    return jsonToXml(value, root) === '<?xml version="1.0" encoding="UTF-8"?>' + builder.build({ [root]: toTree(value, root) })
  }), { numRuns: 300 }))
})

test('a key that sanitizes to a name XML parsers refuse (__proto__, constructor, prototype) is written so the document parses again', async (t) => {
  for (const key of ['  proto  ', '__proto__', 'constructor', 'prototype']) {
    const xml = jsonToXml({ [key]: ['x'] }, 'root', {})
    t.equal(XMLValidator.validate(xml), true, key)
    t.doesNotThrow(() => parseXml(xml, { maxDepth: 10 }), key)
  }
})

test('xmlReader: bounds checked once, a parser of its own; parsing with it honours its bounds', async (t) => {
  const one = xmlReader({ maxDepth: 2, maxElements: 3 })
  const other = xmlReader({ maxDepth: 2, maxElements: 3 })
  t.not(one.parser, other.parser, 'readers share no parser')
  t.same({ maxDepth: one.maxDepth, maxElements: one.maxElements }, { maxDepth: 2, maxElements: 3 })
  t.same(parseXml('<r><a>1</a></r>', one), { r: { a: '1' } })
  t.throws(() => parseXml('<r><a><b>1</b></a></r>', one), /deeper than 2/)
  t.throws(() => parseXml('<r><a/><b/><c/></r>', one), /more than 3 elements/)
  const body = parseXmlBody(Buffer.from('<r><a><b>1</b></a></r>'), undefined, undefined, one)
  t.equal(body.ok, false)
  t.throws(() => xmlReader({ maxDepth: 0 }), RangeError)
})

// Documents made of text, references, comments, processing instructions, elements and CDATA
// sections (many of them, holding "&", "<", "]]", white space, CR LF and comment openers), each
// written twice: as generated, and with every CDATA section written as the escaped text it
// stands for (XML 1.0 2.7), which holds no section.
type XmlNode = { text: string } | { cdata: string } | { comment: string } | { element: string, children: XmlNode[] }
const CDATA_CHARS = ['x', ' ', '\t', '\n', '\r\n', '\r', '&', '&amp;', '<', '<b>', '>', ']', ']]', '<!--', '-->', '<![CDATA[', '\u00a0', '\u2028', 'é', '\u{1F600}']
const TEXT_PIECES = ['a', ' ', '\n', '\r\n', '\t', '&amp;', '&lt;', '&#32;', '&#x20;', '&#65;', '>', '\u00a0', 'é']
const xmlNodes = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.array(fc.constantFrom(...TEXT_PIECES), { maxLength: 4 }).map((p) => ({ text: p.join('') })),
    fc.array(fc.constantFrom(...CDATA_CHARS), { maxLength: 6 }).map((p) => ({ cdata: p.join('').replaceAll(']]>', ']] >') })),
    fc.array(fc.constantFrom('c', ' ', '<![CDATA[', ']]>', '&', '<'), { maxLength: 3 }).map((p) => ({ comment: p.join('') })),
    fc.record({ element: fc.constantFrom('a', 'b', 'c'), children: fc.array(tie('node'), { maxLength: 4 }) })
  ) as fc.Arbitrary<XmlNode>
})).node

function writeXml (nodes: XmlNode[], escapeCdata: boolean): string {
  return nodes.map((n) => {
    if ('text' in n) return n.text
    if ('cdata' in n) return escapeCdata ? n.cdata.replace(/&/g, '&amp;').replace(/</g, '&lt;') : `<![CDATA[${n.cdata}]]>`
    if ('comment' in n) return `<!--${n.comment.replace(/-(?=-|$)/g, '- ')}-->`
    return `<${n.element}>${writeXml(n.children, escapeCdata)}</${n.element}>`
  }).join('')
}

test('property, XML 1.0 2.7: a CDATA section means its characters as written, in order with the text around it: a document parses as it does with each section written as escaped text', async (t) => {
  const outcome = (doc: string): unknown => {
    const r = parseXmlBody(Buffer.from(doc), undefined)
    return r.ok ? r.value : { status: r.error.statusCode }
  }
  const sections = fc.array(xmlNodes, { maxLength: 40 })
  const failure = fc.check(fc.property(sections, (nodes) => {
    const doc = `<r>${writeXml(nodes, false)}</r>`
    const escaped = `<r>${writeXml(nodes, true)}</r>`
    return JSON.stringify(outcome(doc)) === JSON.stringify(outcome(escaped))
  }), { numRuns: Number(process.env.FUZZ_RUNS ?? 0) || 300, seed: 13 })
  t.notOk(failure.failed, failure.counterexample === null ? 'every document' : `${writeXml(failure.counterexample[0], false)}: ${JSON.stringify(outcome(`<r>${writeXml(failure.counterexample[0], false)}</r>`))}`)
  // Many sections, of every kind, side by side.
  const many = Array.from({ length: 3000 }, (_, i) => ({ cdata: CDATA_CHARS[i % CDATA_CHARS.length] }))
  t.same(outcome(`<r>${writeXml(many, false)}</r>`), outcome(`<r>${writeXml(many, true)}</r>`), '3,000 sections')
})

test('XML 1.0 2.11 within CDATA: CR LF and a lone CR are LF, as in the text around a section; white space at the ends of a text value is trimmed as if the section were text', async (t) => {
  t.same(parseXml('<r><![CDATA[a\r\nb\rc]]></r>'), { r: 'a\nb\nc' })
  t.same(parseXml('<r>\r\n<x/><![CDATA[<\r\n</a>]]></r>'), { r: { x: '', '#text': '<\n</a>' } })
  t.same(parseXml('<r> <![CDATA[  a  ]]> </r>'), { r: 'a' }, 'the section\'s own white space at the ends of the value is trimmed')
  t.same(parseXml('<r><a>x</a><![CDATA[ y ]]><b/> z </r>'), { r: { a: 'x', b: '', '#text': 'yz' } }, 'each run of text around an element is trimmed on its own')
  t.same(parseXml('<r>&#32;<![CDATA[ a ]]>&#32;</r>'), { r: '  a  ' }, 'a reference to a space is a character, not white space to trim')
  t.same(parseXml('<r><![CDATA[ ]]><![CDATA[]]></r>'), { r: '' }, 'sections of white space only, or empty')
})
