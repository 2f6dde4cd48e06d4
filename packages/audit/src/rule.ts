/**
 * What a rule of the auditor is: one statement of the conventions (docs/conventions.md), or one
 * piece of RFC behaviour beside them (`advice`), with what it needs to be checked, the probe
 * that sends its requests and records its verdict, or the verdict it gives on every answer of
 * the run (`each`). A rule records only its own verdict: it is given a `Verdict` bound to its id.
 */
import type { Context } from './context'
import type { Exchange, WireResponse } from './transport'

/**
 * What a rule needs before it can be checked. The first three are given on the command line
 * (a run without them cannot check the rule, and does not count it); the others are found
 * while the run goes (a run that finds none of them checked too little).
 */
export type Need =
  /** `--write`: requests that change the service */
  | 'write'
  /** any of `--basic`, `--bearer`, `--digest` */
  | 'credentials'
  | 'basic'
  | 'bearer'
  | 'digest'
  /** `--bearer-insufficient`: a valid token that lacks the scope the writes need */
  | 'insufficient-token'
  /** `--unique <field>`: a property two resources may not share */
  | 'unique-field'
  /** the `spec` profile (the rule is an RFC behaviour the `rfc9110` profile restores) */
  | 'spec-profile'
  /** where POST creates a resource */
  | 'collection'
  /** the JSON Schema of a request body */
  | 'schema'
  /** one resource to read (listed at the collection) or, with `--write`, created */
  | 'resource'
  /** a path answered with a redirect */
  | 'redirect'
  /** writes refused without credentials */
  | 'protected'
  /** the resource takes PATCH */
  | 'patch'
  /** the resource takes PUT */
  | 'put'

/** The needs given on the command line: a run without one of them does not count the rule. */
export const OPTION_NEEDS: readonly Need[] = ['write', 'credentials', 'basic', 'bearer', 'digest', 'insufficient-token', 'unique-field', 'spec-profile']

/** Records the verdict of one rule. */
export interface Verdict {
  /** `ok`: one check held; else a failure saying `message`. Returns `ok`. */
  check: (ok: boolean, message: string, exchange?: Exchange) => boolean
  fail: (message: string, exchange?: Exchange) => void
  /** the rule held only in part */
  partial: (message: string, exchange?: Exchange) => void
  /** why nothing could be checked (kept only when nothing else is recorded) */
  skip: (reason: string) => void
  /** a bound the rule's checks hit, said beside its outcome */
  note: (text: string) => void
}

export interface Rule {
  id: string
  /** one line, what the rule asks */
  title: string
  /** the heading of the conventions it holds (number and name) */
  section: string
  /** the sentence of docs/conventions.md it checks, word for word; for advice, the RFC behaviour */
  statement: string
  /** the RFC text it follows */
  rfc?: string
  /** RFC behaviour beside the conventions: reported apart, and it never sets the exit status unless asked */
  advice?: true
  needs: readonly Need[]
  /** sends the rule's requests and records its verdict */
  probe?: (c: Context, v: Verdict) => Promise<void>
  /** the verdict on one answer of the run (a rule that holds for every answer) */
  each?: (ex: Exchange, res: WireResponse, v: Verdict, profile: string) => void
}
