/**
 * Redirect rules and `Location` values (docs/conventions.md, Redirects: the 307 rows; RFC 9110 15.4.8
 * and 10.2.2; RFC 3986 for the URI grammar). Framework-free: the plugin wires
 * `compileRules` to an onRequest hook and `formatLocation` to a reply decorator.
 *
 * Safety, by construction:
 * - every character that is not allowed in a URI (controls, CR, LF, space, `"<>\^`{|}`,
 *   non-ASCII) is percent-encoded, so request data can never end the header line or
 *   smuggle characters that browsers strip (tab, newline) or reinterpret (backslash);
 * - a rule whose target is a path keeps its answer a path: leading slashes are collapsed
 *   so `/v1//evil.com` never becomes the network-path reference `//evil.com`;
 * - a rule whose target is an absolute URI only substitutes after its authority, and the
 *   produced URI is checked to keep that origin.
 */
import { invalidOption } from './errors'

/** What a rule's `to` function receives. Every string is in percent-encoded form. */
export interface RedirectMatch {
  method: string
  /** The request path, without the query. */
  path: string
  /** The request query, without `?` ('' when there is none). */
  query: string
  /** Prefix rules: the path after the prefix. RegExp rules: ''. */
  rest: string
  /** RegExp rules: the captures, `params[1]` is `$1` (`params[0]` the whole match). */
  params: string[]
  /** RegExp rules: the named captures. */
  groups: Record<string, string>
}

/** A redirect rule: the paths and methods it matches, and where a 307 sends them. */
export interface RedirectRule {
  /** A path prefix (`'/v1/'`: the rest of the path follows `to`) or a RegExp tested on the path. */
  from: string | RegExp
  /**
   * A path (`/...`) or an absolute http(s) URI; for RegExp rules `$1`, `$<name>` and `$$`
   * are substituted (in the path or query of an absolute URI only). Or a function of the
   * match returning a path or an absolute http(s) URI (it decides any host it returns).
   */
  to: string | ((match: RedirectMatch) => string)
  /** Methods the rule applies to. Default: every method. */
  methods?: string[]
}

/** Returns the `Location` for a request, or null when no rule applies. */
export type Redirector = (method: string, url: string) => string | null

const HEX = '0123456789ABCDEF'
// RFC 3986 2.2 and 2.3: unreserved, gen-delims and sub-delims. `%`, `#`, `[` and `]` are handled apart.
const URI_CHAR = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?@!$&'()*+,;=") URI_CHAR[c.charCodeAt(0)] = 1

function isHex (c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)
}

function pctByte (b: number): string {
  return '%' + HEX[b >> 4] + HEX[b & 15]
}

function pctUtf8 (ch: string): string {
  let out = ''
  for (const b of Buffer.from(ch, 'utf8')) out += pctByte(b)
  return out
}

function isPct (s: string, i: number): boolean {
  return i + 2 < s.length && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2))
}

/** `%XX` of the UTF-8 of the character at `i` (a lone surrogate as U+FFFD), and how many code units it took. */
function pctCodePoint (s: string, i: number): [string, number] {
  const cp = s.codePointAt(i) as number
  if (cp > 0xffff) return [pctUtf8(String.fromCodePoint(cp)), 2]
  return [pctUtf8(cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : s[i]), 1]
}

/**
 * Percent-encodes a path or query taken from the request line (RFC 3986 3.3, 3.4):
 * characters other than pchar, `/` and `?` become `%XX`. Node gives the request line's
 * bytes as latin1 characters, so a character up to U+00FF is one byte. `#` is encoded:
 * request data never becomes a fragment.
 */
export function encodeRequestPart (s: string): string {
  let out = ''
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 128 && URI_CHAR[c] === 1) continue
    if (c === 37 && isPct(s, i)) continue
    out += s.slice(start, i)
    if (c <= 0xff) {
      out += pctByte(c)
    } else {
      const [enc, units] = pctCodePoint(s, i)
      out += enc
      i += units - 1
    }
    start = i + 1
  }
  return start === 0 ? s : out + s.slice(start)
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/

/**
 * Percent-encodes what RFC 3986 does not allow in a URI-reference, keeping its structure:
 * one `#` (the fragment's), `[` and `]` only in the authority of an absolute URI, `%`
 * only as the start of `%XX`. Other characters are encoded as UTF-8 (RFC 3986 2.5); a
 * lone surrogate becomes U+FFFD. Idempotent on its own output.
 */
export function encodeLocation (s: string): string {
  let authorityEnd = 0
  const m = SCHEME.exec(s)
  if (m !== null && s.startsWith('//', m[0].length)) {
    authorityEnd = m[0].length + 2
    while (authorityEnd < s.length && !'/?#'.includes(s[authorityEnd])) authorityEnd++
  }
  let out = ''
  let fragment = false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 128 && URI_CHAR[c] === 1) { out += s[i]; continue }
    if (c === 37 && isPct(s, i)) { out += '%'; continue }
    if (c === 35 && !fragment) { fragment = true; out += '#'; continue }
    if ((c === 91 || c === 93) && i < authorityEnd) { out += s[i]; continue }
    if (c < 128) { out += pctByte(c); continue }
    const [enc, units] = pctCodePoint(s, i)
    out += enc
    i += units - 1
  }
  return out
}

/**
 * True when `s` is a URI-reference (RFC 3986 4.1) made of allowed characters only, as
 * a `Location` value must be (RFC 9110 10.2.2): no controls (so no CR/LF), no space,
 * `%` only as `%XX`, at most one `#`, and a `:` before the first `/`, `?` or `#` only
 * after a valid scheme (RFC 3986 4.2: a relative path's first segment has none).
 */
export function isValidLocation (s: string): boolean {
  if (s.length === 0) return false
  let hashes = 0
  let colon = -1
  let delimited = false
  let brackets = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 37) {
      if (!isPct(s, i)) return false
      continue
    }
    if (c === 35) { if (++hashes > 1) return false; delimited = true; continue }
    if (c === 91 || c === 93) { brackets++; continue }
    if (c >= 128 || URI_CHAR[c] !== 1) return false
    if (!delimited) {
      if (c === 47 || c === 63) delimited = true
      else if (c === 58 && colon === -1) colon = i
    }
  }
  if (colon !== -1 && !SCHEME.test(s)) return false
  if (brackets > 0) {
    // RFC 3986 3.2.2: brackets only around an IP-literal host.
    const m = SCHEME.exec(s)
    if (m === null || !s.startsWith('//', m[0].length)) return false
    let end = m[0].length + 2
    while (end < s.length && !'/?#'.includes(s[end])) end++
    for (let i = end; i < s.length; i++) if (s[i] === '[' || s[i] === ']') return false
  }
  return true
}

/** RFC 9110 10.2.2: the field value for a `Location` given by a handler; throws a TypeError when it cannot be one. */
export function formatLocation (location: string): string {
  if (typeof location !== 'string') throw new TypeError('the redirect location must be a string')
  const value = encodeLocation(location)
  if (!isValidLocation(value)) throw new TypeError(`${JSON.stringify(location)} is not a URI reference`)
  return value
}

/**
 * Keeps a path a path (open redirect): `//host` and `/\host` would be read as another
 * authority by clients and browsers (WHATWG URL treats `\` as `/`), so leading slashes
 * and backslashes collapse to one `/`.
 */
export function collapseLeadingSlashes (path: string): string {
  let i = 0
  while (i < path.length && (path[i] === '/' || path[i] === '\\')) i++
  return i <= 1 && path[0] !== '\\' ? path : '/' + path.slice(i)
}

/** Appends the request's query to a target, before its fragment, after its own query. */
export function appendQuery (target: string, query: string): string {
  if (query === '') return target
  const hash = target.indexOf('#')
  const head = hash === -1 ? target : target.slice(0, hash)
  const tail = hash === -1 ? '' : target.slice(hash)
  return head + (head.includes('?') ? '&' : '?') + query + tail
}

type Part = string | number | { name: string }

interface Compiled {
  methods: Set<string> | null
  match: (path: string) => { rest: string, params: string[], groups: Record<string, string> } | null
  build: (m: RedirectMatch) => string
  /** The origin an absolute string target must keep; null for paths and functions. */
  origin: string | null
}

const ABSOLUTE = /^https?:\/\/[^/?#]+/i

function parseTemplate (to: string, groups: number, names: Set<string>, where: string): Part[] {
  const parts: Part[] = []
  let lit = ''
  for (let i = 0; i < to.length; i++) {
    if (to[i] !== '$' || i + 1 === to.length) { lit += to[i]; continue }
    const n = to[i + 1]
    if (n === '$') { lit += '$'; i++; continue }
    if (n >= '0' && n <= '9') {
      let j = i + 1
      while (j < to.length && to[j] >= '0' && to[j] <= '9') j++
      const index = Number(to.slice(i + 1, j))
      if (index > groups) throw invalidOption(where, `to refers to $${index} but from has ${groups} capture group(s)`)
      if (lit !== '') parts.push(lit)
      lit = ''
      parts.push(index)
      i = j - 1
      continue
    }
    if (n === '<') {
      const end = to.indexOf('>', i)
      const name = end === -1 ? '' : to.slice(i + 2, end)
      if (!names.has(name)) throw invalidOption(where, `to refers to $<${name}> but from has no such named group`)
      if (lit !== '') parts.push(lit)
      lit = ''
      parts.push({ name })
      i = end
      continue
    }
    lit += '$'
  }
  if (lit !== '') parts.push(lit)
  return parts
}

/** The methods a rule applies to, upper case (HEAD with GET), or null for every method. */
function ruleMethods (methods: unknown, where: string): Set<string> | null {
  if (methods === undefined) return null
  if (!Array.isArray(methods) || methods.length === 0 || methods.some((m) => typeof m !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(m))) {
    throw invalidOption(where, 'methods must be a non-empty array of method names')
  }
  const methodSet = new Set((methods as string[]).map((m) => m.toUpperCase()))
  // RFC 9110 9.3.2: HEAD is GET without content; a GET rule covers it.
  if (methodSet.has('GET')) methodSet.add('HEAD')
  return methodSet
}

/** The matcher of a rule's `from`, with the numbered and named groups a RegExp captures. */
function ruleMatcher (from: unknown, where: string): { match: Compiled['match'], groups: number, names: Set<string> } {
  if (typeof from === 'string') {
    if (!from.startsWith('/')) throw invalidOption(where, `from ${JSON.stringify(from)} must be a path prefix starting with /`)
    const prefix = encodeRequestPart(from)
    return { match: (path) => path.startsWith(prefix) ? { rest: path.slice(prefix.length), params: [], groups: {} } : null, groups: 0, names: new Set() }
  }
  if (!(from instanceof RegExp)) throw invalidOption(where, 'from must be a path prefix (string) or a RegExp')
  // A global or sticky RegExp keeps state between requests (lastIndex).
  if (from.global || from.sticky) throw invalidOption(where, 'from must not be a global (g) or sticky (y) RegExp')
  const probe = new RegExp(from.source + '|', from.flags).exec('') as RegExpExecArray
  const names = new Set(Object.keys(probe.groups ?? {}))
  const match: Compiled['match'] = (path) => {
    const m = from.exec(path)
    if (m === null) return null
    const named: Record<string, string> = {}
    for (const name of names) named[name] = m.groups?.[name] ?? ''
    return { rest: '', params: Array.from(m, (v) => v ?? ''), groups: named }
  }
  return { match, groups: probe.length - 1, names }
}

/** The origin a string target's absolute head keeps (RFC 3986 3.2), or null for a path; throws for neither. */
function templateOrigin (to: string, parts: Part[], prefixRule: boolean, where: string): string | null {
  const head = typeof parts[0] === 'string' ? parts[0] : ''
  const abs = ABSOLUTE.exec(head)
  if (abs === null) {
    if (!head.startsWith('/') || head.startsWith('//') || head.startsWith('/\\')) {
      throw invalidOption(where, `to ${JSON.stringify(to)} must be a path starting with a single / or an absolute http(s) URI`)
    }
    return null
  }
  // RFC 3986 3.2: the authority is fixed by the rule; substitutions only follow it.
  const substitutes = prefixRule || parts.length > 1
  if (substitutes && head.length === abs[0].length) throw invalidOption(where, `to ${JSON.stringify(to)}: substitutions must come after the host`)
  try {
    return new URL(abs[0]).origin
  } catch {
    throw invalidOption(where, `to ${JSON.stringify(to)} is not a valid absolute URI`)
  }
}

/** The builder of a rule's target, and the origin a string target keeps. */
function ruleBuilder (to: unknown, from: unknown, matcher: { groups: number, names: Set<string> }, where: string): { build: Compiled['build'], origin: string | null } {
  if (typeof to === 'function') {
    const build: Compiled['build'] = (m) => {
      const value: unknown = to(m)
      if (typeof value !== 'string') throw new TypeError(`${where}: to() must return a string`)
      return value
    }
    return { build, origin: null }
  }
  if (typeof to !== 'string') throw invalidOption(where, 'to must be a string or a function')
  const prefixRule = typeof from === 'string'
  const parts = prefixRule ? [to] : parseTemplate(to, matcher.groups, matcher.names, where)
  const origin = templateOrigin(to, parts, prefixRule, where)
  if (prefixRule) return { build: (m) => to + m.rest, origin }
  const build: Compiled['build'] = (m) => {
    let out = ''
    for (const p of parts) out += typeof p === 'string' ? p : typeof p === 'number' ? m.params[p] : m.groups[p.name]
    return out
  }
  return { build, origin }
}

function compileRule (rule: RedirectRule, where: string): Compiled {
  if (typeof rule !== 'object' || rule === null) throw invalidOption(where, 'a rule is { from, to, methods? }')
  for (const key of Object.keys(rule)) {
    if (key !== 'from' && key !== 'to' && key !== 'methods') throw invalidOption(where, `unknown rule key ${JSON.stringify(key)}`)
  }
  const { from, to, methods } = rule
  const methodSet = ruleMethods(methods, where)
  const matcher = ruleMatcher(from, where)
  const { build, origin } = ruleBuilder(to, from, matcher, where)
  return { methods: methodSet, match: matcher.match, build, origin }
}

/** Turns what a rule built into the `Location` value, or throws a TypeError. */
function finish (built: string, origin: string | null, query: string, where: string): string {
  let target: string
  if (SCHEME.test(built)) {
    if (!/^https?:/i.test(built)) throw new TypeError(`${where}: redirects go to http or https URIs, not ${JSON.stringify(built.slice(0, built.indexOf(':') + 1))}`)
    target = encodeLocation(built)
    let url: URL
    try {
      url = new URL(target)
    } catch {
      throw new TypeError(`${where}: ${JSON.stringify(target)} is not a valid URI`)
    }
    if (origin !== null && url.origin !== origin) throw new TypeError(`${where}: the target left the origin ${origin}`)
  } else if (built.startsWith('/')) {
    target = encodeLocation(collapseLeadingSlashes(built))
  } else {
    throw new TypeError(`${where}: to() must return a path starting with / or an absolute http(s) URI`)
  }
  const value = appendQuery(target, query)
  if (!isValidLocation(value)) throw new TypeError(`${where}: ${JSON.stringify(value)} is not a URI reference`)
  return value
}

/** Validates a rule table (throws FST_HTTP_CONVENTIONS_INVALID_OPTION) and returns its matcher. */
export function compileRules (rules: unknown, where = 'http-conventions/redirect'): Redirector {
  if (!Array.isArray(rules)) throw invalidOption(where, 'rules must be an array of { from, to, methods? }')
  const compiled = rules.map((rule: RedirectRule, i) => compileRule(rule, `${where} rules[${i}]`))
  if (compiled.length === 0) return () => null
  return function redirectFor (method, url) {
    // Origin-form only (RFC 9112 3.2.1); absolute-form and `*` are left alone.
    if (url.charCodeAt(0) !== 47) return null
    // RFC 9112 3.2: a request-target has no fragment. A client that sends one anyway is routed
    // by the path before it (the router stops at `#` too): the rules match that same path and
    // the fragment is dropped, so the redirect and the router never disagree.
    const hash = url.indexOf('#')
    if (hash !== -1) url = url.slice(0, hash)
    const q = url.indexOf('?')
    const path = encodeRequestPart(q === -1 ? url : url.slice(0, q))
    for (let i = 0; i < compiled.length; i++) {
      const rule = compiled[i]
      if (rule.methods !== null && !rule.methods.has(method)) continue
      const m = rule.match(path)
      if (m === null) continue
      const query = q === -1 ? '' : encodeRequestPart(url.slice(q + 1))
      const built = rule.build({ method, path, query, rest: m.rest, params: m.params, groups: m.groups })
      return finish(built, rule.origin, query, `${where} rules[${i}]`)
    }
    return null
  }
}

/** Whether a rule of the table can apply to a route (for documentation: OpenAPI 307). */
export function rulesForRoute (rules: RedirectRule[], method: string, url: string): boolean {
  const upper = method.toUpperCase()
  return rules.some((rule) => {
    if (rule.methods !== undefined && !rule.methods.some((m) => m.toUpperCase() === upper || (upper === 'HEAD' && m.toUpperCase() === 'GET'))) return false
    return typeof rule.from === 'string' ? url.startsWith(rule.from) : rule.from.test(url)
  })
}
