const Fastify = require('fastify'); const net = require('node:net')
const { httpConventions, serverOptions } = require('./dist/cjs/index.js')
;(async () => {
  const app = Fastify(serverOptions)
  await app.register(httpConventions, { auth: { realm: 'r', basic: { users: { a: 'b' } } } })
  app.post('/j', { config: { contentType: false } }, async (req) => req.body)
  app.post('/k', async (req) => req.body)
  app.post('/s', { config: { auth: true } }, async (req) => req.body)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = app.server.address().port
  for (const [path, ct] of [['/j', 'text/csv'], ['/k', 'text/csv'], ['/s', 'application/json']]) {
    const out = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1'); let data = ''
      s.on('data', (d) => { data += d; if (data.includes('\r\n\r\n') && !data.startsWith('HTTP/1.1 100')) { s.end(); resolve(data) } else if (data.startsWith('HTTP/1.1 100') && data.split('\r\n\r\n').length > 2) { s.end(); resolve(data) } })
      s.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${ct}\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n`)
      setTimeout(() => { s.end(); resolve(data) }, 1000)
    })
    console.log(path, ct, JSON.stringify(out.split('\r\n').filter(l => l.startsWith('HTTP/'))))
  }
  await app.close()
})()
