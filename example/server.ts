/** `npm start`: runs the reference service until SIGINT/SIGTERM, then shuts down cleanly. */
import { buildService, configFromEnv } from './app'

async function main (): Promise<void> {
  const config = configFromEnv()
  const app = await buildService({ ...config, logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  let closing = false
  // An answer sent once shutdown began closes its connection (RFC 9112 9.6): a keep-alive
  // connection would otherwise hold close() until the client leaves or keepAliveTimeout passes.
  app.addHook('onSend', async (request, reply) => {
    if (closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close')
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // `on`, not `once`: a signal sent to the process group reaches this process twice (from the
    // kernel, and passed on by the launcher), and a second one must not end it before close() has.
    process.on(signal, () => {
      if (closing) return
      closing = true
      app.log.info(`${signal}: finishing in-flight requests`)
      // close() stops accepting connections, lets in-flight requests finish, then runs onClose (database).
      app.close().then(() => process.exit(0), (err) => { console.error(err); process.exit(1) })
    })
  }
  const address = await app.listen({ host: config.host, port: config.port })
  console.log(`articles service listening on ${address}`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
