/**
 * `npm install` in a clone prints no "install scripts not yet covered by allowScripts" warning:
 * every installed package with an install script (the lockfile's `hasInstallScript`) is named
 * in package.json's `allowScripts`, approved or denied (`npm approve-scripts`).
 */
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/paths'

interface Lock { packages: Record<string, { hasInstallScript?: boolean, link?: boolean }> }

test('every dependency with an install script is reviewed in allowScripts', async (t) => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }
  const withScripts = Object.entries(lock.packages)
    .filter(([path, entry]) => path.startsWith('node_modules/') && entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  t.ok(withScripts.length > 0, `the lockfile names the packages with install scripts (${withScripts.join(', ')})`)
  for (const name of withScripts) t.type(pkg.allowScripts?.[name], 'boolean', `${name}: approved or denied in allowScripts`)
})
