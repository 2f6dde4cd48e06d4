/**
 * `fastify-http-conventions audit <url>`: arguments, discovery, the run, the reports and the
 * exit status (verdict.ts).
 */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { configErrors, loadOpenApi, mergeTargets, OpenApiError, type AuditConfig, type Targets } from './discovery'
import { checkWritable, EXIT_OUTPUT, OutputPathError } from './output-files'
import { outputText, secretsOf } from './redact-output'
import { formatTable, toJson, toJunit } from './report'
import { unknownPatterns } from './rules'
import { audit, transportFor, type AuditReport, type Credentials, type Profile } from './run'
import { boundsHit, type Transport } from './transport'
import { EXIT, applyBaseline, exitStatus, loadBaseline, statusMessage } from './verdict'

export const USAGE = `Usage: fastify-http-conventions audit <url> [options]

Audits a running HTTP service against the conventions, rule by rule.

  --profile spec|rfc9110  which behaviour the rules expect (default spec)
  --openapi <url|path>    the service's OpenAPI document (default: try /openapi.json)
  --config <file>         JSON: collection, item, itemMethods, sample, schema, redirects, paths, protected
  --write                 also send POST, PUT, PATCH and DELETE (creates and deletes its own resources)
  --basic <user:pass>     credentials for the writes (Basic)
  --bearer <token>        credentials for the writes (Bearer)
  --digest <user:pass>    credentials for the writes (Digest)
  --bearer-insufficient <token>  a valid token without the scope the writes need
  --unique <property>     a property two resources may not share (the duplicate is 422)
  --rule <id|section>     run only these rules (repeatable): an id, an id's prefix, a section
  --skip <id|section>     do not run these rules (repeatable)
  --baseline <file>       known departures (JSON): they do not fail the run
  --strict-rfc            RFC advice (the rfc.* rules) fails the run too
  --min-checked <percent> the share of the applicable rules a run must check (default 50)
  --rate <n>              requests a second at most (default 20; 0: no limit)
  --timeout <ms>          wait this long for an answer (default 5000)
  --json                  print the report as JSON instead of a table
  --junit <file>          also write the report as JUnit XML
  --help                  this text

Exit status: 0 the rules checked hold; 1 a rule of the conventions failed (not in the
baseline); 2 a usage error; 3 too little could be checked; 4 the service does not answer;
5 an output file (--junit) cannot be written (found before the first request).
`

export class UsageError extends Error {}

export interface CliIo {
  stdout: { write: (s: string) => unknown }
  stderr: { write: (s: string) => unknown, isTTY?: boolean }
}

export interface ParsedArgs {
  url: string
  profile: Profile
  openapi?: string
  config?: string
  write: boolean
  credentials: Credentials
  rate: number
  timeoutMs: number
  json: boolean
  junit?: string
  only: string[]
  skip: string[]
  baseline?: string
  strictRfc: boolean
  minChecked: number
  unique?: string
}

function pair (value: string | undefined, flag: string): { user: string, password: string } | undefined {
  if (value === undefined) return undefined
  const colon = value.indexOf(':')
  if (colon <= 0) throw new UsageError(`${flag} takes user:password`)
  return { user: value.slice(0, colon), password: value.slice(colon + 1) }
}

function count (value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} takes a whole number, not ${JSON.stringify(value)}`)
  return Number(value)
}

const OPTIONS = {
  profile: { type: 'string' },
  openapi: { type: 'string' },
  config: { type: 'string' },
  write: { type: 'boolean' },
  basic: { type: 'string' },
  bearer: { type: 'string' },
  digest: { type: 'string' },
  rate: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  junit: { type: 'string' },
  'bearer-insufficient': { type: 'string' },
  unique: { type: 'string' },
  rule: { type: 'string', multiple: true },
  skip: { type: 'string', multiple: true },
  baseline: { type: 'string' },
  'strict-rfc': { type: 'boolean' },
  'min-checked': { type: 'string' },
  help: { type: 'boolean' }
} as const

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS, allowPositionals: true }>>['values']

/** The URL of `audit <url>`, an http: URL, with nothing after it. */
function auditedUrl (positionals: string[]): URL {
  const [command, url, ...rest] = positionals
  if (command !== 'audit') throw new UsageError(command === undefined ? 'a command is needed: audit <url>' : `unknown command ${JSON.stringify(command)}: the command is audit`)
  if (url === undefined) throw new UsageError('audit needs the URL of the service, e.g. http://127.0.0.1:3000')
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`)
  let u: URL
  try { u = new URL(url) } catch { throw new UsageError(`${JSON.stringify(url)} is not a URL`) }
  if (u.protocol !== 'http:') throw new UsageError(`only http: URLs can be audited (HTTP/1.1 over TCP), not ${u.protocol}`)
  return u
}

function credentialsOf (values: Values): Credentials {
  const credentials: Credentials = {}
  const basic = pair(values.basic, '--basic')
  const digest = pair(values.digest, '--digest')
  if (basic !== undefined) credentials.basic = basic
  if (digest !== undefined) credentials.digest = digest
  if (values.bearer !== undefined) credentials.bearer = values.bearer
  if (values['bearer-insufficient'] !== undefined) credentials.insufficientBearer = values['bearer-insufficient']
  return credentials
}

/** `--rule` and `--skip`, each naming a rule id or a section. */
function selection (values: Values): { only: string[], skip: string[] } {
  const only = values.rule ?? []
  const skip = values.skip ?? []
  const unknown = unknownPatterns([...only, ...skip])
  if (unknown.length > 0) throw new UsageError(`--rule and --skip take a rule id or a section; no rule is ${unknown.map((p) => JSON.stringify(p)).join(', ')}`)
  return { only, skip }
}

export function parseCliArgs (argv: string[]): ParsedArgs | 'help' {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  const u = auditedUrl(positionals)
  const profile = values.profile ?? 'spec'
  if (profile !== 'spec' && profile !== 'rfc9110') throw new UsageError(`--profile is spec or rfc9110, not ${JSON.stringify(profile)}`)
  const credentials = credentialsOf(values)
  const { only, skip } = selection(values)
  const minChecked = count(values['min-checked'], '--min-checked', 50)
  if (minChecked > 100) throw new UsageError('--min-checked is a percentage, 0 to 100')
  return {
    // the path is a prefix every probe is sent below (transport.ts)
    url: u.origin + u.pathname.replace(/\/+$/, ''),
    profile,
    ...(values.openapi === undefined ? {} : { openapi: values.openapi }),
    ...(values.config === undefined ? {} : { config: values.config }),
    write: values.write === true,
    credentials,
    rate: count(values.rate, '--rate', 20),
    timeoutMs: count(values.timeout, '--timeout', 5000),
    json: values.json === true,
    ...(values.junit === undefined ? {} : { junit: values.junit }),
    only,
    skip,
    ...(values.baseline === undefined ? {} : { baseline: values.baseline }),
    strictRfc: values['strict-rfc'] === true,
    minChecked,
    ...(values.unique === undefined ? {} : { unique: values.unique })
  }
}

async function loadConfig (file: string | undefined): Promise<AuditConfig> {
  if (file === undefined) return {}
  let value: unknown
  try { value = JSON.parse(await readFile(file, 'utf8')) } catch (err) { throw new UsageError(`--config ${file}: ${(err as Error).message}`) }
  const errors = configErrors(value)
  if (errors.length > 0) throw new UsageError(`--config ${file}:\n  ${errors.join('\n  ')}`)
  return value as AuditConfig
}

/** The OpenAPI document (discovery.ts): its targets, and the bounds it met into `notes`. */
async function openApiTargets (source: string | undefined, a: ParsedArgs, t: Transport, notes: string[]): Promise<Targets | undefined> {
  try {
    const got = await loadOpenApi({ ...(source === undefined ? {} : { source }), url: a.url, transport: t, timeoutMs: a.timeoutMs })
    notes.push(...got.notes)
    return got.targets
  } catch (err) {
    throw err instanceof OpenApiError ? new UsageError(err.message) : err
  }
}

/** Runs the command; resolves with the exit status. */
export async function main (argv: string[], io: CliIo): Promise<number> {
  let args: ParsedArgs | 'help'
  let report: AuditReport
  let secrets: string[] = []
  try {
    args = parseCliArgs(argv)
    if (args === 'help') { io.stdout.write(USAGE); return 0 }
    const a = args
    secrets = secretsOf(a.credentials)
    // output files are checked before the first request (output-files.ts)
    if (a.junit !== undefined) await checkWritable(a.junit, '--junit')
    const known = a.baseline === undefined ? undefined : await loadBaseline(a.baseline).catch((err: Error) => { throw new UsageError(err.message) })
    const progress = io.stderr.isTTY === true
    const t = transportFor(a.url, a.rate, a.timeoutMs, progress ? (ex) => io.stderr.write(`\r\x1b[K[${ex.n}] ${outputText(`${ex.request.method} ${ex.request.target}`, secrets)}`) : undefined)
    const config = await loadConfig(a.config)
    const notes: string[] = []
    const targets = mergeTargets(await openApiTargets(a.openapi, a, t, notes), config)
    report = await audit({ url: a.url, profile: a.profile, targets, write: a.write, credentials: a.credentials, rate: a.rate, timeoutMs: a.timeoutMs, transport: t, only: a.only, skip: a.skip, ...(a.unique === undefined ? {} : { unique: a.unique }) })
    if (progress) io.stderr.write('\r\x1b[K')
    const stale = known === undefined ? [] : applyBaseline(report, known)
    // what the run could not read or check whole (docs/audit.md, Limits)
    const output = { secrets, notes: [...notes, ...(targets.notes ?? []), ...boundsHit(t.exchanges)] }
    if (a.junit !== undefined) await writeFile(a.junit, toJunit(report, output))
    const status = exitStatus(report, a)
    io.stdout.write(a.json ? JSON.stringify({ ...toJson(report, output), coverage: report.coverage, ...(report.unreachable === undefined ? {} : { unreachable: outputText(report.unreachable, secrets) }), status }, null, 2) + '\n' : formatTable(report, output))
    const message = statusMessage(report, status, a.minChecked)
    if (message !== undefined) io.stderr.write(`fastify-http-conventions: ${outputText(message, secrets)}\n`)
    if (stale.length > 0) io.stderr.write(`fastify-http-conventions: the baseline lists ${stale.join(', ')}, which no longer fail${stale.length === 1 ? 's' : ''}: remove ${stale.length === 1 ? 'it' : 'them'} from ${a.baseline as string}\n`)
    return status
  } catch (err) {
    if (err instanceof OutputPathError) { io.stderr.write(`fastify-http-conventions: ${outputText(err.message, secrets)}\n`); return EXIT_OUTPUT }
    /* c8 ignore next -- every failure main() expects is a UsageError; anything else is a bug, reported by the bin */
    if (!(err instanceof UsageError)) throw err
    io.stderr.write(`fastify-http-conventions: ${outputText(err.message, secrets)}\n\n${USAGE}`)
    return EXIT.usage
  }
}
