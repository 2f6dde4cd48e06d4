/**
 * The OpenAPI module knows no convention's config nor its texts: conventions describe
 * themselves to the kernel (`c.describe`, `c.respond`), and the module reads only what they recorded.
 */
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/paths'

/** The config keys of conventions the module once read, and how such a read looks. */
const KEYS = ['auth', 'patch', 'contentType']

function reads (source: string, key: string): boolean {
  return new RegExp(`\\bconfig\\??\\.${key}\\b|\\b${key}\\?:\\s*unknown|\\[['"]${key}['"]\\]`).test(source)
}

test('openapi.ts reads no config key of a convention', async (t) => {
  t.ok(reads('const auth = config?.auth as Json', 'auth'), 'the scan catches a read as it was once written')
  const source = readFileSync(join(ROOT, 'plugins/services/openapi.ts'), 'utf8')
  for (const key of KEYS) t.notOk(reads(source, key), `no config.${key}`)
})

/** Texts a convention now gives with the names of its headers and its OPTIONS answer (`c.describe`). */
const TEXTS = ['One challenge per accepted scheme', 'The current entity tag of the resource', 'Where to repeat the request', 'The methods the resource serves', 'The patch document types the resource accepts']

test('openapi.ts writes no convention\'s header texts', async (t) => {
  const source = readFileSync(join(ROOT, 'plugins/services/openapi.ts'), 'utf8')
  for (const text of TEXTS) t.notOk(source.includes(text), text)
})
