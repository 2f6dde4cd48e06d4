/**
 * The auditor's pure parts (docs/audit.md): the body generator from JSON Schema, the report
 * writers (table, JSON, JUnit XML) and the exit code, the config schema.
 */
import { test } from 'tap'
import net, { type AddressInfo } from 'node:net'
import { once } from 'node:events'
import fc from 'fast-check'
import Ajv from 'ajv'
import { validInstance, violateOne, patchableProperty, type JsonSchema } from '../src/schema-body'
import { exitCode, formatTable, toJson, toJunit, redactCredentials } from '../src/report'
import { Results } from '../src/results'
import { configErrors, targetsFromOpenApi, mergeTargets } from '../src/discovery'
import { createTransport, parseResponse, dechunk, type Exchange } from '../src/transport'
import { retryAfterMs, type AuditReport } from '../src/run'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 50
const ajv = new Ajv({ strict: false })

const ARTICLE: JsonSchema = {
  type: 'object',
  required: ['slug', 'title'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', readOnly: true },
    slug: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' },
    title: { type: 'string', minLength: 1, maxLength: 200 },
    tags: { type: 'array', maxItems: 20, items: { type: 'string' } },
    count: { type: 'integer', minimum: 3 },
    published: { type: 'boolean', default: false }
  }
}

test('generator: a valid instance satisfies the schema, and a violation breaks exactly the named property', async (t) => {
  const body = validInstance(ARTICLE, 'x1')
  t.ok(ajv.validate(ARTICLE, body), JSON.stringify(ajv.errors))
  const v = violateOne(ARTICLE, 'x1')
  t.ok(v !== null)
  t.notOk(ajv.validate(ARTICLE, v?.body))
  t.same(ajv.errors?.map((e) => e.instancePath), [`/${v?.field ?? ''}`])
  t.equal(patchableProperty(ARTICLE), 'title', 'a string without a pattern is what a patch replaces')
  t.equal(violateOne({ type: 'string' }), null, 'no object, no property to break')
})

/** Object schemas of typed properties, with the bounds the generator knows. */
const property = fc.oneof(
  fc.record({ type: fc.constant('string'), minLength: fc.integer({ min: 0, max: 5 }), maxLength: fc.constant(50) }),
  fc.record({ type: fc.constant('string'), pattern: fc.constantFrom('^[a-z0-9]+(-[a-z0-9]+)*$', '^[a-z]+$', '^A') }),
  fc.record({ type: fc.constantFrom('integer', 'number'), minimum: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ type: fc.constant('boolean') }),
  fc.record({ enum: fc.constant(['a', 'b']), type: fc.constant('string') }),
  fc.record({ type: fc.constant('array'), minItems: fc.integer({ min: 0, max: 2 }), items: fc.record({ type: fc.constant('string') }) })
)
const objectSchema = fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), property, { minKeys: 1, maxKeys: 5 })
  .chain((props) => fc.subarray(Object.keys(props)).map((required) => ({ type: 'object', additionalProperties: false, required, properties: props })))

test('generator property: for generated object schemas, valid is valid and the violation fails on its field only', async (t) => {
  let checked = 0
  fc.assert(fc.property(objectSchema, fc.stringMatching(/^[a-z0-9]{1,8}$/), (schema, tag) => {
    if (!ajv.validate(schema, validInstance(schema, tag))) return false
    const v = violateOne(schema, tag)
    if (v === null) return false
    checked++
    return !ajv.validate(schema, v.body) && (ajv.errors ?? []).every((e) => e.instancePath === `/${v.field}`)
  }), { seed: 42, numRuns: RUNS })
  t.equal(checked, RUNS, 'every generated schema produced a violation')
})

function exchange (): Exchange {
  return {
    n: 1,
    request: { method: 'POST', target: '/x', headers: [] },
    rawRequest: 'POST /x HTTP/1.1\r\nHost: a\r\nAuthorization: Basic ZGVtbzpzZWNyZXQ=\r\n\r\n{"a":"<&>"}',
    response: { statusLine: 'HTTP/1.1 400 Bad Request', status: 400, headerLines: [['content-type', 'text/plain']], body: Buffer.from('bad\x01'), head: 'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain' }
  }
}

function report (): AuditReport {
  const r = new Results()
  r.pass('rfc.head')
  r.fail('content-length.missing', 'expected 411, got 400', exchange())
  r.partial('rfc.options', 'Allow does not list PUT')
  r.skipped('delta.226', 'needs --write')
  return { url: 'http://127.0.0.1:1', profile: 'spec', write: true, rules: r.list(), requests: 3, created: 1, leftBehind: ['/x/1'], coverage: { applicable: 1, checked: 1 } }
}

test('report: the table names each rule, and each failure with the request and the answer, credentials redacted', async (t) => {
  const text = formatTable(report())
  t.match(text, /^PASS\s+rfc\.head\s+4 Endpoints\s+1 check$/m)
  t.match(text, /^FAIL\s+content-length\.missing\s+4\.2 Content-Length\s+expected 411, got 400$/m)
  t.match(text, /^SKIPPED\s+delta\.226 .*needs --write$/m)
  t.match(text, /FAIL content-length\.missing: .*\(section 4\.2 Content-Length; RFC 9110 15\.5\.12\)\n {2}expected 411, got 400\n {2}request:\n {4}POST \/x HTTP\/1\.1\n {4}Host: a\n {4}Authorization: Basic \[redacted\]/)
  t.match(text, / {2}answer:\n {4}HTTP\/1\.1 400 Bad Request\n {4}content-type: text\/plain\n\n {4}bad\\x01/)
  t.match(text, /Could not delete: \/x\/1/)
  t.notMatch(text, /ZGVtbzpzZWNyZXQ=/)
  t.equal(redactCredentials('authorization:Digest username="a"\r\nx: y'), 'authorization:Digest [redacted]\r\nx: y')
})

test('report: JSON and JUnit XML carry the same outcomes; the exit code is 1 for a failure or a partial, else 0', async (t) => {
  const json = toJson(report()) as { rules: Array<{ id: string, outcome: string, failures: Array<{ request: string }> }> }
  t.equal(json.rules.find((r) => r.id === 'content-length.missing')?.outcome, 'fail')
  t.notMatch(JSON.stringify(json), /ZGVtbzpzZWNyZXQ=/)
  const xml = toJunit(report())
  t.match(xml, /<testsuites name="fastify-http-conventions audit" tests="\d+" failures="2" skipped="\d+">/)
  t.match(xml, /<testcase classname="4\.2 Content-Length" name="content-length\.missing: [^"]+">\n {6}<failure type="fail" message="expected 411, got 400">request:/)
  t.match(xml, /\{&quot;a&quot;:&quot;&lt;&amp;&gt;&quot;\}/, 'XML special characters escaped')
  t.match(xml, /<skipped message="needs --write"\/>/)
  t.equal(exitCode(report()), 1)
  const clean = new Results()
  clean.pass('rfc.head')
  t.equal(exitCode({ ...report(), rules: clean.list() }), 0, 'passed and skipped rules: 0')
})

test('config: validated by its JSON Schema, each problem named', async (t) => {
  t.same(configErrors({ collection: '/a', redirects: ['/v1'] }), [])
  t.same(configErrors({ collection: 'a', extra: 1 }), ['the config must NOT have additional properties: extra', '/collection must match pattern "^/"'])
  const found = targetsFromOpenApi({ paths: { '/a': { get: {}, post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } }, responses: { 401: {} } } }, '/a/{x}': { get: {}, patch: {} }, '/old': { get: { responses: { 307: {} } } } }, components: { schemas: { A: { type: 'object' } } } })
  t.same(found, { itemMethods: ['GET', 'PATCH', 'HEAD'], redirects: ['/old'], paths: ['/a', '/old'], protected: true, patch: true, collection: '/a', schema: { type: 'object' }, item: '/a/{id}' })
  t.same(mergeTargets(found, { itemMethods: ['GET'], paths: ['/b'] }).patch, false)
})

test('transport: a response is complete by Content-Length, by chunks, or at the close', async (t) => {
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab'), 'GET', false), null)
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nab'), 'GET', false)?.body.toString(), 'ab')
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n'), 'GET', false)?.body.toString(), 'ab')
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\n\r\nuntil close'), 'GET', true)?.body.toString(), 'until close')
  t.equal(parseResponse(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n'), 'HEAD', false)?.body.length, 0, 'HEAD has no content')
  t.equal(dechunk(Buffer.from('5\r\nab')), null)
})

test('transport: one connection at a time, paced to the rate by its clock, and every request counted', async (t) => {
  const server = net.createServer((socket) => {
    socket.once('data', () => setImmediate(() => socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n')))
  })
  // the auditor's sockets, counted from their creation to their 'close'
  let open = 0
  let most = 0
  const connect = net.connect
  net.connect = ((...args: Parameters<typeof net.connect>) => {
    const socket = connect(...args)
    most = Math.max(most, ++open)
    socket.once('close', () => { open-- })
    return socket
  }) as typeof net.connect
  t.teardown(() => { net.connect = connect })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  let clock = 1000
  const waits: number[] = []
  const transport = createTransport({
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    rate: 10,
    timeoutMs: 5000,
    now: () => clock,
    wait: async (ms) => { waits.push(ms); clock += ms }
  })
  const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => transport.send({ method: 'GET', target: `/${i}`, headers: [] })))
  t.same(answers.map((a) => a.response?.status), [204, 204, 204, 204, 204])
  t.same(answers.map((a) => a.n), [1, 2, 3, 4, 5], 'in the order sent')
  t.equal(most, 1, 'never two connections at once')
  t.same(waits, [100, 100, 100, 100], '10 a second: 100 ms between requests on the clock')
  t.equal(transport.exchanges.length, 5)
})

test('transport: a connection the service refuses is an exchange with the socket\'s error and no answer', async (t) => {
  const closed = net.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  const transport = createTransport({ host: '127.0.0.1', port, rate: 0, timeoutMs: 5000 })
  const ex = await transport.send({ method: 'GET', target: '/', headers: [] })
  t.equal(ex.response, null, 'no answer')
  t.match(ex.error, /ECONNREFUSED/, 'the error the socket gave')
})

test('transport: paced by the real timer when no timer is given: each request after the first waits its turn, then is sent', async (t) => {
  const server = net.createServer((socket) => { socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n') })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  // A clock that stands still: every request after the first is a whole gap (1 ms at 1000 a second) early.
  const transport = createTransport({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, rate: 1000, timeoutMs: 5000, now: () => 0 })
  const answers = await Promise.all([1, 2, 3].map(async () => (await transport.send({ method: 'GET', target: '/', headers: [] })).response?.status))
  t.same(answers, [204, 204, 204])
  t.equal(transport.exchanges.length, 3)
})

test('Retry-After: seconds, an HTTP date, 1 s without the field, and nothing for a value that is neither', async (t) => {
  const answer = (value?: string): Exchange => ({ n: 1, request: { method: 'GET', target: '/', headers: [] }, rawRequest: '', response: { statusLine: 'HTTP/1.1 429 Too Many Requests', status: 429, headerLines: value === undefined ? [] : [['retry-after', value]], body: Buffer.alloc(0), head: '' } })
  t.equal(retryAfterMs(answer('2')), 2000)
  t.equal(retryAfterMs(answer('Thu, 01 Jan 2026 00:00:10 GMT'), Date.UTC(2026, 0, 1)), 10000)
  t.equal(retryAfterMs(answer('Thu, 01 Jan 2026 00:00:10 GMT'), Date.UTC(2027, 0, 1)), 0, 'a date past is no wait')
  t.equal(retryAfterMs(answer()), 1000)
  t.equal(retryAfterMs(answer('soon')), null)
})
