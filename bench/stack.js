'use strict'
/**
 * The `stack` section: the reference service against the stack a user would assemble for
 * the same service, and against the same app without the suite (bench/stack-server.js).
 *
 * - ours vs hand-built stack (Fastify + @fastify/basic-auth + fast-json-patch + fast-xml-parser,
 *   with XML by Accept, the preconditions, Bearer, Digest, 405/OPTIONS, the framing checks,
 *   411, 415 and errors[] written by hand; bench/stack-server.js): target >= 1.0 on every
 *   read and write row;
 * - ours vs plain Fastify (same routes and handlers, no convention): reported, no target;
 * - A/A rows (ours against ours, the stack against the stack, in other processes);
 * - bytes allocated per request of the three (bench/allocation.js's method), each of ours and
 *   the stack's twice (a twin process: the A/A of the bytes); target: ours / stack <= 1.0.
 *
 * CPU rows: bench/harness.js `comparePaired` (server on CPU 0, wrk on CPU 1); the ratio is B's
 * CPU per request over A's (A = ours): above 1, ours costs less. Before anything is timed,
 * `check()` sends every benchmarked request to the three servers, and the error and contract
 * answers (ERROR_CHECKS, CONTRACT_CHECKS: XML, 405, OPTIONS, Bearer, Digest, framing, PUT,
 * DELETE) to ours and the stack, and fails unless ours and the stack give the same status,
 * the same body and the same convention headers (COMPARED says what may differ), and ours and
 * plain the same status and body.
 *
 *   npm run build && NODE_LINE=24 node scripts/node-line.js node bench/stack.js
 *   node bench/stack.js --check     # only the answers check
 */
const { createHash, randomBytes } = require('node:crypto')
const net = require('node:net')
const { isDeepStrictEqual } = require('node:util')
const { comparePaired, printRows, startServer } = require('./harness')
const allocation = require('./allocation')
const { ARTICLE_IDS, BASIC, BODY_2KB } = require('./express-service')
const { authParams } = require('./stack-auth')

// ---------------------------------------------------------------- the benchmarked requests

const UNIQUE = 'uniq0'
const ITEM = `/articles/${ARTICLE_IDS[0]}`

/** If-None-Match with the ETag the server gives the article (each process hashes its own timestamps). */
async function notModified (server, headers = {}) {
  const res = await fetch(`http://127.0.0.1:${server.port}${ITEM}`, { headers })
  await res.arrayBuffer()
  const etag = res.headers.get('etag')
  if (etag === null) throw new Error(`GET ${ITEM} gave no ETag`)
  return { path: ITEM, headers: { ...headers, 'if-none-match': etag } }
}

const REQUESTS = {
  get: { title: 'GET /articles/:id (2 KB article)', kind: 'read', expect: 200, request: { path: ITEM } },
  list: { title: 'GET /articles?limit=5 (5 articles, 10 KB)', kind: 'read', expect: 200, request: { path: '/articles?limit=5' } },
  // The service's default profile (spec): a GET whose If-None-Match matches is 412.
  notModified: { title: 'GET /articles/:id, If-None-Match hit (412)', kind: 'read', expect: 412, request: notModified },
  post: {
    title: 'POST /articles (Basic auth, body schema, insert)',
    kind: 'write',
    expect: 201,
    // every POST creates an article: the harness gives each its own slug
    request: { path: '/articles', method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: JSON.stringify({ slug: `post-${UNIQUE}`, title: 'A new article', body: BODY_2KB.slice(0, 1000), tags: ['bench', 'new'], published: true }), unique: UNIQUE }
  },
  patch: {
    title: 'PATCH /articles/:id (Basic auth, JSON Patch, validated, replace)',
    kind: 'write',
    expect: 200,
    request: { path: `/articles/${ARTICLE_IDS[1]}`, method: 'PATCH', headers: { authorization: BASIC, 'content-type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'test', path: '/slug', value: 'bench-article-2' }, { op: 'replace', path: '/title', value: 'Patched' }]) }
  }
}

// Plain Fastify has no conditional requests: its answer to the If-None-Match hit is a 200.
const PLAIN_KEYS = ['get', 'list', 'post', 'patch']

// Not benchmarked, checked only: the hand-written errors[] mapper and basic-auth give the suite's answers.
// `fields`: status, content type and the errors[] fields are compared, not the messages (the
// stack's 415 names what Fastify names).
const PATCH_JSON = { ...REQUESTS.patch.request.headers }
const ERROR_CHECKS = [
  { title: 'POST, a boolean sent as a string (422: bodies are not coerced)', request: { path: '/articles', method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'strict-body', title: 'Strict', body: 'x', published: 'true' }) } },
  { title: 'POST, invalid body (422 errors[])', request: { path: '/articles', method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'Not A Slug', title: 'x', extra: 1 }) } },
  { title: 'GET ?limit=500 (422 query:limit)', request: { path: '/articles?limit=500' } },
  { title: 'PATCH, a read-only property (422)', request: { ...REQUESTS.patch.request, body: JSON.stringify([{ op: 'replace', path: '/id', value: 'x' }]) } },
  { title: 'PATCH, a title that is not a string (422)', request: { ...REQUESTS.patch.request, body: JSON.stringify([{ op: 'replace', path: '/title', value: 5 }]) } },
  { title: 'PATCH, JSON Merge Patch (200)', request: { ...REQUESTS.patch.request, headers: { ...PATCH_JSON, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ title: 'Merged' }) } },
  { title: 'PATCH, If-Match of another version (412)', request: { ...REQUESTS.patch.request, headers: { ...PATCH_JSON, 'if-match': '"another-version"' } } },
  { title: 'PATCH as application/json (415 with Accept-Patch)', fields: true, request: { ...REQUESTS.patch.request, headers: { ...PATCH_JSON, 'content-type': 'application/json' } } },
  { title: 'POST as text/plain (415)', fields: true, request: { path: '/articles', method: 'POST', headers: { authorization: BASIC, 'content-type': 'text/plain' }, body: REQUESTS.post.request.body } },
  { title: 'POST chunked, no Content-Length (411)', request: { path: '/articles', method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: REQUESTS.post.request.body, chunked: true } },
  { title: 'POST without credentials (401 with every challenge)', request: { path: '/articles', method: 'POST', headers: { 'content-type': 'application/json' }, body: REQUESTS.post.request.body } }
]

// Not benchmarked, checked only: the contract items beyond the benchmarked answers (XML by
// Accept, 405 and OPTIONS, Bearer and Digest beside Basic, framing, PUT and DELETE). A check
// has a `request` (sent with fetch), a `raw` request (bytes on a socket of its own: fetch
// cannot send a repeated Host or a body on a GET) or an `exchange` (a function of the server
// that sends what it needs and returns the answer to compare). `present`: headers whose
// presence only is compared.
const XML = { accept: 'application/xml' }
const POST_BODY = REQUESTS.post.request.body
const post = (headers, body = POST_BODY) => ({ path: '/articles', method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
const xmlArticle = '<article><slug>xml-check</slug><title>From XML</title><body>Sent as XML</body><tags><tag>xml</tag><tag>check</tag></tags><published>true</published></article>'
const rawGet = (lines, body = '') => `GET ${ITEM} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.map((l) => `${l}\r\n`).join('')}Connection: close\r\n\r\n${body}`
const CONTRACT_CHECKS = [
  // XML by Accept (RFC 9110 12.5.1), with its own ETag (RFC 9110 8.8.3) and Vary: Accept
  { title: 'GET /articles/:id as XML (Accept: application/xml)', request: { path: ITEM, headers: XML } },
  { title: 'GET /articles?limit=2 as XML', request: { path: '/articles?limit=2', headers: XML } },
  { title: 'HEAD /articles/:id as XML', request: { path: ITEM, method: 'HEAD', headers: XML } },
  { title: 'GET /articles/:id, XML preferred by weight', request: { path: ITEM, headers: { accept: 'application/json;q=0.5, application/xml' } } },
  { title: 'GET /articles/:id, XML and JSON tied (JSON)', request: { path: ITEM, headers: { accept: 'application/xml, application/json' } } },
  { title: 'GET /articles/:id as XML, If-None-Match of the XML ETag (412)', request: (server) => notModified(server, XML) },
  { title: 'POST, answered as XML (201)', request: post({ authorization: BASIC, ...XML }, POST_BODY.replace('uniq0', 'xml-answer')) },
  { title: 'POST an XML body (201)', request: post({ authorization: BASIC, 'content-type': 'application/xml' }, xmlArticle) },
  // 405 with Allow (RFC 9110 15.5.6), OPTIONS (RFC 9110 9.3.7)
  { title: 'DELETE /articles (405 with Allow)', request: { path: '/articles', method: 'DELETE' } },
  { title: 'POST /articles/:id (405 with Allow)', request: { path: ITEM, method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: '{}' } },
  { title: 'PROPFIND /articles (405 with Allow)', request: { path: '/articles', method: 'PROPFIND' } },
  { title: 'OPTIONS /articles (204 with Allow)', request: { path: '/articles', method: 'OPTIONS' } },
  { title: 'OPTIONS /articles/:id (204 with Allow and Accept-Patch)', request: { path: ITEM, method: 'OPTIONS' } },
  { title: 'OPTIONS * (204 with Allow)', raw: 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' },
  { title: 'GET of a path no route serves (404)', request: { path: '/nothing' } },
  // Bearer (RFC 6750) and Digest (RFC 7616) beside Basic; every 401 carries every challenge
  { title: 'POST, Bearer token with the write scope (201)', request: post({ authorization: 'Bearer demo-write-token' }, POST_BODY.replace('uniq0', 'bearer')) },
  { title: 'POST, Bearer token without the write scope (401 insufficient_scope)', request: post({ authorization: 'Bearer demo-read-token' }) },
  { title: 'POST, unknown Bearer token (401 invalid_token)', request: post({ authorization: 'Bearer not-a-token' }) },
  { title: 'POST, Basic with a wrong password (401)', request: post({ authorization: 'Basic ' + Buffer.from('demo:wrong').toString('base64') }) },
  // the 401's body by Accept (its page, or the JSON error body for a client that prefers JSON), with Vary: Accept
  { title: 'POST, Basic with a wrong password, JSON preferred (401 as JSON)', request: post({ authorization: 'Basic ' + Buffer.from('demo:wrong').toString('base64'), accept: 'text/html;q=0.5, application/json' }) },
  { title: 'POST, Digest MD5 (201)', exchange: (server) => digestPost(server, { algorithm: 'MD5', slug: 'digest-md5' }) },
  { title: 'POST, Digest SHA-256 (201)', exchange: (server) => digestPost(server, { algorithm: 'SHA-256', slug: 'digest-sha256' }) },
  { title: 'POST, Digest with a wrong password (401)', exchange: (server) => digestPost(server, { algorithm: 'MD5', slug: 'digest-wrong', password: 'wrong' }) },
  { title: 'POST, Digest nonce count replayed (401)', exchange: (server) => digestPost(server, { algorithm: 'SHA-256', slug: 'digest-replay', replay: true }) },
  // framing (RFC 9112 3.2, 6.3): checked on every request, before a handler runs
  { title: 'GET with two Host lines (400)', raw: `GET ${ITEM} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: example.com\r\nConnection: close\r\n\r\n` },
  { title: 'POST with two Content-Type lines (400)', raw: `POST /articles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(POST_BODY)}\r\nConnection: close\r\n\r\n${POST_BODY.replace('uniq0', 'types')}` },
  { title: 'POST with two Host lines, no credentials (400)', raw: `POST /articles HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: example.com\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(POST_BODY)}\r\nConnection: close\r\n\r\n${POST_BODY}` },
  { title: 'POST without Content-Length or a body (411, before the credentials)', raw: 'POST /articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n' },
  { title: 'POST chunked, no credentials (411, the connection closes)', raw: 'POST /articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n' },
  { title: 'POST declaring a body over the limit (411, the connection closes)', raw: `POST /articles HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${BASIC}\r\nContent-Type: application/json\r\nContent-Length: 1048577\r\n\r\n{}` },
  { title: 'GET with a chunked body (411)', raw: rawGet(['Transfer-Encoding: chunked'], '2\r\n{}\r\n0\r\n\r\n') },
  { title: 'GET declaring a body over the limit (411)', raw: rawGet(['Content-Length: 1048577'], '{}') },
  { title: 'GET with a 2-byte body (200, the body is not read)', raw: rawGet(['Content-Length: 2'], '{}') },
  // PUT and DELETE: the methods Allow names are served, conditionally (RFC 9110 13.2.2)
  { title: 'PUT, If-Match of another version (412)', request: { path: `/articles/${ARTICLE_IDS[2]}`, method: 'PUT', headers: { authorization: BASIC, 'content-type': 'application/json', 'if-match': '"another-version"' }, body: POST_BODY.replace('uniq0', 'put') } },
  { title: 'PUT, If-Unmodified-Since before the last write (412)', request: { path: `/articles/${ARTICLE_IDS[2]}`, method: 'PUT', headers: { authorization: BASIC, 'content-type': 'application/json', 'if-unmodified-since': 'Sat, 01 Jan 2000 00:00:00 GMT' }, body: POST_BODY.replace('uniq0', 'put') } },
  { title: 'PUT (200)', request: { path: `/articles/${ARTICLE_IDS[2]}`, method: 'PUT', headers: { authorization: BASIC, 'content-type': 'application/json' }, body: POST_BODY.replace('uniq0', 'put') } },
  { title: 'DELETE, If-Match of another version (412)', request: { path: `/articles/${ARTICLE_IDS[9]}`, method: 'DELETE', headers: { authorization: BASIC, 'if-match': '"another-version"' } } },
  { title: 'DELETE (204)', request: { path: `/articles/${ARTICLE_IDS[9]}`, method: 'DELETE', headers: { authorization: BASIC } } },
  { title: 'GET of the deleted article (404)', request: { path: `/articles/${ARTICLE_IDS[9]}` } }
]

/**
 * A Digest POST (RFC 7616 3.4): the challenge of a POST without credentials, then the POST
 * with the response computed for `algorithm`; `replay`: the same nonce count sent again.
 */
async function digestPost (server, { algorithm, slug, password = 'demo-password', replay = false }) {
  const first = await answer(server, post({}))
  const challenge = first.headers['www-authenticate'].split(/,\s*(?=Digest |Basic |Bearer )/).find((c) => c.includes(`algorithm=${algorithm}`))
  const { nonce, opaque, realm } = authParams(challenge)
  const hash = (x) => createHash(algorithm === 'MD5' ? 'md5' : 'sha256').update(x).digest('hex')
  const cnonce = randomBytes(8).toString('hex')
  const nc = '00000001'
  const response = hash(`${hash(`demo:${realm}:${password}`)}:${nonce}:${nc}:${cnonce}:auth:${hash('POST:/articles')}`)
  const authorization = `Digest username="demo", realm="${realm}", nonce="${nonce}", uri="/articles", algorithm=${algorithm}, qop=auth, nc=${nc}, cnonce="${cnonce}", response="${response}", opaque="${opaque}"`
  const once = () => answer(server, post({ authorization }, POST_BODY.replace('uniq0', slug)))
  const res = await once()
  return replay ? await answer(server, post({ authorization }, POST_BODY.replace('uniq0', `${slug}-again`))) : res
}

/** An HTTP/1.1 exchange on a socket of its own: the answer's status, headers (lower-case, repeated ones joined) and body. */
function rawAnswer (server, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => socket.write(text))
    const chunks = []
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('latin1')
      const end = all.indexOf('\r\n\r\n')
      const [statusLine, ...lines] = all.slice(0, end).split('\r\n')
      const headers = {}
      for (const l of lines) {
        const name = l.slice(0, l.indexOf(':')).toLowerCase()
        const value = l.slice(l.indexOf(':') + 1).trim()
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
      }
      const text = all.slice(end + 4)
      let body = text
      try { body = /json/.test(headers['content-type'] ?? '') ? JSON.parse(text) : text } catch {}
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
    // Answers that keep the connection open (a 200 to a GET with a body) are read for 1 s.
    setTimeout(() => socket.end(), 1000).unref()
  })
}

// ---------------------------------------------------------------- the answers check

// Headers the conventions give these answers, compared value for value. Not compared: Date,
// Last-Modified and ETag values (each process stamps and hashes its own times), Content-Length
// (follows the body), Keep-Alive; Content-Type by its essence (ours sends its errors[] as
// `application/json`, Fastify adds `; charset=utf-8`). Compared after normalising: the ETag's
// strength and `.xml` suffix, Location's shape, the challenges with their nonce and opaque
// values blanked (each server's own random), Connection on raw answers (the refusals close).
const COMPARED = ['cache-control', 'accept-patch', 'cross-origin-resource-policy', 'vary', 'allow']

/** WWW-Authenticate with the values each server draws itself (nonce, opaque) blanked. */
const challengesOf = (h) => h['www-authenticate']?.replace(/\b(nonce|opaque)="[^"]*"/g, '$1="-"')

/** The request to send `server`; `unique` becomes `check` (each side is its own process and database). */
async function resolve (request, server) {
  const r = typeof request === 'function' ? await request(server) : request
  const { unique, ...rest } = r
  return unique === undefined ? rest : { ...rest, body: rest.body.replace(unique, 'check') }
}

async function answer (server, request) {
  const r = await resolve(request, server)
  // `chunked`: the body as a stream, so that fetch sends it without Content-Length
  const payload = r.chunked === true ? new Blob([r.body]).stream() : r.body
  const res = await fetch(`http://127.0.0.1:${server.port}${r.path}`, { method: r.method ?? 'GET', headers: r.headers, body: payload, ...(r.chunked === true ? { duplex: 'half' } : {}) })
  const text = await res.text()
  let body = text
  try { body = text === '' ? '' : JSON.parse(text) } catch {}
  return { status: res.status, headers: Object.fromEntries(res.headers), body }
}

/** The parts of an answer that must match: times and the id a POST gave are the server's own. */
function normal (body) {
  // XML: the same times and new ids as JSON's
  if (typeof body === 'string') return body.replace(/<(createdAt|updatedAt)>[^<]*</g, '<$1><time><').replace(/<id>(?!00000000-)[0-9a-f-]{36}</g, '<id><new id><')
  if (body === null || typeof body !== 'object') return body
  if (Array.isArray(body)) return body.map(normal)
  const out = { ...body }
  if ('createdAt' in out) out.createdAt = '<time>'
  if ('updatedAt' in out) out.updatedAt = '<time>'
  if ('id' in out && /^[0-9a-f-]{36}$/.test(out.id) && !ARTICLE_IDS.includes(out.id)) out.id = '<new id>'
  return out
}

function headerDifferences (a, b) {
  const out = []
  const essence = (h) => (h['content-type'] ?? '').split(';')[0].trim()
  if (essence(a.headers) !== essence(b.headers)) out.push(`content-type ${a.headers['content-type']} vs ${b.headers['content-type']}`)
  const strong = (h) => (h.etag === undefined ? 'none' : `${h.etag.startsWith('"') ? 'strong' : 'weak'}${h.etag.endsWith('.xml"') ? ' (XML)' : ''}`)
  if (strong(a.headers) !== strong(b.headers)) out.push(`etag ${a.headers.etag} vs ${b.headers.etag}`)
  for (const h of ['last-modified', 'location']) if ((a.headers[h] === undefined) !== (b.headers[h] === undefined)) out.push(`${h} ${a.headers[h]} vs ${b.headers[h]}`)
  const location = /^\/articles\/[0-9a-f-]{36}$/
  if (a.headers.location !== undefined && !(location.test(a.headers.location) && location.test(b.headers.location))) out.push(`location ${a.headers.location} vs ${b.headers.location}`)
  for (const h of COMPARED) if (a.headers[h] !== b.headers[h]) out.push(`${h} ${a.headers[h]} vs ${b.headers[h]}`)
  if (challengesOf(a.headers) !== challengesOf(b.headers)) out.push(`www-authenticate ${a.headers['www-authenticate']} vs ${b.headers['www-authenticate']}`)
  if (a.raw && a.headers.connection?.toLowerCase() !== b.headers.connection?.toLowerCase()) out.push(`connection ${a.headers.connection} vs ${b.headers.connection}`)
  return out
}

/** The answer to a check of CONTRACT_CHECKS: its exchange, its raw bytes or its request. */
async function contractAnswer (server, { request, raw, exchange }) {
  if (exchange !== undefined) return await exchange(server)
  if (raw !== undefined) return { ...(await rawAnswer(server, raw)), raw: true }
  return await answer(server, request)
}

/**
 * Sends every benchmarked request (and the error checks) to ours, the stack and plain, and
 * throws unless the answers match as the section claims. Returns what was compared.
 */
async function check () {
  const servers = {}
  try {
    for (const name of ['ours', 'stack', 'plain']) servers[name] = await startServer(`stack-server:${name}`)
    const problems = []
    const lines = []
    const compare = (title, a, b, versus, { headers = true, statusOnly = false, fields = false, present = [] } = {}) => {
      const p = []
      const fieldsOf = (x) => (Array.isArray(x.body?.errors) ? x.body.errors.map((e) => e.field) : x.body)
      if (a.status !== b.status) p.push(`status ${a.status} vs ${b.status}`)
      if (fields && !isDeepStrictEqual(fieldsOf(a), fieldsOf(b))) p.push(`errors[] fields ${JSON.stringify(fieldsOf(a))} vs ${JSON.stringify(fieldsOf(b))}`)
      if (!statusOnly && !fields && !isDeepStrictEqual(normal(a.body), normal(b.body))) p.push(`body ${JSON.stringify(a.body).slice(0, 200)} vs ${JSON.stringify(b.body).slice(0, 200)}`)
      if (headers && !statusOnly) p.push(...headerDifferences(a, b))
      for (const h of present) if ((a.headers[h] === undefined) !== (b.headers[h] === undefined)) p.push(`${h} ${a.headers[h]} vs ${b.headers[h]}`)
      if (p.length > 0) problems.push(`${title}, ours vs ${versus}: ${p.join('; ')}`)
      lines.push(`${title}: ours ${a.status}, ${versus} ${b.status}${p.length === 0 ? ' (same answer)' : ' DIFFERENT'}`)
    }
    for (const [key, { title, expect, request }] of Object.entries(REQUESTS)) {
      const ours = await answer(servers.ours, request)
      if (ours.status !== expect) problems.push(`${title}: ours answered ${ours.status}, the bench expects ${expect}`)
      compare(title, ours, await answer(servers.stack, request), 'stack')
      if (PLAIN_KEYS.includes(key)) compare(title, ours, await answer(servers.plain, request), 'plain', { headers: false })
    }
    for (const { title, request, statusOnly, fields, present } of ERROR_CHECKS) compare(title, await answer(servers.ours, request), await answer(servers.stack, request), 'stack', { statusOnly, fields, present })
    for (const c of CONTRACT_CHECKS) compare(c.title, await contractAnswer(servers.ours, c), await contractAnswer(servers.stack, c), 'stack')
    if (problems.length > 0) throw new Error(`the hand-built services do not answer as the reference service does:\n- ${problems.join('\n- ')}`)
    return lines
  } finally {
    for (const s of Object.values(servers)) await s.stop()
  }
}

// ---------------------------------------------------------------- CPU rows

// What each side does per request, for a missed target (bench/report.js prints it).
const DETAILS = {
  get: 'ours negotiates Accept (JSON or XML), evaluates the preconditions on its validators, checks the framing and, once a client has asked the route with A-IM (none does here), keeps each 200 as a possible delta base; the stack checks the framing in an onRequest hook, reads the article once, negotiates Accept and compares If-None-Match with the representation\'s ETag in its handler',
  list: 'both read 5 rows, negotiate Accept and serialize them with the same response schema; ours runs its per-route hooks (Content-Type, resource policy, framing), the stack its two onRequest hooks (resource policy, framing)',
  notModified: 'ours evaluates If-None-Match on its validators before the handler and answers the 412 from its error path (errors[] envelope); the stack reads the article in its handler, negotiates Accept, compares the list and sends the 412 body itself',
  post: 'ours runs its auth plugin (Basic among Digest and Bearer), Content-Length and media-type checks and its bounded Ajv (a first-problem pass); the stack picks the check by the Authorization scheme (@fastify/basic-auth for Basic), runs its framing hook and Fastify\'s Ajv; both hash the article (sha256), insert it and negotiate the answer\'s representation',
  patch: 'ours reads the body with its own reader, applies the patch with its own JSON Patch, checks readOnly and the article schema (its Ajv) and writes with a compare-and-set; the stack parses with Fastify\'s JSON parser, checks the type and If-Match, applies fast-json-patch (a deep clone) and does the same checks and write; both negotiate the answer\'s representation'
}

function num (v, d) {
  return v === undefined || v === '' ? d : Number(v)
}

async function run ({ quick = process.env.BENCH_QUICK === '1', log = (line) => console.log(line) } = {}) {
  const env = process.env
  // The harness's own defaults, as every CPU section: BENCH_PROCESSES (3), BENCH_CPU_ROUNDS (3), BENCH_REQUESTS (15,000).
  const cpu = {}
  const checked = await check()
  for (const line of checked) log(`check: ${line}`)
  const side = (name, variant, key, extra) => ({ name, variant: `stack-server:${variant}`, request: REQUESTS[key].request, expectStatus: REQUESTS[key].expect, ...(extra ? { extra } : {}) })
  const rows = []
  for (const key of Object.keys(REQUESTS)) {
    const { title, kind } = REQUESTS[key]
    log(`stack: ${title}, ours vs hand-built stack`)
    const row = await comparePaired(`${kind}: ${title}, ours vs hand-built stack`, { ...side('ours (reference service)', 'ours', key), target: '>= 1.0' }, side('hand-built stack', 'stack', key), cpu)
    rows.push({ ...row, detail: DETAILS[key] })
  }
  for (const key of PLAIN_KEYS) {
    const { title, kind } = REQUESTS[key]
    log(`stack: ${title}, ours vs plain Fastify`)
    rows.push(await comparePaired(`${kind}: ${title}, ours vs plain Fastify`, { ...side('ours (reference service)', 'ours', key), target: 'reported' }, side('plain Fastify', 'plain', key), cpu))
  }
  log('stack: A/A')
  rows.push(await comparePaired('A/A: ours against ours, GET /articles/:id', { ...side('ours (reference service)', 'ours', 'get'), target: 'reported' }, side('ours (reference service)', 'ours', 'get', { twin: true }), cpu))
  rows.push(await comparePaired('A/A: hand-built stack against itself, GET /articles/:id', { ...side('hand-built stack', 'stack', 'get'), target: 'reported' }, side('hand-built stack', 'stack', 'get', { twin: true }), cpu))
  log('stack: bytes allocated per request')
  const bytes = await allocations({ warmup: num(env.BENCH_STACK_WARMUP, quick ? 500 : 3000), window: num(env.BENCH_STACK_WINDOW, quick ? 1000 : 20000) })
  return { checked, rows, allocation: bytes }
}

// ---------------------------------------------------------------- bytes per request

/**
 * Bytes allocated per request of the three sides (bench/allocation.js `measure`, one process
 * each), and of ours and the stack again in a twin process: the A/A of the bytes, which on a
 * steady request is equal to the byte (a POST's slug grows by a digit now and then).
 */
async function allocations (opts) {
  const out = []
  for (const [key, { title, request, expect }] of Object.entries(REQUESTS)) {
    const row = { request: title, key, untrusted: [] }
    // null where the GC trace was refused twice (bench/allocation.js `readWindow`), with the reason in `untrusted`.
    const bytes = async (name, extra) => {
      const result = await allocation.measure({ name: `${name}: ${title}`, variant: `stack-server:${name}`, request, expectStatus: expect, ...(extra ? { extra } : {}) }, opts)
      if (result.bytes === null) row.untrusted.push(`${name}${extra?.twin ? ' (twin)' : ''}: ${result.untrusted}`)
      return allocation.wholeBytes(result)
    }
    for (const name of PLAIN_KEYS.includes(key) ? ['ours', 'stack', 'plain'] : ['ours', 'stack']) row[name] = await bytes(name)
    row.oursTwin = await bytes('ours', { twin: true })
    row.stackTwin = await bytes('stack', { twin: true })
    out.push(row)
  }
  return out
}

const fixed = (x, d = 3) => (typeof x === 'number' ? x.toFixed(d) : '-')
/** A cell: the bytes, '-' where the row has no such side, or the refusal (never a number from a refused trace). */
const cellOf = (x) => (x === null ? allocation.UNMEASURED : x ?? '-')
const ratioOf = (a, b) => (a === undefined || b === undefined ? '-' : a === null || b === null ? allocation.UNMEASURED : fixed(a / b))

function allocationTable (rows) {
  const lines = [
    '| request | ours B/req | ours A/A twin B/req | hand-built stack B/req | stack A/A twin B/req | plain Fastify B/req | ours/stack (target <= 1.0) | plain/ours |',
    '|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of rows) lines.push(`| ${r.request} | ${cellOf(r.ours)} | ${cellOf(r.oursTwin)} | ${cellOf(r.stack)} | ${cellOf(r.stackTwin)} | ${cellOf(r.plain)} | ${ratioOf(r.ours, r.stack)} | ${ratioOf(r.plain, r.ours)} |`)
  const refused = rows.flatMap((r) => (r.untrusted ?? []).map((why) => `- ${r.request}, ${why}`))
  return refused.length === 0 ? lines.join('\n') : [...lines, '', ...refused].join('\n')
}

/** The bytes targets: ours allocates no more per request than the hand-built stack, on every row. */
function allocationTargets (rows) {
  return rows.map((r) => {
    if (r.ours === null || r.stack === null) {
      return { section: 'stack', target: `bytes/request: ${r.request}, ours / hand-built stack <= 1.0x`, measured: allocation.UNMEASURED, status: 'NOT MEASURED', why: r.untrusted.join('; ') }
    }
    const ratio = r.ours / r.stack
    const met = ratio <= 1.0
    return { section: 'stack', target: `bytes/request: ${r.request}, ours / hand-built stack <= 1.0x`, measured: `${fixed(ratio)}x (${r.ours} B vs ${r.stack} B; twins ${cellOf(r.oursTwin)} B, ${cellOf(r.stackTwin)} B)`, status: met ? 'MET' : 'MISSED', why: met ? '' : `ours allocates ${r.ours - r.stack} B more per request than the stack; ${DETAILS[r.key] ?? ''}` }
  })
}

module.exports = { run, check, allocationTable, allocationTargets, REQUESTS, ERROR_CHECKS, CONTRACT_CHECKS }

if (require.main === module) {
  if (process.argv.includes('--check')) {
    check().then((lines) => console.log(lines.join('\n')), (err) => { console.error(err.message); process.exit(1) })
  } else {
    run().then((v) => console.log(`${printRows(v.rows)}\n\n${allocationTable(v.allocation)}`), (err) => { console.error(err); process.exit(1) })
  }
}
