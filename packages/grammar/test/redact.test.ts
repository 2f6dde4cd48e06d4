import { test } from 'tap'
import Fastify from 'fastify'
import { Writable } from 'node:stream'
import { createRedactingSerializers, createUrlRedactor, redactUrl, REDACTED, SECRET_QUERY_NAMES } from '../src/redact'

const R = REDACTED

test('log redaction: the value of every secret query parameter name is redacted', async (t) => {
  const names = ['access_token', 'refresh_token', 'id_token', 'token', 'token[]', 'client_secret', 'secret', 'password', 'passwd', 'code', 'api_key', 'api-key', 'apikey', 'key', 'jwt', 'sig', 'signature']
  t.same([...SECRET_QUERY_NAMES].sort(), [...names].sort())
  for (const name of names) {
    t.equal(redactUrl(`/cb?a=1&${name}=s3cr3t&b=2`), `/cb?a=1&${name}=${R}&b=2`, name)
    t.equal(redactUrl(`/cb?${name.toUpperCase()}=s3cr3t`), `/cb?${name.toUpperCase()}=${R}`, `${name} in upper case`)
  }
  t.equal(redactUrl('/cb?state=xyz&tokens=1&keyword=k&codec=h264'), '/cb?state=xyz&tokens=1&keyword=k&codec=h264', 'other names, even containing a secret name, are kept')
})

test('log redaction: names are compared after percent-decoding ("%74oken", "+", invalid escapes)', async (t) => {
  t.equal(redactUrl('/?%74oken=abc'), `/?%74oken=${R}`)
  t.equal(redactUrl('/?%41ccess%5Ftoken=abc'), `/?%41ccess%5Ftoken=${R}`)
  t.equal(redactUrl('/?token%5B%5D=a&token%5b0%5d=b'), `/?token%5B%5D=${R}&token%5b0%5d=${R}`)
  t.equal(redactUrl('/?api+key=1&+token+=2'), `/?api+key=1&+token+=${R}`, '"+" is a space; surrounding spaces are ignored')
  t.equal(redactUrl('/?%ff%74oken=1&%74oken%=2&%E2%82%AC=3'), '/?%ff%74oken=1&%74oken%=2&%E2%82%AC=3', 'names that do not decode to a secret name are kept')
  t.equal(redactUrl('/?%zz&%74oken=1%ff'), `/?%zz&%74oken=${R}`, 'a bad escape elsewhere does not stop decoding')
  t.equal(redactUrl('/?%c3%28%74oken=1&%74oken%c3=2'), '/?%c3%28%74oken=1&%74oken%c3=2')
})

test('log redaction: token[]=, bracketed and repeated parameters, values holding "=", ";" separators', async (t) => {
  t.equal(redactUrl('/?token[]=a&token[]=b&token=c&token=d'), `/?token[]=${R}&token[]=${R}&token=${R}&token=${R}`)
  t.equal(redactUrl('/?user[password]=p&user[name]=n&password[0]=q'), `/?user[password]=${R}&user[name]=n&password[0]=${R}`)
  t.equal(redactUrl('/?sig=abc==&x=1'), `/?sig=${R}&x=1`, 'a base64 value with "=" is redacted whole')
  t.equal(redactUrl('/?a=1;code=xyz;b=2'), `/?a=1;code=${R};b=2`)
  t.equal(redactUrl('/?token&token=&=token&&'), `/?token&token=${R}&=token&&`)
  t.equal(redactUrl('/p/a.th'), '/p/a.th')
  t.equal(redactUrl('/?'), '/?')
})

test('log redaction: the fragment is redacted whole, "?" inside it included', async (t) => {
  t.equal(redactUrl('/cb#access_token=abc&state=1'), `/cb#${R}`)
  t.equal(redactUrl('/cb?state=1#access_token=abc'), `/cb?state=1#${R}`)
  t.equal(redactUrl('/cb#frag?token=abc'), `/cb#${R}`, 'a "?" after "#" is part of the fragment')
  t.equal(redactUrl('/cb?code=1#'), `/cb?code=${R}#`)
})

test('log redaction: absolute URIs: the userinfo password is redacted', async (t) => {
  t.equal(redactUrl('https://user:pa55@example.org/p?key=k#f'), `https://user:${R}@example.org/p?key=${R}#${R}`)
  t.equal(redactUrl('https://user@example.org/p'), 'https://user@example.org/p')
  t.equal(redactUrl('http://example.org/a@b'), 'http://example.org/a@b')
})

test('log redaction: the list of names can be extended', async (t) => {
  t.equal(redactUrl('/?session=1&Otp=2&token=3', ['session', ' OTP ', '']), `/?session=${R}&Otp=${R}&token=${R}`)
  const redact = createUrlRedactor(new Set(['x-amz-signature']))
  t.equal(redact('/o?X-Amz-Signature=abc&X-Amz-Date=d'), `/o?X-Amz-Signature=${R}&X-Amz-Date=d`)
  t.equal(redactUrl(undefined as unknown as string), '')
})

test('log redaction: the req serializer logs method, redacted url, host and remote address, never headers', async (t) => {
  const { req } = createRedactingSerializers({ extraNames: ['session'] })
  t.same(req({ method: 'GET', url: '/cb?code=abc&session=s#x', host: 'example.org', ip: '10.0.0.1', headers: { host: 'ignored' }, socket: { remoteAddress: '10.0.0.2', remotePort: 4000 } }), {
    method: 'GET', url: `/cb?code=${R}&session=${R}#${R}`, host: 'example.org', remoteAddress: '10.0.0.1', remotePort: 4000
  })
  t.same(req({ method: 'POST', headers: { host: ['a.example', 'b.example'] }, socket: { remoteAddress: '::1' } }), { method: 'POST', url: '', host: 'a.example', remoteAddress: '::1', remotePort: undefined })
  t.same(req({ socket: null }), { method: undefined, url: '', host: undefined, remoteAddress: undefined, remotePort: undefined })

  // Through Fastify's logger: the line for the request holds no secret and no header.
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const app = Fastify({ logger: { level: 'info', stream, serializers: createRedactingSerializers() } })
  app.get('/cb', async () => 'ok')
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: '/cb?code=the-code&state=s&access_token=the-token', headers: { authorization: 'Bearer the-bearer', cookie: 'sid=the-cookie' } })
  t.equal(res.statusCode, 200)
  const log = lines.join('')
  t.match(log, `"url":"/cb?code=${R}&state=s&access_token=${R}"`)
  t.notMatch(log, /the-code|the-token|the-bearer|the-cookie|authorization|cookie/i)
})
