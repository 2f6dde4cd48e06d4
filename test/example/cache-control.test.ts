/**
 * The Cache-Control convention of example/cache-control/, written only against the public
 * way to add a convention (docs/adding-a-convention.md, "A convention of your own"): what a
 * client sees, who owns the header, and that the page lists exactly the files the example
 * touches.
 */
import { test } from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { buildApp } from '../helpers/app'
import { defineConvention } from '../../plugins/index'
import { cacheControl, cacheControlConvention } from '../../example/cache-control/index'

const ROOT = join(__dirname, '..', '..', '..')

async function app (opts: Parameters<typeof buildApp>[0] = {}, cc: { default?: string } = {}): Promise<Awaited<ReturnType<typeof buildApp>>> {
  const a = await buildApp({ auth: { realm: 'r', basic: { users: { demo: 'pass' } } }, ...opts })
  await a.register(cacheControl, cc)
  return a
}

test('RFC 9111 5.2.2: a route\'s config.cacheControl is what its 2xx GET answers say; other answers are left alone', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  a.get('/a', { config: { cacheControl: 'max-age=60' } }, async () => ({ a: 1 }))
  a.post('/a', { config: { cacheControl: 'max-age=60' } }, async () => ({ a: 1 }))
  a.get('/none', async () => ({ a: 1 }))
  t.equal((await a.inject('/a')).headers['cache-control'], 'max-age=60')
  t.equal((await a.inject({ method: 'POST', url: '/a', payload: {} })).headers['cache-control'], undefined, 'a POST answer is not the policy\'s')
  t.equal((await a.inject('/none')).headers['cache-control'], undefined)
})

test('the owner writes what the other conventions declared they need: no-store on a 401, no-store, im on a 226', async (t) => {
  const a = await app({}, { default: 'public, max-age=600' })
  t.teardown(() => a.close())
  a.get('/private', { config: { auth: true } }, async () => ({ a: 1 }))
  a.get('/delta', async (_request, reply) => reply.code(226).send('d'))
  const refused = await a.inject('/private')
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['cache-control'], 'no-store', 'the error catalogue\'s need, not the default policy')
  t.equal((await a.inject('/delta')).headers['cache-control'], 'no-store, im', 'delta encoding\'s need')
  t.equal((await a.inject({ url: '/private', headers: { authorization: `Basic ${Buffer.from('demo:pass').toString('base64')}` } })).headers['cache-control'], 'public, max-age=600')
})

test('the conditional convention leaves Cache-Control to the owner; an explicit cacheControl option beside it is a boot error naming both', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  a.get('/doc', { config: { conditional: { validators: () => ({ etag: '"v1"' }) }, cacheControl: 'max-age=5' } }, async () => ({ a: 1 }))
  const res = await a.inject('/doc')
  t.equal(res.headers.etag, '"v1"')
  t.equal(res.headers['cache-control'], 'max-age=5', 'not the conditional convention\'s no-store')

  const b = await app({ conditional: { cacheControl: 'no-cache' } })
  t.teardown(() => b.close())
  t.throws(() => b.get('/doc', { config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async () => ({ a: 1 })), {
    message: /Cache-Control is owned by the cache-control convention in this route's context, and the conditional convention's cacheControl option says "no-cache"/
  })
})

test('a second owner of Cache-Control is a boot error naming both', async (t) => {
  t.throws(() => defineConvention({ key: 'my-cache', plugin: 'my-cache-plugin', headers: { 'cache-control': { owns: true } } }), {
    message: /cache-control has two owners, my-cache-plugin \(my-cache\) and example-cache-control \(cache-control\)/
  })
  t.throws(() => defineConvention({ key: 'my-226', plugin: 'my-226-plugin', headers: { 'cache-control': { says: { 226: 'no-cache' } } } }), {
    message: /cache-control on a 226 answer: my-226 needs it to say "no-cache", delta-encoding "no-store, im"/
  })
})

test('a bad config.cacheControl is refused where the route is declared', async (t) => {
  const a = await app()
  t.teardown(() => a.close())
  t.throws(() => a.get('/bad', { config: { cacheControl: 'bad\nvalue' } }, async () => 'x'), { message: /config.cacheControl must be a Cache-Control value/ })
  a.get('/off', { config: { cacheControl: false } }, async (_request, reply) => reply.header('cache-control', 'mine').send('x'))
  t.equal((await a.inject('/off')).headers['cache-control'], 'mine', 'false leaves the route alone')
  await t.rejects(app({}, { default: '' }).then((b) => b.ready()), { message: /default must be a Cache-Control value/ })
})

/** The rows of the table under `heading` in docs/adding-a-convention.md: the file of each row. */
function listedFiles (heading: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'adding-a-convention.md'), 'utf8')
  const section = doc.slice(doc.indexOf(heading))
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| #')))
  return [...table.matchAll(/^\| \d+ \| `([^`]+)` \|/gm)].map((m) => m[1]).sort()
}

/** Every file of the repository (git's view: not node_modules, not build output) that names the example convention. */
function touchingFiles (): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|md)$/.test(entry.name) && /example\/cache-control|cacheControlConvention/.test(readFileSync(path, 'utf8'))) out.push(relative(ROOT, path).split('\\').join('/'))
    }
  }
  walk(ROOT)
  return out.sort()
}

test('docs/adding-a-convention.md lists exactly the files the Cache-Control example touches', async (t) => {
  const listed = listedFiles('## A convention of your own')
  t.ok(listed.length > 0, 'the page has the table')
  t.same(touchingFiles(), listed)
})

test('the example uses only the public way: it imports the package root and Fastify, nothing of the suite\'s insides', async (t) => {
  const source = readFileSync(join(ROOT, 'example', 'cache-control', 'index.ts'), 'utf8')
  const imports = [...source.matchAll(/^import .* from '([^']+)'/gm)].map((m) => m[1])
  t.same(imports.sort(), ['../../plugins/index', 'fastify', 'fastify-plugin'])
  t.equal(cacheControlConvention.key, 'cache-control')
})
