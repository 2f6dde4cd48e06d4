/**
 * docs/client.md (Plain http): over plain http the client answers no challenge weaker than
 * `weakestAuth` (RFC 7617 4: Basic sends the password; RFC 6750 5.3: Bearer the token;
 * RFC 7616 5: an MD5 Digest answer can be searched offline). A refused 401 is
 * WEAK_CHALLENGE, and no credential is sent. Real sockets; a host that is not loopback is
 * a name this test resolves to 127.0.0.1 itself.
 */
import { test } from 'tap'
import fc from 'fast-check'
import type { LookupFunction } from 'node:net'
import { Agent, type Dispatcher } from 'undici'
import { recorder, type Recorder } from '../../../test/helpers/client-peers'
import { createConventionsClient } from '../src/client'
import { authInterceptor, isLoopbackHost, type AuthEvent, type WeakestAuth } from '../src/auth'
import { ConventionsClientError, clientErrorCodes } from '../src/errors'

const PASSWORD = 'demo-password'
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 30

/** Every name resolves to 127.0.0.1: a host that is not loopback by name, reached on this machine. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  if (options.all === true) (callback as unknown as (e: null, a: Array<{ address: string, family: number }>) => void)(null, [{ address: '127.0.0.1', family: 4 }])
  else callback(null, '127.0.0.1', 4)
}

const CHALLENGE: Record<string, string> = {
  Basic: 'Basic realm="r"',
  Bearer: 'Bearer realm="r"',
  'Digest MD5': 'Digest realm="r", nonce="n1", qop="auth", algorithm=MD5',
  'Digest SHA-256': 'Digest realm="r", nonce="n2", qop="auth", algorithm=SHA-256',
  'Digest SHA-512-256': 'Digest realm="r", nonce="n3", qop="auth", algorithm=SHA-512-256'
}
/** Weakest first, as docs/client.md (Plain http) orders them. */
const LADDER = ['Basic', 'Bearer', 'Digest MD5', 'Digest SHA-256', 'Digest SHA-512-256']

/** A server that answers 401 with `offered` until a request carries Authorization, then 200. */
async function challenging (offered: string[]): Promise<Recorder> {
  return await recorder((req, res) => {
    if (req.headers.authorization !== undefined) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    res.writeHead(401, { 'www-authenticate': offered.map((o) => CHALLENGE[o]) }).end()
  })
}

function answered (authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined
  if (authorization.startsWith('Digest ')) return `Digest ${/algorithm=([^,]+)/.exec(authorization)?.[1] as string}`
  return authorization.split(' ')[0]
}

async function refusal (promise: Promise<unknown>): Promise<ConventionsClientError> {
  return await promise.then(() => { throw new Error('expected a refusal') }, (e: unknown) => e as ConventionsClientError)
}

test('RFC 7617 4: weakestAuth Digest SHA-256 refuses a 401 offering only Basic over plain http: WEAK_CHALLENGE, and no credentials are sent', async (t) => {
  const server = await challenging(['Basic'])
  t.teardown(() => server.close())
  const client = createConventionsClient({ delta: false, credentials: [{ origin: server.origin, username: 'demo', password: PASSWORD }], weakestAuth: { scheme: 'digest', algorithm: 'SHA-256' } })
  t.teardown(() => client.close())
  const err = await refusal(client.get(`${server.origin}/x?token=s3cret`))
  t.equal(err.code, clientErrorCodes.WEAK_CHALLENGE)
  t.equal(err.status, 401)
  t.same(err.offered, ['Basic'])
  t.match(err.message, /^GET http:\/\/127\.0\.0\.1:\d+\/x\?token=.*: 401 offered only Basic over plain http, weaker than weakestAuth \(Digest SHA-256\): no credentials were sent$/)
  t.notMatch(err.message, /s3cret|demo-password/)
  t.equal(server.requests.length, 1, 'the request was not sent again')
  t.equal(server.requests[0].headers.authorization, undefined, 'no credential reached the server')
})

test('RFC 7616 5: weakestAuth Digest SHA-256 refuses a 401 offering only MD5 Digest; one offering SHA-256 beside it is answered with SHA-256', async (t) => {
  const md5 = await challenging(['Digest MD5'])
  t.teardown(() => md5.close())
  const events: AuthEvent[] = []
  const credentials = [{ origin: md5.origin, username: 'demo', password: PASSWORD }]
  const client = createConventionsClient({ delta: false, credentials, weakestAuth: { scheme: 'digest', algorithm: 'SHA-256' }, onEvent: (e) => { if (e.type === 'challenge-answered') events.push(e) } })
  t.teardown(() => client.close())
  const err = await refusal(client.put(`${md5.origin}/x`, { a: 1 }))
  t.same([err.code, err.offered], [clientErrorCodes.WEAK_CHALLENGE, ['Digest MD5']])
  t.equal(md5.requests.length, 1)
  t.equal(md5.requests[0].headers.authorization, undefined)
  t.same(events, [], 'nothing was answered')

  const both = await challenging(['Digest MD5', 'Digest SHA-256'])
  t.teardown(() => both.close())
  const strong = createConventionsClient({ delta: false, credentials: [{ origin: both.origin, username: 'demo', password: PASSWORD }], weakestAuth: { scheme: 'digest', algorithm: 'SHA-256' } })
  t.teardown(() => strong.close())
  t.equal((await strong.get(`${both.origin}/x`)).status, 200)
  t.equal(answered(both.requests[1].headers.authorization), 'Digest SHA-256')
})

test('docs/client.md (Plain http): by default a host that is not loopback gets no password or token in clear; Digest MD5 is answered; \'any\' answers Basic', async (t) => {
  const agent = new Agent({ connect: { lookup: toLoopback } })
  t.teardown(() => agent.close())
  for (const [offered, credential, expected] of [
    ['Basic', 'password', undefined],
    ['Bearer', 'token', undefined],
    ['Digest MD5', 'password', 'Digest MD5']
  ] as const) {
    const server = await challenging([offered])
    t.teardown(() => server.close())
    const origin = server.origin.replace('127.0.0.1', 'articles.example')
    const credentials = [credential === 'password' ? { origin, username: 'demo', password: PASSWORD } : { origin, token: () => 'a-token' }]
    const client = createConventionsClient({ delta: false, dispatcher: agent, credentials })
    const result = await client.get(`${origin}/x`).then((r) => r.status, (e: ConventionsClientError) => e)
    if (expected === undefined) {
      const err = result as ConventionsClientError
      t.equal(err.code, clientErrorCodes.WEAK_CHALLENGE, offered)
      t.same(err.offered, [offered])
      t.match(err.message, /weaker than weakestAuth \(Digest MD5, the default to a host that is not loopback\)/)
      t.equal(server.requests.length, 1)
      t.equal(server.requests[0].headers.authorization, undefined, `${offered}: nothing sent`)
    } else {
      t.equal(result, 200, offered)
      t.equal(answered(server.requests[1].headers.authorization), expected)
    }
    t.equal(server.requests[0].headers.host, origin.slice('http://'.length), 'the request went to the name')
  }
  const server = await challenging(['Basic'])
  t.teardown(() => server.close())
  const origin = server.origin.replace('127.0.0.1', 'articles.example')
  const any = createConventionsClient({ delta: false, dispatcher: agent, credentials: [{ origin, username: 'demo', password: PASSWORD }], weakestAuth: 'any' })
  t.equal((await any.get(`${origin}/x`)).status, 200, '\'any\' keeps the answer of before')
  t.equal(answered(server.requests[1].headers.authorization), 'Basic')
})

test('docs/client.md (Plain http): a loopback host gets any answer by default; weakestAuth set refuses it there too', async (t) => {
  const server = await challenging(['Basic'])
  t.teardown(() => server.close())
  const credentials = [{ origin: server.origin, username: 'demo', password: PASSWORD }]
  const loose = createConventionsClient({ delta: false, credentials })
  t.teardown(() => loose.close())
  t.equal((await loose.get(`${server.origin}/x`)).status, 200)
  const strict = createConventionsClient({ delta: false, credentials, weakestAuth: { scheme: 'bearer' } })
  t.teardown(() => strict.close())
  const err = await refusal(strict.get(`${server.origin}/y`))
  t.same([err.code, err.offered], [clientErrorCodes.WEAK_CHALLENGE, ['Basic']])
  t.match(err.message, /weaker than weakestAuth \(Bearer\)/)
  t.ok(isLoopbackHost('localhost') && isLoopbackHost('api.localhost') && isLoopbackHost('127.8.9.10') && isLoopbackHost('[::1]') && isLoopbackHost('LOCALHOST'))
  t.notOk(isLoopbackHost('localhost.example') || isLoopbackHost('128.0.0.1') || isLoopbackHost('[::2]') || isLoopbackHost('127.0.0.1.example'))
})

test('docs/client.md (Plain http): over https every answer is given, weakestAuth or not', async (t) => {
  // The interceptor over a dispatch that answers as an https origin would: TLS itself is not the point.
  const sent: Array<string | undefined> = []
  const dispatch: Dispatcher.Dispatch = (opts, handler) => {
    const authorization = (opts.headers as Record<string, string>).authorization
    sent.push(authorization)
    const controller = { aborted: false, paused: false, reason: null, abort () {}, pause () {}, resume () {} }
    handler.onRequestStart?.(controller, {})
    handler.onResponseStart?.(controller, authorization === undefined ? 401 : 200, authorization === undefined ? { 'www-authenticate': 'Basic realm="r"' } : {}, '')
    handler.onResponseEnd?.(controller, {})
    return true
  }
  const intercept = authInterceptor({ credentials: [{ origin: 'https://articles.example', username: 'demo', password: PASSWORD }], weakestAuth: { scheme: 'digest', algorithm: 'SHA-512-256' } })(dispatch)
  const status = await new Promise<number>((resolve, reject) => {
    let code = 0
    intercept({ origin: 'https://articles.example', path: '/x', method: 'GET', headers: {} }, {
      onResponseStart (_c, statusCode) { code = statusCode },
      onResponseEnd () { resolve(code) },
      onResponseError (_c, err) { reject(err) }
    })
  })
  t.equal(status, 200)
  t.same(sent.map(answered), [undefined, 'Basic'])
})

test('weakestAuth is checked when the client or the interceptor is made', async (t) => {
  for (const bad of ['basic', 'none', null, 1, {}, { scheme: 'Basic' }, { scheme: 'basic', algorithm: 'MD5' }, { scheme: 'digest', algorithm: 'SHA-1' }, { scheme: 'digest', algorithm: 'sha-256' }, { scheme: 'digest', alg: 'MD5' }]) {
    t.throws(() => createConventionsClient({ weakestAuth: bad as unknown as WeakestAuth }), { name: 'TypeError', message: /^weakestAuth must be 'any', \{ scheme: 'basic' \}/ }, JSON.stringify(bad))
    t.throws(() => authInterceptor({ credentials: [], weakestAuth: bad as unknown as WeakestAuth }), TypeError)
  }
  for (const good of ['any', { scheme: 'basic' }, { scheme: 'bearer' }, { scheme: 'digest' }, { scheme: 'digest', algorithm: 'SHA-512-256' }] as WeakestAuth[]) {
    t.doesNotThrow(() => authInterceptor({ credentials: [], weakestAuth: good }), JSON.stringify(good))
  }
})

test('property: over plain http the answer is the strongest offered when it is at least weakestAuth; else WEAK_CHALLENGE and nothing is sent', async (t) => {
  const seen = { answered: 0, refused: 0 }
  const weakests: Array<[WeakestAuth, number]> = [['any', 0], [{ scheme: 'basic' }, 0], [{ scheme: 'bearer' }, 1], [{ scheme: 'digest' }, 2], [{ scheme: 'digest', algorithm: 'MD5' }, 2], [{ scheme: 'digest', algorithm: 'SHA-256' }, 3], [{ scheme: 'digest', algorithm: 'SHA-512-256' }, 4]]
  await fc.assert(fc.asyncProperty(
    fc.uniqueArray(fc.constantFrom(...LADDER), { minLength: 1, maxLength: 5 }),
    fc.constantFrom(...weakests),
    async (offered, [weakestAuth, floor]) => {
      const server = await challenging(offered)
      const client = createConventionsClient({ delta: false, weakestAuth, credentials: [{ origin: server.origin, username: 'demo', password: PASSWORD }, { origin: server.origin, token: () => 'a-token' }] })
      try {
        const strongest = offered.reduce((a, b) => (LADDER.indexOf(a) > LADDER.indexOf(b) ? a : b))
        const result = await client.get(`${server.origin}/x`).then((r) => r.status, (e: ConventionsClientError) => e)
        if (LADDER.indexOf(strongest) >= floor) {
          seen.answered++
          return result === 200 && server.requests.length === 2 && answered(server.requests[1].headers.authorization) === strongest
        }
        seen.refused++
        return result instanceof ConventionsClientError && result.code === clientErrorCodes.WEAK_CHALLENGE &&
          server.requests.length === 1 && server.requests[0].headers.authorization === undefined &&
          result.offered.join() === [...offered].sort((a, b) => LADDER.indexOf(b) - LADDER.indexOf(a)).join()
      } finally {
        await client.close()
        await server.close()
      }
    }), { seed: 7616, numRuns: RUNS })
  t.ok(seen.answered > 0 && seen.refused > 0, `both sides were generated: ${seen.answered} answered, ${seen.refused} refused`)
})
