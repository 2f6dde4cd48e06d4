/**
 * RFC 9110 8.3.1: a Content-Type that is only `type "/" subtype` in lower case (what most
 * clients send: `application/json`) is its own essence. The Content-Type check and the body
 * reader take it as it is; any other value is parsed. The answers are the same either way.
 */
import { test } from 'tap'
import fc from 'fast-check'
import * as mediaType from '../../packages/grammar/src/media-type'
import { isBareEssence } from '../../plugins/services/body-reader'
import { buildApp } from '../helpers/app'

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 200

/** Counts the media-type parses while `fn` runs (the lib's export, as the plugins call it). */
async function countParses (fn: () => Promise<void>): Promise<number> {
  const lib = mediaType as unknown as { parseMediaType: typeof mediaType.parseMediaType }
  const original = lib.parseMediaType
  let calls = 0
  lib.parseMediaType = (...args) => { calls++; return original(...args) }
  try {
    await fn()
  } finally {
    lib.parseMediaType = original
  }
  return calls
}

async function app () {
  const a = await buildApp()
  a.post('/json', async (req) => ({ got: req.body }))
  a.post('/only-json', { config: { contentType: { accept: ['application/json'] } } }, async (req) => ({ got: req.body }))
  return a
}

test('RFC 9110 8.3.1: a bare lower-case Content-Type (application/json) is read without a parse of the media type', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  await a.ready()
  const post = (url: string, type: string) => a.inject({ method: 'POST', url, headers: { 'content-type': type }, payload: '{"a":1}' })
  let res = await post('/json', 'application/json')
  const bare = await countParses(async () => { res = await post('/json', 'application/json') })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { got: { a: 1 } })
  t.equal(bare, 0, 'the Content-Type check and the body reader take the essence as it is')
  // Anything else is parsed, once a request (the spy sees the parses the plugins make).
  for (const type of ['application/json; charset=utf-8', 'Application/JSON', ' application/json']) {
    const parses = await countParses(async () => { res = await post('/json', type) })
    t.equal(res.statusCode, 200, type)
    t.equal(parses, 1, `${JSON.stringify(type)} is parsed once`)
  }
})

test('RFC 9110 15.5.16: a bare Content-Type the route does not accept is the same 415 as the parsed one', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  const post = (type: string) => a.inject({ method: 'POST', url: '/only-json', headers: { 'content-type': type }, payload: 'x' })
  const bare = await post('text/plain')
  const parsed = await post('text/plain; charset=utf-8')
  t.equal(bare.statusCode, 415)
  t.equal(parsed.statusCode, 415)
  t.same(bare.json(), parsed.json(), 'the same body, naming the essence and the accepted types')
  t.equal((await post('application/json')).statusCode, 400, 'an accepted bare type goes on to the parser (x is not JSON)')
})

// Strings near the grammar: tokens, upper case, slashes, whitespace, parameters, quotes.
const nearMediaType = fc.array(fc.constantFrom('a', 'z', '0', '+', '.', '-', '!', '~', 'A', 'J', '/', ' ', '\t', ';', '=', '"', ',', '\u00e9'), { minLength: 0, maxLength: 12 }).map((cs) => cs.join(''))

test('property: a value taken as a bare essence parses to that essence with no parameters (RFC 9110 8.3.1)', async (t) => {
  fc.assert(fc.property(fc.oneof(nearMediaType, fc.string({ maxLength: 12 })), (s) => {
    if (!isBareEssence(s)) return true
    const mt = mediaType.parseMediaType(s)
    return mt !== null && mt.essence === s && Object.keys(mt.parameters).length === 0
  }), { seed: 8301, numRuns: RUNS })
  // And the plain types are taken as bare; the rest are not.
  for (const s of ['application/json', 'text/plain', 'application/merge-patch+json', 'application/vnd.a.b-c']) t.ok(isBareEssence(s), s)
  for (const s of ['', 'application', 'application/', '/json', 'Application/json', 'application/json;', 'application/json ', 'a/b/c']) t.notOk(isBareEssence(s), JSON.stringify(s))
  t.notOk(isBareEssence(`a/${'b'.repeat(mediaType.MAX_MEDIA_TYPE_LENGTH)}`), 'longer than a media type may be (MAX_MEDIA_TYPE_LENGTH)')
})
