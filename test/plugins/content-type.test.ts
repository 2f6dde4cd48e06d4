import { test } from 'tap'
import Fastify from 'fastify'
import { Readable } from 'node:stream'
import { boot, buildApp } from '../helpers/app'
import { httpConventionsContentType } from '../../plugins/index'

const articleSchema = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: {
    title: { type: 'string' },
    published: { type: 'boolean' },
    count: { type: 'integer' },
    tags: { type: 'array', items: { type: 'string' } },
    author: { type: 'object', properties: { name: { type: 'string' } } }
  }
} as const

async function app () {
  const a = await buildApp()
  a.post('/json', async (req) => ({ got: req.body }))
  a.post('/text', async (req) => ({ got: req.body }))
  a.post('/article', { schema: { body: articleSchema } }, async (req) => ({ got: req.body }))
  a.post('/only-json', { config: { contentType: { accept: ['application/json'] } } }, async (req) => ({ got: req.body }))
  a.get('/article', { config: { contentType: { xml: { root: 'article' } } } }, async () => ({ title: 'A & B', published: true, tags: ['x', 'y'], author: { name: 'Ann' }, none: null }))
  a.get('/articles', { config: { contentType: { xml: { root: 'articles', itemNames: { articles: 'article' } } } } }, async () => [{ title: 'one' }, { title: 'two' }])
  a.get('/html', async (_req, reply) => reply.type('text/html').send('<p>hi</p>'))
  a.get('/buffer', async (_req, reply) => reply.send(Buffer.from('raw')))
  a.get('/empty', async (_req, reply) => reply.code(204).send())
  return a
}

test('conventions (Content-Type): a request with a body but no Content-Type is 415 with the envelope (field Content-Type)', async (t) => {
  const a = await app()
  const res = await a.inject({ method: 'POST', url: '/json', payload: '{"a":1}', headers: { 'content-type': '' } })
  t.equal(res.statusCode, 415)
  t.match(res.headers['content-type'], /^application\/json/)
  t.same(res.json(), { errors: [{ field: 'Content-Type', message: 'a request with a body must carry a Content-Type header' }] })
})

test('RFC 9110 8.3.2: charset UTF-8 in any case is accepted; any other charset is 415', async (t) => {
  const a = await app()
  for (const ct of ['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset="Utf-8"', 'application/json']) {
    const res = await a.inject({ method: 'POST', url: '/json', payload: '{"a":1}', headers: { 'content-type': ct } })
    t.equal(res.statusCode, 200, ct)
    t.same(res.json(), { got: { a: 1 } })
  }
  for (const ct of ['application/json; charset=latin1', 'text/plain; charset=iso-8859-1', 'application/json; charset=utf-16']) {
    const res = await a.inject({ method: 'POST', url: '/json', payload: '{"a":1}', headers: { 'content-type': ct } })
    t.equal(res.statusCode, 415, ct)
    t.equal(res.json().errors[0].field, 'Content-Type')
  }
})

test('a malformed or unknown media type is 415 with the envelope', async (t) => {
  const a = await app()
  for (const ct of ['json', 'application/', 'application/json; charset', 'application/json; a=1; a=2', 'image/png']) {
    const res = await a.inject({ method: 'POST', url: '/json', payload: 'x', headers: { 'content-type': ct } })
    t.equal(res.statusCode, 415, ct)
    t.equal(res.json().errors[0].field, 'Content-Type')
  }
})

test('config.contentType.accept restricts a route to its media types', async (t) => {
  const a = await app()
  const ok = await a.inject({ method: 'POST', url: '/only-json', payload: '{}', headers: { 'content-type': 'application/json' } })
  t.equal(ok.statusCode, 200)
  const no = await a.inject({ method: 'POST', url: '/only-json', payload: 'hi', headers: { 'content-type': 'text/plain' } })
  t.equal(no.statusCode, 415)
  t.match(no.json().errors[0].message, /send one of application\/json/)
})

test('JSON that is not well-formed is 400 with the envelope, field body; never 422 or 500', async (t) => {
  const a = await app()
  for (const payload of ['{"a":', '', 'nope', '{"a":1}}']) {
    const res = await a.inject({ method: 'POST', url: '/article', payload, headers: { 'content-type': 'application/json', 'content-length': String(payload.length) } })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().errors[0].field, 'body')
  }
})

test('JSON keeps Fastify\'s protection against __proto__ and constructor.prototype poisoning', async (t) => {
  const a = await app()
  for (const payload of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
    const res = await a.inject({ method: 'POST', url: '/json', payload, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 400)
    t.same(res.json(), { errors: [{ field: 'body', message: 'body contains a forbidden __proto__ or constructor.prototype key' }] })
  }
  t.equal(({} as Record<string, unknown>).admin, undefined)
})

test('text/plain and text/html bodies arrive as strings', async (t) => {
  const a = await app()
  for (const ct of ['text/plain', 'text/html; charset=utf-8']) {
    const res = await a.inject({ method: 'POST', url: '/text', payload: '<b>héllo</b>', headers: { 'content-type': ct } })
    t.same(res.json(), { got: '<b>héllo</b>' }, ct)
  }
})

test('application/xml bodies are converted by the route schema (booleans, integers, arrays)', async (t) => {
  const a = await app()
  const xml = '<?xml version="1.0" encoding="UTF-8"?><article><title>Tom &amp; Jerry</title><published>true</published><count>3</count><tags><tag>a</tag><tag>b</tag></tags><author><name>Ann</name></author></article>'
  const res = await a.inject({ method: 'POST', url: '/article', payload: xml, headers: { 'content-type': 'application/xml' } })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { got: { title: 'Tom & Jerry', published: true, count: 3, tags: ['a', 'b'], author: { name: 'Ann' } } })
  const one = await a.inject({ method: 'POST', url: '/article', payload: '<article><title>x</title><tags><tag>only</tag></tags></article>', headers: { 'content-type': 'application/xml' } })
  t.same(one.json(), { got: { title: 'x', tags: ['only'] } }, 'a single item is still an array')
  const bad = await a.inject({ method: 'POST', url: '/article', payload: '<article><title>x</title><published>maybe</published><zzz>1</zzz></article>', headers: { 'content-type': 'application/xml' } })
  t.equal(bad.statusCode, 422)
  t.same(bad.json().errors.map((e: { field: string }) => e.field).sort(), ['published', 'zzz'])
})

test('XML that is not well-formed, or carries a DOCTYPE/entities, is 400 field body', async (t) => {
  const a = await app()
  const cases = [
    '<article><title>x</title>',
    '<article><title>x</article></title>',
    '<a/><b/>',
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><article><title>&lol2;</title></article>',
    '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><article><title>&xxe;</title></article>',
    '<!-- ok --><!ENTITY x "y"><article/>'
  ]
  for (const payload of cases) {
    const res = await a.inject({ method: 'POST', url: '/article', payload, headers: { 'content-type': 'application/xml' } })
    t.equal(res.statusCode, 400, payload)
    t.equal(res.json().errors[0].field, 'body')
    t.notMatch(res.body, /root:/, 'no file content leaks')
  }
})

test('RFC 9110 12.5.1: opted-in routes answer XML when Accept prefers it, JSON otherwise', async (t) => {
  const a = await app()
  const json = await a.inject({ url: '/article' })
  t.match(json.headers['content-type'], /^application\/json/)
  t.equal(json.headers.vary, 'Accept')
  for (const accept of ['application/xml', 'application/xml, application/json;q=0.5', 'text/html, application/xml;q=0.9']) {
    const xml = await a.inject({ url: '/article', headers: { accept } })
    t.equal(xml.headers['content-type'], 'application/xml; charset=utf-8', accept)
    t.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?><article><title>A &amp; B</title><published>true</published><tags><tag>x</tag><tag>y</tag></tags><author><name>Ann</name></author><none></none></article>')
  }
  for (const accept of ['*/*', 'application/json, application/xml', 'application/*', 'text/csv', 'application/xml;q=0.5, application/json']) {
    const res = await a.inject({ url: '/article', headers: { accept } })
    t.match(res.headers['content-type'], /^application\/json/, accept)
  }
  const list = await a.inject({ url: '/articles', headers: { accept: 'application/xml' } })
  t.equal(list.body, '<?xml version="1.0" encoding="UTF-8"?><articles><article><title>one</title></article><article><title>two</title></article></articles>')
})

test('conventions (Content-Type): every response body carries a Content-Type; text types carry charset=utf-8', async (t) => {
  const a = await app()
  const html = await a.inject({ url: '/html' })
  t.equal(html.headers['content-type'], 'text/html; charset=utf-8')
  const buf = await a.inject({ url: '/buffer' })
  t.equal(buf.headers['content-type'], 'application/octet-stream')
  const empty = await a.inject({ url: '/empty' })
  t.equal(empty.headers['content-type'], undefined, 'no body, no Content-Type')
  const notFound = await a.inject({ url: '/nowhere' })
  t.match(notFound.headers['content-type'], /^application\/json/)
})

test('conventions (Content-Type): charset=utf-8 is added by the type, however many types an app answers with', async (t) => {
  // Each type's answer is decided once and remembered, up to a bound; past it, still decided.
  const a = await buildApp()
  a.get('/typed/:n', async (req, reply) => {
    const n = (req.params as { n: string }).n
    return reply.type(Number(n) % 2 === 0 ? `text/x-kind-${n}` : `application/x-kind-${n}`).send(Buffer.from('body'))
  })
  const wrong: string[] = []
  for (let round = 0; round < 2; round++) {
    for (let n = 0; n < 600; n++) {
      const type = (await a.inject({ url: `/typed/${n}` })).headers['content-type']
      const expected = n % 2 === 0 ? `text/x-kind-${n}; charset=utf-8` : `application/x-kind-${n}`
      if (type !== expected) wrong.push(`${n}: ${String(type)}`)
    }
  }
  t.same(wrong, [], 'text types gain charset=utf-8, other types stay as the handler set them')
})

test('xmlMaxElements: an XML body with more elements is 400 field body, refused before any tree is built', async (t) => {
  const a = Fastify()
  await a.register(httpConventionsContentType, { xmlMaxElements: 3 })
  a.post('/', async (req) => ({ got: req.body }))
  const ok = await a.inject({ method: 'POST', url: '/', payload: '<r><a>1</a><b>2</b></r>', headers: { 'content-type': 'application/xml' } })
  t.equal(ok.statusCode, 200)
  const res = await a.inject({ method: 'POST', url: '/', payload: '<r><a>1</a><b>2</b><c/></r>', headers: { 'content-type': 'application/xml' } })
  t.equal(res.statusCode, 400)
  t.same(res.json().errors, [{ field: 'body', message: 'XML body has more than 3 elements' }])
})

test('two apps in one process parse XML with their own bounds, whichever answers first', async (t) => {
  const shallow = Fastify()
  await shallow.register(httpConventionsContentType, { maxDepth: 2, xmlMaxElements: 2 })
  shallow.post('/', async (req) => ({ got: req.body }))
  const deep = Fastify()
  await deep.register(httpConventionsContentType, { maxDepth: 5, xmlMaxElements: 5 })
  deep.post('/', async (req) => ({ got: req.body }))
  const post = (a: typeof deep, payload: string) => a.inject({ method: 'POST', url: '/', payload, headers: { 'content-type': 'application/xml' } })
  const nested = '<r><a><b>1</b></a></r>'
  for (let round = 0; round < 2; round++) {
    t.equal((await post(deep, nested)).statusCode, 200, 'three levels: within the deep app\'s bounds')
    t.equal((await post(shallow, nested)).statusCode, 400, 'three levels: beyond the shallow app\'s')
  }
  t.equal((await post(shallow, '<r>1</r>')).statusCode, 200)
})

test('registered alone, with XML off; bad options and route config throw at boot', async (t) => {
  const a = Fastify()
  await a.register(httpConventionsContentType, { xml: false })
  a.post('/', async (req) => ({ got: req.body }))
  const res = await a.inject({ method: 'POST', url: '/', payload: '<a/>', headers: { 'content-type': 'application/xml' } })
  t.equal(res.statusCode, 415)
  for (const bad of [{ xml: 'yes' }, { profile: 'x' }, { xmlMaxElements: 0 }, { xmlMaxElements: 1.5 }]) {
    await t.rejects(boot(Fastify().register(httpConventionsContentType, bad as never).ready()), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  }
  const b = Fastify()
  await b.register(httpConventionsContentType)
  for (const contentType of [1, { accept: 'json' }, { accept: ['nope'] }, { xml: {} }, { xml: { root: '' } }]) {
    t.throws(() => b.get('/' + Math.random(), { config: { contentType: contentType as never } }, async () => 'x'), { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' })
  }
  b.post('/off', { config: { contentType: false } }, async (req) => ({ got: req.body ?? null }))
  const off = await b.inject({ method: 'POST', url: '/off', payload: '{}', headers: { 'content-type': 'application/json; charset=latin1' } })
  t.equal(off.statusCode, 200, 'the route opted out of the charset check')
})

test('RFC 9110 15.3.5: a 204 a handler answers with a payload gains no Content-Type', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  app.get('/none', async (_request, reply) => reply.code(204).send('ignored'))
  const res = await app.inject('/none')
  t.equal(res.headers['content-type'], undefined)
  t.equal(res.body, '')
})

test('conventions (Content-Type): a body of unknown type (a stream without a type) is sent as application/octet-stream', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  app.get('/stream', async (_request, reply) => reply.send(Readable.from([Buffer.from('bytes')])))
  const res = await app.inject('/stream')
  t.equal(res.headers['content-type'], 'application/octet-stream')
  t.equal(res.body, 'bytes')
})
