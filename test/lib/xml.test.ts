import { test } from 'tap'
import { jsonToXml, parseXml, xmlBodyToJson, xmlToJson } from '../../lib/xml'

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
