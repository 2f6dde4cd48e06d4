/**
 * Conditional updates and patches through the facade (RFC 9110 13.1.1, 13.1.4; RFC 6585 3;
 * RFC 5789; conventions (Conditional requests), (PATCH)), over real sockets: against the
 * reference service in both profiles, and against an app of the suite for a 428, a
 * resource with only Last-Modified and a PATCH route that takes one format; a bare
 * server for a 415 that names the formats.
 */
import { test, type Test } from 'tap'
import { request } from 'undici'
import { startService, type RunningService } from '../../../test/helpers/service'
import { recorder, thingsApp, type Thing } from '../../../test/helpers/client-peers'
import { createConventionsClient, mergePatchBetween, acceptPatchOf, errorOf, type ConventionsClient } from '../src/client'
import { ConventionsClientError, clientErrorCodes, isConventionsClientError, safeUrl } from '../src/errors'

interface Article { id: string, slug: string, title: string, body: string, tags?: string[], published?: boolean }
const writable = (a: Article): Omit<Article, 'id'> => ({ slug: a.slug, title: a.title, body: a.body, tags: a.tags, published: a.published })
const DEMO = { username: 'demo', password: 'demo-password' }

function clientOf (t: Test, origin: string, options: Parameters<typeof createConventionsClient>[0] = {}): ConventionsClient {
  const client = createConventionsClient({ credentials: [{ origin, ...DEMO }], ...options })
  t.teardown(() => client.close())
  return client
}

async function newArticle (client: ConventionsClient, svc: RunningService, slug: string): Promise<string> {
  const created = await client.create(`${svc.url}/articles`, { slug, title: 'count 0', body: 'b' })
  return created.location as string
}

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`${profile}: RFC 9110 13.1.1: ten concurrent updates with If-Match, re-read on 412: none is lost`, async (t) => {
    const svc = await startService({ CONVENTIONS_PROFILE: profile })
    t.teardown(() => svc.stop())
    const client = clientOf(t, svc.url)
    const url = await newArticle(client, svc, 'concurrent')
    const results = await Promise.all(Array.from({ length: 10 }, () => client.update<Article>(url, (a) => ({ ...writable(a), title: `count ${Number(a.title.split(' ')[1]) + 1}` }))))
    const final = await client.get<Article>(url)
    t.equal(final.body.title, 'count 10', 'every update counted')
    t.ok(results.some((r) => r.attempts > 1), `some writers lost a race and tried again (${results.map((r) => r.attempts).join(', ')} tries)`)
  })

  test(`${profile}: RFC 5789: a patch is a JSON Patch computed from the change when Accept-Patch lists it; a 422 carries its errors[]`, async (t) => {
    const svc = await startService({ CONVENTIONS_PROFILE: profile })
    t.teardown(() => svc.stop())
    const client = clientOf(t, svc.url)
    const url = await newArticle(client, svc, 'patched')
    const patched = await client.patch<Article>(url, (a) => ({ ...a, tags: ['one', 'two'], published: true }))
    t.same([patched.status, patched.body.tags, patched.body.published], [200, ['one', 'two'], true])
    const err = await client.patch<Article>(url, (a) => ({ ...a, slug: 'Not A Slug' })).catch((e: unknown) => e) as ConventionsClientError
    t.ok(isConventionsClientError(err))
    t.equal(err.code, clientErrorCodes.UNPROCESSABLE)
    t.equal(err.status, 422)
    t.equal(err.errors[0].field, 'slug')
    const put = await client.update<Article>(url, (a) => ({ ...writable(a), extra: 1 } as unknown as Article)).catch((e: unknown) => e) as ConventionsClientError
    t.equal(put.code, clientErrorCodes.UNPROCESSABLE, 'an update the schema refuses: 422 at once, no retry')
    t.equal(put.attempts, 1)
  })
}

test('RFC 9110 13.1.1: a 412 after the last try is PRECONDITION_FAILED, the change was applied to each fresh version', async (t) => {
  const svc = await startService()
  t.teardown(() => svc.stop())
  const client = clientOf(t, svc.url)
  const url = await newArticle(client, svc, 'always-loses')
  const seen: string[] = []
  // Another writer changes the article between each read and write of this update.
  const err = await client.update<Article>(url, async (a) => {
    seen.push(a.title)
    await client.put(url, { ...writable(a), title: `${a.title}+` }, { headers: { 'if-match': (await client.get(url)).etag as string } })
    return { ...writable(a), title: 'mine' }
  }, { maxAttempts: 3 }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.PRECONDITION_FAILED)
  t.equal(err.status, 412)
  t.equal(err.attempts, 3)
  t.same(seen, ['count 0', 'count 0+', 'count 0++'], 'each try started from the version it read')
  t.match(err.message, /^PUT http:\/\/127\.0\.0\.1:\d+\/articles\/[^ ]+: the resource kept changing: 412 after 3 tries$/)
})

test('RFC 6585 3: a write refused with 428 is repeated once with the If-Match of a HEAD; without a validator it is PRECONDITION_REQUIRED', async (t) => {
  const things = await thingsApp({ suite: { conditional: { requirePrecondition: true } } })
  t.teardown(() => things.app.close())
  things.things.set('a', { doc: { name: 'a', count: 0 }, version: 1 })
  const client = clientOf(t, things.origin)
  const res = await client.put<Thing>(things.url('a'), { name: 'a', count: 5 })
  t.same([res.status, res.attempts, res.body.count, res.etag], [200, 2, 5, '"v2"'])
  const conditional = await client.put(things.url('a'), { name: 'a', count: 6 }, { headers: { 'If-Match': '"v1"' } }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(conditional.code, clientErrorCodes.PRECONDITION_FAILED, 'a caller\'s own precondition is not replaced')
  const bare = await thingsApp({ suite: { conditional: { requirePrecondition: true } }, validators: 'none' })
  t.teardown(() => bare.app.close())
  bare.things.set('a', { doc: { name: 'a', count: 0 }, version: 1 })
  const err = await client.put(bare.url('a'), { name: 'a', count: 1 }).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.PRECONDITION_REQUIRED)
  const update = await client.update<Thing>(bare.url('a'), (x) => ({ ...x, count: 1 })).catch((e: unknown) => e) as ConventionsClientError
  t.equal(update.code, clientErrorCodes.PRECONDITION_REQUIRED, 'an update of a resource without validators cannot be made conditional')
})

test('RFC 9110 13.1.4: a resource with only Last-Modified is updated with If-Unmodified-Since', async (t) => {
  const things = await thingsApp({ validators: 'last-modified' })
  t.teardown(() => things.app.close())
  things.things.set('a', { doc: { name: 'a', count: 0 }, version: 1 })
  const client = clientOf(t, things.origin)
  const res = await client.update<Thing>(things.url('a'), (x) => ({ ...x, count: x.count + 1 }))
  t.same([res.status, res.body.count, res.etag], [200, 1, undefined])
})

test('RFC 7396: a merge patch when the resource takes only merge patches; one that must set null cannot be written', async (t) => {
  const things = await thingsApp({ patchFormats: ['merge-patch'] })
  t.teardown(() => things.app.close())
  things.things.set('a', { doc: { name: 'a', count: 0, tags: ['x'] }, version: 1 })
  const client = clientOf(t, things.origin)
  const res = await client.patch<Thing>(things.url('a'), (x) => ({ name: x.name, count: 3 }))
  t.same(res.body, { name: 'a', count: 3 }, 'count changed, tags removed (null)')
  const err = await client.patch<Thing>(things.url('a'), (x) => ({ ...x, tags: null } as unknown as Thing)).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNSUPPORTED_MEDIA_TYPE)
  t.same(err.acceptPatch, ['application/merge-patch+json'])
})

test('RFC 5789 2.2: a 415 names the formats the resource takes; the patch is sent once more in one of them, or refused with UNSUPPORTED_MEDIA_TYPE', async (t) => {
  let doc = { a: 1, b: { c: 2 } }
  const server = await recorder((req, res) => {
    if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json', etag: '"1"' }).end(JSON.stringify(doc))
    if (req.url === '/xml-only' || req.headers['content-type'] !== 'application/merge-patch+json') {
      return res.writeHead(415, { 'accept-patch': req.url === '/xml-only' ? 'application/xml-patch+xml' : 'application/merge-patch+json;charset=utf-8' }).end()
    }
    doc = { a: 2, b: { c: 2 } }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
  })
  t.teardown(() => server.close())
  const client = clientOf(t, server.origin)
  const res = await client.patch<typeof doc>(`${server.origin}/doc`, (d) => ({ ...d, a: 2 }))
  t.same([res.body, res.attempts], [{ a: 2, b: { c: 2 } }, 2])
  t.equal(server.requests[1].headers['content-type'], 'application/json-patch+json', 'first a JSON Patch, with nothing listed')
  t.same(JSON.parse(server.requests[2].body.toString()), { a: 2 }, 'then the merge patch the 415 named')
  t.equal(server.requests[2].headers['if-match'], '"1"')
  const err = await client.patch(`${server.origin}/xml-only`, (d) => ({ ...(d as object), a: 3 })).catch((e: unknown) => e) as ConventionsClientError
  t.equal(err.code, clientErrorCodes.UNSUPPORTED_MEDIA_TYPE)
  t.same([err.status, err.acceptPatch], [415, ['application/xml-patch+xml']])
  const put = await client.update(`${server.origin}/put`, (d) => d).catch((e: unknown) => e) as ConventionsClientError
  t.equal(put.code, clientErrorCodes.UNSUPPORTED_MEDIA_TYPE, 'a PUT refused with 415 is not tried again')
})

test('answers: errors of other statuses, non-JSON bodies, the response bound, a client made on a dispatcher of the caller', async (t) => {
  const server = await recorder((req, res) => {
    if (req.url === '/text') return res.writeHead(200, { 'content-type': 'text/plain' }).end('plain')
    if (req.url === '/empty') return res.writeHead(204).end()
    if (req.url === '/untyped') return res.writeHead(200).end('raw')
    if (req.url === '/big') return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000))
    res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ message: 'down', code: 'DB' }, 'junk'] }))
  })
  t.teardown(() => server.close())
  const { Agent } = await import('undici')
  const agent = new Agent()
  t.teardown(() => agent.close())
  const deltas: string[] = []
  const client = createConventionsClient({ dispatcher: agent, maxResponseBytes: 1000, delta: { onResponse: (e) => deltas.push(e.url) }, headers: { 'x-app': '1' } })
  t.same((await client.get(`${server.origin}/text`)).body, 'plain')
  t.same((await client.get(`${server.origin}/untyped`)).body, 'raw', 'no type: text')
  t.same(deltas, [`${server.origin}/text`, `${server.origin}/untyped`], 'the delta options\' own listener is called')
  t.equal((await client.delete(`${server.origin}/empty`)).body, undefined)
  const big = await client.get(`${server.origin}/big`).catch((e: unknown) => e) as ConventionsClientError
  t.equal(big.code, clientErrorCodes.HTTP_STATUS)
  const down = await client.request('POST', `${server.origin}/down?token=s3cret`, { body: Buffer.from('x'), contentType: 'text/plain' }).catch((e: unknown) => e) as ConventionsClientError
  t.same([down.code, down.status, down.errors], [clientErrorCodes.HTTP_STATUS, 503, [{ message: 'down', code: 'DB' }]])
  t.notMatch(down.message, /s3cret/, 'a secret query value is redacted')
  t.equal(server.requests.at(-1)?.headers['x-app'], '1')
  await client.close()
  t.equal((await request(`${server.origin}/text`, { dispatcher: agent })).statusCode, 200, 'the caller\'s dispatcher is not closed by the client')
  t.throws(() => createConventionsClient({ maxAttempts: 0 }), RangeError)
})

test('pure parts: merge patches between versions, Accept-Patch lists, errors, safe URLs', async (t) => {
  t.same(mergePatchBetween({ a: 1, b: { c: 1, d: 2 }, e: [1] }, { a: 1, b: { c: 2, d: 2 }, e: [2], f: 'new' }), { b: { c: 2 }, e: [2], f: 'new' })
  t.same(mergePatchBetween({ a: 1 }, [1]), [1])
  t.same(acceptPatchOf(['application/json-patch+json', 'application/merge-patch+json; charset=utf-8, bad type']), ['application/json-patch+json', 'application/merge-patch+json'])
  t.same(acceptPatchOf(undefined), [])
  t.same(acceptPatchOf('"unterminated'), [])
  const res = { status: 401, headers: {}, body: undefined, etag: undefined, location: undefined, attempts: 1 }
  t.equal(errorOf('GET', 'http://user:pw@x/', res, 1).message, 'GET http://x/: the credentials were refused (401)')
  t.equal(errorOf('GET', 'http://x/', { ...res, status: 415 }, 1).message, 'GET http://x/: 415: the server accepts another format')
  t.equal(errorOf('GET', 'http://x/', { ...res, status: 422, body: { errors: [{ message: 'm' }] } }, 1).message, 'GET http://x/: 422: m')
  t.equal(safeUrl('not a url'), '(invalid URL)')
  t.equal(new ConventionsClientError(clientErrorCodes.HTTP_STATUS, 'plain').message, 'plain')
})
