// Every test file of packages/vcdiff/test (the VCDIFF codec's) in one process.
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, '..', 'packages', 'vcdiff', 'test'))
