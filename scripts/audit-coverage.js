'use strict'
/*
 * Writes the coverage table of docs/audit.md (between its coverage markers) from the
 * auditor's rule registry, built in packages/audit/dist/ (`npm run build` first). packages/audit/test/coverage.test.ts
 * fails when the table in the document differs from the registry.
 */
const { readFileSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')
const { coverageTable } = require('../packages/audit/dist/rules.js')

const file = join(__dirname, '..', 'docs', 'audit.md')
const text = readFileSync(file, 'utf8')
const start = '<!-- coverage: generated from packages/audit/src/rules.ts by scripts/audit-coverage.js -->\n'
const end = '<!-- coverage end -->'
const a = text.indexOf(start)
const b = text.indexOf(end)
if (a === -1 || b === -1) throw new Error('docs/audit.md has no coverage markers')
writeFileSync(file, text.slice(0, a + start.length) + '\n' + coverageTable() + '\n' + text.slice(b))
