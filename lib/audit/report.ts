/** The audit's report for people (a table and each failure's exchange), for programs (JSON) and for CI (JUnit XML). */
import type { AuditReport } from './run'
import type { Finding, RuleResult } from './results'
import type { Exchange } from './transport'

const BODY_START = 300

/** Control characters but tab and newline shown as `\xNN`, so a report is plain text. */
function printable (s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (c) => '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'))
}

/** Credentials never reach a report: `Authorization: Basic [redacted]`. */
export function redactCredentials (raw: string): string {
  return raw.replace(/^(authorization:[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)[^\r\n]*/gim, '$1 [redacted]')
}

/** The request as sent (credentials redacted): its head, then the start of its body. */
export function formatRequest (ex: Exchange): string {
  const raw = redactCredentials(ex.rawRequest)
  const end = raw.indexOf('\r\n\r\n')
  const head = end === -1 ? raw : raw.slice(0, end)
  const body = end === -1 ? '' : raw.slice(end + 4)
  return printable(head.replace(/\r\n/g, '\n')) + (body.length > 0 ? '\n\n' + printable(body.slice(0, BODY_START)) + (body.length > BODY_START ? ` ... (${body.length} bytes)` : '') : '')
}

/** The answer: status line, header lines, the start of the body. */
export function formatResponse (ex: Exchange): string {
  const res = ex.response
  if (res === null) return `(no answer: ${ex.error ?? 'closed'})`
  const body = res.body.toString('utf8')
  return printable(res.head.replace(/\r\n/g, '\n')) + (body.length > 0 ? '\n\n' + printable(body.slice(0, BODY_START)) + (body.length > BODY_START ? ` ... (${res.body.length} bytes)` : '') : '')
}

function indent (s: string, by: string): string { return s.split('\n').map((l) => l === '' ? '' : by + l).join('\n') }

function detail (r: RuleResult): string {
  if (r.outcome === 'skipped') return r.reason ?? ''
  if (r.outcome === 'pass') return `${r.passed} check${r.passed === 1 ? '' : 's'}`
  const first = r.failures[0] ?? r.partials[0]
  const more = r.failures.length + r.partials.length - 1
  return first.message + (more > 0 ? ` (+${more} more)` : '')
}

/** The table: one line per rule, then every failure with its exchange. */
export function formatTable (report: AuditReport): string {
  const row = (r: RuleResult): string[] => [r.outcome.toUpperCase() + (r.known === true ? ' (known)' : ''), r.id, r.section, detail(r)]
  const rows = report.rules.map(row)
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((x) => x[i].length)))
  const lines = [`Audit of ${report.url} (profile ${report.profile}${report.write ? ', with writes' : ', read-only'})`, '']
  const line = (r: RuleResult): string => { const x = row(r); return x.slice(0, 3).map((c, i) => c.padEnd(widths[i])).join('  ') + '  ' + x[3] }
  // the conventions first; the RFC behaviour beside them apart (it sets the exit status only with --strict-rfc)
  for (const r of report.rules.filter((x) => x.advice !== true)) lines.push(line(r))
  const advice = report.rules.filter((x) => x.advice === true)
  if (advice.length > 0) lines.push('', 'RFC advice beside the conventions (fails the run only with --strict-rfc):', ...advice.map(line))
  const count = (o: string): number => report.rules.filter((r) => r.outcome === o).length
  lines.push('', `${count('pass')} passed, ${count('fail')} failed, ${count('partial')} partial, ${count('skipped')} skipped; ${report.requests} requests` +
    (report.created > 0 ? `; ${report.created} resources created and deleted` : ''))
  if (report.leftBehind.length > 0) lines.push(`Could not delete: ${report.leftBehind.join(', ')}`)
  for (const r of report.rules) {
    const findings: Array<[string, Finding]> = [...r.failures.map((f): [string, Finding] => ['FAIL', f]), ...r.partials.map((f): [string, Finding] => ['PARTIAL', f])]
    for (const [kind, f] of findings) {
      lines.push('', `${kind} ${r.id}: ${r.title} (section ${r.section}${r.rfc === undefined ? '' : `; ${r.rfc}`})`, `  ${f.message}`)
      if (f.exchange !== undefined) lines.push('  request:', indent(formatRequest(f.exchange), '    '), '  answer:', indent(formatResponse(f.exchange), '    '))
    }
  }
  return lines.join('\n') + '\n'
}

function findingJson (f: Finding): Record<string, unknown> {
  if (f.exchange === undefined) return { message: f.message }
  const res = f.exchange.response
  return {
    message: f.message,
    request: redactCredentials(f.exchange.rawRequest),
    response: res === null ? null : { statusLine: res.statusLine, headers: res.headerLines, bodyStart: res.body.toString('utf8').slice(0, BODY_START) }
  }
}

export function toJson (report: AuditReport): Record<string, unknown> {
  return {
    url: report.url,
    profile: report.profile,
    write: report.write,
    requests: report.requests,
    created: report.created,
    leftBehind: report.leftBehind,
    rules: report.rules.map((r) => ({
      id: r.id,
      title: r.title,
      section: r.section,
      ...(r.rfc === undefined ? {} : { rfc: r.rfc }),
      ...(r.advice === true ? { advice: true } : {}),
      ...(r.known === true ? { known: true } : {}),
      outcome: r.outcome,
      ...(r.reason === undefined ? {} : { reason: r.reason }),
      passed: r.passed,
      failures: r.failures.map(findingJson),
      partials: r.partials.map(findingJson)
    }))
  }
}

export function escapeXml (s: string): string {
  // eslint-disable-next-line no-control-regex
  return printable(s).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** JUnit XML: one testcase per rule; a failed or partial rule is a <failure>, a skipped one <skipped>. */
export function toJunit (report: AuditReport): string {
  const failures = report.rules.filter((r) => r.outcome === 'fail' || r.outcome === 'partial').length
  const skipped = report.rules.filter((r) => r.outcome === 'skipped').length
  const out = ['<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="fastify-http-conventions audit" tests="${report.rules.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="${escapeXml(report.url)} (${report.profile})" tests="${report.rules.length}" failures="${failures}" skipped="${skipped}">`]
  for (const r of report.rules) {
    const name = `${r.id}: ${r.title}`
    out.push(`    <testcase classname="${escapeXml(r.section)}" name="${escapeXml(name)}">`)
    if (r.outcome === 'skipped') out.push(`      <skipped message="${escapeXml(r.reason ?? '')}"/>`)
    for (const [kind, f] of [...r.failures.map((f) => ['fail', f] as const), ...r.partials.map((f) => ['partial', f] as const)]) {
      const text = f.exchange === undefined ? '' : `request:\n${formatRequest(f.exchange)}\n\nanswer:\n${formatResponse(f.exchange)}`
      out.push(`      <failure type="${kind}" message="${escapeXml(f.message)}">${escapeXml(text)}</failure>`)
    }
    out.push('    </testcase>')
  }
  out.push('  </testsuite>', '</testsuites>')
  return out.join('\n') + '\n'
}

/** 0 when every rule passed or was skipped, 1 when one failed or was partial. */
export function exitCode (report: AuditReport): number {
  return report.rules.some((r) => r.outcome === 'fail' || r.outcome === 'partial') ? 1 : 0
}
