/**
 * Renders a ConventionError into status, headers and body, as docs/architecture.md's
 * error table says. Pure: the error handler plugin writes the result to the reply.
 */
import { STATUS_CODES } from 'node:http'
import type { ConventionError, ErrorEntry } from './errors'

export interface Rendered {
  statusCode: number
  contentType: string
  headers: Record<string, string | string[]>
  body: string
}

// RFC 9110 section 15 reason phrases where Node still uses older names.
const PHRASES: Record<number, string> = { 413: 'Content Too Large' }

export function reasonPhrase (status: number): string {
  return PHRASES[status] ?? STATUS_CODES[status] ?? 'Error'
}

const ENVELOPE_CONTENT_TYPE = 'application/json'
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8'
const HTML_CONTENT_TYPE = 'text/html; charset=UTF-8'

export function escapeHtml (s: string): string {
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '&') out += '&amp;'
    else if (c === '<') out += '&lt;'
    else if (c === '>') out += '&gt;'
    else if (c === '"') out += '&quot;'
    else if (c === "'") out += '&#39;'
    else out += c
  }
  return out
}

/** A one-line reason: control characters (CR, LF...) become spaces. */
function oneLine (s: string): string {
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    out += c < 32 || c === 127 ? ' ' : s[i]
  }
  return out
}

function reasonOf (err: ConventionError): string {
  const phrase = reasonPhrase(err.statusCode)
  const prefix = `${phrase}: `
  return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message
}

export function render (err: ConventionError, serializeEnvelope: (body: { errors: ErrorEntry[] }) => string): Rendered {
  const statusCode = err.statusCode
  const phrase = reasonPhrase(statusCode)
  const headers = { ...err.headers }
  if (err.closeConnection) headers.connection = 'close'
  switch (err.rendering) {
    case 'text':
      // 411 (docs/conventions.md (errors)): text/plain starting with the status phrase, then a one-line reason.
      return { statusCode, contentType: TEXT_CONTENT_TYPE, headers, body: `${phrase}\n${oneLine(reasonOf(err))}\n` }
    case 'html': {
      const title = `${statusCode} ${phrase}`
      const body = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + title +
        '</title></head><body><h1>' + title + '</h1><p>' + escapeHtml(err.message) + '</p></body></html>\n'
      return { statusCode, contentType: HTML_CONTENT_TYPE, headers, body }
    }
    default:
      return { statusCode, contentType: ENVELOPE_CONTENT_TYPE, headers, body: serializeEnvelope({ errors: err.errors }) }
  }
}

/**
 * `{ errors: [...] }` as the envelope schema (schemas/errors.json) defines it: each entry's
 * `field` (where one is at fault), `message` and `code` (where known), in that order, and
 * nothing else: an entry never leaks another property.
 */
export function serializeEnvelope (body: { errors: readonly ErrorEntry[] }): string {
  let out = '{"errors":['
  const errors = body.errors
  for (let i = 0; i < errors.length; i++) {
    const e = errors[i]
    if (i > 0) out += ','
    out += '{'
    if (e.field !== undefined) out += '"field":' + JSON.stringify(String(e.field)) + ','
    out += '"message":' + JSON.stringify(String(e.message))
    if (e.code !== undefined) out += ',"code":' + JSON.stringify(String(e.code))
    out += '}'
  }
  return out + ']}'
}

/** How error bodies are written: the `errors[]` envelope, or RFC 9457 problem details. */
export type ErrorFormat = 'envelope' | 'problem'

export const PROBLEM_TYPE = 'application/problem+json'

/** Longest part of a request an answer repeats: a longer one is left out, never echoed. */
const MAX_ECHO = 256

/** The request's path for a problem's `instance` (RFC 9457 3.1.5), left out when longer than MAX_ECHO. */
export function instanceOf (url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  return path.length > MAX_ECHO ? undefined : path
}

/**
 * RFC 9457 3.1: problem details of an error, the envelope's entries kept as the `errors`
 * extension member (3.2) so a client reads the same list in both formats.
 */
export function problemBody (status: number, entries: readonly ErrorEntry[], instance: string | undefined): string {
  return JSON.stringify({
    type: 'about:blank',
    title: reasonPhrase(status),
    status,
    detail: entries[0]?.message ?? reasonPhrase(status),
    instance,
    errors: entries
  })
}

/**
 * An error rendered once, for answers that do not depend on the request (the "not modified"
 * 412 of a field): its own body is made here, never again per request. Only a problem
 * details body, which repeats the request's path, is made per answer.
 */
export interface PreparedError {
  readonly prepared: true
  readonly statusCode: number
  readonly rendering: ConventionError['rendering']
  readonly errors: readonly ErrorEntry[]
  /** The error's own headers (Connection apart: `closeConnection`). */
  readonly headers: Readonly<Record<string, string | string[]>>
  readonly closeConnection: boolean
  /** Its answer in its own rendering. */
  readonly rendered: RenderedError
}

/**
 * An error's answer: status, headers (Content-Type apart, Connection included) and body. The
 * body is a string (Node writes a string body with the head in one write); its Content-Length
 * is its UTF-8 length, `Buffer.byteLength(body)`.
 */
export interface RenderedError {
  readonly statusCode: number
  readonly contentType: string
  readonly headers: Readonly<Record<string, string | string[]>>
  readonly body: string
}

/** Renders `err` in its own rendering (envelope, text or HTML) once. */
export function prepareError (err: ConventionError): PreparedError {
  const { statusCode, rendering, errors, headers, closeConnection } = err
  return { prepared: true, statusCode, rendering, errors, headers, closeConnection, rendered: ownRendering(err) }
}

function ownRendering (err: ConventionError): RenderedError {
  const r = render(err, serializeEnvelope)
  return { statusCode: r.statusCode, contentType: r.contentType, headers: r.headers, body: r.body }
}

/**
 * The one renderer of the suite's error answers: every error, whatever path answers it (the
 * error handler, a step that answers directly, the server before routing), is written from
 * what this returns. An envelope error in the problem format is RFC 9457 problem details,
 * whose `instance` is the request's path (`url`), left out when longer than MAX_ECHO; text
 * and HTML errors keep their own rendering in either format. A prepared error's own body is
 * the one made when it was prepared.
 */
export function renderError (err: ConventionError | PreparedError, format: ErrorFormat, url?: string, page: HtmlAs = 'page'): RenderedError {
  if (err.rendering === 'html' && page === 'json') return htmlAsJson(err, format, url)
  if (format === 'problem' && err.rendering === 'envelope') {
    const headers = err.closeConnection ? { ...err.headers, connection: 'close' } : err.headers
    return { statusCode: err.statusCode, contentType: PROBLEM_TYPE, headers, body: problemBody(err.statusCode, err.errors, instanceOf(url)) }
  }
  return isPrepared(err) ? err.rendered : ownRendering(err)
}

/**
 * How an HTML error (401, 403, 503) is written for a request: its small page (what
 * docs/conventions.md describes, and what a browser or a client without Accept gets), or,
 * for a client whose Accept prefers JSON, the JSON body every other error of the route has
 * (the `errors[]` envelope, or problem details in that format).
 */
export type HtmlAs = 'page' | 'json'

/** The JSON body of an HTML error: one entry, its message; its headers (WWW-Authenticate, Retry-After) unchanged. */
function htmlAsJson (err: ConventionError | PreparedError, format: ErrorFormat, url: string | undefined): RenderedError {
  const entries = err.errors.length > 0 ? err.errors : [{ message: isPrepared(err) ? reasonPhrase(err.statusCode) : reasonOf(err) }]
  const headers = err.closeConnection ? { ...err.headers, connection: 'close' } : err.headers
  if (format === 'problem') return { statusCode: err.statusCode, contentType: PROBLEM_TYPE, headers, body: problemBody(err.statusCode, entries, instanceOf(url)) }
  return { statusCode: err.statusCode, contentType: ENVELOPE_CONTENT_TYPE, headers, body: serializeEnvelope({ errors: entries }) }
}

function isPrepared (err: ConventionError | PreparedError): err is PreparedError {
  return (err as PreparedError).prepared === true
}
