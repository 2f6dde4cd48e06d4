/**
 * A hostile service against the auditor's outputs (docs/audit.md, Safety): it echoes the
 * request (credentials included) in a header and its body, and puts escape sequences in its
 * status line, a header, a Location and the body, with C0 and C1 controls and U+FFFE. The
 * table, --json and the JUnit file show none of it raw, and the JUnit file is well-formed XML.
 */
import { test, teardown } from 'tap'
import net, { type AddressInfo } from 'node:net'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { XMLValidator } from 'fast-xml-parser'
import { main } from '../src/cli'

const dir = mkdtempSync(join(os.tmpdir(), 'audit-hostile-'))
teardown(() => rmSync(dir, { recursive: true, force: true }))

const USER = 'audit-user'
const PASSWORD = 'S3cret-pa55word'
const TOKEN = 'tok-abcdefghijklmnop'
const BASE64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64')

/** The answer to any request: the request echoed, escapes everywhere a service can put text. */
function hostileAnswer (request: string): Buffer {
  const auth = /^authorization: *(.*)$/im.exec(request)?.[1] ?? ''
  const basic = /^Basic (\S+)/.exec(auth)?.[1]
  const decoded = basic === undefined ? '' : Buffer.from(basic, 'base64').toString('latin1')
  const body = `echo ${auth} ${decoded} ${JSON.stringify({ auth })}\n\x1b]0;owned\x07\x1b[2J\u009b31m\ufffe\x01\u202e` + request
  const bytes = Buffer.from(body, 'utf8')
  const head = [
    'HTTP/1.1 200 OK\x1b]0;title\x07\x1b[2J',
    'Content-Type: text/plain\x1b[31m',
    `X-Echo: ${auth}`,
    'Location: /x\x1b[2J',
    `Content-Length: ${bytes.length}`,
    'Connection: close'
  ].join('\r\n')
  return Buffer.concat([Buffer.from(head + '\r\n\r\n', 'latin1'), bytes])
}

/** A raw TCP service (node:http refuses to write such bytes): answers once the request head is in. */
async function hostileService (): Promise<{ url: string, close: () => Promise<void> }> {
  const server = net.createServer((socket) => {
    let got = ''
    socket.on('data', (d: Buffer) => {
      if (got.includes('\r\n\r\n')) return
      got += d.toString('latin1')
      if (got.includes('\r\n\r\n')) socket.end(hostileAnswer(got))
    })
    socket.on('error', () => undefined)
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

// Characters XML 1.0 allows (2.2 Characters); everything else makes the document ill-formed.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e\ufffe]/

async function audit (args: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const code = await main(['audit', ...args], { stdout: { write: (s: string) => { out += s } }, stderr: { write: (s: string) => { err += s } } })
  return { code, out, err }
}

test('a service that echoes the request and sends escapes: no credential and no raw control character in any output', async (t) => {
  const svc = await hostileService()
  t.teardown(svc.close)
  const config = join(dir, 'config.json')
  writeFileSync(config, JSON.stringify({ collection: '/c', item: '/c/{id}', paths: ['/'], redirects: ['/r'], sample: { a: 'b' }, protected: true }))
  const junit = join(dir, 'audit.xml')
  const common = [svc.url, '--write', '--config', config, '--rate', '0', '--basic', `${USER}:${PASSWORD}`, '--bearer', TOKEN]
  const table = await audit(common)
  const json = await audit([...common, '--json', '--junit', junit])
  const xml = readFileSync(junit, 'utf8')
  t.equal(table.code, 1)
  t.equal(json.code, 1)
  t.match(table.out, /X-Echo: Basic \[redacted\]/, 'the echoed header is shown, redacted')
  t.match(table.out, /HTTP\/1\.1 200 OK\\x1b\]0;title\\x07\\x1b\[2J/, 'the status line is shown, escaped')
  for (const [name, text] of [['table', table.out], ['json', json.out], ['junit', xml]]) {
    for (const secret of [BASE64, BASE64.replace(/=+$/, ''), PASSWORD, TOKEN, `${USER}:${PASSWORD}`]) t.notOk(text.includes(secret), `${name}: no ${secret}`)
    t.notMatch(text, RAW_CONTROL, `${name}: no raw control character`)
  }
  // a program reading the JSON gets escaped text too, not the bytes the service sent
  t.notMatch(JSON.stringify(JSON.parse(json.out), null, 0).replace(/\\u001b/g, 'ESC'), /ESC/)
  t.equal(XMLValidator.validate(xml), true, 'JUnit parses as XML')
  t.notMatch(xml, NOT_XML_CHAR, 'no character XML forbids')
})

test('a status line with escapes given back in a usage error is escaped on stderr', async (t) => {
  const svc = await hostileService()
  t.teardown(svc.close)
  // 200 for everything: ask for a document that is not JSON, the error names the source
  const res = await audit([svc.url, '--openapi', `${svc.url}/doc.json`, '--rate', '0'])
  t.equal(res.code, 2)
  t.match(res.err, /--openapi .*doc\.json: not JSON/)
  t.notMatch(res.err, RAW_CONTROL)
})

test('credentials of one or two characters are redacted where they stand as credentials, and nowhere else', async (t) => {
  const svc = await hostileService()
  t.teardown(svc.close)
  const config = join(dir, 'config-short.json')
  writeFileSync(config, JSON.stringify({ collection: '/c', item: '/c/{id}', paths: ['/'], sample: { a: 'b' }, protected: true }))
  const args = [svc.url, '--write', '--config', config, '--rate', '0', '--basic', 'u:p', '--bearer', 't', '--rule', 'auth', '--rule', 'content-type.response']
  const table = await audit(args)
  const json = await audit([...args, '--json'])
  for (const [name, text] of [['table', table.out], ['json', json.out]]) {
    t.match(text, /content-type\.response/, `${name}: rule ids are whole`)
    t.match(text, /POST \/c/, `${name}: requests are whole`)
    for (const credential of ['u:p', Buffer.from('u:p').toString('base64'), 'Bearer t\\b', 'access_token=t\\b']) t.notMatch(text, new RegExp(credential), `${name}: no ${credential}`)
  }
  t.match(table.out, /X-Echo: Basic \[redacted\]/, 'the echoed Authorization is redacted')
  t.match(table.out, /POST \/c\?access_token=\[redacted\] HTTP\/1\.1/, 'the token in the query is redacted')
})
