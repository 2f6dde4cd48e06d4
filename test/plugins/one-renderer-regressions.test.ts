/**
 * docs/architecture.md (Errors: one renderer): the "not modified" 412s are rendered as every
 * other error. Regressions: the 412 answered before the handler echoed a request path of any
 * length as `instance`, where every other problem leaves out one over 256 characters (RFC 9457
 * 3.1.5); the 412 made of a handler's 304 was the JSON envelope under `errorFormat: 'problem'`,
 * and under rfc9110 followed neither Accept nor said `Vary: Accept` (RFC 9457 3, RFC 9110
 * 12.5.5); the guard's 500 was the envelope under `errorFormat: 'problem'`.
 */
import { test } from 'tap'
import Fastify from 'fastify'
import { buildApp } from '../helpers/app'
import { httpConventions, preconditionFailed, serverOptions } from '../../plugins/index'

const PROBLEM = 'application/problem+json'
const LONG = `/${'a'.repeat(300)}`

test('RFC 9457 3.1.5: the "not modified" 412 leaves out a path over 256 characters as `instance`, as the error handler\'s 412 does', async (t) => {
  const app = await buildApp({ errorFormat: 'problem', conditional: { notModifiedStatus: 412 } })
  t.teardown(() => app.close())
  app.get(LONG, { config: { conditional: { validators: () => ({ etag: '"v1"' }) } } }, async () => ({ doc: true }))
  app.get(`${LONG}/thrown`, async () => { throw preconditionFailed('If-None-Match', 'not modified') })
  const notModified = await app.inject({ url: LONG, headers: { 'if-none-match': '"v1"' } })
  const thrown = await app.inject({ url: `${LONG}/thrown` })
  t.equal(notModified.statusCode, 412)
  t.equal(notModified.headers['content-type'], PROBLEM)
  t.equal(notModified.json().instance, undefined, 'the long path is not repeated')
  t.equal(thrown.json().instance, undefined, 'as the error handler leaves it out')
  const short = await app.inject({ url: '/short', headers: { 'if-none-match': '"v1"' } })
  t.equal(short.statusCode, 404, 'a short path that is no route: not found')
})

test('RFC 9457 3: under errorFormat \'problem\' the 412 made of a handler\'s 304 is problem details, as every other 412', async (t) => {
  const app = await buildApp({ errorFormat: 'problem', conditional: { notModifiedStatus: 412 } })
  t.teardown(() => app.close())
  app.get('/file', { config: { conditional: true } }, async (_request, reply) => reply.code(304).send())
  const res = await app.inject({ url: '/file', headers: { 'if-none-match': '"x"' } })
  t.equal(res.statusCode, 412)
  t.equal(res.headers['content-type'], PROBLEM)
  const body = res.json()
  t.equal(body.status, 412)
  t.equal(body.instance, '/file')
  t.equal(body.errors[0].field, 'If-None-Match')
})

test('RFC 9110 12.5.5: under rfc9110 the 412 made of a handler\'s 304 follows Accept and says Vary: Accept, as every other 412', async (t) => {
  const app = await buildApp({ profile: 'rfc9110', conditional: { notModifiedStatus: 412 } })
  t.teardown(() => app.close())
  app.get('/file', { config: { conditional: true } }, async (_request, reply) => reply.code(304).send())
  const problem = await app.inject({ url: '/file', headers: { 'if-modified-since': 'Tue, 01 Jan 2030 00:00:00 GMT', accept: PROBLEM } })
  t.equal(problem.statusCode, 412)
  t.equal(problem.headers['content-type'], PROBLEM)
  t.equal(problem.headers.vary, 'Accept')
  t.equal(problem.json().errors[0].field, 'If-Modified-Since')
  const json = await app.inject({ url: '/file', headers: { 'if-modified-since': 'Tue, 01 Jan 2030 00:00:00 GMT' } })
  t.equal(json.headers['content-type'], 'application/json')
  t.equal(json.headers.vary, 'Accept')
})

test('docs/architecture.md (Errors): under errorFormat \'problem\' the guard\'s 500 is problem details, as every other error', async (t) => {
  const app = Fastify({ ...serverOptions })
  t.teardown(() => app.close())
  app.get('/early', { config: { conditional: true } }, async () => 'early')
  await app.register(httpConventions, { errorFormat: 'problem' })
  const res = await app.inject({ url: '/early' })
  t.equal(res.statusCode, 500)
  t.equal(res.headers['content-type'], PROBLEM)
  t.equal(res.json().status, 500)
})
