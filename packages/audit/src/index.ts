/**
 * `@http-conventions/audit`: audits a running HTTP service against the conventions, rule by
 * rule, from outside (docs/audit.md): the command `fastify-http-conventions audit <url>`, and
 * the same as functions.
 *
 * @module @http-conventions/audit
 */
export { main, parseCliArgs, USAGE, UsageError } from './cli'
export type { CliIo, ParsedArgs } from './cli'
export { audit } from './run'
export type { AuditOptions, AuditReport, Credentials, Profile } from './run'
export { RULES, RULE_IDS, coverageTable } from './rules'
export type { Rule, RuleId } from './rules'
export { formatTable, toJson, toJunit, exitCode } from './report'
export type { OutputOptions } from './report'
