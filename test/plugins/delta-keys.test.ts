import { test } from 'tap'
import Fastify from 'fastify'
import { httpConventions, serverOptions } from '../../plugins/index'
import { MemoryInstanceStore } from '../../plugins/entries/stores'

const users = { alice: 'a-secret', bob: 'b-secret' }
const basic = (user: keyof typeof users): string => 'Basic ' + Buffer.from(`${user}:${users[user]}`).toString('base64')
// Per-user documents that share most bytes: a delta against another user's would be tiny.
const docOf = (user: string, version: number): string => JSON.stringify({ owner: user, secret: `${user}-secret-${'s'.repeat(3000)}`, version })

async function app (opts: { maxInsertsPerClient?: number } = {}) {
  const a = Fastify(serverOptions)
  await a.register(httpConventions, { auth: { realm: 'r', basic: { users } }, deltaEncoding: { store: new MemoryInstanceStore({ maxBytes: 1 << 22 }), ...opts } })
  const version: Record<string, number> = { alice: 1, bob: 1 }
  a.get('/me', { config: { auth: true, deltaEncoding: true, conditional: { validators: (r) => ({ etag: `"${r.principal?.subject ?? ''}-${version[r.principal?.subject ?? ''] ?? 0}"` }) } } },
    async (request, reply) => { reply.type('application/json'); return docOf(request.principal?.subject ?? '', version[request.principal?.subject ?? '']) })
  a.get('/lang', { config: { deltaEncoding: true } }, async (request, reply) => {
    reply.header('vary', 'Accept-Language').header('etag', `"${String(request.headers['accept-language'])}-1"`).type('text/plain')
    return `${String(request.headers['accept-language'])}:${'x'.repeat(3000)}`
  })
  return { a, version }
}

test('delta bases are kept per principal on protected routes: Bob never gets a 226 against Alice\'s representation', async (t) => {
  const { a, version } = await app()
  t.teardown(() => a.close())
  const alice = await a.inject({ url: '/me', headers: { authorization: basic('alice'), 'a-im': 'vcdiff' } })
  t.equal(alice.statusCode, 200)
  const aliceEtag = alice.headers.etag as string
  version.bob = 2
  const bob = await a.inject({ url: '/me', headers: { authorization: basic('bob'), 'a-im': 'vcdiff', 'if-none-match': aliceEtag } })
  t.equal(bob.statusCode, 200, 'Alice\'s instance is no base for Bob')
  t.equal(bob.headers['delta-base'], undefined)
  version.alice = 2
  const again = await a.inject({ url: '/me', headers: { authorization: basic('alice'), 'a-im': 'vcdiff', 'if-none-match': aliceEtag } })
  t.equal(again.statusCode, 226, 'Alice gets her own delta')
  t.equal(again.headers['delta-base'], aliceEtag)
})

test('delta bases are kept per value of the request fields named in Vary (RFC 9110 12.5.5)', async (t) => {
  const { a } = await app()
  t.teardown(() => a.close())
  const fr = await a.inject({ url: '/lang', headers: { 'accept-language': 'fr', 'a-im': 'vcdiff' } })
  const de = await a.inject({ url: '/lang', headers: { 'accept-language': 'de', 'a-im': 'vcdiff', 'if-none-match': fr.headers.etag as string } })
  t.equal(de.statusCode, 200, 'the French instance is no base for a German request')
})

test('one client cannot flush the instance store by varying a query string: its inserts per minute are bounded', async (t) => {
  const store = new MemoryInstanceStore({ maxBytes: 1 << 22 })
  const a = Fastify(serverOptions)
  await a.register(httpConventions, { deltaEncoding: { store, maxInsertsPerClient: 5 } })
  a.get('/q', { config: { deltaEncoding: true } }, async (request, reply) => {
    reply.header('etag', `"${request.url}"`).type('text/plain')
    return `${request.url}:${'y'.repeat(3000)}`
  })
  t.teardown(() => a.close())
  for (let i = 0; i < 50; i++) await a.inject({ url: `/q?flush=${i}`, headers: { 'a-im': 'vcdiff' }, remoteAddress: '10.0.0.1' })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(store.size, 5, 'five instances kept for the flooding client, not fifty')
  await a.inject({ url: '/q?mine', headers: { 'a-im': 'vcdiff' }, remoteAddress: '10.0.0.2' })
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(store.size, 6, 'another client still gets its instance kept')
})
