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
