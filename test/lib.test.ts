// Every test file of test/lib in one process.
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, 'lib'))
