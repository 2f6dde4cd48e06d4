/** `npm start`: runs the reference service until SIGINT/SIGTERM, then shuts down cleanly. */
import { buildService, configFromEnv } from './app'

async function main (): Promise<void> {
  const config = configFromEnv()
  const app = await buildService({ ...config, logger: { level: process.env.LOG_LEVEL ?? 'info' } })
  let closing = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
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
