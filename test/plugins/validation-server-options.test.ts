/**
 * docs/plugins.md (Validation (422)): registered on a server made without `serverOptions`,
 * the suite stops the boot, whether or not any route has a schema.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { boot } from '../helpers/app'
import { httpConventions, httpConventionsValidation, serverOptions } from '../../plugins/index'
import { serverOptionsProblem } from '../../plugins/edge/server-options'

const REFUSED = { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION', message: /made without the suite's server options.*Pass the exported serverOptions to Fastify\(\)/ }

test('docs/plugins.md (Validation (422)): an app without any schema route, made without serverOptions, stops the boot', async (t) => {
  const umbrella = Fastify()
  await umbrella.register(httpConventions)
  umbrella.get('/', async () => 'x')
  await t.rejects(boot(umbrella.ready()), REFUSED, 'the umbrella')
  const alone = Fastify()
  await alone.register(httpConventionsValidation)
  await t.rejects(boot(alone.ready()), REFUSED, 'the validation plugin alone, on an app with no route at all')
  const ajvOnly = Fastify({ ajv: serverOptions.ajv, schemaController: serverOptions.schemaController })
  await ajvOnly.register(httpConventions)
  ajvOnly.get('/', async () => 'x')
  await t.rejects(boot(ajvOnly.ready()), REFUSED, 'Ajv options alone: with no schema route there is nothing to probe them with')
})

test('docs/plugins.md (Validation (422)): with serverOptions an app without any schema route boots; warn logs the problem once, ignore skips it', async (t) => {
  const ok = Fastify({ ...serverOptions })
  await ok.register(httpConventions)
  ok.get('/', async () => 'x')
  await t.resolves(boot(ok.ready()))
  t.equal(serverOptionsProblem(ok), null)
  await ok.close()

  const lines: string[] = []
  const warn = Fastify({ logger: { level: 'warn', stream: { write: (l: string) => { lines.push(l) } } } })
  await warn.register(httpConventions, { validation: { checkServerOptions: 'warn' } })
  warn.get('/', async () => 'x')
  await t.resolves(boot(warn.ready()))
  t.equal(lines.length, 1)
  t.match(lines[0], /made without the suite's server options/)
  await warn.close()

  const ignore = Fastify()
  await ignore.register(httpConventionsValidation, { checkServerOptions: 'ignore' })
  await t.resolves(boot(ignore.ready()))
  await ignore.close()
})
