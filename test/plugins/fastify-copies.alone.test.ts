/**
 * README (Install): the app and the suite must use one copy of Fastify. An app made by another
 * copy is refused when the suite is registered, naming both copies and the fix. Alone: it
 * loads a second copy of Fastify into the process.
 */
import { test } from 'tap'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import Fastify from 'fastify'
import { httpConventions, httpConventionsConditional, serverOptions } from '../../plugins/index'
import { otherFastifyCopy } from '../../plugins/infrastructure/adapter'
import { boot } from '../helpers/app'

/** A second install of fastify (its code, not its tests or docs), as a nested node_modules would hold it. */
function secondCopy (dir: string): { Other: typeof Fastify, main: string } {
  const from = join(require.resolve('fastify'), '..')
  const to = join(dir, 'node_modules', 'fastify')
  for (const part of ['package.json', 'fastify.js', 'lib']) cpSync(join(from, part), join(to, part), { recursive: true })
  const main = join(to, 'fastify.js')
  return { Other: require(main) as typeof Fastify, main }
}

test('README (Install): an app made by another copy of Fastify is refused at registration, naming both copies and the fix', async (t) => {
  const { Other, main } = secondCopy(t.testdir({}))
  // What a user meets first with serverOptions: Fastify's own check, which names neither copy.
  t.throws(() => Other({ ...serverOptions }), { code: 'FST_ERR_LOG_INVALID_LOG_CONTROLLER' })
  for (const [name, plugin] of [['the umbrella', httpConventions], ['a plugin alone', httpConventionsConditional]] as const) {
    const app = Other()
    const err = await boot(app.register(plugin).ready()).then(() => null, (e: Error & { code?: string }) => e)
    t.equal(err?.code, 'FST_HTTP_CONVENTIONS_INVALID_OPTION', name)
    t.ok(err?.message.includes(main), `${name}: names the app's copy`)
    t.ok(err?.message.includes(require.resolve('fastify')), `${name}: names the suite's copy`)
    t.match(err?.message, /npm ls fastify.*npm dedupe/, `${name}: names the fix`)
    await app.close()
  }
})

test('an app made by the suite\'s copy of Fastify, root or encapsulated context, is no other copy\'s', async (t) => {
  const app = Fastify({ ...serverOptions })
  t.teardown(() => app.close())
  t.equal(otherFastifyCopy(app), null)
  await app.register(async (child) => { t.equal(otherFastifyCopy(child), null) })
})
