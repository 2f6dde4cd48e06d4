'use strict'
// `npm run bench`: every benchmark of the suite, side by side in one run.
const { printRows } = require('./harness')

const modules = ['foundation', 'conditional', 'auth', 'delta']

async function main () {
  const only = process.argv[2]
  for (const name of modules) {
    if (only !== undefined && only !== name) continue
    let mod
    try { mod = require(`./${name}.js`) } catch (err) { if (err.code === 'MODULE_NOT_FOUND' && err.message.includes(`${name}.js`)) continue; throw err }
    console.log(`\n## ${name}\n`)
    const rows = await mod.run()
    if (Array.isArray(rows) && rows.length > 0 && rows[0].benchmark !== undefined) console.log(printRows(rows))
  }
  if (only === undefined || only === 'vcdiff') {
    console.log('\n## vcdiff\n')
    await require('./vcdiff.js').run()
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
