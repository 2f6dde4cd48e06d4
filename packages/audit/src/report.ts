/**
 * The audit's report for people (a table and each failure's exchange), for programs (JSON) and
 * for CI (JUnit XML). Whatever the service sent goes through redact-output.ts first: the run's
 * credentials never appear, and no control character reaches a terminal or an XML file.
 */
import type { AuditReport } from './run'
import type { Finding, RuleResult } from './results'
import type { Exchange } from './transport'
import { escapeControls, outputText, outputValue, redactSecrets, xmlText } from './redact-output'

const BODY_START = 300

/** What the outputs are given besides the report: the secrets to redact, the bounds the run hit. */
export interface OutputOptions {
  /** strings never to show (secretsOf of the run's credentials) */
  secrets?: readonly string[]
  /** bounds the run hit and went on (an OpenAPI document cut, paths left out, ...) */
  notes?: readonly string[]
}

/** Credentials never reach a report: `Authorization: Basic [redacted]`. */
export function redactCredentials (raw: string): string {
  return raw.replace(/^((?:proxy-)?authorization:[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)[^\r\n]*/gim, '$1 [redacted]')
}

/** A head, then the start of a body (redacted before it is cut, so no part of a secret is left). */
function headAndBody (head: string, body: string, size: number, cut: string | undefined): string {
  const more = body.length > BODY_START ? ` ... (${size} bytes)` : ''
  const note = cut === undefined ? '' : `\n(${cut})`
  return escapeControls(head.replace(/\r\n/g, '\n')) + (body.length > 0 ? '\n\n' + escapeControls(body.slice(0, BODY_START)) + more : '') + note
}

/** The request as sent (credentials redacted): its head, then the start of its body. */
export function formatRequest (ex: Exchange, secrets: readonly string[] = []): string {
  const raw = redactSecrets(redactCredentials(ex.rawRequest), secrets)
  const end = raw.indexOf('\r\n\r\n')
  const head = end === -1 ? raw : raw.slice(0, end)
  const body = end === -1 ? '' : raw.slice(end + 4)
  return headAndBody(head, body, body.length, undefined)
}

/** The answer: status line, header lines, the start of the body, and why the body was cut. */
export function formatResponse (ex: Exchange, secrets: readonly string[] = []): string {
  const res = ex.response
  if (res === null) return `(no answer: ${outputText(ex.error ?? 'closed', secrets)})`
  return headAndBody(redactSecrets(redactCredentials(res.head), secrets), redactSecrets(res.body.toString('utf8'), secrets), res.body.length, res.cut)
}

function indent (s: string, by: string): string { return s.split('\n').map((l) => l === '' ? '' : by + l).join('\n') }

function detail (r: RuleResult): string {
  const notes = r.notes === undefined ? '' : ` [${r.notes.join('; ')}]`
  if (r.outcome === 'skipped') return (r.reason ?? '') + notes
  if (r.outcome === 'pass') return `${r.passed} check${r.passed === 1 ? '' : 's'}${notes}`
  const first = r.failures[0] ?? r.partials[0]
  const more = r.failures.length + r.partials.length - 1
  return first.message + (more > 0 ? ` (+${more} more)` : '') + notes
}

function findingsOf (r: RuleResult): Array<['fail' | 'partial', Finding]> {
  return [...r.failures.map((f): ['fail', Finding] => ['fail', f]), ...r.partials.map((f): ['partial', Finding] => ['partial', f])]
}

function summary (report: AuditReport): string {
  const count = (o: string): number => report.rules.filter((r) => r.outcome === o).length
  return `${count('pass')} passed, ${count('fail')} failed, ${count('partial')} partial, ${count('skipped')} skipped; ${report.requests} requests` +
    (report.created > 0 ? `; ${report.created} resources created and deleted` : '')
}

/** The table: one line per rule, then every failure with its exchange. */
export function formatTable (report: AuditReport, options: OutputOptions = {}): string {
  const secrets = options.secrets ?? []
  const row = (r: RuleResult): string[] => [r.outcome.toUpperCase() + (r.known === true ? ' (known)' : ''), r.id, r.section, detail(r)]
  const rows = report.rules.map(row)
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((x) => x[i].length)))
  const lines = [`Audit of ${report.url} (profile ${report.profile}${report.write ? ', with writes' : ', read-only'})`, '']
  const line = (r: RuleResult): string => { const x = row(r); return x.slice(0, 3).map((c, i) => c.padEnd(widths[i])).join('  ') + '  ' + x[3] }
  // the conventions first; the RFC behaviour beside them apart (it sets the exit status only with --strict-rfc)
  for (const r of report.rules.filter((x) => x.advice !== true)) lines.push(line(r))
  const advice = report.rules.filter((x) => x.advice === true)
  if (advice.length > 0) lines.push('', 'RFC advice beside the conventions (fails the run only with --strict-rfc):', ...advice.map(line))
  lines.push('', summary(report))
  if (report.leftBehind.length > 0) lines.push(`Could not delete: ${report.leftBehind.join(', ')}`)
  for (const note of options.notes ?? []) lines.push(`Limit: ${note}`)
  for (const r of report.rules) {
    for (const [kind, f] of findingsOf(r)) {
      lines.push('', `${kind.toUpperCase()} ${r.id}: ${r.title} (section ${r.section}${r.rfc === undefined ? '' : `; ${r.rfc}`})`, `  ${f.message}`)
      if (f.exchange !== undefined) lines.push('  request:', indent(formatRequest(f.exchange, secrets), '    '), '  answer:', indent(formatResponse(f.exchange, secrets), '    '))
    }
  }
  // the whole text once more: what the service put in a message, a path or a reason
  return outputText(lines.join('\n') + '\n', secrets)
}

function findingJson (f: Finding, secrets: readonly string[]): Record<string, unknown> {
  if (f.exchange === undefined) return { message: f.message }
  const res = f.exchange.response
  return {
    message: f.message,
    request: redactSecrets(redactCredentials(f.exchange.rawRequest), secrets),
    response: res === null
      ? null
      : {
          statusLine: res.statusLine,
          headers: res.headerLines.map(([n, v]) => [n, redactCredentials(`${n}: ${v}`).slice(n.length + 2)]),
          bodyStart: redactSecrets(res.body.toString('utf8'), secrets).slice(0, BODY_START),
          ...(res.cut === undefined ? {} : { cut: res.cut })
        }
  }
}

/** The report as a JSON value; every string in it is output-safe (credentials redacted, controls escaped). */
export function toJson (report: AuditReport, options: OutputOptions = {}): Record<string, unknown> {
  const secrets = options.secrets ?? []
  const value = {
    url: report.url,
    profile: report.profile,
    write: report.write,
    requests: report.requests,
    created: report.created,
    leftBehind: report.leftBehind,
    ...(options.notes === undefined || options.notes.length === 0 ? {} : { notes: options.notes }),
    rules: report.rules.map((r) => ({
      id: r.id,
      title: r.title,
      section: r.section,
      ...(r.rfc === undefined ? {} : { rfc: r.rfc }),
      ...(r.advice === true ? { advice: true } : {}),
      ...(r.known === true ? { known: true } : {}),
      outcome: r.outcome,
      ...(r.reason === undefined ? {} : { reason: r.reason }),
      ...(r.notes === undefined ? {} : { notes: r.notes }),
      passed: r.passed,
      failures: r.failures.map((f) => findingJson(f, secrets)),
      partials: r.partials.map((f) => findingJson(f, secrets))
    }))
  }
  return outputValue(value, secrets) as Record<string, unknown>
}

/** Text for XML (attribute or element), with no character XML 1.0 forbids. */
export function escapeXml (s: string, secrets: readonly string[] = []): string {
  return xmlText(s, secrets)
}

function junitCase (r: RuleResult, secrets: readonly string[]): string[] {
  const x = (s: string): string => escapeXml(s, secrets)
  const out = [`    <testcase classname="${x(r.section)}" name="${x(`${r.id}: ${r.title}`)}">`]
  if (r.outcome === 'skipped') out.push(`      <skipped message="${x(r.reason ?? '')}"/>`)
  for (const [kind, f] of findingsOf(r)) {
    const text = f.exchange === undefined ? '' : `request:\n${formatRequest(f.exchange, secrets)}\n\nanswer:\n${formatResponse(f.exchange, secrets)}`
    out.push(`      <failure type="${kind}" message="${x(f.message)}">${x(text)}</failure>`)
  }
  if (r.notes !== undefined) out.push(`      <system-out>${x(r.notes.join('\n'))}</system-out>`)
  out.push('    </testcase>')
  return out
}

/** JUnit XML: one testcase per rule; a failed or partial rule is a <failure>, a skipped one <skipped>. */
export function toJunit (report: AuditReport, options: OutputOptions = {}): string {
  const secrets = options.secrets ?? []
  const failures = report.rules.filter((r) => r.outcome === 'fail' || r.outcome === 'partial').length
  const skipped = report.rules.filter((r) => r.outcome === 'skipped').length
  const out = ['<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="fastify-http-conventions audit" tests="${report.rules.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="${escapeXml(report.url, secrets)} (${report.profile})" tests="${report.rules.length}" failures="${failures}" skipped="${skipped}">`]
  for (const r of report.rules) out.push(...junitCase(r, secrets))
  if (options.notes !== undefined && options.notes.length > 0) out.push(`    <system-out>${escapeXml(options.notes.map((n) => `Limit: ${n}`).join('\n'), secrets)}</system-out>`)
  out.push('  </testsuite>', '</testsuites>')
  return out.join('\n') + '\n'
}

/** 0 when every rule passed or was skipped, 1 when one failed or was partial. */
export function exitCode (report: AuditReport): number {
  return report.rules.some((r) => r.outcome === 'fail' || r.outcome === 'partial') ? 1 : 0
}
