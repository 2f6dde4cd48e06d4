#!/usr/bin/env node
/**
 * The auditor's `bin`: `npx fastify-http-conventions audit http://127.0.0.1:3000` audits a
 * running service against the conventions (docs/audit.md). The work is in cli.ts.
 */
import { main } from './cli'

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }).then((code) => {
  process.exitCode = code
}, /* c8 ignore start -- main() rejects only on a bug of the auditor: say so, and fail */ (err: unknown) => {
  process.stderr.write(`fastify-http-conventions: ${String((err as Error)?.stack ?? err)}\n`)
  process.exitCode = 2
})
/* c8 ignore stop */
