/**
 * The README is the npm page: it reads in the order of the official Fastify plugins
 * (title and description, Install, Usage, Options, then the rest), says how to run the
 * reference service (`npm install`, then `npm start`) near its top, and links only to
 * things the npm page can reach: absolute URLs of the repository that package.json names
 * (`repository`, `homepage`, `bugs`), or headings of its own. Contributor material lives in
 * CONTRIBUTING.md.
 *
 * Every link of README.md, CONTRIBUTING.md and docs/ points to a file that exists, and to a
 * heading that exists when it names one. (Their TypeScript snippets are compiled by
 * test/docs-snippets.test.ts.)
 */
import { test } from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { ROOT } from './helpers/paths'

const README = join(ROOT, 'README.md')

interface Pkg { repository?: { type?: string, url?: string }, homepage?: string, bugs?: { url?: string }, keywords?: string[], files?: string[] }
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Pkg
/** https://github.com/owner/name, from package.json's `repository`. */
const REPO = (pkg.repository?.url ?? '').replace(/^git\+/, '').replace(/\.git$/, '')
/** How README.md links to a file of the repository: `${REPO}/blob/HEAD/<path>` (HEAD: the default branch). */
const BLOB = `${REPO}/blob/HEAD/`

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** The text outside fenced code blocks. */
function prose (markdown: string): string {
  return markdown.replace(/^([ \t]*)(`{3,})[^\n]*\n[\s\S]*?\n\1\2[ \t]*$/gm, '')
}

function headingsOf (markdown: string): Array<{ level: number, text: string }> {
  return [...prose(markdown).matchAll(/^(#{1,6})\s+(.*)$/gm)].map((m) => ({ level: m[1].length, text: m[2].trim() }))
}

function anchorsOf (file: string): Set<string> {
  return new Set(headingsOf(readFileSync(file, 'utf8')).map((h) => anchorOf(h.text)))
}

function linksOf (markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
}

/** What is wrong with a link to a file of the repository (a path from the root), or undefined. */
function brokenTarget (target: string, anchor: string | undefined, link: string): string | undefined {
  if (!existsSync(target)) return `${link}: no such file`
  if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).has(anchor)) return `${link}: no such heading`
  return undefined
}

test('package.json names the repository, its home page and where to report bugs', async (t) => {
  t.equal(pkg.repository?.type, 'git')
  t.equal(REPO, 'https://github.com/fastify-http-conventions/fastify-http-conventions')
  t.equal(pkg.homepage, `${REPO}#readme`)
  t.equal(pkg.bugs?.url, `${REPO}/issues`)
  t.ok(pkg.keywords?.includes('fastify') === true && pkg.keywords.includes('fastify-plugin'), 'found by the keywords Fastify plugins use')
  t.ok(pkg.files?.includes('README.md'), 'the README is packed')
})

test('the README reads like an official Fastify plugin\'s: title, description, Install, Usage, Options, then the rest', async (t) => {
  const text = readFileSync(README, 'utf8')
  const headings = headingsOf(text)
  t.same(headings[0], { level: 1, text: 'fastify-http-conventions' }, 'the package name is the title')
  const sections = headings.filter((h) => h.level === 2).map((h) => h.text)
  t.same(sections.slice(0, 3), ['Install', 'Usage', 'Options'], 'Install, Usage and Options come first')
  t.equal(sections[sections.length - 1], 'License', 'License comes last')
  t.ok(sections.includes('Security model'), 'a "Security model" section')
  const description = prose(text).split('\n## ')[0].split('\n').slice(1).join(' ').trim()
  t.match(description, /^Fastify v5 plugins/, 'a description under the title')
  for (const contributing of ['Working in this repository', 'Benchmarks', 'Layout']) {
    t.notOk(sections.includes(contributing), `"${contributing}" is contributor material: in CONTRIBUTING.md`)
  }
  const top = text.slice(0, text.indexOf('\n## Usage\n'))
  t.match(top, /```sh\nnpm install\nnpm start\b[^\n]*reference service/, '`npm install`, then `npm start` for the reference service, before the usage example')
  t.match(top, /`npm test` runs every test/, '`npm test` near the top as well')
  const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8')
  for (const heading of ['Tests', 'Benchmarks', 'Layout']) t.ok(headingsOf(contributing).some((h) => h.text === heading), `CONTRIBUTING.md: ${heading}`)
})

test('the README links only to what the npm page can reach: the repository by absolute URL, or its own headings', async (t) => {
  const text = readFileSync(README, 'utf8')
  const own = anchorsOf(README)
  const broken: string[] = []
  let toRepository = 0
  for (const link of linksOf(text)) {
    if (link.startsWith('#')) {
      if (!own.has(link.slice(1))) broken.push(`${link}: no such heading in README.md`)
    } else if (link.startsWith(BLOB)) {
      toRepository++
      const [path, anchor] = link.slice(BLOB.length).split('#')
      const problem = brokenTarget(join(ROOT, path), anchor, link)
      if (problem !== undefined) broken.push(problem)
    } else if (!/^https?:\/\//.test(link)) {
      broken.push(`${link}: relative, which the npm page cannot follow`)
    }
  }
  t.same(broken, [], 'every link of README.md works on the npm page')
  t.ok(toRepository >= 10, `${toRepository} links to the repository's files`)
})

test('relative links of CONTRIBUTING.md and docs/ point to files and headings that exist', async (t) => {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
  for (const page of ['CONTRIBUTING.md', ...docs]) {
    const file = join(ROOT, page)
    const broken: string[] = []
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue
      const [path, anchor] = link.split('#')
      const problem = brokenTarget(path === '' ? file : resolve(dirname(file), path), anchor, link)
      if (problem !== undefined) broken.push(problem)
    }
    t.same(broken, [], `${page}: every relative link resolves`)
  }
})

test('the anchors follow GitHub\'s rule', async (t) => {
  t.equal(anchorOf('PATCH (JSON Patch, merge patch, 415)'), 'patch-json-patch-merge-patch-415')
  t.equal(anchorOf('Profiles: `spec` and `rfc9110`'), 'profiles-spec-and-rfc9110')
  t.equal(anchorOf('Validation errors (422 and the `errors[]` body)'), 'validation-errors-422-and-the-errors-body')
})
