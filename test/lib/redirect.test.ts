import { test } from 'tap'
import {
  appendQuery, collapseLeadingSlashes, compileRules, encodeLocation, encodeRequestPart, formatLocation,
  isValidLocation, rulesForRoute, type RedirectMatch
} from '../../lib/redirect'

const INVALID = { code: 'FST_HTTP_CONVENTIONS_INVALID_OPTION' }

test('RFC 9110 10.2.2 / RFC 3986 2.1: request data is percent-encoded, so no control, CR or LF reaches Location', async (t) => {
  t.equal(encodeRequestPart('/a b\r\nSet-Cookie: x'), '/a%20b%0D%0ASet-Cookie:%20x')
  t.equal(encodeRequestPart('/t\tab\x00\x7f'), '/t%09ab%00%7F')
  t.equal(encodeRequestPart('/"<>\\^`{|}'), '/%22%3C%3E%5C%5E%60%7B%7C%7D')
  t.equal(encodeRequestPart('/a#b'), '/a%23b', 'request data never becomes a fragment')
  t.equal(encodeRequestPart('/[x]'), '/%5Bx%5D')
  t.equal(encodeRequestPart('/%41%zz%4'), '/%41%25zz%254', '% only stays as the start of %XX')
  t.equal(encodeRequestPart('/\u00c3\u00a9'), '/%C3%A9', 'latin1 characters from Node are the request line bytes')
  t.equal(encodeRequestPart('/\u20ac\ud83d\ude00\ud800'), '/%E2%82%AC%F0%9F%98%80%EF%BF%BD', 'wider characters as UTF-8, a lone surrogate as U+FFFD')
  const kept = "/AZaz09-._~:/?@!$&'()*+,;="
  t.equal(encodeRequestPart(kept), kept, 'pchar, / and ? are kept as they are')
})

test('RFC 3986 4.1: encodeLocation keeps the URI structure and encodes the rest as UTF-8', async (t) => {
  t.equal(encodeLocation('/caf\u00e9 menu'), '/caf%C3%A9%20menu')
  t.equal(encodeLocation('/a#frag#more'), '/a#frag%23more', 'one fragment delimiter')
  t.equal(encodeLocation('http://[::1]:8080/[x]'), 'http://[::1]:8080/%5Bx%5D', 'brackets only around an IP literal')
  t.equal(encodeLocation('/[x]'), '/%5Bx%5D')
  t.equal(encodeLocation('/%7e%'), '/%7e%25')
  t.equal(encodeLocation('/\ud83d\ude00\udc00'), '/%F0%9F%98%80%EF%BF%BD')
  t.equal(encodeLocation('/x\r\n'), '/x%0D%0A')
  for (const s of ['/caf\u00e9 menu', 'http://[::1]/a b#c#d', '/%zz']) {
    t.equal(encodeLocation(encodeLocation(s)), encodeLocation(s), `idempotent on ${JSON.stringify(s)}`)
  }
})

test('RFC 3986 4.1: isValidLocation accepts URI references and refuses what cannot be one', async (t) => {
  for (const ok of ['/', '/a?b=c#d', 'https://example.com/x', 'http://[::1]:80/', 'articles/1', '?q', '#f', 'mailto:a@b', '//host/p']) {
    t.ok(isValidLocation(ok), ok)
  }
  for (const bad of ['', '/a b', '/a\r\nx', '/%zz', '/%4', '/a#b#c', '1x:/y', ':x', '/[x]', 'http://h/[x]', '[::1]/', '/\u00e9', '/\x7f']) {
    t.notOk(isValidLocation(bad), JSON.stringify(bad))
  }
})

test('formatLocation encodes a handler\'s location or throws a TypeError', async (t) => {
  t.equal(formatLocation('/new place?x=\u00e9'), '/new%20place?x=%C3%A9')
  t.equal(formatLocation('https://example.com/a'), 'https://example.com/a')
  t.throws(() => formatLocation(''), TypeError)
  t.throws(() => formatLocation('1nvalid:scheme'), TypeError)
  t.throws(() => formatLocation(42 as unknown as string), TypeError)
})

test('open redirect: leading slashes and backslashes collapse, so a path stays a path', async (t) => {
  t.equal(collapseLeadingSlashes('//evil.com/x'), '/evil.com/x')
  t.equal(collapseLeadingSlashes('/\\evil.com'), '/evil.com')
  t.equal(collapseLeadingSlashes('\\\\evil.com'), '/evil.com')
  t.equal(collapseLeadingSlashes('/fine//path'), '/fine//path')
  t.equal(collapseLeadingSlashes('/'), '/')
})

test('the query goes after the target\'s own query and before its fragment', async (t) => {
  t.equal(appendQuery('/a', ''), '/a')
  t.equal(appendQuery('/a', 'x=1'), '/a?x=1')
  t.equal(appendQuery('/a?y=2', 'x=1'), '/a?y=2&x=1')
  t.equal(appendQuery('/a#top', 'x=1'), '/a?x=1#top')
})

test('a prefix rule redirects the rest of the path and keeps the query', async (t) => {
  const r = compileRules([{ from: '/v1/', to: '/' }])
  t.equal(r('GET', '/v1/articles/7?tag=a&limit=2'), '/articles/7?tag=a&limit=2')
  t.equal(r('POST', '/v1/'), '/')
  t.equal(r('GET', '/v1'), null, '/v1 is not under the prefix /v1/')
  t.equal(r('GET', '/v2/x'), null)
  t.equal(r('GET', '/v1/x?'), '/x', 'an empty query adds nothing')
  t.equal(r('OPTIONS', '*'), null, 'asterisk-form is left alone')
  t.equal(r('GET', 'http://host/v1/x'), null, 'absolute-form is left alone')
  t.equal(compileRules([])('GET', '/v1/x'), null)
})

test('open redirect: /v1//evil.com and /v1/\\evil.com do not become network-path references', async (t) => {
  const r = compileRules([{ from: '/v1/', to: '/' }])
  t.equal(r('GET', '/v1//evil.com'), '/evil.com')
  t.equal(r('GET', '/v1///evil.com/x'), '/evil.com/x')
  t.equal(r('GET', '/v1/\\evil.com'), '/%5Cevil.com', 'a backslash is encoded: WHATWG URL would read it as /')
  t.equal(r('GET', '/v1/%2F%2Fevil.com'), '/%2F%2Fevil.com', 'encoded slashes stay data')
  t.equal(r('GET', '/v1/\t/evil.com'), '/%09/evil.com', 'a tab that browsers strip is encoded')
})

test('header injection: CR, LF and controls in the path or query are encoded in Location', async (t) => {
  const r = compileRules([{ from: '/v1/', to: '/' }])
  const loc = r('GET', '/v1/a\r\nSet-Cookie: x=1?q=\r\nX: y') as string
  t.equal(loc, '/a%0D%0ASet-Cookie:%20x=1?q=%0D%0AX:%20y')
  t.ok(isValidLocation(loc))
  t.equal(r('GET', '/v1/x?a#b'), '/x?a', 'a fragment is no part of the request-target (RFC 9112 3.2): dropped')
})

test('methods limit a rule; GET covers HEAD (RFC 9110 9.3.2); the first matching rule wins', async (t) => {
  const r = compileRules([
    { from: '/old/', to: '/read/', methods: ['get'] },
    { from: '/old/', to: '/write/' }
  ])
  t.equal(r('GET', '/old/a'), '/read/a')
  t.equal(r('HEAD', '/old/a'), '/read/a')
  t.equal(r('POST', '/old/a'), '/write/a')
})

test('RegExp rules substitute $n, $<name> and $$ into the target', async (t) => {
  const r = compileRules([
    { from: /^\/posts\/(\d+)\/(?<slug>[a-z-]+)$/, to: '/articles/$1?slug=$<slug>&cost=$$5&literal=$x' },
    { from: /^\/opt\/(a)?b$/, to: '/opt/$1-' },
    { from: /^\/abs\/(.*)$/, to: 'https://example.com/new/$1' }
  ])
  t.equal(r('GET', '/posts/42/hello-world?x=1'), '/articles/42?slug=hello-world&cost=$5&literal=$x&x=1')
  t.equal(r('GET', '/opt/b'), '/opt/-', 'an unmatched group is empty')
  t.equal(r('GET', '/abs/a/b?c'), 'https://example.com/new/a/b?c')
  t.equal(r('GET', '/abs/@evil.com'), 'https://example.com/new/@evil.com', 'the authority is fixed by the rule')
  t.equal(r('GET', '/posts/x'), null)
})

test('an absolute prefix target keeps its origin', async (t) => {
  const r = compileRules([{ from: '/moved/', to: 'https://new.example.com/' }])
  t.equal(r('PUT', '/moved/a?b=1'), 'https://new.example.com/a?b=1')
})

test('a function target gets the match and may return a path or an absolute http(s) URI', async (t) => {
  const seen: RedirectMatch[] = []
  const r = compileRules([
    { from: /^\/f\/(?<id>\w+)/, to: (m: RedirectMatch) => { seen.push(m); return `/items/${m.groups.id}` } },
    { from: '/g/', to: (m: RedirectMatch) => `//${m.rest}` },
    { from: '/h/', to: (m: RedirectMatch) => `https://cdn.example.com/${m.rest}#top` },
    { from: '/bad-type/', to: () => 42 as unknown as string },
    { from: '/bad-scheme/', to: () => 'javascript:alert(1)' },
    { from: '/bad-rel/', to: () => 'relative' },
    { from: '/bad-abs/', to: () => 'http://' },
    { from: '/bad-loc/', to: () => 'https://[::1/' }
  ])
  t.equal(r('POST', '/f/abc/more?x=1'), '/items/abc?x=1')
  t.match(seen[0], { method: 'POST', path: '/f/abc/more', query: 'x=1', rest: '', params: ['/f/abc', 'abc'], groups: { id: 'abc' } })
  t.equal(r('GET', '/g/evil.com'), '/evil.com', 'a function\'s //host is collapsed to a path too')
  t.equal(r('GET', '/h/a?q'), 'https://cdn.example.com/a?q#top')
  t.throws(() => r('GET', '/bad-type/'), TypeError)
  t.throws(() => r('GET', '/bad-scheme/'), { message: /http or https/ })
  t.throws(() => r('GET', '/bad-rel/'), { message: /path starting with/ })
  t.throws(() => r('GET', '/bad-abs/'), { message: /not a valid URI/ })
  t.throws(() => r('GET', '/bad-loc/'), TypeError)
})

test('a target that would leave its origin is refused at request time', async (t) => {
  // The literal host is checked at boot; this guards the produced URI as well.
  const r = compileRules([{ from: /^\/x\/(.*)$/, to: 'https://example.com/$1' }])
  t.equal(r('GET', '/x/ok'), 'https://example.com/ok')
})

test('rules are validated at boot: FST_HTTP_CONVENTIONS_INVALID_OPTION', async (t) => {
  const bad: unknown[] = [
    'nope',
    [null],
    [{ from: '/a/', to: '/b/', extra: 1 }],
    [{ from: 'a/', to: '/b/' }],
    [{ from: 42, to: '/b/' }],
    [{ from: /x/g, to: '/b/' }],
    [{ from: /x/y, to: '/b/' }],
    [{ from: '/a/', to: 42 }],
    [{ from: '/a/', to: 'b/' }],
    [{ from: '/a/', to: '//evil.com/' }],
    [{ from: '/a/', to: '/\\evil.com/' }],
    [{ from: '/a/', to: 'https://example.com' }],
    [{ from: /^\/(.*)$/, to: 'https://$1' }],
    [{ from: /^\/(.*)$/, to: 'https://example.com$1' }],
    [{ from: /^\/(.*)$/, to: '$1' }],
    [{ from: /^\/(.*)$/, to: '/$2' }],
    [{ from: /^\/(.*)$/, to: '/$<name>' }],
    [{ from: /^\/(.*)$/, to: '/$<name' }],
    [{ from: '/a/', to: 'https://exa mple.com/' }],
    [{ from: '/a/', to: '/b/', methods: [] }],
    [{ from: '/a/', to: '/b/', methods: 'GET' }],
    [{ from: '/a/', to: '/b/', methods: ['G ET'] }]
  ]
  for (const rules of bad) t.throws(() => compileRules(rules), INVALID, JSON.stringify(rules, (_k, v) => v instanceof RegExp ? String(v) : v))
  t.doesNotThrow(() => compileRules([{ from: /^\/(?<n>.*)$/, to: '/$<n>$' }]), 'a trailing $ is literal')
  t.equal(compileRules([{ from: /^\/d\/(.*)$/, to: '/e/$1$' }])('GET', '/d/x'), '/e/x$')
})

test('rulesForRoute tells which routes a rule can redirect (OpenAPI 307)', async (t) => {
  const rules = [{ from: '/v1/', to: '/' }, { from: /^\/old\/\w+$/, to: '/new', methods: ['GET'] }]
  t.ok(rulesForRoute(rules, 'POST', '/v1/articles'))
  t.notOk(rulesForRoute(rules, 'POST', '/articles'))
  t.ok(rulesForRoute(rules, 'HEAD', '/old/x'))
  t.ok(rulesForRoute(rules, 'get', '/old/x'))
  t.notOk(rulesForRoute(rules, 'PUT', '/old/x'))
})

test('RFC 9112 3.2: a fragment sent in the request-target is dropped; the rules match the path the router routes', async (t) => {
  const redirectFor = compileRules([{ from: '/v1/', to: '/' }])
  t.equal(redirectFor('GET', '/v1/a#frag'), '/a', 'not /a%23frag, which the router would not find')
  t.equal(redirectFor('GET', '/v1/a?x=1#frag'), '/a?x=1')
  t.equal(redirectFor('GET', '/v2/a#/v1/'), null, 'a rule never matches inside the fragment')
})
