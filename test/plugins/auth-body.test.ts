/**
 * docs/conventions.md (Authentication): the body of a 401 (and of the rfc9110 profile's 403)
 * follows what the request accepts. A browser, or a client that states no preference, gets
 * the small HTML page; a client whose Accept prefers JSON gets the route's JSON error body
 * (the `errors[]` envelope, or problem details where the error format or the rfc9110
 * profile's Accept asks for them), in both profiles. WWW-Authenticate is the same either way,
 * and the answer says `Vary: Accept` (RFC 9110 12.5.5).
 */
import { test } from 'tap'
import { request as httpRequest } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { buildApp, listen } from '../helpers/app'
import type { ErrorFormat, Profile } from '../../plugins/index'

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

async function app (profile: Profile, errorFormat: ErrorFormat = 'envelope'): Promise<FastifyInstance> {
  const a = await buildApp({
    profile,
    errorFormat,
    auth: { realm: 'r', basic: { users: { demo: 'pass' }, scopes: ['read'] }, bearer: { verify: (token) => token === 'reader' ? { subject: 'r', scopes: ['read'] } : null } }
  })
  a.get('/private', { config: { auth: true } }, async () => ({ ok: true }))
  a.get('/scoped', { config: { auth: { scopes: ['write'] } } }, async () => ({ ok: true }))
  a.get('/other', async (_request, reply) => reply.code(401).type('text/plain').send('go away'))
  await a.ready()
  return a
}

function challenges (header: string | string[] | number | undefined): string[] {
  return header === undefined ? [] : Array.isArray(header) ? header : [String(header)]
}

/** The lines of one field as they came on the wire (Node joins repeated lines of most fields). */
function lines (raw: string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) out.push(raw[i + 1])
  return out
}

for (const profile of ['spec', 'rfc9110'] as const) {
  test(`docs/conventions.md (Authentication), ${profile}: a client that prefers JSON gets the errors[] envelope of a 401, with the same challenges`, async (t) => {
    const a = await app(profile)
    t.teardown(() => a.close())
    const page = await a.inject({ url: '/private' })
    const json = await a.inject({ url: '/private', headers: { accept: 'application/json' } })
    t.equal(json.statusCode, 401)
    t.equal(json.headers['content-type'], 'application/json')
    t.same(JSON.parse(json.body), { errors: [{ message: 'Authentication is required to access this resource.' }] })
    t.same(challenges(json.headers['www-authenticate']), challenges(page.headers['www-authenticate']), 'WWW-Authenticate unchanged')
    t.equal(json.headers['cache-control'], 'no-store')
    t.match(json.headers.vary, /Accept/)
  })

  test(`docs/conventions.md (Authentication), ${profile}: a browser, or a client without Accept, gets the HTML page of a 401`, async (t) => {
    const a = await app(profile)
    t.teardown(() => a.close())
    for (const accept of [undefined, BROWSER, '*/*', 'text/html, application/json;q=0.5', 'image/png']) {
      const res = await a.inject({ url: '/private', headers: accept === undefined ? {} : { accept } })
      t.equal(res.headers['content-type'], 'text/html; charset=UTF-8', `Accept: ${String(accept)}`)
      t.match(res.body, /^<!DOCTYPE html>/)
      t.match(res.headers.vary, /Accept/, 'the body was chosen by Accept')
    }
  })

  test(`docs/conventions.md (Authentication), ${profile}: a 401 another producer wrote as text becomes the body the client accepts`, async (t) => {
    const a = await app(profile)
    t.teardown(() => a.close())
    const json = await a.inject({ url: '/other', headers: { accept: 'application/json' } })
    t.equal(json.statusCode, 401)
    t.equal(json.headers['content-type'], 'application/json')
    t.same(JSON.parse(json.body), { errors: [{ message: 'Authentication is required to access this resource.' }] })
    t.equal(challenges(json.headers['www-authenticate']).length, 2, 'the context\'s challenges')
    const page = await a.inject({ url: '/other' })
    t.equal(page.headers['content-type'], 'text/html; charset=UTF-8')
  })
}

test('docs/conventions.md (Authentication), rfc9110: a client that prefers problem details gets them for a 401 and a 403', async (t) => {
  const a = await app('rfc9110')
  t.teardown(() => a.close())
  const res = await a.inject({ url: '/private', headers: { accept: 'application/problem+json' } })
  t.equal(res.headers['content-type'], 'application/problem+json')
  t.match(JSON.parse(res.body), { status: 401, title: 'Unauthorized', detail: 'Authentication is required to access this resource.', instance: '/private', errors: [{ message: 'Authentication is required to access this resource.' }] })
  const scoped = await a.inject({ url: '/scoped', headers: { accept: 'application/json', authorization: 'Bearer reader' } })
  t.equal(scoped.statusCode, 403)
  t.equal(scoped.headers['content-type'], 'application/json')
  t.equal(JSON.parse(scoped.body).errors.length, 1)
  t.match(challenges(scoped.headers['www-authenticate']).join('\n'), /insufficient_scope/)
})

test('docs/conventions.md (Authentication): with errorFormat problem, a JSON client\'s 401 is problem details under both profiles', async (t) => {
  for (const profile of ['spec', 'rfc9110'] as const) {
    const a = await app(profile, 'problem')
    const res = await a.inject({ url: '/private', headers: { accept: 'application/json' } })
    t.equal(res.headers['content-type'], 'application/problem+json', profile)
    t.equal(JSON.parse(res.body).status, 401)
    await a.close()
  }
})

test('docs/conventions.md (Authentication): over a real socket, the 401 body follows Accept and WWW-Authenticate is the same', async (t) => {
  const a = await app('spec')
  t.teardown(() => a.close())
  const port = await listen(a)
  const get = (accept: string): Promise<{ status: number, type: string | undefined, challenges: string[], body: string }> => new Promise((resolve, reject) => {
    const req = httpRequest({ port, path: '/private', headers: { accept } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], challenges: lines(res.rawHeaders, 'www-authenticate'), body }))
    })
    req.on('error', reject)
    req.end()
  })
  const json = await get('application/json')
  const page = await get(BROWSER)
  t.equal(json.status, 401)
  t.equal(json.type, 'application/json')
  t.same(JSON.parse(json.body), { errors: [{ message: 'Authentication is required to access this resource.' }] })
  t.equal(page.type, 'text/html; charset=UTF-8')
  t.same(json.challenges, page.challenges)
  t.equal(json.challenges.length, 2, 'one line per challenge')
})
