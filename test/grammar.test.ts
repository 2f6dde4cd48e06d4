// Every test file of packages/grammar/test (the header grammar's) in one process.
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, '..', 'packages', 'grammar', 'test'))
