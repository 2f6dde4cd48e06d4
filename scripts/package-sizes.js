'use strict'
// Measures what each package costs its users: for the root and every package of packages/,
// the tarball (`npm pack --json`: packed and unpacked bytes, files) and an install of it
// alone in an empty directory (with the tarballs of the packages of packages/ it depends on,
// which are not in a registry yet): the size of node_modules (`du -sh`), the packages
// installed besides itself, and whether Fastify is among them. Needs `npm run build` first.
//
//   node scripts/package-sizes.js          a Markdown table on stdout
const { execFileSync } = require('node:child_process')
const { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

const root = join(__dirname, '..')
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const manifest = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
const workspaces = manifest(root).workspaces
const dirs = new Map([[manifest(root).name, root], ...workspaces.map((w) => [manifest(join(root, w)).name, join(root, w)])])

function pack (dir, into) {
  return JSON.parse(execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', into], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 }))[0]
}

/** The names of every package below node_modules (nested ones too). */
function installed (modules, out = []) {
  if (!existsSync(modules)) return out
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue
    const names = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((e) => `${entry}/${e}`) : [entry]
    for (const name of names) {
      out.push(name)
      installed(join(modules, name, 'node_modules'), out)
    }
  }
  return out
}

function measure (name) {
  const dir = mkdtempSync(join(tmpdir(), 'package-sizes-'))
  try {
    const wanted = [name]
    for (let i = 0; i < wanted.length; i++) {
      for (const dep of Object.keys(manifest(dirs.get(wanted[i])).dependencies ?? {})) if (dirs.has(dep) && !wanted.includes(dep)) wanted.push(dep)
    }
    const packed = wanted.map((n) => pack(dirs.get(n), dir))
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'measure', version: '1.0.0', private: true }))
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packed.map((p) => `./${p.filename}`)], { cwd: dir, stdio: 'ignore' })
    const names = installed(join(dir, 'node_modules'))
    const du = execFileSync('du', ['-sh', join(dir, 'node_modules')], { encoding: 'utf8' }).split('\t')[0]
    return { name, size: packed[0].size, unpackedSize: packed[0].unpackedSize, files: packed[0].entryCount, du, others: names.length - 1, fastify: names.includes('fastify') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const kb = (n) => `${(n / 1024).toFixed(1)} kB`
process.stdout.write('| package | packed | unpacked | files | install alone: node_modules | packages besides it | fastify |\n|---|---|---|---|---|---|---|\n')
for (const name of dirs.keys()) {
  const m = measure(name)
  process.stdout.write(`| ${m.name} | ${kb(m.size)} | ${kb(m.unpackedSize)} | ${m.files} | ${m.du} | ${m.others} | ${m.fastify ? 'yes' : 'no'} |\n`)
}
