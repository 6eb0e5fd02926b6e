// The scale-out bench's webhook receiver, a process of its own so that its CPU is measured apart
// from Herald's and the bench's: 200 at once to every POST, which it counts by delivery
// (`webhook-id`); GET /stats answers {requests, unique, duplicates}. Prints {"port":P} once
// listening.       node bench/support/webhookReceiver.mjs
import http from "node:http"

const ids = new Set()
let requests = 0
let duplicates = 0
const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/stats") {
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify({ requests, unique: ids.size, duplicates }))
    return
  }
  req.resume()
  req.on("end", () => {
    requests++
    const id = req.headers["webhook-id"]
    if (typeof id === "string") {
      if (ids.has(id)) duplicates++
      else ids.add(id)
    }
    res.end("ok")
  })
})
// Herald keeps its connections to an endpoint open between deliveries.
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
process.on("SIGTERM", () => process.exit(0))
