/**
 * Which VCDIFF encoder level the delta-encoding plugin uses: `vcdiff.level` when set, for
 * every delta; unset, level 'fast' against a base of at least 2 MiB and level 'default'
 * against smaller ones, on the event loop and in the worker pool alike.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { httpConventionsDeltaEncoding, serverOptions } from '../../plugins/index'
import { MemoryInstanceStore } from '../../plugins/entries/stores'
import { decode, encode, type EncodeOptions } from '../../packages/vcdiff/src/index'
import { boot } from '../helpers/app'
import { edit, text } from '../../packages/vcdiff/test/fixtures/helpers'

const SLOW = 120_000
const MiB = 1024 * 1024
/** Versions 1 and 2 of a document above 2 MiB and of one below (both over 512 KiB, where the levels differ). */
const BIG = [text(2 * MiB + 200_000, 1)]
BIG.push(edit(BIG[0], 400, 2))
const MID = [text(900_000, 3)]
MID.push(edit(MID[0], 300, 4))

/** The delta the plugin answers for version 2 of `doc` to a client holding version 1. */
async function delta (doc: Buffer[], opts: object): Promise<Buffer> {
  const app = Fastify(serverOptions)
  await app.register(httpConventionsDeltaEncoding, { store: new MemoryInstanceStore({ maxBytes: 1 << 26 }), ...opts })
  let version = 0
  app.get('/doc', { config: { deltaEncoding: true } }, async (_req, reply) => {
    reply.header('etag', `"v${version}"`).type('application/octet-stream')
    return doc[version]
  })
  try {
    const first = await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff' } })
    version = 1
    const res = await app.inject({ url: '/doc', headers: { 'a-im': 'vcdiff', 'if-none-match': first.headers.etag as string } })
    if (res.statusCode !== 226) throw new Error(`expected a 226, got ${res.statusCode}`)
    return res.rawPayload
  } finally {
    await app.close()
  }
}

function expected (doc: Buffer[], options: EncodeOptions = {}): Buffer {
  return Buffer.from(encode(doc[0], doc[1], options))
}

test('the plugin encodes against a base of at least 2 MiB at level fast, against a smaller one at level default', async (t) => {
  const bigFast = expected(BIG, { level: 'fast' })
  t.notSame(bigFast, expected(BIG), 'the levels write different deltas for this document')
  for (const [where, offload] of [['on the event loop', false], ['in the worker pool', { minBytes: 1024, threads: 1, deadlineMs: SLOW }]] as const) {
    const big = await delta(BIG, { offload })
    t.same(big, bigFast, `${where}: a 2.2 MB base, level fast`)
    t.same(Buffer.from(decode(BIG[0], big)), BIG[1], `${where}: and the delta decodes exactly`)
    t.same(await delta(MID, { offload }), expected(MID), `${where}: a 900 KB base, level default`)
  }
})

test('vcdiff.level set: that level for every delta, whatever the size of the base', async (t) => {
  t.same(await delta(BIG, { offload: false, vcdiff: { level: 'default' } }), expected(BIG), 'level default on a 2.2 MB base')
  t.same(await delta(MID, { offload: false, vcdiff: { level: 'fast' } }), expected(MID, { level: 'fast' }), 'level fast on a 900 KB base')
  t.same(await delta(BIG, { offload: { minBytes: 1024, threads: 1, deadlineMs: SLOW }, vcdiff: { level: 'default' } }), expected(BIG), 'the worker pool takes the encoder options too')
})

test('vcdiff.level other than fast or default fails at boot', async (t) => {
  for (const level of ['turbo', 3, null]) {
    const app = Fastify()
    app.register(httpConventionsDeltaEncoding, { vcdiff: { level } } as object)
    await t.rejects(boot(app.ready()), new RegExp(`vcdiff.level must be 'fast' or 'default', got ${JSON.stringify(level)}`), String(level))
  }
})
