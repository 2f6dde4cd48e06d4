// Every test file of test/lib, but test/lib/vcdiff (test/vcdiff.test.ts), in one process.
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, 'lib'), ['vcdiff/'])
