// The machine's HTTP floor for bench/hotpath: node:http with nothing else. A GET answers a tiny JSON
// (as /health/live does); a POST reads its body, JSON.parses it and answers JSON.stringify of a small
// object, so the floor pays the body read and the parse a Herald POST pays. One `end` per response.
// Run: node bare-json.mjs PORT
import { createServer } from "node:http"

const LIVE = JSON.stringify({ status: "live" })
const reply = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}
createServer((req, res) => {
  if (req.method !== "POST") return reply(res, 200, LIVE)
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    let parsed
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return reply(res, 400, JSON.stringify({ error: "invalid_json" }))
    }
    reply(res, 200, JSON.stringify({ success: true, fields: Object.keys(parsed).length }))
  })
}).listen(Number(process.argv[2]), "127.0.0.1")
