// Every test file of test/plugins in one process, but three that need a process of their own:
// two check that Node or Fastify emitted no warning (a warning is emitted once per process),
// and openapi.test replaces @fastify/swagger in require's cache before it loads the reference
// service.
import { join } from 'node:path'
import { runEvery } from './helpers/group'

runEvery(join(__dirname, 'plugins'), ['composition.test', 'content-length.test', 'openapi.test'])
