/**
 * docs/adding-a-convention.md (The pipeline is open): every convention declares its steps
 * (phase, what it runs after or before), the capabilities it provides, uses and needs, and
 * what it claims of shared response headers; the kernel derives the order from the
 * declarations and refuses, at boot and naming both sides, a cycle, a missing dependency,
 * a second owner of a header, conflicting needs, and a step no convention declared.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { declareConvention, defineConvention, headerClaims, httpConventions, stepOrder } from '../../plugins/index'
import { pipelineOrder } from '../../plugins/kernel/pipeline'

test('the suite\'s own declarations give the order docs/architecture.md describes', async (t) => {
  const builtIn = (names: readonly string[]): string[] => names.filter((n) => !n.startsWith('test:') && !n.startsWith('t-') && n !== 'cache-control')
  t.same(builtIn(stepOrder('preParsing')), ['resource-policy', 'redirect', 'content-length', 'auth', 'content-type', 'patch:media-type', 'content-length:body'])
  t.same(builtIn(stepOrder('preValidation')), ['content-length:framing'])
  t.same(builtIn(stepOrder('preHandler')), ['conditional', 'patch'])
  t.same(builtIn(stepOrder('preSerialization')), ['content-type:xml'])
  t.same(builtIn(stepOrder('onSend')), [
    'resource-policy:missing', 'errors:passed-on', 'auth:challenges', 'content-length:close', 'conditional:elsewhere',
    'content-type:charset', 'conditional', 'patch:accept-patch', 'delta-encoding', 'prefer'
  ])
  t.same(builtIn(stepOrder('unrouted')), ['resource-policy', 'redirect', 'methods'])
  const compile = pipelineOrder().conventions
  t.ok(compile.indexOf('patch') < compile.indexOf('conditional'), 'the validators provider compiles before the convention that uses them')
  t.ok(compile.indexOf('auth') < compile.indexOf('delta-encoding'), 'auth compiles before the convention that keys per-user state by it')
})

test('a cycle of steps is a boot error naming the cycle', async (t) => {
  defineConvention({ key: 't-cycle-a', plugin: 't-cycle-a', steps: [{ name: 't-a', phase: 'preHandler', after: ['t-b'] }] })
  t.throws(() => defineConvention({ key: 't-cycle-b', plugin: 't-cycle-b', steps: [{ name: 't-b', phase: 'preHandler', after: ['t-a'] }] }), {
    code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION',
    message: /preHandler steps make a cycle: t-a runs after t-b, t-b runs after t-a/
  })
  t.notOk(stepOrder('preHandler').includes('t-b'), 'the declaration that made the cycle is not kept')
})

test('a cycle of capabilities is a boot error naming it', async (t) => {
  defineConvention({ key: 't-cap-a', plugin: 't-cap-a', provides: ['t-x'], uses: ['t-y'] })
  t.throws(() => defineConvention({ key: 't-cap-b', plugin: 't-cap-b', provides: ['t-y'], uses: ['t-x'] }), { message: /conventions make a cycle: .*t-cap-b provides what t-cap-a uses|conventions make a cycle: .*t-cap-a provides what t-cap-b uses/ })
})

test('a missing dependency is a boot error naming it when the plugin registers the convention', async (t) => {
  defineConvention({ key: 't-needy', plugin: 't-needy-plugin', configKey: 'tNeedy', needs: ['t-nothing'] })
  const app = Fastify()
  t.throws(() => declareConvention(app, { key: 't-needy', plugin: 't-needy-plugin' }), { message: /t-needy convention needs t-nothing, which no declared convention provides/ })
  defineConvention({ key: 't-typo', plugin: 't-typo-plugin', steps: [{ name: 't-late', phase: 'onSend', after: ['condtional'] }] })
  t.throws(() => declareConvention(app, { key: 't-typo', plugin: 't-typo-plugin' }), { message: /onSend step t-late of the t-typo convention is ordered against condtional, which no declared convention has in onSend/ })
  t.throws(() => declareConvention(app, { key: 't-undeclared', plugin: 't-undeclared' }), { message: /the t-undeclared convention is not declared: declare it with defineConvention/ })
  await app.close()
})

test('two owners of a header, and two needs of it that differ, are boot errors naming both', async (t) => {
  defineConvention({ key: 't-owner', plugin: 't-owner-plugin', headers: { 'x-t-owned': { owns: true } } })
  t.throws(() => defineConvention({ key: 't-owner-2', plugin: 't-owner-2-plugin', headers: { 'x-t-owned': { owns: true } } }), { message: /x-t-owned has two owners, t-owner-2-plugin \(t-owner-2\) and t-owner-plugin \(t-owner\)/ })
  defineConvention({ key: 't-says', plugin: 't-says-plugin', headers: { 'x-t-owned': { says: { 204: 'a' } } } })
  t.throws(() => defineConvention({ key: 't-says-2', plugin: 't-says-2-plugin', headers: { 'x-t-owned': { says: { 204: 'b' } } } }), { message: /x-t-owned on a 204 answer: t-says-2 needs it to say "b", t-says "a"/ })
  t.same(headerClaims('X-T-Owned'), { owner: 't-owner', says: { 204: { by: 't-says', value: 'a' } } })
  t.same(headerClaims('cache-control').says['226'], { by: 'delta-encoding', value: 'no-store, im' }, 'the suite\'s own needs are declared')
})

test('a key, a config key or a step another convention declared is a boot error naming both', async (t) => {
  t.throws(() => defineConvention({ key: 'conditional', plugin: 'mine' }), { message: /conditional convention is already declared, by fastify-http-conventions-conditional/ })
  t.throws(() => defineConvention({ key: 't-mine', plugin: 'mine', configKey: 'patch' }), { message: /config.patch is claimed by both mine \(t-mine\) and fastify-http-conventions-patch \(patch\)/ })
  t.throws(() => defineConvention({ key: 't-mine', plugin: 'mine', steps: [{ name: 'prefer', phase: 'onSend' }] }), { message: /onSend step prefer is declared by both mine \(t-mine\) and fastify-http-conventions-prefer \(prefer\)/ })
  t.throws(() => defineConvention({ key: 't-mine', plugin: 'mine', steps: [{ name: 'x', phase: 'onRequest' as never }] }), { message: /phase onRequest: one of preParsing, preValidation, preHandler, preSerialization, onSend, unrouted/ })
  t.throws(() => defineConvention({ key: 't-mine', plugin: 'mine', steps: [{ name: 'x', phase: 'onSend' }, { name: 'x', phase: 'onSend' }] }), { message: /declares its onSend step x twice/ })
  t.throws(() => defineConvention({ key: '', plugin: 'mine' }), { message: /declares its key/ })
  t.throws(() => defineConvention({ key: 't-mine', plugin: '' }), { message: /t-mine convention declares its plugin's name/ })
  const same = defineConvention({ key: 't-again', plugin: 't-again' })
  t.equal(defineConvention(same), same, 'the same declaration again is a no-op')
})

test('a step no convention declared is a boot error naming the route', async (t) => {
  defineConvention({ key: 't-steps', plugin: 't-steps', configKey: 'tSteps', steps: [{ name: 't-declared', phase: 'onSend' }] })
  const app = Fastify()
  await app.register(httpConventions)
  declareConvention(app, { key: 't-steps', plugin: 't-steps', compile: (c) => { if (c.config.tSteps === true) c.check('onSend', 't-undeclared', () => undefined) } })
  t.throws(() => app.get('/x', { config: { tSteps: true } as never }, async () => 'x'), { message: /route GET \/x: no convention declares the onSend step t-undeclared/ })
  await app.close()
})
