// The machine's HTTP ceiling: node:http answering the same JSON. Run: node bare-node.mjs PORT FILE
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const [port, file] = process.argv.slice(2)
const body = readFileSync(file, "utf8")
createServer((req, res) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}).listen(Number(port), "127.0.0.1")
