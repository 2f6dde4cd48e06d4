/**
 * The joined hook behaves as Fastify's hook runner (docs/architecture.md, "The kernel"): the
 * steps of one phase are joined into one hook, and whatever a step does at whatever position
 * (returns, refuses, throws any value, calls back later with an error, throws once an
 * earlier asynchronous step resumed), the request takes Fastify's error path: never an
 * uncaught exception, never the handler after a failed step.
 *
 * Generated: every sequence of step kinds in the preHandler and onSend phases.
 */
import { test } from 'tap'
import fc from 'fast-check'
import Fastify from 'fastify'
import { declareConvention, defineConvention } from '../../plugins/host/suite'
import { SENT, type CheckStep, type HookStep, type PayloadCheck, type PayloadStep, type RouteCompiler } from '../../plugins/kernel/types'

const SEED = Number(process.env.FUZZ_SEED ?? 0) || 20261207
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 120

type Kind = 'sync ok' | 'sync refuse' | 'sync throw' | 'sync throw undefined' | 'async ok' | 'async error' | 'async throw at call'
const KINDS: readonly Kind[] = ['sync ok', 'sync refuse', 'sync throw', 'sync throw undefined', 'async ok', 'async error', 'async throw at call']

function refusal (): Error {
  return Object.assign(new Error('refused by a step'), { statusCode: 409 })
}

/** A preHandler step of the given kind. */
function hookStep (kind: Kind): { sync: boolean, fn: CheckStep | HookStep } {
  switch (kind) {
    case 'sync ok': return { sync: true, fn: () => undefined }
    case 'sync refuse': return { sync: true, fn: () => refusal() }
    case 'sync throw': return { sync: true, fn: () => { throw refusal() } }
    // eslint-disable-next-line no-throw-literal -- a step may throw anything, undefined included
    case 'sync throw undefined': return { sync: true, fn: () => { throw undefined } }
    case 'async ok': return { sync: false, fn: (_q, _r, next) => { setImmediate(() => next()) } }
    case 'async error': return { sync: false, fn: (_q, _r, next) => { setImmediate(() => next(refusal())) } }
    case 'async throw at call': return { sync: false, fn: () => { throw refusal() } }
  }
}

/** An onSend step of the given kind (refusals become throws: an onSend check only replaces the payload). */
function payloadStep (kind: Kind): { sync: boolean, fn: PayloadCheck | PayloadStep } {
  switch (kind) {
    case 'sync ok': return { sync: true, fn: () => undefined }
    case 'sync refuse': case 'sync throw': return { sync: true, fn: () => { throw refusal() } }
    // eslint-disable-next-line no-throw-literal -- a step may throw anything, undefined included
    case 'sync throw undefined': return { sync: true, fn: () => { throw undefined } }
    case 'async ok': return { sync: false, fn: (_q, _r, payload, next) => { setImmediate(() => next(null, payload)) } }
    case 'async error': return { sync: false, fn: (_q, _r, _p, next) => { setImmediate(() => next(refusal())) } }
    case 'async throw at call': return { sync: false, fn: () => { throw refusal() } }
  }
}

const fails = (k: Kind): boolean => k !== 'sync ok' && k !== 'async ok'
const isUndefinedThrow = (k: Kind): boolean => k === 'sync throw undefined'

// A convention of the test's own, declared as any third party's is: one step in each phase it uses.
defineConvention({
  key: 'joined-hook-runner-test',
  plugin: 'joined-hook-runner-test',
  configKey: 'joinedHookRunnerTest',
  steps: [
    { name: 'test:step', phase: 'preHandler' },
    { name: 'test:answer', phase: 'preHandler', after: ['test:step'] },
    { name: 'test:step', phase: 'onSend' },
    { name: 'test:check', phase: 'preParsing' },
    { name: 'test:body', phase: 'preParsing', after: ['test:check'] }
  ]
})

async function serve (phase: 'preHandler' | 'onSend', kinds: readonly Kind[]): Promise<{ status: number, handled: boolean }> {
  const app = Fastify()
  let handled = false
  // A convention of the test's own: its steps, in the order given, under names of the phase.
  declareConvention(app, {
    key: 'joined-hook-runner-test',
    plugin: 'joined-hook-runner-test',
    configKey: 'joinedHookRunnerTest',
    compile: (c: RouteCompiler) => {
      for (const kind of kinds) {
        if (phase === 'preHandler') {
          const s = hookStep(kind)
          if (s.sync) c.check('preHandler', 'test:step', s.fn as CheckStep)
          else c.step('preHandler', 'test:step', s.fn as HookStep)
        } else {
          const s = payloadStep(kind)
          if (s.sync) c.check('onSend', 'test:step', s.fn as PayloadCheck)
          else c.step('onSend', 'test:step', s.fn as PayloadStep)
        }
      }
    }
  } as never)
  app.get('/x', async () => { handled = true; return 'ok' })
  try {
    const res = await app.inject({ method: 'GET', url: '/x' })
    return { status: res.statusCode, handled }
  } finally {
    await app.close()
  }
}

test('a joined hook: every throw and rejection at every position takes the error path', async (t) => {
  let uncaught: unknown[] = []
  const tally = { refused: 0, served: 0 }
  const onUncaught = (err: unknown): void => { uncaught.push(err) }
  process.on('uncaughtException', onUncaught)
  t.teardown(() => { process.off('uncaughtException', onUncaught) })
  await fc.assert(fc.asyncProperty(
    fc.constantFrom('preHandler' as const, 'onSend' as const),
    fc.array(fc.constantFrom(...KINDS), { minLength: 2, maxLength: 5 }),
    async (phase, kinds) => {
      uncaught = []
      const { status, handled } = await serve(phase, kinds)
      if (uncaught.length > 0) return false
      const first = kinds.findIndex(fails)
      if (first === -1) { tally.served++; return status === 200 && handled }
      tally.refused++
      // preHandler: the handler never runs after a failed step; onSend: the handler ran already.
      if (phase === 'preHandler' && handled) return false
      const expected = isUndefinedThrow(kinds[first]) ? 500 : 409
      return status === expected
    }
  ), { seed: SEED, numRuns: RUNS })
  t.ok(tally.refused > 0 && tally.served > 0, `sequences that failed (${tally.refused}) and that passed (${tally.served}) were both generated`)
})

test('a throw after an asynchronous step resumed is the route\'s error, not an uncaught exception', async (t) => {
  t.same(await serve('preHandler', ['async ok', 'sync throw']), { status: 409, handled: false })
  t.same(await serve('preHandler', ['async ok', 'async ok', 'async throw at call']), { status: 409, handled: false })
  t.same(await serve('onSend', ['async ok', 'sync throw']), { status: 409, handled: true })
  t.same(await serve('onSend', ['async ok', 'async throw at call']), { status: 409, handled: true })
})

test('a step that answers (SENT) ends the joined hook without the handler', async (t) => {
  const app = Fastify()
  declareConvention(app, {
    key: 'joined-hook-runner-test',
    plugin: 'joined-hook-runner-test',
    configKey: 'joinedHookRunnerTest',
    compile: (c: RouteCompiler) => {
      c.step('preHandler', 'test:step', (_q, _r, next) => { setImmediate(() => next()) })
      c.check('preHandler', 'test:answer', (_q, reply) => { reply.code(204).send(); return SENT })
    }
  } as never)
  let handled = false
  app.get('/x', async () => { handled = true; return 'ok' })
  const res = await app.inject('/x')
  t.equal(res.statusCode, 204)
  t.equal(handled, false)
  await app.close()
})

test('a preParsing check that throws before the body step takes the error path, and the body is never read', async (t) => {
  const app = Fastify()
  let bodySteps = 0
  declareConvention(app, {
    key: 'joined-hook-runner-test',
    plugin: 'joined-hook-runner-test',
    configKey: 'joinedHookRunnerTest',
    compile: (c: RouteCompiler) => {
      c.check('preParsing', 'test:check', (request) => { if (request.headers['x-throw'] !== undefined) throw refusal(); return undefined })
      c.body('test:body', (_q, _r, payload, done) => { bodySteps++; done(null, payload) })
    }
  } as never)
  let handled = 0
  app.post('/x', async () => { handled++; return 'ok' })
  const refused = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json', 'x-throw': '1' }, payload: '{}' })
  t.equal(refused.statusCode, 409)
  t.same([bodySteps, handled], [0, 0], 'neither the body step nor the handler ran')
  const served = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(served.statusCode, 200)
  t.same([bodySteps, handled], [1, 1])
  await app.close()
})
