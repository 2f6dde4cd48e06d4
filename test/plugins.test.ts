// Every test file of test/plugins in one process, but the `*.alone.test.ts` ones (see
// test/helpers/group.ts).
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, 'plugins'))
